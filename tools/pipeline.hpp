// SPDX-License-Identifier: BSD-3-Clause
// The cpreplay pipeline: load, preprocess, forward, backward, reduce, write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "replay/world.hpp"

namespace cpreplay::tools {

struct Settings {
  std::string anchor;
  std::string output;     ///< report path; default: cpreplay.cubex next to the anchor
  std::string json;       ///< --json FILE, empty for none
  bool quiet = false;
  bool verbose = false;
  bool read_only = false;  ///< only decode events (benchmark floor)
  bool partial = false;  ///< analyze a crashed run up to where every rank still has events
  bool time_correct = false;  ///< shift rank clocks to remove clock-condition violations
  bool no_root_cause = false;  ///< --no-rootcause: no delay costs, no wait-state classes
  bool count_ranks = false;  ///< print the trace's MPI rank count and stop (for job scripts)
  bool count_events = false;  ///< print the events the definitions announce and stop (sizing)
  std::size_t window = 4096;  ///< collective instances per reduction, message records per round
  std::string timeline;  ///< --timeline FILE.json (Chrome trace events), empty for none
  std::string overview;  ///< --overview FILE.svg, empty for none
  std::uint64_t timeline_max_events = 100000;  ///< --timeline-max-events
  bool no_what_if = false;          ///< --no-what-if: no re-timing replay, no near-critical time
  std::size_t what_if_top = 10;     ///< --what-if-top K
  double near_critical = 0.01;      ///< --near-critical δ (share of the runtime)
  std::vector<std::pair<std::string, double>> what_if;  ///< --what-if REGION=FACTOR, in order
};

struct EarlyTrace;

/// Runs the whole analysis; `early`: the trace as read while MPI started (tools/early_read.hpp),
/// or nullptr. Throws cpreplay::Error on the rank that reports it, PeerFailed on
/// the others. MPI: collective on world.
void run(const Settings& settings, replay::World& world, std::unique_ptr<EarlyTrace> early);

}  // namespace cpreplay::tools
