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

/// The Cube definitions (metric tree, regions, call tree, system tree) of a report.
io::CubeReportDef make_report_def(const Definitions& defs, const CallTree& tree,
                                  const std::string& creator);

/// Gathers every metric's values of every rank (sevs[i]: the i-th held rank) to process 0 and
/// writes them with `writer` (non-null only on process 0), rows in rank order. `time` is made
/// inclusive along the call tree; all others stay exclusive. Errors of the writer on process 0
/// are rethrown after all processes took part in the gathers.
/// MPI: collective on world.
void gather_and_write(const replay::World& world, const RankBlocks& blocks, const CallTree& tree,
                      const std::vector<analysis::Severity>& sevs, io::CubeWriter* writer);

}  // namespace cpreplay::tools
