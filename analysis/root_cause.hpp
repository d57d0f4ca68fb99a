// SPDX-License-Identifier: BSD-3-Clause
// Root-cause analysis: Scalasca's delay costs and wait-state classes (scalasca-metrics.md §8),
// computed by a backward replay in rounds (docs/replay-engine.md §5).
#pragma once

#include <cstdint>

#include "analysis/metric_table.hpp"
#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

struct RootCauseResult {
  std::uint64_t synchpoints = 0;  ///< the held ranks' synchronization points
  std::uint64_t rounds = 0;       ///< backward-replay rounds (the same on every rank)
  /// Points skipped because what they wait for never came (summed over ranks); 0 for every
  /// trace whose messages and collectives fit together.
  std::uint64_t skipped = 0;
};

/// Adds the delay costs (`delay_*`, short- and long-term, on the causing rank's call paths) and
/// the indirect and propagating wait-state metrics to `sevs[i]`, for every held rank i
/// (shard.traces[i]). Hybrid traces: the OpenMP delays too, through the threads of
/// shard.workers[i], whose severities are (*worker_sevs)[i] (thread t at t - 1); null for pure
/// MPI. Consumes `waits[i].syncpoints`. Records between co-located ranks are
/// delivered in memory; the values and the number of rounds do not depend on the number of
/// processes. Points whose records never come (a trace whose reverse dependencies form a
/// cycle, which no real run produces) are skipped and counted, not waited on.
/// MPI: collective on world.
RootCauseResult root_cause_pass(const replay::World& world, const Definitions& defs,
                                const CallTree& tree, const Shard& shard,
                                std::vector<WaitStateResult>& waits, std::vector<Severity>& sevs,
                                std::vector<std::vector<Severity>>* worker_sevs,
                                std::size_t window);

}  // namespace cpreplay::analysis
