// SPDX-License-Identifier: BSD-3-Clause
// OTF2's buffer layout, read without libotf2 (for io/otf2_event_decoder.cpp,
// io/otf2_local_definitions.cpp and the cut check of io/otf2_reader.cpp only): the chunk header
// and record markers, compressed integers, record lengths (from OTF2 3.x's src/OTF2_Buffer.[ch],
// facts only), a file read chunk by chunk into one buffer, and whether a definition file was cut
// short.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace cpreplay::io::otf2_buffer {

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

// Reading. A chunk's bytes lie in a buffer followed by kSlack zero bytes. Values are read
// without a bound check, and the position is checked against the chunk's end after each record
// (or list element), before anything read is used: no record this decoder reads field by field
// reaches further than 64 bytes past a position that was inside the chunk (kSlack is twice that).
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
/// The record must end before the chunk does (libotf2 then sets the position to its end), or
/// with it if `may_end` (the data of a file cut short). Moves `p` to the record's data and sets
/// `record_end`; false if it does not fit.
inline bool record(const std::uint8_t*& p, const std::uint8_t* end,
                   const std::uint8_t*& record_end, bool may_end = false) {
  std::uint64_t len = *p++;
  if (len == 0xff) {
    len = load64(p);
    p += 8;
  }
  if (p > end) return false;
  const auto room = static_cast<std::uint64_t>(end - p);
  if (len > room || (len == room && !may_end)) return false;
  record_end = p + len;
  return true;
}

/// A file read with pread at any offset (no whole-file buffer).
class ChunkedFile {
 public:
  explicit ChunkedFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode))
      size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~ChunkedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChunkedFile(const ChunkedFile&) = delete;
  ChunkedFile& operator=(const ChunkedFile&) = delete;

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

/// How the records of a chunk ended. kCut: the file ends before its records do (inside the last
/// chunk, or after an end-of-chunk record): a file cut short, whose complete records before the
/// cut are intact.
enum class Stop { kNextChunk, kEndOfFile, kBad, kInterrupted, kCut };

/// Reads `file` chunk by chunk (`chunk_size` bytes, the last one shorter) into `buf` (a chunk
/// and kSlack more bytes), clears the slack, and hands each chunk to `records(begin, end)` until
/// it returns something other than kNextChunk. A file that ends after the end-of-chunk record of
/// a whole chunk gives kCut, one that cannot be read kBad (`why` says which).
template <class Records>
Stop for_each_chunk(const ChunkedFile& file, std::uint64_t chunk_size, std::uint8_t* buf,
                    const char*& why, Records&& records) {
  const std::uint64_t size = file.size();
  for (std::uint64_t offset = 0;; offset += chunk_size) {
    if (offset >= size) {
      // Only a whole chunk ends with an end-of-chunk record (writers fill every chunk but the
      // last): after a whole one the file was cut, after a short one it is damaged.
      why = "after an end-of-chunk record";
      return size % chunk_size == 0 ? Stop::kCut : Stop::kBad;
    }
    const auto n = static_cast<std::size_t>(std::min(chunk_size, size - offset));
    if (!file.read(offset, buf, n)) {
      why = "a read error";
      return Stop::kBad;
    }
    std::memset(buf + n, 0, kSlack);
    const Stop s = records(buf, buf + n);
    if (s != Stop::kNextChunk) return s;
  }
}

/// A definition file (the global traces.def or a location's .def), read for its structure only:
/// chunk headers, then records that all have a length (definitions have no timestamps and no
/// records without one) up to an end-of-chunk or end-of-file record. Returns where a file cut
/// short ends, as Stop::kCut describes it ("inside a record", "inside a chunk header", "before
/// the end-of-file record", "after an end-of-chunk record"); "" for a whole file and for one
/// damaged otherwise (libotf2 reports that). libotf2 itself reads past the end of a file cut
/// short (docs/replay-engine.md section 10), so its readers ask this first.
inline std::string definitions_cut(const std::string& path, std::uint64_t chunk_size) {
  const ChunkedFile file(path);
  if (file.size() == 0 || chunk_size == 0) return "";
  const auto bytes = static_cast<std::size_t>(std::min(chunk_size, file.size()));
  std::string buf(bytes + kSlack, '\0');
  auto* data = reinterpret_cast<std::uint8_t*>(buf.data());
  const char* why = nullptr;
  const Stop s = for_each_chunk(
      file, chunk_size, data, why, [&](const std::uint8_t* p, const std::uint8_t* end) {
        const bool short_chunk = static_cast<std::uint64_t>(end - p) < chunk_size;
        const auto ran_out = [&](const char* what) {
          why = what;
          return short_chunk ? Stop::kCut : Stop::kBad;
        };
        if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderSize))
          return ran_out("inside a chunk header");
        if (p[0] != kChunkHeader || p[1] != kLittleEndian) return Stop::kBad;
        p += kChunkHeaderSize;
        for (;;) {
          if (p >= end) return ran_out("before the end-of-file record");
          const std::uint8_t type = *p++;
          if (type == kEndOfChunk) return Stop::kNextChunk;
          if (type == kEndOfFile) return Stop::kEndOfFile;
          const std::uint8_t* record_end = nullptr;
          if (!record(p, end, record_end, short_chunk)) return ran_out("inside a record");
          p = record_end;
        }
      });
  return s == Stop::kCut && why ? why : "";
}

}  // namespace cpreplay::io::otf2_buffer
