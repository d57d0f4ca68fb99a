// SPDX-License-Identifier: BSD-3-Clause
// Turns the analysis results into a Cube report: definitions on rank 0, values gathered per metric.
#pragma once

#include <memory>
#include <string>

#include "analysis/metric_table.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "io/cube_writer.hpp"
#include "replay/world.hpp"

namespace cpreplay::tools {

/// The metrics a report of this trace has, in metric-table order: pure-MPI traces have no
/// OpenMP metrics (as scout.mpi's reports); hybrid traces have them, the critical path,
/// critical_path_imbalance, the impact indicators and the root causes (OpenMP delays included)
/// but, until what-if follows threads, no near_critical_path.
std::vector<analysis::Metric> report_metrics(const Definitions& defs);

/// The Cube definitions (metric tree, regions, call tree, system tree) of a report. The system
/// tree has one location per thread under its rank (location rank = thread number), in
/// rank-major order, as CubeW writes it.
io::CubeReportDef make_report_def(const Definitions& defs, const CallTree& tree,
                                  const std::string& creator);

/// Gathers every report metric's values of every location to process 0 and writes them with
/// `writer` (non-null only on process 0), rows in location order (rank-major, thread-minor).
/// sevs[i] is the i-th held rank's master thread, workers[i][t-1] (if any) its thread t.
/// `time` is made inclusive along the call tree; all others stay exclusive. Errors of the writer
/// on process 0 are rethrown after all processes took part in the gathers.
/// MPI: collective on world.
void gather_and_write(const replay::World& world, const Definitions& defs,
                      const RankBlocks& blocks, const CallTree& tree,
                      const std::vector<analysis::Severity>& sevs,
                      const std::vector<std::vector<analysis::Severity>>& workers,
                      io::CubeWriter* writer);

}  // namespace cpreplay::tools
