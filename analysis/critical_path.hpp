// SPDX-License-Identifier: BSD-3-Clause
// Critical-path pass: backward ownership walk from the last MPI_Finalize (scalasca-metrics.md
// §7.2-§7.3), then each rank accumulates the time it owned per call path.
#pragma once

#include <vector>

#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

struct CriticalPathResult {
  std::vector<double> cp;       ///< this rank's critical-path time per call path (exclusive)
  std::vector<double> runtime;  ///< whole-run exclusive time per call path (§7.2 segments)
  std::vector<double> waits;    ///< W[c]: waiting time of this rank's wait states per call path
  std::uint64_t owned_segments = 0;  ///< how many stretches of the path this rank owned
};

/// Walks critical-path ownership backwards and accumulates the owned segments.
/// Throws IncompleteTraceError (via World::agree, on the lowest such rank) when a rank has no
/// MPI_Finalize: the path has no end to start from.
/// MPI: collective on world.
/// With `partial_start` >= 0 (--partial) a trace without MPI_Finalize is walked from the end
/// of that rank's events (the rank that stopped first) instead of failing.
CriticalPathResult critical_path_pass(const replay::World& world, const Definitions& defs,
                                      const CallTree& tree, const LocalTrace& trace,
                                      const WaitStateResult& waits,
                                      const replay::CollectiveTable& collectives,
                                      Rank partial_start = -1);

}  // namespace cpreplay::analysis
