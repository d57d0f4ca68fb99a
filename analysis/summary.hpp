// SPDX-License-Identifier: BSD-3-Clause
// Final reductions for the summary: per-call-path totals, wait-state rankings, impact split and
// the one-sentence findings.
#pragma once

#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "analysis/indicators.hpp"
#include "analysis/metric_table.hpp"
#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/shard.hpp"
#include "cpreplay/summary.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// Builds the summary (complete on process 0; other processes get partial data). `sevs[i]`
/// and `waits[i]` belong to shard.traces[i]; `sevs` must hold the final exclusive values of
/// every metric. Sums over ranks have one fixed order, so the summary does not depend on the
/// number of processes (except for the line that says how many there were).
/// Hybrid traces: `threads[i]` are the final severities of the worker threads 1, 2, ... of the
/// i-th held rank, and `path` is thread_critical_path_pass's; every thread is then a location
/// of the critical-path table's time columns, the impact split and the allocation time, as of
/// the indicators (docs/json-schema.md), each rank's threads added in thread order before the
/// fixed sum over ranks. The wait states and the root causes stay per rank: a rank's delays
/// are its master's and its threads' (a cause on a worker thread names its rank).
/// MPI: collective on world (reductions of per-call-path rows, a gather of worst instances).
Summary build_summary(const replay::World& world, const Definitions& defs, const CallTree& tree,
                      const Shard& shard, const std::vector<Severity>& sevs,
                      const std::vector<WaitStateResult>& waits, const CriticalPathSummary& path,
                      const std::vector<std::vector<Severity>>* threads = nullptr);

/// Adds the OpenMP part of a hybrid trace to `s` (complete on process 0): totals over all thread
/// locations, summed in location order, the barriers with the most waiting (which construct,
/// which threads), the worker threads' time (already in allocation_time: `s` must come from
/// build_summary with the same `workers`) and the OpenMP findings (docs/openmp.md).
/// `workers[i]` are the threads 1, 2, ... of the i-th held rank.
/// MPI: collective on world (one gather of per-location values).
void add_openmp_summary(const replay::World& world, const Definitions& defs, const CallTree& tree,
                        const Shard& shard, const std::vector<Severity>& sevs,
                        const std::vector<std::vector<Severity>>& workers, Summary& s);

/// Ranks in ascending order, runs of three or more as ranges: "rank 4", "ranks 2 and 5",
/// "ranks 0-3", "ranks 0-2, 6 and 9". MPI: local.
std::string rank_list(std::vector<int> ranks);

/// "sim.exe/main/work" for a call path.
std::string callpath_name(const Definitions& defs, const CallTree& tree, std::uint32_t cp);

/// callpath_name of every call path, indexed by call path: each region's name demangled once
/// (a C++ trace's names are long and deep; per call path and depth it cost more than the
/// analysis of HPCCG unfiltered).
std::vector<std::string> callpath_names(const Definitions& defs, const CallTree& tree);

}  // namespace cpreplay::analysis
