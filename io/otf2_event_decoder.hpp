// SPDX-License-Identifier: BSD-3-Clause
// A direct decoder of one location's OTF2 event file (<trace dir>/<location>.evt): it calls the
// event callbacks that otf2_reader.cpp registers with libotf2, with the arguments libotf2 would
// pass (clock correction and mapping tables applied), in the same order, at a fraction of the
// library's cost. It takes only a file it understands completely: it decodes in one pass,
// calling back as it goes, and anything unexpected (a compressed or SION archive, big-endian
// data, a damaged chunk, a record it cannot size, a legacy record the library would convert, an
// attribute of an unknown type) stops it there; the caller then undoes what the records before
// it were called back for and leaves the file to libotf2, so errors and --partial stay the
// library's. A file cut short (it ends inside its last chunk, or after an end-of-chunk
// record) is the exception: the decoder reads it up to the cut and says so, because libotf2
// reads past the end of such a file. The layout was learned from OTF2 3.x's reader (facts only,
// no code); the .cpp says where each fact comes from.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <string>

#include "io/otf2_local_definitions.hpp"

namespace cpreplay::io {

/// The callbacks the decoder calls: libotf2's own typedefs, so a function registered with
/// OTF2_EvtReaderCallbacks_Set*Callback fits here unchanged. The attribute list argument is
/// always nullptr (every callback in otf2_reader.cpp ignores it).
struct EventCallbacks {
  OTF2_EvtReaderCallback_Enter enter = nullptr;
  OTF2_EvtReaderCallback_Leave leave = nullptr;
  OTF2_EvtReaderCallback_ProgramBegin program_begin = nullptr;
  OTF2_EvtReaderCallback_ProgramEnd program_end = nullptr;
  OTF2_EvtReaderCallback_MpiSend mpi_send = nullptr;
  OTF2_EvtReaderCallback_MpiIsend mpi_isend = nullptr;
  OTF2_EvtReaderCallback_MpiIsendComplete mpi_isend_complete = nullptr;
  OTF2_EvtReaderCallback_MpiIrecvRequest mpi_irecv_request = nullptr;
  OTF2_EvtReaderCallback_MpiRecv mpi_recv = nullptr;
  OTF2_EvtReaderCallback_MpiIrecv mpi_irecv = nullptr;
  OTF2_EvtReaderCallback_MpiRequestTest mpi_request_test = nullptr;
  OTF2_EvtReaderCallback_MpiRequestCancelled mpi_request_cancelled = nullptr;
  OTF2_EvtReaderCallback_MpiCollectiveBegin mpi_collective_begin = nullptr;
  OTF2_EvtReaderCallback_MpiCollectiveEnd mpi_collective_end = nullptr;
  OTF2_EvtReaderCallback_ThreadFork thread_fork = nullptr;
  OTF2_EvtReaderCallback_ThreadJoin thread_join = nullptr;
  OTF2_EvtReaderCallback_ThreadTeamBegin thread_team_begin = nullptr;
  OTF2_EvtReaderCallback_ThreadTeamEnd thread_team_end = nullptr;
  OTF2_EvtReaderCallback_ThreadAcquireLock thread_acquire_lock = nullptr;
  OTF2_EvtReaderCallback_ThreadReleaseLock thread_release_lock = nullptr;
};

/// The outcome of decode_event_file.
struct DecodeResult {
  bool taken = false;            ///< false: let libotf2 read the file
  std::string not_taken;         ///< why not (for tests and diagnostics)
  /// Not taken, but the records before the one it stopped at were called back: the caller
  /// undoes what they did before libotf2 reads the file from its start.
  bool called_back = false;
  std::uint64_t records = 0;     ///< event records read, as libotf2 counts them
  bool interrupted = false;      ///< a callback returned something other than SUCCESS
  /// Taken, but the file was cut short (its data ends before the end-of-file record): where, as
  /// "inside a record", "inside a chunk header", "before the end-of-file record" or "after an
  /// end-of-chunk record" (the file ends there). Every whole record before the cut was called
  /// back; `records` counts them.
  std::string cut;
  /// With `cut`: where the whole records end in the file (the record the file ends in began
  /// there; the file's size when it ends after an end-of-chunk record).
  std::uint64_t cut_at = 0;
};

/// Decodes `path`, the event file of `location`, written in chunks of `chunk_size` bytes, and
/// calls `callbacks` with `user_data`.
DecodeResult decode_event_file(const std::string& path, std::uint64_t chunk_size,
                               OTF2_LocationRef location, const LocalEventDefinitions& local,
                               const EventCallbacks& callbacks, void* user_data);

}  // namespace cpreplay::io
