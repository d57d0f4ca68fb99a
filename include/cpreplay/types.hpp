// SPDX-License-Identifier: BSD-3-Clause
// Strong id and time types shared by every module of cpreplay.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

namespace cpreplay {

/// A typed index: a RegionId cannot be passed where a CommId is expected.
template <class Tag, class Rep = std::uint32_t>
struct StrongId {
  Rep value = kInvalid;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr bool valid() const { return value != kInvalid; }
  constexpr friend bool operator==(StrongId a, StrongId b) { return a.value == b.value; }
  constexpr friend bool operator!=(StrongId a, StrongId b) { return a.value != b.value; }
  constexpr friend bool operator<(StrongId a, StrongId b) { return a.value < b.value; }
};

struct RegionTag {};
struct CommTag {};
struct CallpathTag {};
struct StringTag {};

using RegionId = StrongId<RegionTag>;
using CommId = StrongId<CommTag>;
using CallpathId = StrongId<CallpathTag>;
using StringId = StrongId<StringTag>;

/// World rank of an MPI process (= OTF2 location group of type PROCESS).
using Rank = std::int32_t;
/// Index of an event in one rank's event storage.
using EventIdx = std::uint32_t;
inline constexpr EventIdx kNoEvent = std::numeric_limits<EventIdx>::max();

/// Raw OTF2 timestamp (clock ticks, after OTF2's clock-offset correction).
using Ticks = std::uint64_t;

/// Converts ticks to seconds with the trace's clock properties. The one place this happens.
struct Clock {
  Ticks global_offset = 0;
  std::uint64_t ticks_per_second = 1;
  double seconds(Ticks t) const {
    return static_cast<double>(static_cast<std::int64_t>(t - global_offset)) /
           static_cast<double>(ticks_per_second);
  }
  /// Duration b - a in seconds, computed from the integer difference (exact for a <= b).
  double span(Ticks a, Ticks b) const {
    return static_cast<double>(static_cast<std::int64_t>(b - a)) /
           static_cast<double>(ticks_per_second);
  }
};

}  // namespace cpreplay

template <class Tag, class Rep>
struct std::hash<cpreplay::StrongId<Tag, Rep>> {
  std::size_t operator()(cpreplay::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value);
  }
};
