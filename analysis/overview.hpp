// SPDX-License-Identifier: BSD-3-Clause
// The data of --overview: each location's time (a rank, or a thread of a hybrid rank), binned
// along the run, split by the top call paths, and its waiting time per bin.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/metric_table.hpp"
#include "analysis/openmp.hpp"
#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// What every rank bins by, identical on all ranks.
struct OverviewLayout {
  Ticks begin = 0;  ///< the run: first event over all ranks
  Ticks end = 0;    ///< last event over all ranks
  std::size_t bins = 0;
  /// The call paths with the most exclusive time over all ranks, largest first.
  std::vector<std::uint32_t> top;
  std::vector<double> top_time;  ///< their exclusive time over all ranks, seconds
  double total_time = 0.0;       ///< all exclusive time over all ranks, seconds
  /// Per call path: its index in `top`, or top.size() ("other").
  std::vector<std::uint8_t> class_of;
  std::size_t columns() const { return top.size() + 2; }  ///< top, other, waiting
};

/// Picks the `max_top` call paths with the most exclusive time (the `time` rows of `sevs`, the
/// held ranks, summed over all ranks; at least 0.5 % of all of it) and the run's extent.
/// Hybrid traces: `workers[i]` holds the severities of held rank i's threads 1, 2, ..., whose
/// `time` less `omp_idle_threads` (time they ran, not idle time) is added to the rank's.
/// MPI: collective on world.
OverviewLayout overview_layout(const replay::World& world, const RankBlocks& blocks,
                               const CallTree& tree, const std::vector<Severity>& sevs,
                               const std::vector<std::vector<Severity>>& workers, Ticks begin,
                               Ticks end, std::size_t bins, std::size_t max_top);

/// One location's bins, row-major [bin][column]: the share of the bin (0..1) spent exclusively
/// in each top call path, in other call paths, and waiting in wait states (which overlaps the
/// others): the MPI ones of `waits` (null: none, as on a worker thread) and the `omp_count`
/// OpenMP ones at `omp`. MPI: local.
std::vector<float> overview_bins(const OverviewLayout& layout, const CallTree& tree,
                                 const LocalTrace& trace, const WaitStateResult* waits,
                                 const OmpWaitState* omp, std::size_t omp_count,
                                 std::uint64_t ticks_per_second);

}  // namespace cpreplay::analysis
