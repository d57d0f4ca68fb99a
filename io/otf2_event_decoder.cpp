// SPDX-License-Identifier: BSD-3-Clause
// A direct decoder of OTF2 event files: see otf2_event_decoder.hpp. Where a fact about the
// format comes from, the comment names the OTF2 3.x source (src/OTF2_Buffer.[ch],
// src/otf2_events_int.h, src/OTF2_EvtReader.c and the generated OTF2_EvtReader_inc.c,
// src/otf2_archive_location.c); none of their code is copied.
#include "io/otf2_event_decoder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace cpreplay::io {

// ---------------------------------------------------------------------------------------------
// Local definitions

std::uint64_t LocalEventDefinitions::map_sparse(const Table& t, std::uint64_t local) {
  auto it = std::lower_bound(t.sparse.begin(), t.sparse.end(), local,
                             [](const auto& pair, std::uint64_t id) { return pair.first < id; });
  return it != t.sparse.end() && it->first == local ? it->second : local;
}

namespace {
void collect_pair(std::uint64_t local, std::uint64_t global, void* ud) {
  static_cast<std::vector<std::pair<std::uint64_t, std::uint64_t>>*>(ud)->emplace_back(local,
                                                                                        global);
}
}  // namespace

void LocalEventDefinitions::add_mapping(OTF2_MappingType type, const OTF2_IdMap* map) {
  // otf2_archive_location_set_mapping_table: unknown types are ignored, a second table of one
  // type is an error (the library's definition reading then fails before any event).
  if (type >= OTF2_MAPPING_MAX) return;
  if (mapped_[type] || map == nullptr) {
    usable_ = false;
    return;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  if (OTF2_IdMap_Traverse(map, &collect_pair, &pairs) != OTF2_SUCCESS) {
    usable_ = false;
    return;
  }
  // Every pair must be what the library's own look-up answers (a sparse table with a local id
  // twice, or out of order, would not be): then "the pair's global id, else the local id" is
  // exactly OTF2_IdMap_GetGlobalId as otf2_evt_reader_map uses it.
  for (const auto& [local, global] : pairs) {
    std::uint64_t found = 0;
    if (OTF2_IdMap_GetGlobalIdSave(map, local, &found) != OTF2_SUCCESS || found != global) {
      usable_ = false;
      return;
    }
  }
  std::sort(pairs.begin(), pairs.end());
  Table& t = tables_[type];
  std::size_t i = 0;
  while (i < pairs.size() && pairs[i].first == i) t.dense.push_back(pairs[i++].second);
  t.sparse.assign(pairs.begin() + static_cast<std::ptrdiff_t>(i), pairs.end());
  for (std::size_t k = 1; k < t.sparse.size(); ++k)
    if (t.sparse[k].first == t.sparse[k - 1].first) usable_ = false;
  mapped_[type] = true;
}

void LocalEventDefinitions::add_clock_offset(std::uint64_t time, std::int64_t offset) {
  // otf2_archive_location_add_clock_offset: each offset after the first closes the interval
  // the previous one opened (a lone or last offset opens one that is never used); the slope is
  // the offsets' int64 difference over the times' uint64 difference, both as doubles.
  if (have_pending_) {
    std::int64_t rise = 0;
    if (pending_time_ >= time || __builtin_sub_overflow(offset, pending_offset_, &rise)) {
      usable_ = false;  // the library refuses equal times; an overflow we do not reproduce
    } else {
      Interval iv;
      iv.begin = pending_time_;
      iv.end = time;
      iv.offset = pending_offset_;
      iv.slope = static_cast<double>(rise) / static_cast<double>(time - pending_time_);
      intervals_.push_back(iv);
    }
  }
  have_pending_ = true;
  pending_time_ = time;
  pending_offset_ = offset;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The format

// OTF2_Buffer.h: the buffer's own record types, the endianness byte, the 18-byte chunk header
// (type, endianness, first and last event number as raw uint64).
constexpr std::uint8_t kEndOfChunk = 0;
constexpr std::uint8_t kEndOfFile = 2;
constexpr std::uint8_t kChunkHeader = 3;
constexpr std::uint8_t kTimestamp = 5;  // followed by the time, a raw uint64
constexpr std::uint8_t kAttributeList = 6;
constexpr std::uint8_t kLittleEndian = 0x42;
constexpr std::size_t kChunkHeaderSize = 18;
// The decoder reads little-endian files on a little-endian host only.
constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

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

/// Reads from [p, end). Any read past `end` clears `ok` and yields 0. `readable` (>= end) is
/// where the buffer ends: a compressed value may load 8 bytes at once below it.
struct Cursor {
  const std::uint8_t* p;
  const std::uint8_t* end;
  const std::uint8_t* readable;
  bool ok = true;

  std::uint8_t u8() {
    if (p >= end) return fail();
    return *p++;
  }
  std::uint64_t raw64() {
    if (end - p < 8) return fail();
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    p += 8;
    return v;
  }
  /// OTF2_Buffer_ReadUint32/64: a length byte, 0 for the value 0, 0xff for the all-ones
  /// ("undefined") value, else that many little-endian bytes (at most 4 resp. 8).
  std::uint64_t compressed(unsigned max_bytes, std::uint64_t all_ones) {
    if (p >= end) return fail();
    const unsigned n = *p;
    if (n == 0 || n == 0xff) {
      ++p;
      return n == 0 ? 0 : all_ones;
    }
    if (n > max_bytes || end - p <= static_cast<std::ptrdiff_t>(n)) return fail();
    std::uint64_t v = 0;
    if (readable - p >= 9) {
      std::memcpy(&v, p + 1, 8);
      if (n < 8) v &= (std::uint64_t{1} << (8 * n)) - 1;
    } else {
      for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{p[1 + i]} << (8 * i);
    }
    p += n + 1;
    return v;
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(compressed(4, UINT32_MAX)); }
  std::uint64_t u64() { return compressed(8, UINT64_MAX); }
  std::uint8_t fail() {
    ok = false;
    p = end;
    return 0;
  }
};

/// The event file, read chunk by chunk with pread into one chunk-sized buffer.
class EventFile {
 public:
  explicit EventFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode))
      size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~EventFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  std::uint64_t size() const { return size_; }
  /// Reads `n` bytes at `offset` into `out`; false if the file is shorter or unreadable.
  bool read(std::uint64_t offset, std::uint8_t* out, std::size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return true;
  }

 private:
  int fd_;
  std::uint64_t size_ = 0;
};

enum class Stop { kContinue, kNextChunk, kEndOfFile, kBad, kInterrupted };

/// One pass over the chunks. kCall false: checks only; true: also calls back. Both passes run
/// the same checks, so the second meets nothing the first did not accept.
template <bool kCall>
class Pass {
 public:
  Pass(const LocalEventDefinitions& local, const EventCallbacks& cb, void* ud,
       OTF2_LocationRef loc, std::vector<OTF2_StringRef>& args)
      : local_(local), cb_(cb), ud_(ud), loc_(loc), args_(args) {}

  std::string why;               ///< set with Stop::kBad
  std::uint64_t records = 0;     ///< event records read (libotf2's global event position)

  /// The records of one chunk, [p, end): a chunk header, then records up to an end-of-chunk or
  /// end-of-file record (OTF2_EvtReader_inc.c, otf2_evt_reader_read). The timestamp of the
  /// records that follow persists across chunks (OTF2_Buffer_ReadTimeStamp).
  Stop chunk(const std::uint8_t* p, const std::uint8_t* end) {
    if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderSize) || p[0] != kChunkHeader)
      return bad("no chunk header");
    if (p[1] != kLittleEndian) return bad("not little-endian");
    Cursor c{p + kChunkHeaderSize, end, end};
    for (;;) {
      if (c.p < c.end && *c.p == kTimestamp) {
        ++c.p;
        raw_time_ = c.raw64();
      }
      const std::uint8_t type = c.u8();
      if (!c.ok) return bad("a chunk without an end-of-chunk record");
      if (type == kEndOfChunk) return Stop::kNextChunk;
      if (type == kEndOfFile) return Stop::kEndOfFile;
      if (type == kAttributeList) {
        if (!attribute_list(c)) return Stop::kBad;
        continue;
      }
      const Stop s = event(type, c);
      if (s != Stop::kContinue) return s;
      attributes_.clear();  // libotf2 empties the list after each event
    }
  }

 private:
  [[gnu::cold, gnu::noinline]] Stop bad(const char* what) {
    why = what;
    return Stop::kBad;
  }

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

  /// A record with a length (OTF2_Buffer_GuaranteeRecord): one byte, or 0xff and a raw
  /// uint64; the record must end before the chunk does (OTF2_Buffer_SetPosition to its end).
  static bool record(Cursor& c, Cursor& rec) {
    std::uint64_t len = c.u8();
    if (len == 0xff) len = c.raw64();
    if (!c.ok || len >= static_cast<std::uint64_t>(c.end - c.p)) return false;
    rec = Cursor{c.p, c.p + len, c.readable};
    c.p += len;
    return true;
  }

  std::uint32_t mapped(OTF2_MappingType type, std::uint32_t id) const {
    return static_cast<std::uint32_t>(local_.map(type, id));
  }

  // Inlined into the chunk loop, so that the cursor stays in registers across the callbacks.
  [[gnu::always_inline]] inline Stop event(std::uint8_t type, Cursor& c);
  bool attribute_list(Cursor& c);

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
template <bool kCall>
bool Pass<kCall>::attribute_list(Cursor& c) {
  Cursor r{nullptr, nullptr, nullptr};
  if (!record(c, r)) return bad("an attribute list longer than its chunk"), false;
  const std::uint64_t length = static_cast<std::uint64_t>(r.end - r.p);
  const std::uint32_t n = r.u32();
  // libotf2's consistency check, in its uint32 arithmetic: at most 15 bytes per entry + 5.
  if (!r.ok || length > static_cast<std::uint32_t>(n * 15u + 5u))
    return bad("an inconsistent attribute list"), false;
  for (std::uint32_t i = 0; i < n && r.ok; ++i) {
    const auto id = static_cast<std::uint32_t>(local_.map(OTF2_MAPPING_ATTRIBUTE, r.u32()));
    const std::uint8_t type = r.u8();
    switch (type) {
      case OTF2_TYPE_UINT8:
      case OTF2_TYPE_INT8:
        r.u8();
        break;
      case OTF2_TYPE_UINT16:
      case OTF2_TYPE_INT16:
        r.u8();
        r.u8();
        break;
      case OTF2_TYPE_FLOAT:
        for (int k = 0; k < 4; ++k) r.u8();
        break;
      case OTF2_TYPE_DOUBLE:
        r.raw64();
        break;
      case OTF2_TYPE_UINT64:
      case OTF2_TYPE_INT64:
      case OTF2_TYPE_LOCATION:
        r.u64();
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
        r.u32();
        break;
      default:
        return bad("an attribute of a type the decoder leaves to libotf2"), false;
    }
    if (std::find(attributes_.begin(), attributes_.end(), id) != attributes_.end())
      return bad("an attribute listed twice for one event"), false;
    attributes_.push_back(id);
  }
  if (!r.ok) return bad("a truncated attribute list"), false;
  return true;
}

// Calls back (second pass) if the callback is set; a callback's "interrupt" stops the reading
// after the record was counted, as OTF2_EvtReader_ReadEvents counts it.
#define CPREPLAY_CALL(name, ...)                                                          \
  do {                                                                                    \
    if (kCall && cb_.name &&                                                              \
        cb_.name(loc_, t, records, ud_, nullptr, __VA_ARGS__) != OTF2_CALLBACK_SUCCESS)   \
      return Stop::kInterrupted;                                                          \
  } while (0)

template <bool kCall>
inline Stop Pass<kCall>::event(std::uint8_t type, Cursor& c) {
  std::uint64_t t = 0;
  if (!correct(raw_time_, t)) return bad("a clock correction out of range");
  Cursor r{nullptr, nullptr, nullptr};
  switch (type) {
    // Singleton records (OTF2_EvtReader.c, otf2_evt_reader_skip): no length, one compressed
    // value, and the chunk must go on after it (OTF2_Buffer_GuaranteeCompressed).
    case kEnter:
    case kLeave: {
      const std::uint32_t region = mapped(OTF2_MAPPING_REGION, c.u32());
      if (!c.ok || c.p >= c.end) return bad("a truncated Enter or Leave");
      ++records;
      if (type == kEnter) CPREPLAY_CALL(enter, region);
      else CPREPLAY_CALL(leave, region);
      return Stop::kContinue;
    }
    case kMpiIsendComplete:
    case kMpiIrecvRequest:
    case kMpiRequestTest:
    case kMpiRequestCancelled: {
      const std::uint64_t request = c.u64();
      if (!c.ok || c.p >= c.end) return bad("a truncated request record");
      ++records;
      if (type == kMpiIsendComplete) CPREPLAY_CALL(mpi_isend_complete, request);
      else if (type == kMpiIrecvRequest) CPREPLAY_CALL(mpi_irecv_request, request);
      else if (type == kMpiRequestTest) CPREPLAY_CALL(mpi_request_test, request);
      else CPREPLAY_CALL(mpi_request_cancelled, request);
      return Stop::kContinue;
    }
    default:
      break;
  }
  // Every other known record has a length; its fields must lie within it.
  if (!record(c, r)) return bad("a record longer than its chunk");
  switch (type) {
    case kBufferFlush: {
      std::uint64_t stop = 0;
      if (!correct(r.raw64(), stop)) return bad("a clock correction out of range");
      break;
    }
    case kMeasurementOnOff:
      r.u8();  // the measurement mode
      break;
    case kMpiCollectiveBegin:  // no field
      ++records;
      if (kCall && cb_.mpi_collective_begin &&
          cb_.mpi_collective_begin(loc_, t, records, ud_, nullptr) != OTF2_CALLBACK_SUCCESS)
        return Stop::kInterrupted;
      return Stop::kContinue;
    case kMpiSend:
    case kMpiRecv:
    case kMpiIsend:
    case kMpiIrecv: {
      const std::uint32_t peer = r.u32();
      const std::uint32_t comm = mapped(OTF2_MAPPING_COMM, r.u32());
      const std::uint32_t tag = r.u32();
      const std::uint64_t length = r.u64();
      const std::uint64_t request = type == kMpiIsend || type == kMpiIrecv ? r.u64() : 0;
      if (!r.ok) return bad("a truncated message record");
      ++records;
      if (type == kMpiSend) CPREPLAY_CALL(mpi_send, peer, comm, tag, length);
      else if (type == kMpiRecv) CPREPLAY_CALL(mpi_recv, peer, comm, tag, length);
      else if (type == kMpiIsend) CPREPLAY_CALL(mpi_isend, peer, comm, tag, length, request);
      else CPREPLAY_CALL(mpi_irecv, peer, comm, tag, length, request);
      return Stop::kContinue;
    }
    case kMpiCollectiveEnd: {
      const OTF2_CollectiveOp op = r.u8();
      const std::uint32_t comm = mapped(OTF2_MAPPING_COMM, r.u32());
      const std::uint32_t root = r.u32();
      const std::uint64_t sent = r.u64();
      const std::uint64_t received = r.u64();
      if (!r.ok) return bad("a truncated MpiCollectiveEnd");
      ++records;
      CPREPLAY_CALL(mpi_collective_end, op, comm, root, sent, received);
      return Stop::kContinue;
    }
    case kMetric: {  // metric, count, then per value its type byte and compressed value
      r.u32();
      const std::uint8_t n = r.u8();
      for (unsigned i = 0; i < n && r.ok; ++i) {
        r.u8();
        r.u64();
      }
      break;
    }
    case kThreadFork: {
      const OTF2_Paradigm model = r.u8();
      const std::uint32_t requested = r.u32();
      if (!r.ok) return bad("a truncated ThreadFork");
      ++records;
      CPREPLAY_CALL(thread_fork, model, requested);
      return Stop::kContinue;
    }
    case kThreadJoin: {
      const OTF2_Paradigm model = r.u8();
      if (!r.ok) return bad("a truncated ThreadJoin");
      ++records;
      CPREPLAY_CALL(thread_join, model);
      return Stop::kContinue;
    }
    case kThreadTeamBegin:
    case kThreadTeamEnd: {
      const std::uint32_t team = mapped(OTF2_MAPPING_COMM, r.u32());
      if (!r.ok) return bad("a truncated thread team record");
      ++records;
      if (type == kThreadTeamBegin) CPREPLAY_CALL(thread_team_begin, team);
      else CPREPLAY_CALL(thread_team_end, team);
      return Stop::kContinue;
    }
    case kThreadAcquireLock:
    case kThreadReleaseLock: {
      const OTF2_Paradigm model = r.u8();
      const std::uint32_t lock = r.u32();
      const std::uint32_t order = r.u32();
      if (!r.ok) return bad("a truncated lock record");
      ++records;
      if (type == kThreadAcquireLock) CPREPLAY_CALL(thread_acquire_lock, model, lock, order);
      else CPREPLAY_CALL(thread_release_lock, model, lock, order);
      return Stop::kContinue;
    }
    case kProgramBegin: {
      const std::uint32_t name = mapped(OTF2_MAPPING_STRING, r.u32());
      const std::uint32_t n = r.u32();
      // Each argument takes at least its length byte: a count beyond the record is damage.
      if (!r.ok || n > static_cast<std::uint64_t>(r.end - r.p))
        return bad("a truncated ProgramBegin");
      if (kCall) args_.resize(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t arg = mapped(OTF2_MAPPING_STRING, r.u32());
        if (kCall) args_[i] = arg;
      }
      if (!r.ok) return bad("a truncated ProgramBegin");
      ++records;
      CPREPLAY_CALL(program_begin, name, n, n > 0 ? args_.data() : nullptr);
      return Stop::kContinue;
    }
    case kProgramEnd: {
      const auto status = static_cast<std::int64_t>(r.u64());
      if (!r.ok) return bad("a truncated ProgramEnd");
      ++records;
      CPREPLAY_CALL(program_end, status);
      return Stop::kContinue;
    }
    default:
      // The OpenMP 1.x records and CallingContextEnter/Leave (which libotf2 converts for
      // other callbacks), and types we do not know: the library reads those files.
      why = "record type " + std::to_string(type) + ", which the decoder leaves to libotf2";
      return Stop::kBad;
  }
  if (!r.ok) return bad("a truncated record");
  ++records;  // a record we do not keep: counted, no callback registered for it
  return Stop::kContinue;
}

#undef CPREPLAY_CALL

/// Runs one pass over the whole file.
template <bool kCall>
Stop run(const EventFile& file, std::uint64_t chunk_size, std::vector<std::uint8_t>& buf,
         Pass<kCall>& pass) {
  const std::uint64_t size = file.size();
  for (std::uint64_t offset = 0;; offset += chunk_size) {
    if (offset >= size) {
      pass.why = "the file ends after an end-of-chunk record";
      return Stop::kBad;
    }
    const auto n = static_cast<std::size_t>(std::min(chunk_size, size - offset));
    if (!file.read(offset, buf.data(), n)) {
      pass.why = "a read error";
      return Stop::kBad;
    }
    const Stop s = pass.chunk(buf.data(), buf.data() + n);
    if (s != Stop::kNextChunk) return s;
  }
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
  const EventFile file(path);
  if (file.size() == 0) {
    result.not_taken = "an empty or unreadable file";
    return result;
  }
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min(chunk_size, file.size())));
  std::vector<OTF2_StringRef> args;
  Pass<false> check(local, callbacks, user_data, location, args);
  if (run(file, chunk_size, buf, check) != Stop::kEndOfFile) {
    result.not_taken = check.why;
    return result;
  }
  result.taken = true;
  Pass<true> decode(local, callbacks, user_data, location, args);
  const Stop s = run(file, chunk_size, buf, decode);
  result.records = decode.records;
  result.interrupted = s == Stop::kInterrupted;
  if (s == Stop::kBad) result.changed = decode.why;
  return result;
}

}  // namespace cpreplay::io
