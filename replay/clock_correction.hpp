// SPDX-License-Identifier: BSD-3-Clause
// --time-correct: removes clock-condition violations by shifting each rank's clock by a
// constant, which preserves every local interval exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

struct ClockCorrection {
  std::uint64_t moved_events = 0;    ///< events whose timestamp changed, all ranks
  int moved_ranks = 0;               ///< ranks whose clock was shifted
  double max_shift = 0.0;            ///< seconds, over all ranks
  bool consistent = true;            ///< false: no constant offsets satisfy every constraint
  std::uint64_t jumped_events = 0;   ///< event moves by forward jumps (drift), all rounds
  int jump_rounds = 0;
  double max_jump = 0.0;             ///< largest single jump, seconds
};

/// Each matched message requires send <= receive, each synchronizing collective requires that
/// nobody leaves before the last member (or the root) entered: o_src - o_dst <= t_dst - t_src.
/// Process 0 solves this difference-constraint system with Bellman-Ford (the largest solution
/// with all offsets <= 0, i.e. the smallest shifts), broadcasts the offsets, and every process
/// shifts the timestamps of its ranks (messages[i], collectives[i]: shard.traces[i]). When the constraints contradict each other (clock drift rather
/// than offset), nothing is shifted and `consistent` is false.
/// MPI: collective on world.
ClockCorrection correct_clocks(const World& world, const Definitions& defs, Shard& shard,
                               const std::vector<MessageTable>& messages,
                               const std::vector<CollectiveTable>& collectives);

/// One round of forward jumps for what constant offsets could not fix (drifting clocks): every
/// receive earlier than its send, and every collective end earlier than the begin it must
/// follow, moves forward to it together with the rest of its rank's events (a logical clock
/// without amortization: only the interval at the jump grows). Sources move in the same round,
/// so callers repeat with re-collected timings until no rank moves. Returns the events moved
/// on all ranks in this round and adds the held ranks' largest jump to `max_jump` (seconds).
/// MPI: collective on world.
std::uint64_t forward_jumps(const World& world, const Definitions& defs, Shard& shard,
                            const std::vector<MessageTable>& messages,
                            const std::vector<CollectiveTable>& collectives, double& max_jump);

/// Hybrid traces: the master thread's timestamps before the correction, to move its workers'
/// events with it (taken before correct_clocks, applied after the last forward jump).
std::vector<Ticks> master_times(const LocalTrace& master);

/// Moves every worker event by the shift its master's latest event at or before it got
/// (constant offsets and forward jumps alike): the threads of a process share its clock, so
/// every interval between a thread's events and its master's is kept, except across a jump.
/// Returns the worker events moved. MPI: local.
std::uint64_t shift_threads_with_master(const std::vector<Ticks>& master_before,
                                        const LocalTrace& master,
                                        std::vector<LocalTrace>& workers);

}  // namespace cpreplay::replay
