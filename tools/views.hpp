// SPDX-License-Identifier: BSD-3-Clause
// The --timeline and --overview stage: every rank computes its part, rank 0 writes the files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "analysis/metric_table.hpp"
#include "analysis/openmp.hpp"
#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::tools {

struct ViewOutputs {
  std::string timeline;                ///< --timeline FILE.json, empty for none
  std::string overview;                ///< --overview FILE.svg, empty for none
  std::uint64_t max_events = 100000;  ///< --timeline-max-events
  std::string creator;
};

/// What the stage did, for the progress line and the terminal (rank 0).
struct ViewReport {
  std::uint64_t events_written = 0;  ///< timeline events (without the naming metadata)
  std::uint64_t events_total = 0;    ///< what the run has in full
  std::string reduction;             ///< one sentence when --timeline-max-events merged events
};

/// Writes the requested views atomically. Per held rank i (shard.traces[i]): `sevs[i]` holds
/// exclusive `time` per call path, `waits[i]` its wait states, `stretches[i]` its critical-path
/// stretches (on its threads, for hybrid traces); `cp_length` is the path's length in seconds.
/// Hybrid traces (shard.workers): `worker_sevs[i]` holds threads 1, 2, ...'s severities and
/// `omp_waits[i]` every thread's OpenMP wait states; both are empty for pure MPI. Errors of
/// process 0's files are agreed on (World::agree) after every process took part.
/// MPI: collective on world.
ViewReport export_views(const replay::World& world, const ViewOutputs& out, const Definitions& defs,
                        const CallTree& tree, const Shard& shard,
                        const std::vector<analysis::WaitStateResult>& waits,
                        const std::vector<analysis::Severity>& sevs,
                        const std::vector<std::vector<analysis::Severity>>& worker_sevs,
                        const std::vector<analysis::OmpWaits>& omp_waits,
                        const std::vector<std::vector<analysis::PathStretch>>& stretches,
                        double cp_length);

}  // namespace cpreplay::tools
