// SPDX-License-Identifier: BSD-3-Clause
// Critical-path indicators: the profile, its imbalance, and the performance-impact split into
// activities, intra- and inter-partition imbalance (scalasca-metrics.md §7.4-§7.7).
#pragma once

#include "analysis/critical_path.hpp"
#include "analysis/metric_table.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// Global quantities of the critical path, identical on all ranks.
struct CriticalPathSummary {
  double length = 0.0;  ///< gcplen: sum of the critical-path profile over call paths and ranks
  std::vector<double> profile;  ///< gcp[c]
};

/// Writes the critical-path metrics into `sevs[i]` for every held rank (which must already hold
/// time and the wait states, for critical_path_imbalance; cps[i] is the same rank's critical
/// path). Guards Scalasca 2.6's two 0/0 divisions (0/0 -> 0) as expected.json does. Sums over
/// ranks have one fixed order, so the values do not depend on the number of processes.
/// MPI: collective on world (sums of per-call-path arrays over ranks).
CriticalPathSummary indicator_pass(const replay::World& world, const RankBlocks& blocks,
                                   const CallTree& tree,
                                   const std::vector<CriticalPathResult>& cps,
                                   std::vector<Severity>& sevs);

/// Hybrid traces: writes critical_path, the impact indicators and critical_path_imbalance
/// (every thread a location, docs/openmp.md "Impact indicators per thread" and "Critical-path
/// imbalance per thread") into the masters' (`sevs[i]`) and worker threads'
/// (`thread_sevs[i][t - 1]`) severities from cps[i].cp and cps[i].thread_cp, and returns the
/// profile summed over all locations, in the same fixed rank order as indicator_pass. `sevs`
/// and `thread_sevs` must hold time, the wait states and the OpenMP metrics (idle threads
/// included). `worker_tails[i][t - 1]` is thread t's lost tail time per call path
/// (openmp_profile_pass), which its non-waiting time leaves out as scout.hyb's does.
/// MPI: collective on world.
CriticalPathSummary thread_critical_path_pass(
    const replay::World& world, const RankBlocks& blocks, const Definitions& defs,
    const CallTree& tree, const std::vector<CriticalPathResult>& cps, std::vector<Severity>& sevs,
    std::vector<std::vector<Severity>>& thread_sevs,
    const std::vector<std::vector<std::vector<double>>>& worker_tails);

}  // namespace cpreplay::analysis
