// SPDX-License-Identifier: BSD-3-Clause
// --time-correct: removes clock-condition violations by shifting each rank's clock by a
// constant, which preserves every local interval exactly.
#pragma once

#include <cstdint>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

struct ClockCorrection {
  std::int64_t offset = 0;           ///< ticks added to this rank's timestamps (<= 0)
  std::uint64_t moved_events = 0;    ///< events whose timestamp changed, all ranks
  int moved_ranks = 0;               ///< ranks whose clock was shifted
  double max_shift = 0.0;            ///< seconds, over all ranks
  bool consistent = true;            ///< false: no constant offsets satisfy every constraint
};

/// Each matched message requires send <= receive, each synchronizing collective requires that
/// nobody leaves before the last member (or the root) entered: o_src - o_dst <= t_dst - t_src.
/// Rank 0 solves this difference-constraint system with Bellman-Ford (the largest solution
/// with all offsets <= 0, i.e. the smallest shifts), broadcasts the offsets, and every rank
/// shifts its own timestamps. When the constraints contradict each other (clock drift rather
/// than offset), nothing is shifted and `consistent` is false.
/// MPI: collective on world.
ClockCorrection correct_clocks(const World& world, const Definitions& defs, LocalTrace& trace,
                               const MessageTable& messages, const CollectiveTable& collectives);

}  // namespace cpreplay::replay
