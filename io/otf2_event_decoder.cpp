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
#include <memory>

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
  if (type >= OTF2_MAPPING_MAX) return;  // ignored by libotf2 too (see add_pairs)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  if (map == nullptr || OTF2_IdMap_Traverse(map, &collect_pair, &pairs) != OTF2_SUCCESS) {
    usable_ = false;
    return;
  }
  // Every pair must be what the library's own look-up answers (a sparse table with a local id
  // twice would not be): then "the pair's global id, else the local id" is exactly
  // OTF2_IdMap_GetGlobalId as otf2_evt_reader_map uses it.
  for (const auto& [local, global] : pairs) {
    std::uint64_t found = 0;
    if (OTF2_IdMap_GetGlobalIdSave(map, local, &found) != OTF2_SUCCESS || found != global) {
      usable_ = false;
      return;
    }
  }
  add_pairs(type, std::move(pairs));
}

void LocalEventDefinitions::add_pairs(OTF2_MappingType type,
                                      std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs) {
  // otf2_archive_location_set_mapping_table: unknown types are ignored, a second table of one
  // type is an error (the library's definition reading then fails before any event).
  if (type >= OTF2_MAPPING_MAX) return;
  if (mapped_[type]) {
    usable_ = false;
    return;
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

// Reading. A chunk's bytes lie in a buffer followed by kSlack zero bytes. Values are read
// without a bound check, and the position is checked against the chunk's end after each record
// (or list element), before anything read is used: no record this decoder reads field by field
// reaches further than 64 bytes past a position that was inside the chunk.
constexpr std::size_t kSlack = 128;

inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

/// OTF2_Buffer_ReadUint32/64: a length byte, 0 for the value 0, 0xff for the all-ones
/// ("undefined") value, else that many little-endian bytes (at most kMax: 4 or 8; more sets
/// `bad`). Returns the position after the value.
template <unsigned kMax>
inline const std::uint8_t* compressed(const std::uint8_t* p, std::uint64_t& v, bool& bad) {
  const unsigned n = *p;
  const std::uint64_t x = load64(p + 1);
  if (n - 1u < kMax) {
    v = n == 8 ? x : x & ((std::uint64_t{1} << (8 * n)) - 1);
    return p + 1 + n;
  }
  v = n == 0 ? 0 : kMax == 4 ? UINT32_MAX : UINT64_MAX;
  bad |= n != 0 && n != 0xff;
  return p + 1;
}

inline const std::uint8_t* u32(const std::uint8_t* p, std::uint32_t& v, bool& bad) {
  std::uint64_t x;
  p = compressed<4>(p, x, bad);
  v = static_cast<std::uint32_t>(x);
  return p;
}

inline const std::uint8_t* u64(const std::uint8_t* p, std::uint64_t& v, bool& bad) {
  return compressed<8>(p, v, bad);
}

/// The length of a record (OTF2_Buffer_GuaranteeRecord): one byte, or 0xff and a raw uint64.
/// The record must end before the chunk does (libotf2 then sets the position to its end).
/// Moves `p` to the record's data and sets `record_end`; false if it does not fit.
inline bool record(const std::uint8_t*& p, const std::uint8_t* end,
                   const std::uint8_t*& record_end) {
  std::uint64_t len = *p++;
  if (len == 0xff) {
    len = load64(p);
    p += 8;
  }
  if (p >= end || len >= static_cast<std::uint64_t>(end - p)) return false;
  record_end = p + len;
  return true;
}

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


enum class Stop { kNextChunk, kEndOfFile, kBad, kInterrupted };

/// One pass over the chunks. kCall false: checks only; true: also calls back. Both passes run
/// the same checks, so the second meets nothing the first did not accept.
template <bool kCall>
class Pass {
 public:
  Pass(const LocalEventDefinitions& local, const EventCallbacks& cb, void* ud,
       OTF2_LocationRef loc, std::vector<OTF2_StringRef>& args)
      : local_(local), cb_(cb), ud_(ud), loc_(loc), args_(args) {}

  std::string why;            ///< set with Stop::kBad
  std::uint64_t records = 0;  ///< event records read (libotf2's global event position)

  Stop chunk(const std::uint8_t* p, const std::uint8_t* end);

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
template <bool kCall>
bool Pass<kCall>::attribute_list(const std::uint8_t*& p, const std::uint8_t* end) {
  const std::uint8_t* r_end = nullptr;
  if (!record(p, end, r_end)) return bad("an attribute list longer than its chunk"), false;
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
template <bool kCall>
bool Pass<kCall>::metric(const std::uint8_t* q, const std::uint8_t* record_end) {
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
template <bool kCall>
Stop Pass<kCall>::program_begin(std::uint64_t t, const std::uint8_t* q,
                                const std::uint8_t* record_end) {
  bool invalid = false;
  std::uint32_t name = 0, n = 0;
  q = u32(q, name, invalid);
  q = u32(q, n, invalid);
  // Each argument takes at least its length byte: a count beyond the record is damage.
  if (invalid || q > record_end || n > static_cast<std::uint64_t>(record_end - q))
    return bad("a truncated ProgramBegin");
  if (kCall) args_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t arg = 0;
    q = u32(q, arg, invalid);
    if (invalid || q > record_end) return bad("a truncated ProgramBegin");
    if (kCall) args_[i] = mapped(OTF2_MAPPING_STRING, arg);
  }
  ++records;
  if (kCall && cb_.program_begin &&
      cb_.program_begin(loc_, t, records, ud_, nullptr, mapped(OTF2_MAPPING_STRING, name), n,
                        n > 0 ? args_.data() : nullptr) != OTF2_CALLBACK_SUCCESS)
    return Stop::kInterrupted;
  return Stop::kNextChunk;
}

// Calls back (second pass) if the callback is set; a callback's "interrupt" stops the reading
// after the record was counted, as OTF2_EvtReader_ReadEvents counts it.
#define CPREPLAY_CALL(name, ...)                                                        \
  do {                                                                                  \
    if (kCall && cb_.name &&                                                            \
        cb_.name(loc_, t, records, ud_, nullptr, __VA_ARGS__) != OTF2_CALLBACK_SUCCESS) \
      return Stop::kInterrupted;                                                        \
  } while (0)

/// The records of one chunk, [p, end): a chunk header, then records up to an end-of-chunk or
/// end-of-file record (OTF2_EvtReader_inc.c, otf2_evt_reader_read). The timestamp of the records
/// that follow persists across chunks (OTF2_Buffer_ReadTimeStamp). Singleton records (Enter,
/// Leave, the four MPI request records: OTF2_EvtReader.c, otf2_evt_reader_skip) have no length,
/// one compressed value, and the chunk must go on after it (OTF2_Buffer_GuaranteeCompressed);
/// every other record has a length, and its fields must lie within it.
template <bool kCall>
Stop Pass<kCall>::chunk(const std::uint8_t* p, const std::uint8_t* end) {
  if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderSize) || p[0] != kChunkHeader)
    return bad("no chunk header");
  if (p[1] != kLittleEndian) return bad("not little-endian");
  p += kChunkHeaderSize;
  for (;;) {
    if (p >= end) return bad("a chunk without an end-of-chunk record");
    if (*p == kTimestamp) {
      raw_time_ = load64(p + 1);
      p += 9;
      if (p >= end) return bad("a chunk without an end-of-chunk record");
    }
    const std::uint8_t type = *p++;
    if (type <= kAttributeList) {
      if (type == kEndOfChunk) return Stop::kNextChunk;
      if (type == kEndOfFile) return Stop::kEndOfFile;
      if (type != kAttributeList) return bad("a buffer record inside a chunk");
      if (!attribute_list(p, end)) return Stop::kBad;
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
        if (invalid || p >= end) return bad("a truncated Enter or Leave");
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
        if (invalid || p >= end) return bad("a truncated request record");
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
        if (!record(p, end, r_end)) return bad("a record longer than its chunk");
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
            if (kCall && cb_.mpi_collective_begin &&
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

/// Runs one pass over the whole file; `buf` holds a chunk and kSlack more bytes.
template <bool kCall>
Stop run(const EventFile& file, std::uint64_t chunk_size, std::uint8_t* buf, Pass<kCall>& pass) {
  const std::uint64_t size = file.size();
  for (std::uint64_t offset = 0;; offset += chunk_size) {
    if (offset >= size) {
      pass.why = "the file ends after an end-of-chunk record";
      return Stop::kBad;
    }
    const auto n = static_cast<std::size_t>(std::min(chunk_size, size - offset));
    if (!file.read(offset, buf, n)) {
      pass.why = "a read error";
      return Stop::kBad;
    }
    std::memset(buf + n, 0, kSlack);
    const Stop s = pass.chunk(buf, buf + n);
    if (s != Stop::kNextChunk) return s;
  }
}

/// One chunk of a local definition file (OTF2_DefReader_inc.c, otf2_def_reader_read and the
/// MappingTable and ClockOffset readers; otf2_id_map.c, otf2_id_map_read): a chunk header, then
/// records with a length up to an end-of-chunk or end-of-file record, no timestamps.
/// MappingTable: the OTF2_MappingType byte, the entry count (compressed uint64), the
/// OTF2_IdMapMode byte, then the global ids (dense: local ids 0, 1, ...) or (local, global)
/// pairs (sparse), all compressed uint64. ClockOffset: the time (raw uint64), the offset
/// (compressed int64) and the standard deviation (a raw double). Anything else: false.
Stop local_definitions_chunk(const std::uint8_t* p, const std::uint8_t* end,
                             LocalEventDefinitions& out) {
  if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderSize) || p[0] != kChunkHeader ||
      p[1] != kLittleEndian)
    return Stop::kBad;
  p += kChunkHeaderSize;
  for (;;) {
    if (p >= end) return Stop::kBad;
    const std::uint8_t type = *p++;
    if (type == kEndOfChunk) return Stop::kNextChunk;
    if (type == kEndOfFile) return Stop::kEndOfFile;
    const std::uint8_t* r_end = nullptr;
    if (!record(p, end, r_end)) return Stop::kBad;
    const std::uint8_t* q = p;
    p = r_end;
    bool invalid = false;
    if (type == 5) {  // OTF2_LOCAL_DEF_MAPPING_TABLE
      const auto mapping = static_cast<OTF2_MappingType>(*q++);
      std::uint64_t n = 0;
      q = u64(q, n, invalid);
      const std::uint8_t mode = *q++;
      if (invalid || q > r_end || n > static_cast<std::uint64_t>(r_end - q) ||
          (mode != OTF2_ID_MAP_DENSE && mode != OTF2_ID_MAP_SPARSE))
        return Stop::kBad;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
      pairs.reserve(static_cast<std::size_t>(n));
      for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t local = i, global = 0;
        if (mode == OTF2_ID_MAP_SPARSE) q = u64(q, local, invalid);
        q = u64(q, global, invalid);
        // Sparse local ids in increasing order: the table libotf2 builds is then unambiguous.
        if (invalid || q > r_end || (i > 0 && local <= pairs.back().first)) return Stop::kBad;
        pairs.emplace_back(local, global);
      }
      if (mapping < OTF2_MAPPING_MAX && out.has_mapping(mapping)) return Stop::kBad;
      out.add_pairs(mapping, std::move(pairs));
    } else if (type == 6) {  // OTF2_LOCAL_DEF_CLOCK_OFFSET
      if (r_end - q < 8) return Stop::kBad;
      const std::uint64_t time = load64(q);
      std::uint64_t offset = 0;
      q = u64(q + 8, offset, invalid);
      if (invalid || r_end - q < 8) return Stop::kBad;
      out.add_clock_offset(time, static_cast<std::int64_t>(offset));
    } else {
      return Stop::kBad;
    }
    if (!out.usable()) return Stop::kBad;  // libotf2 would refuse it: let it say so
  }
}

}  // namespace

bool read_local_definitions(const std::string& path, std::uint64_t chunk_size,
                            LocalEventDefinitions& out) {
  if (!kLittleEndianHost || chunk_size < OTF2_CHUNK_SIZE_MIN || chunk_size > OTF2_CHUNK_SIZE_MAX)
    return false;
  const EventFile file(path);
  if (file.size() == 0) return false;
  const auto bytes = static_cast<std::size_t>(std::min(chunk_size, file.size()));
  const std::unique_ptr<std::uint8_t[]> buf(new std::uint8_t[bytes + kSlack]);
  for (std::uint64_t offset = 0; offset < file.size(); offset += chunk_size) {
    const auto n = static_cast<std::size_t>(std::min(chunk_size, file.size() - offset));
    if (!file.read(offset, buf.get(), n)) return false;
    std::memset(buf.get() + n, 0, kSlack);
    const Stop s = local_definitions_chunk(buf.get(), buf.get() + n, out);
    if (s == Stop::kEndOfFile) return true;
    if (s != Stop::kNextChunk) return false;
  }
  return false;
}

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
  // One chunk (as libotf2 holds one), not zeroed: run() clears the slack after each read.
  const auto bytes = static_cast<std::size_t>(std::min(chunk_size, file.size()));
  const std::unique_ptr<std::uint8_t[]> buf(new std::uint8_t[bytes + kSlack]);
  std::vector<OTF2_StringRef> args;
  Pass<false> check(local, callbacks, user_data, location, args);
  if (run(file, chunk_size, buf.get(), check) != Stop::kEndOfFile) {
    result.not_taken = check.why;
    return result;
  }
  result.taken = true;
  Pass<true> decode(local, callbacks, user_data, location, args);
  const Stop s = run(file, chunk_size, buf.get(), decode);
  result.records = decode.records;
  result.interrupted = s == Stop::kInterrupted;
  if (s == Stop::kBad) result.changed = decode.why;
  return result;
}

}  // namespace cpreplay::io
