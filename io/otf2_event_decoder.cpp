// SPDX-License-Identifier: BSD-3-Clause
// A direct decoder of OTF2 event files: see otf2_event_decoder.hpp. Where a fact about the
// format comes from, the comment names the OTF2 3.x source (src/OTF2_Buffer.[ch],
// src/otf2_events_int.h, src/OTF2_EvtReader.c and the generated OTF2_EvtReader_inc.c,
// src/otf2_attribute_list.c, src/otf2_attribute_value_inc.c); none of their code is copied.
#include "io/otf2_event_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "io/otf2_buffer.hpp"

namespace cpreplay::io {
namespace {

using namespace otf2_buffer;

// otf2_events_int.h: the event record types this decoder knows.
enum : std::uint8_t {
  kBufferFlush = 10,
  kMeasurementOnOff = 11,
  kEnter = 12,
  kLeave = 13,
  kMpiSend = 14,
  kMpiIsend = 15,
  kMpiIsendComplete = 16,
  kMpiIrecvRequest = 17,
  kMpiRecv = 18,
  kMpiIrecv = 19,
  kMpiRequestTest = 20,
  kMpiRequestCancelled = 21,
  kMpiCollectiveBegin = 22,
  kMpiCollectiveEnd = 23,
  kMetric = 31,
  kThreadFork = 53,
  kThreadJoin = 54,
  kThreadTeamBegin = 55,
  kThreadTeamEnd = 56,
  kThreadAcquireLock = 57,
  kThreadReleaseLock = 58,
  kProgramBegin = 83,
  kProgramEnd = 84,
};

/// The pass over the chunks: checks each record and calls back for it; the first record it does
/// not take stops it (Stop::kBad, `why`).
class Pass {
 public:
  Pass(const LocalEventDefinitions& local, const EventCallbacks& cb, void* ud,
       OTF2_LocationRef loc, std::vector<OTF2_StringRef>& args)
      : local_(local), cb_(cb), ud_(ud), loc_(loc), args_(args) {}

  std::string why;            ///< set with Stop::kBad and Stop::kCut
  std::uint64_t records = 0;  ///< event records read (libotf2's global event position)
  bool short_chunk = false;   ///< the chunk being read is the file's last and shorter than a chunk
  std::uint64_t chunk_offset = 0;  ///< where the chunk being read begins in the file
  std::uint64_t cut_at = 0;  ///< with Stop::kCut: where the record the data ends in begins

  Stop chunk(const std::uint8_t* p, const std::uint8_t* end);

 private:
  [[gnu::cold, gnu::noinline]] Stop bad(const char* what) {
    why = what;
    return failed_ = Stop::kBad;
  }
  /// The chunk's bytes ran out before its end record: in the file's last, short chunk the file
  /// was cut there (Stop::kCut); in a whole chunk that is damage.
  [[gnu::cold, gnu::noinline]] Stop ran_out(const char* what) {
    why = what;
    cut_at = chunk_offset + static_cast<std::uint64_t>(record_ - chunk_);
    return failed_ = short_chunk ? Stop::kCut : Stop::kBad;
  }
  Stop failed_ = Stop::kBad;  ///< what the last bad or ran_out returned (attribute_list's failure)
  const std::uint8_t* chunk_ = nullptr;   ///< the chunk being read
  const std::uint8_t* record_ = nullptr;  ///< where its record being read begins (with its
                                          ///< timestamp and attribute lists)

  /// otf2_evt_reader_apply_clock_correction: the interval is searched forward from the last
  /// one used, for every event's time (and BufferFlush's stop time) in file order; times past
  /// the last interval use it, times before the first extrapolate it.
  bool correct(std::uint64_t t, std::uint64_t& out) {
    const auto& ivs = local_.intervals();
    if (ivs.empty()) {
      out = t;
      return true;
    }
    while (interval_ + 1 < ivs.size() && t > ivs[interval_].end) ++interval_;
    const LocalEventDefinitions::Interval& iv = ivs[interval_];
    const double diff = t >= iv.begin ? static_cast<double>(t - iv.begin)
                                      : -static_cast<double>(iv.begin - t);
    const double shift = std::rint(iv.slope * diff);
    std::int64_t offset = 0;
    if (!(std::fabs(shift) < 4.0e18) ||
        __builtin_add_overflow(iv.offset, static_cast<std::int64_t>(shift), &offset))
      return false;
    out = t + static_cast<std::uint64_t>(offset);
    return true;
  }

  std::uint32_t mapped(OTF2_MappingType type, std::uint32_t id) const {
    return static_cast<std::uint32_t>(local_.map(type, id));
  }

  bool attribute_list(const std::uint8_t*& p, const std::uint8_t* end);
  bool metric(const std::uint8_t* q, const std::uint8_t* record_end);
  Stop program_begin(std::uint64_t t, const std::uint8_t* q, const std::uint8_t* record_end);

  const LocalEventDefinitions& local_;
  const EventCallbacks& cb_;
  void* ud_;
  OTF2_LocationRef loc_;
  std::vector<OTF2_StringRef>& args_;
  std::uint64_t raw_time_ = 0;
  std::size_t interval_ = 0;
  std::vector<std::uint32_t> attributes_;  ///< ids in the attribute list of the next event
};

/// An attribute list (otf2_attribute_list_read_from_buffer, otf2_attribute_value_read_from_
/// buffer): a record with a length, the count (compressed uint32), then per attribute its id
/// (compressed uint32, mapped), its OTF2_Type byte and the value. No callback here reads the
/// list, so it is checked and skipped. Lists before one event add up; an id twice is an error
/// for libotf2 (OTF2_AttributeList_AddAttribute), and a type this decoder does not know is
/// left to it.
bool Pass::attribute_list(const std::uint8_t*& p, const std::uint8_t* end) {
  const std::uint8_t* r_end = nullptr;
  if (!record(p, end, r_end)) return ran_out("inside a record"), false;
  const auto length = static_cast<std::uint64_t>(r_end - p);
  bool invalid = false;
  std::uint32_t n = 0;
  const std::uint8_t* q = u32(p, n, invalid);
  // libotf2's consistency check, in its uint32 arithmetic: at most 15 bytes per entry + 5.
  if (invalid || q > r_end || length > static_cast<std::uint32_t>(n * 15u + 5u))
    return bad("an inconsistent attribute list"), false;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (q >= r_end) return bad("a truncated attribute list"), false;
    std::uint32_t id = 0, ref = 0;
    std::uint64_t value = 0;
    q = u32(q, id, invalid);
    id = mapped(OTF2_MAPPING_ATTRIBUTE, id);
    const std::uint8_t type = *q++;
    switch (type) {
      case OTF2_TYPE_UINT8:
      case OTF2_TYPE_INT8:
        q += 1;
        break;
      case OTF2_TYPE_UINT16:
      case OTF2_TYPE_INT16:
        q += 2;
        break;
      case OTF2_TYPE_FLOAT:
        q += 4;
        break;
      case OTF2_TYPE_DOUBLE:
        q += 8;
        break;
      case OTF2_TYPE_UINT64:
      case OTF2_TYPE_INT64:
      case OTF2_TYPE_LOCATION:
        q = u64(q, value, invalid);
        break;
      case OTF2_TYPE_UINT32:
      case OTF2_TYPE_INT32:
      case OTF2_TYPE_STRING:
      case OTF2_TYPE_ATTRIBUTE:
      case OTF2_TYPE_REGION:
      case OTF2_TYPE_GROUP:
      case OTF2_TYPE_METRIC:
      case OTF2_TYPE_COMM:
      case OTF2_TYPE_PARAMETER:
      case OTF2_TYPE_RMA_WIN:
      case OTF2_TYPE_SOURCE_CODE_LOCATION:
      case OTF2_TYPE_CALLING_CONTEXT:
      case OTF2_TYPE_INTERRUPT_GENERATOR:
      case OTF2_TYPE_IO_FILE:
      case OTF2_TYPE_IO_HANDLE:
        q = u32(q, ref, invalid);
        break;
      default:
        return bad("an attribute of a type the decoder leaves to libotf2"), false;
    }
    if (invalid || q > r_end) return bad("a truncated attribute list"), false;
    if (std::find(attributes_.begin(), attributes_.end(), id) != attributes_.end())
      return bad("an attribute listed twice for one event"), false;
    attributes_.push_back(id);
  }
  p = r_end;
  return true;
}

/// Metric: the metric (compressed uint32), the count (a byte), then per value its type byte and
/// the value (compressed uint64). Counted, not kept.
bool Pass::metric(const std::uint8_t* q, const std::uint8_t* record_end) {
  bool invalid = false;
  std::uint32_t metric = 0;
  q = u32(q, metric, invalid);
  if (invalid || q >= record_end) return false;
  const unsigned n = *q++;
  for (unsigned i = 0; i < n; ++i) {
    if (q >= record_end) return false;
    std::uint64_t value = 0;
    q = u64(q + 1, value, invalid);
    if (invalid || q > record_end) return false;
  }
  return true;
}

/// ProgramBegin: the program name (compressed uint32, a string), the argument count, then the
/// arguments (strings).
Stop Pass::program_begin(std::uint64_t t, const std::uint8_t* q,
                                const std::uint8_t* record_end) {
  bool invalid = false;
  std::uint32_t name = 0, n = 0;
  q = u32(q, name, invalid);
  q = u32(q, n, invalid);
  // Each argument takes at least its length byte: a count beyond the record is damage.
  if (invalid || q > record_end || n > static_cast<std::uint64_t>(record_end - q))
    return bad("a truncated ProgramBegin");
  args_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t arg = 0;
    q = u32(q, arg, invalid);
    if (invalid || q > record_end) return bad("a truncated ProgramBegin");
    args_[i] = mapped(OTF2_MAPPING_STRING, arg);
  }
  ++records;
  if (cb_.program_begin &&
      cb_.program_begin(loc_, t, records, ud_, nullptr, mapped(OTF2_MAPPING_STRING, name), n,
                        n > 0 ? args_.data() : nullptr) != OTF2_CALLBACK_SUCCESS)
    return Stop::kInterrupted;
  return Stop::kNextChunk;
}

// Calls back if the callback is set; a callback's "interrupt" stops the reading after the record
// was counted, as OTF2_EvtReader_ReadEvents counts it.
#define CPREPLAY_CALL(name, ...)                                                        \
  do {                                                                                  \
    if (cb_.name &&                                                                     \
        cb_.name(loc_, t, records, ud_, nullptr, __VA_ARGS__) != OTF2_CALLBACK_SUCCESS) \
      return Stop::kInterrupted;                                                        \
  } while (0)

/// The records of one chunk, [p, end): a chunk header, then records up to an end-of-chunk or
/// end-of-file record (OTF2_EvtReader_inc.c, otf2_evt_reader_read). The timestamp of the records
/// that follow persists across chunks (OTF2_Buffer_ReadTimeStamp). Singleton records (Enter,
/// Leave, the four MPI request records: OTF2_EvtReader.c, otf2_evt_reader_skip) have no length,
/// one compressed value, and the chunk must go on after it (OTF2_Buffer_GuaranteeCompressed);
/// every other record has a length, and its fields must lie within it.
Stop Pass::chunk(const std::uint8_t* p, const std::uint8_t* end) {
  chunk_ = record_ = p;
  if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderSize))
    return ran_out("inside a chunk header");
  if (p[0] != kChunkHeader) return bad("no chunk header");
  if (p[1] != kLittleEndian) return bad("not little-endian");
  p += kChunkHeaderSize;
  for (;;) {
    // The data of a file cut short may end after a whole record (not after a timestamp or an
    // attribute list: their event follows).
    if (attributes_.empty()) record_ = p;
    if (p >= end) return ran_out("before the end-of-file record");
    if (*p == kTimestamp) {
      raw_time_ = load64(p + 1);
      p += 9;
      if (p >= end) return ran_out("inside a record");
    }
    const std::uint8_t type = *p++;
    if (type <= kAttributeList) {
      if (type == kEndOfChunk) return Stop::kNextChunk;
      if (type == kEndOfFile) return Stop::kEndOfFile;
      if (type != kAttributeList) return bad("a buffer record inside a chunk");
      if (!attribute_list(p, end)) return failed_;
      continue;
    }
    std::uint64_t t = 0;
    if (!correct(raw_time_, t)) return bad("a clock correction out of range");
    bool invalid = false;
    switch (type) {
      case kEnter:
      case kLeave: {
        std::uint32_t region = 0;
        p = u32(p, region, invalid);
        if (invalid) return bad("an invalid Enter or Leave");
        if (p > end || (p == end && !short_chunk)) return ran_out("inside a record");
        region = mapped(OTF2_MAPPING_REGION, region);
        ++records;
        if (type == kEnter)
          CPREPLAY_CALL(enter, region);
        else
          CPREPLAY_CALL(leave, region);
        break;
      }
      case kMpiIsendComplete:
      case kMpiIrecvRequest:
      case kMpiRequestTest:
      case kMpiRequestCancelled: {
        std::uint64_t request = 0;
        p = u64(p, request, invalid);
        if (invalid) return bad("an invalid request record");
        if (p > end || (p == end && !short_chunk)) return ran_out("inside a record");
        ++records;
        if (type == kMpiIsendComplete)
          CPREPLAY_CALL(mpi_isend_complete, request);
        else if (type == kMpiIrecvRequest)
          CPREPLAY_CALL(mpi_irecv_request, request);
        else if (type == kMpiRequestTest)
          CPREPLAY_CALL(mpi_request_test, request);
        else
          CPREPLAY_CALL(mpi_request_cancelled, request);
        break;
      }
      case kBufferFlush:
      case kMeasurementOnOff:
      case kMpiSend:
      case kMpiRecv:
      case kMpiIsend:
      case kMpiIrecv:
      case kMpiCollectiveBegin:
      case kMpiCollectiveEnd:
      case kMetric:
      case kThreadFork:
      case kThreadJoin:
      case kThreadTeamBegin:
      case kThreadTeamEnd:
      case kThreadAcquireLock:
      case kThreadReleaseLock:
      case kProgramBegin:
      case kProgramEnd: {
        const std::uint8_t* r_end = nullptr;
        if (!record(p, end, r_end, short_chunk)) return ran_out("inside a record");
        const std::uint8_t* q = p;
        p = r_end;
        switch (type) {
          case kBufferFlush: {  // the stop time, a raw uint64, clock-corrected too
            std::uint64_t stop = 0;
            if (r_end - q < 8) return bad("a truncated BufferFlush");
            if (!correct(load64(q), stop)) return bad("a clock correction out of range");
            ++records;
            break;
          }
          case kMeasurementOnOff:  // the mode, a byte
            if (q >= r_end) return bad("a truncated MeasurementOnOff");
            ++records;
            break;
          case kMpiSend:
          case kMpiRecv:
          case kMpiIsend:
          case kMpiIrecv: {
            std::uint32_t peer = 0, comm = 0, tag = 0;
            std::uint64_t length = 0, request = 0;
            q = u32(q, peer, invalid);
            q = u32(q, comm, invalid);
            q = u32(q, tag, invalid);
            q = u64(q, length, invalid);
            if (type == kMpiIsend || type == kMpiIrecv) q = u64(q, request, invalid);
            if (invalid || q > r_end) return bad("a truncated message record");
            comm = mapped(OTF2_MAPPING_COMM, comm);
            ++records;
            if (type == kMpiSend)
              CPREPLAY_CALL(mpi_send, peer, comm, tag, length);
            else if (type == kMpiRecv)
              CPREPLAY_CALL(mpi_recv, peer, comm, tag, length);
            else if (type == kMpiIsend)
              CPREPLAY_CALL(mpi_isend, peer, comm, tag, length, request);
            else
              CPREPLAY_CALL(mpi_irecv, peer, comm, tag, length, request);
            break;
          }
          case kMpiCollectiveBegin:  // no field
            ++records;
            if (cb_.mpi_collective_begin &&
                cb_.mpi_collective_begin(loc_, t, records, ud_, nullptr) != OTF2_CALLBACK_SUCCESS)
              return Stop::kInterrupted;
            break;
          case kMpiCollectiveEnd: {
            std::uint32_t comm = 0, root = 0;
            std::uint64_t sent = 0, received = 0;
            const OTF2_CollectiveOp op = *q++;
            q = u32(q, comm, invalid);
            q = u32(q, root, invalid);
            q = u64(q, sent, invalid);
            q = u64(q, received, invalid);
            if (invalid || q > r_end) return bad("a truncated MpiCollectiveEnd");
            comm = mapped(OTF2_MAPPING_COMM, comm);
            ++records;
            CPREPLAY_CALL(mpi_collective_end, op, comm, root, sent, received);
            break;
          }
          case kMetric:
            if (!metric(q, r_end)) return bad("a truncated Metric");
            ++records;
            break;
          case kThreadFork: {
            std::uint32_t requested = 0;
            const OTF2_Paradigm model = *q++;
            q = u32(q, requested, invalid);
            if (invalid || q > r_end) return bad("a truncated ThreadFork");
            ++records;
            CPREPLAY_CALL(thread_fork, model, requested);
            break;
          }
          case kThreadJoin: {
            const OTF2_Paradigm model = *q++;
            if (q > r_end) return bad("a truncated ThreadJoin");
            ++records;
            CPREPLAY_CALL(thread_join, model);
            break;
          }
          case kThreadTeamBegin:
          case kThreadTeamEnd: {
            std::uint32_t team = 0;
            q = u32(q, team, invalid);
            if (invalid || q > r_end) return bad("a truncated thread team record");
            team = mapped(OTF2_MAPPING_COMM, team);
            ++records;
            if (type == kThreadTeamBegin)
              CPREPLAY_CALL(thread_team_begin, team);
            else
              CPREPLAY_CALL(thread_team_end, team);
            break;
          }
          case kThreadAcquireLock:
          case kThreadReleaseLock: {
            std::uint32_t lock = 0, order = 0;
            const OTF2_Paradigm model = *q++;
            q = u32(q, lock, invalid);
            q = u32(q, order, invalid);
            if (invalid || q > r_end) return bad("a truncated lock record");
            ++records;
            if (type == kThreadAcquireLock)
              CPREPLAY_CALL(thread_acquire_lock, model, lock, order);
            else
              CPREPLAY_CALL(thread_release_lock, model, lock, order);
            break;
          }
          case kProgramBegin: {
            const Stop s = program_begin(t, q, r_end);
            if (s != Stop::kNextChunk) return s;
            break;
          }
          default: {  // kProgramEnd: the exit status, a compressed int64
            std::uint64_t status = 0;
            q = u64(q, status, invalid);
            if (invalid || q > r_end) return bad("a truncated ProgramEnd");
            ++records;
            CPREPLAY_CALL(program_end, static_cast<std::int64_t>(status));
            break;
          }
        }
        break;
      }
      default: {
        // The OpenMP 1.x records and CallingContextEnter/Leave (which libotf2 converts for
        // other callbacks), and types we do not know: the library reads those files.
        why = "record type " + std::to_string(type) + ", which the decoder leaves to libotf2";
        return Stop::kBad;
      }
    }
    if (!attributes_.empty()) attributes_.clear();  // libotf2 empties the list after each event
  }
}

#undef CPREPLAY_CALL

/// Runs the pass over the whole file; `buf` holds a chunk and kSlack more bytes.
Stop run(const ChunkedFile& file, std::uint64_t chunk_size, std::uint8_t* buf, Pass& pass) {
  const char* why = nullptr;
  const Stop s = for_each_chunk(file, chunk_size, buf, why,
                                [&](const std::uint8_t* p, const std::uint8_t* end) {
                                  pass.short_chunk =
                                      static_cast<std::uint64_t>(end - p) < chunk_size;
                                  const Stop s = pass.chunk(p, end);
                                  pass.chunk_offset += chunk_size;
                                  return s;
                                });
  if (why) {
    pass.why = why;
    pass.cut_at = file.size();  // after an end-of-chunk record: every record is whole
  }
  return s;
}

}  // namespace

DecodeResult decode_event_file(const std::string& path, std::uint64_t chunk_size,
                               OTF2_LocationRef location, const LocalEventDefinitions& local,
                               const EventCallbacks& callbacks, void* user_data) {
  DecodeResult result;
  if (!kLittleEndianHost) {
    result.not_taken = "a big-endian host";
    return result;
  }
  if (!local.usable()) {
    result.not_taken = "local definitions the decoder cannot reproduce";
    return result;
  }
  if (chunk_size < OTF2_CHUNK_SIZE_MIN || chunk_size > OTF2_CHUNK_SIZE_MAX) {
    result.not_taken = "an event chunk size outside OTF2's range";
    return result;
  }
  const ChunkedFile file(path);
  if (file.size() == 0) {
    result.not_taken = "an empty or unreadable file";
    return result;
  }
  // One chunk (as libotf2 holds one), not zeroed: run() clears the slack after each read.
  const auto bytes = static_cast<std::size_t>(std::min(chunk_size, file.size()));
  const std::unique_ptr<std::uint8_t[]> buf(new std::uint8_t[bytes + kSlack]);
  std::vector<OTF2_StringRef> args;
  // One pass, calling back as it goes. What it does not take (a damaged chunk, a record it
  // cannot size, ...) stops it there: the caller undoes the records called back so far and
  // leaves the file to libotf2. A file cut short is decoded up to the cut, not left to libotf2:
  // the library reads the bytes of its chunk buffer past the file's end as records (stale data
  // from an earlier chunk or file: wrong errors, wrong events with --partial, or an endless loop
  // at the end of the file).
  Pass decode(local, callbacks, user_data, location, args);
  const Stop s = run(file, chunk_size, buf.get(), decode);
  result.records = decode.records;
  if (s != Stop::kEndOfFile && s != Stop::kCut && s != Stop::kInterrupted) {
    result.not_taken = decode.why;
    result.called_back = decode.records > 0;
    return result;
  }
  result.taken = true;
  result.interrupted = s == Stop::kInterrupted;
  if (s == Stop::kCut) {
    result.cut = decode.why;
    result.cut_at = decode.cut_at;
  }
  return result;
}

}  // namespace cpreplay::io
