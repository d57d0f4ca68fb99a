// SPDX-License-Identifier: BSD-3-Clause
// What a location's local definitions (<location>.def) change in its events, for the direct
// event decoder (io/otf2_event_decoder.hpp): the mapping tables and the clock offsets, read from
// the file directly when it holds nothing else (as Score-P writes it), else handed over by
// libotf2's definition reader. Their semantics are libotf2's (OTF2 3.x, facts only).
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cpreplay::io {

/// What a location's local definitions (<location>.def) change in its events: the mapping
/// tables (local id -> global id, per OTF2_MappingType) and the clock offsets. Filled by
/// read_local_definitions, or from libotf2's MappingTable and ClockOffset callbacks while it
/// reads the file; `usable` turns false on anything the decoder cannot reproduce exactly, and
/// the library then reads the events.
class LocalEventDefinitions {
 public:
  /// Copies `map` (valid only during the callback). Types libotf2 ignores are ignored.
  void add_mapping(OTF2_MappingType type, const OTF2_IdMap* map);
  /// A mapping table as (local, global) pairs, each local id once.
  void add_pairs(OTF2_MappingType type,
                 std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs);
  /// One ClockOffset record, in file order.
  void add_clock_offset(std::uint64_t time, std::int64_t offset);

  bool usable() const { return usable_; }
  bool has_mapping(OTF2_MappingType type) const {
    return type < OTF2_MAPPING_MAX && mapped_[type];
  }

  /// libotf2's mapping: the global id of `local`, or `local` itself when the table (or the
  /// whole type) has no entry for it.
  std::uint64_t map(OTF2_MappingType type, std::uint64_t local) const {
    if (!mapped_[type]) return local;
    const Table& t = tables_[type];
    if (local < t.dense.size()) return t.dense[local];
    return t.sparse.empty() ? local : map_sparse(t, local);
  }

  /// libotf2's clock intervals: one between each two consecutive offsets.
  struct Interval {
    std::uint64_t begin = 0, end = 0;
    double slope = 0;
    std::int64_t offset = 0;
  };
  const std::vector<Interval>& intervals() const { return intervals_; }

 private:
  struct Table {
    std::vector<std::uint64_t> dense;                              ///< locals 0..n-1
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sparse;  ///< the rest, by local
  };
  static std::uint64_t map_sparse(const Table& t, std::uint64_t local);
  Table tables_[OTF2_MAPPING_MAX];
  bool mapped_[OTF2_MAPPING_MAX] = {};
  std::vector<Interval> intervals_;
  bool have_pending_ = false;
  std::uint64_t pending_time_ = 0;
  std::int64_t pending_offset_ = 0;
  bool usable_ = true;
};

/// Reads `path`, a location's local definitions written in chunks of `chunk_size` bytes, into
/// `out` when it holds nothing but mapping tables and clock offsets that libotf2 would read
/// without complaint (what Score-P writes); false otherwise, and then `out` is to be discarded
/// and libotf2 to read the file (it would fail, or it holds records this reader leaves to it).
bool read_local_definitions(const std::string& path, std::uint64_t chunk_size,
                            LocalEventDefinitions& out);

}  // namespace cpreplay::io
