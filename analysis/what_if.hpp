// SPDX-License-Identifier: BSD-3-Clause
// What-if analysis: critical-path zeroing, balance and rebalance gains for the top call paths,
// near-critical time, and a user's own scenario, from one re-timing replay (docs/what-if.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/indicators.hpp"
#include "analysis/metric_table.hpp"
#include "analysis/profile.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "cpreplay/summary.hpp"
#include "replay/retime.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

struct WhatIfSettings {
  std::size_t top = 10;          ///< --what-if-top K: call paths by critical-path time
  double near_critical = 0.01;   ///< --near-critical δ: slack limit as a share of the runtime
  /// --what-if REGION=FACTOR, in the order given: together one scenario.
  std::vector<std::pair<std::string, double>> changes;
  std::size_t window = 4096;     ///< --window: parts of the run replayed at a time
  bool partial = false;          ///< --partial: unmatched messages carry no constraint
  /// The forward replay's message matching, kept for the re-timing replay (taken over), or null.
  replay::RetimeMatches* matches = nullptr;
  /// Pure-MPI traces: per held rank, the profile's ticks and visits of the same timestamps
  /// (profile_pass), or null: the re-timing replay counts them itself.
  const std::vector<CallpathTicks>* profile = nullptr;
};

/// What the replay found, identical on every rank. Seconds.
struct WhatIfResult {
  double runtime = 0.0;  ///< the unchanged run, re-measured (= the trace's wall-clock time)
  double near_critical_fraction = 0.0;
  std::size_t top = 0;
  struct Gains {
    std::uint32_t callpath = 0;
    double zeroing = 0.0;
    double balance = 0.0;
    double rebalance = 0.0;
  };
  std::vector<Gains> gains;  ///< the top call paths, by critical-path time
  std::vector<double> near_critical;  ///< per call path, summed over ranks (all threads)
  /// Hybrid traces: the critical-path profile over all thread locations, per call path (the
  /// summary's rows have the masters' only); empty for pure-MPI traces.
  std::vector<double> path_profile;
  bool has_scenario = false;
  std::vector<std::pair<std::string, double>> changes;
  double scenario_runtime = 0.0;
  std::vector<double> scenario_path;  ///< per call path: the scenario's critical path, all ranks
  std::uint32_t clocks = 0;
  std::uint64_t parts = 0;
  std::uint32_t forward_rounds = 0;
  std::uint32_t backward_rounds = 0;
  std::uint64_t released = 0;
  double prepare_seconds = 0.0;  ///< rank 0's share of the time, for -v
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;
};

/// Throws UsageError naming the option when a --what-if region is not a region of the trace.
/// MPI: local.
void check_what_if_regions(const Definitions& defs, const WhatIfSettings& settings);

/// Runs the re-timing replay for the top call paths' zeroing, balance and rebalance scenarios
/// and the user's scenario, and the slack pass; writes near_critical_path into `sevs` (one per
/// held rank, as shard.traces: its master thread) and, for hybrid traces, `thread_sevs`
/// ((*thread_sevs)[i][t - 1]: thread t of held rank i, as shard.workers; nullptr for pure MPI).
/// `path` is the critical-path summary (its profile, over all thread locations, picks the top
/// call paths). MPI: collective on world.
WhatIfResult what_if_pass(const replay::World& world, const Definitions& defs,
                          const CallTree& tree, const Shard& shard, std::vector<Severity>& sevs,
                          std::vector<std::vector<Severity>>* thread_sevs,
                          const CriticalPathSummary& path, const WhatIfSettings& settings);

/// The summary's what-if block and its finding (balancing pays where a static rebalance would
/// not, or the reverse). `summary.callpaths` must be filled. MPI: local (rank 0).
void describe_what_if(Summary& summary, const WhatIfResult& result, const Definitions& defs,
                      const CallTree& tree);

}  // namespace cpreplay::analysis
