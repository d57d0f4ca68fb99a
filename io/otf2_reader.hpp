// SPDX-License-Identifier: BSD-3-Clause
// Reads OTF2 archives: global definitions on every rank, then one rank's own events.
#pragma once

#include <string>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay::io {

/// An OpenMP fork on a master thread: its time and the call path open there (rank-local ids).
struct ForkPoint {
  Ticks time = 0;
  CallpathId path;
};

/// Reads the global definitions of the archive whose anchor file is `anchor`.
/// Throws TraceError naming the file on any problem (missing, not OTF2, corrupt).
/// MPI: local (every rank reads the definitions itself).
Definitions read_definitions(const std::string& anchor);

/// Reads the events of `rank`'s location into compact storage (see LocalTrace) and links
/// requests to their completions (Isend<->IsendComplete, IrecvRequest<->Irecv, cancels) and
/// CollBegin<->CollEnd. Enter/Leave events carry their call path in a rank-local call tree
/// (`tree`, unified later). ProgramBegin/End become Enter/Leave of the program region.
/// OpenMP fork/join, team begin/end and lock events are kept (EventKind::Thread*); with
/// `forks`, the master's forks are appended there for read_worker_events. Metric and other
/// records are skipped. Throws TraceError (file, rank, event) on bad input
/// and IncompleteTraceError when the events stop with regions still open. With `partial`, such
/// a rank (and one whose event file breaks off) is returned with `incomplete` set instead.
/// MPI: local.
LocalTrace read_events(const std::string& anchor, const Definitions& defs, Rank rank,
                       CallTree& tree, bool partial = false,
                       std::vector<ForkPoint>* forks = nullptr);

/// Reads worker thread `thread` (>= 1) of `rank` into `tree` (the rank's call tree, after its
/// master thread): its call paths hang below the master's call path at the fork of each of
/// its thread teams (`forks`, from read_events of the master), as PEARL builds them. MPI
/// events on it are refused (TraceError naming rank and thread). `partial` as for read_events.
/// MPI: local.
LocalTrace read_worker_events(const std::string& anchor, const Definitions& defs, Rank rank,
                              int thread, CallTree& tree, const std::vector<ForkPoint>& forks,
                              bool partial = false);

/// Reads, in the calling thread, the environment variable the event readers consult
/// (CPREPLAY_TEST_OTF2_LIBRARY_EVENTS) and keeps its value for every later read. The command
/// calls it before its reading thread starts beside MPI_Init, which sets environment variables:
/// getenv in one thread while another's setenv grows the environment reads freed memory (a
/// crash, seen once in about 400 runs). Unpinned, the readers ask at each read (the tests
/// change the variable between reads).
void pin_environment();
/// Forgets the pinned value (tests).
void unpin_environment();

/// Event files read so far in this process: by the direct decoder (io/otf2_event_decoder.hpp)
/// and by libotf2 (anything the decoder does not take, or CPREPLAY_TEST_OTF2_LIBRARY_EVENTS=1);
/// the same for local definition files. For tests that must know which path read a file.
struct EventReadCounts {
  std::uint64_t direct = 0;
  std::uint64_t library = 0;
  std::string last_declined;  ///< why the decoder last left a file to libotf2 ("" if never)
  std::uint64_t defs_direct = 0;   ///< local definition files (.def) read without libotf2
  std::uint64_t defs_library = 0;  ///< local definition files read by libotf2
  /// The last event file the decoder read cut short: where its whole records end (DecodeResult::
  /// cut_at); 0 if none.
  std::uint64_t last_cut_at = 0;
};
EventReadCounts event_read_counts();

/// Only decodes the events of `rank`, all its threads (counting them); the floor for benchmarks.
std::uint64_t decode_events_only(const std::string& anchor, const Definitions& defs, Rank rank);

}  // namespace cpreplay::io
