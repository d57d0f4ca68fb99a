// SPDX-License-Identifier: BSD-3-Clause
// Critical-path pass: ownership followed backwards from the last MPI_Finalize (scalasca-metrics.md
// §7.2-§7.3) by pointer jumping over the wait states, then each rank accumulates the time it
// owned per call path.
#pragma once

#include <vector>

#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/collectives.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// One stretch of the path owned by this rank, in time order: from where the path arrived (the
/// synchpoint's cut plus the waiting subtracted there) to the cut of the stretch's end event.
/// Summed over all ranks, end - begin adds up to the critical-path length.
/// Hybrid traces: a stretch that contains whole parallel regions is split into the pieces each
/// thread carries (docs/openmp.md, "Critical path"): the master's up to a fork, the threads'
/// between the barriers, the master's from the join on; pieces without time are left out, and
/// consecutive pieces of one thread are one. from_event and to_event are the whole stretch's.
struct PathStretch {
  Ticks begin = 0;
  Ticks end = 0;
  EventIdx from_event = kNoEvent;  ///< synchpoint X where the path arrived (kNoEvent: the start)
  EventIdx to_event = kNoEvent;    ///< end event of the stretch (trace size: end of the events)
  std::uint32_t callpath = UINT32_MAX;  ///< call path at the end of the stretch (on `thread`)
  Rank from_rank = -1;  ///< rank the path came from (X's partner); -1 for the first stretch
  int thread = 0;       ///< the thread that carries it (0: the master; always 0 for pure MPI)
  int from_thread = 0;  ///< the thread of from_rank the path came from (MPI: the master)
};

struct CriticalPathResult {
  std::vector<double> cp;       ///< the rank's critical-path time per call path (exclusive)
  /// Hybrid traces: worker thread t's (t = 1, 2, ...) critical-path time per call path in
  /// thread_cp[t - 1] (docs/openmp.md, "Critical path"); cp is then the master's. Empty for
  /// pure MPI.
  std::vector<std::vector<double>> thread_cp;
  std::vector<double> runtime;  ///< whole-run exclusive time per call path (§7.2 segments)
  std::vector<double> waits;    ///< W[c]: waiting time of this rank's wait states per call path
  std::uint64_t owned_segments = 0;  ///< how many stretches of the path this rank owned
  std::vector<PathStretch> stretches;  ///< this rank's owned stretches, in time order
};

/// Finds the critical path (successor links in one exchange, the list ranked from its head in
/// ceil(log2 hops) rounds) and accumulates the owned segments, for every held rank (result i,
/// waits[i], collectives[i]: shard.traces[i]). The list spans the processes; hops between
/// co-located ranks are answered in memory. Throws ReplayError when the hops form a cycle (no
/// real run's communication can).
/// Throws IncompleteTraceError (via World::agree, on the lowest such rank) when a rank has no
/// MPI_Finalize: the path has no end to start from.
/// MPI: collective on world.
/// Hybrid traces (shard.workers non-empty): where the path crosses a parallel region of a master,
/// it is followed through the threads from the join back to the fork (docs/openmp.md).
/// Throws TraceError when a team's threads saw different numbers of barriers.
/// With `partial_start` >= 0 (--partial) a trace without MPI_Finalize is walked from the end
/// of that rank's events (the rank that stopped first) instead of failing.
std::vector<CriticalPathResult> critical_path_pass(
    const replay::World& world, const Definitions& defs, const CallTree& tree, const Shard& shard,
    const std::vector<WaitStateResult>& waits,
    const std::vector<replay::CollectiveTable>& collectives, Rank partial_start = -1);

}  // namespace cpreplay::analysis
