// SPDX-License-Identifier: BSD-3-Clause
// The communication-free pass: time, visits, the MPI time breakdown, send and collective counts.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/metric_table.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay::analysis {

/// Adds exclusive `time`, `visits`, the time-breakdown masks of scalasca-metrics.md §3.3 and the
/// counters of §6 that need no partner (sends, collectives) to `sev`.
/// MPI: local.
/// Hybrid traces: `omp_management` (per call path, seconds) is thread management time that
/// scout.hyb counts into the parallel region's `time` (and, on the master thread, out of the
/// call path enclosing it: `master_thread`); it is no computation. OpenMP regions' time goes to
/// the omp_* breakdown of Scalasca's remapping specification.
/// `ticks`, when given, gets the same location's exclusive time in ticks and its visits
/// (CallpathTicks): the what-if replay's balance statistics start from them.
struct CallpathTicks;
void profile_pass(const Definitions& defs, const CallTree& tree, const LocalTrace& trace,
                  Severity& sev, const std::vector<double>* omp_management = nullptr,
                  bool master_thread = true, CallpathTicks* ticks = nullptr);

/// Per call path, exactly: the ticks of the activities (the time between two consecutive
/// events) whose innermost open region is that call path (the open regions as a stack of the
/// location's Enters and Leaves; a region still open at the location's last event counts up to
/// it), and its visits (Enters). For a master thread of a pure-MPI trace this is what the
/// re-timing replay's balance statistics sum (replay/retime.hpp, RetimeRequest::profile).
struct CallpathTicks {
  std::vector<std::int64_t> exclusive;
  std::vector<std::uint64_t> visits;
};

/// Exclusive time per call path from the trace (the §7.2 segments summed over the whole run).
/// With `ticks`: also CallpathTicks::exclusive (sized to the call tree here).
std::vector<double> exclusive_time(const Definitions& defs, const CallTree& tree,
                                   const LocalTrace& trace,
                                   std::vector<std::int64_t>* ticks = nullptr);

/// Zeroes MPI-only metrics on call paths whose region is not an MPI region (§1.1 "MPI-only").
void drop_mpi_only_on_non_mpi(const Definitions& defs, const CallTree& tree, Severity& sev);

/// Per call path: the value including all its descendants.
std::vector<double> inclusive_along_call_tree(const CallTree& tree, const double* exclusive);

}  // namespace cpreplay::analysis
