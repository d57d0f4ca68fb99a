// SPDX-License-Identifier: BSD-3-Clause
// Critical-path indicators: the profile, its imbalance, and the performance-impact split into
// activities, intra- and inter-partition imbalance (scalasca-metrics.md §7.4-§7.7).
#pragma once

#include "analysis/critical_path.hpp"
#include "analysis/metric_table.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// Global quantities of the critical path, identical on all ranks.
struct CriticalPathSummary {
  double length = 0.0;  ///< gcplen: sum of the critical-path profile over call paths and ranks
  std::vector<double> profile;  ///< gcp[c]
};

/// Writes the critical-path metrics into `sev` (which must already hold time and the wait
/// states, for critical_path_imbalance). Guards Scalasca 2.6's two 0/0 divisions (0/0 -> 0) as
/// expected.json does.
/// MPI: collective on world (allreduces of per-call-path arrays).
CriticalPathSummary indicator_pass(const replay::World& world, const CallTree& tree,
                                   const CriticalPathResult& cp, Severity& sev);

}  // namespace cpreplay::analysis
