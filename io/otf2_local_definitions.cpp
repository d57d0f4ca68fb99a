// SPDX-License-Identifier: BSD-3-Clause
// Local definitions for the direct event decoder: see otf2_local_definitions.hpp. Facts from
// OTF2 3.x's src/otf2_archive_location.c (mapping tables, clock intervals), src/otf2_id_map.c
// and the generated OTF2_DefReader_inc.c; none of their code is copied.
#include "io/otf2_local_definitions.hpp"

#include <algorithm>
#include <memory>

#include "io/otf2_buffer.hpp"

namespace cpreplay::io {

using namespace otf2_buffer;

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

/// One chunk of a local definition file (OTF2_DefReader_inc.c, otf2_def_reader_read and the
/// MappingTable and ClockOffset readers; otf2_id_map.c, otf2_id_map_read): a chunk header, then
/// records with a length up to an end-of-chunk or end-of-file record, no timestamps.
/// MappingTable: the OTF2_MappingType byte, the entry count (compressed uint64), the
/// OTF2_IdMapMode byte, then the global ids (dense: local ids 0, 1, ...) or (local, global)
/// pairs (sparse), all compressed uint64. ClockOffset: the time (raw uint64), the offset
/// (compressed int64) and the standard deviation (a raw double). Anything else: false.
Stop definitions_chunk(const std::uint8_t* p, const std::uint8_t* end,
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
  const ChunkedFile file(path);
  if (file.size() == 0) return false;
  const auto bytes = static_cast<std::size_t>(std::min(chunk_size, file.size()));
  const std::unique_ptr<std::uint8_t[]> buf(new std::uint8_t[bytes + kSlack]);
  const char* why = nullptr;
  return for_each_chunk(file, chunk_size, buf.get(), why,
                        [&](const std::uint8_t* p, const std::uint8_t* end) {
                          return definitions_chunk(p, end, out);
                        }) == Stop::kEndOfFile;
}

}  // namespace cpreplay::io
