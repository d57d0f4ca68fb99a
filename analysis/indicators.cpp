// SPDX-License-Identifier: BSD-3-Clause
// Performance-impact heuristics of the critical-path paper, as Scalasca and Cube compute them.
#include "analysis/indicators.hpp"

#include <algorithm>

#include "analysis/openmp.hpp"
#include "analysis/profile.hpp"
#include "replay/rank_sum.hpp"

namespace cpreplay::analysis {
namespace {

/// The metrics Cube subtracts from time for critical_path_imbalance (§7.7; scout.spec's
/// formula also names the MPI RMA waits, which cpreplay does not compute). The OpenMP ones are
/// 0 on pure-MPI traces; on hybrid traces omp_idle_threads takes out of a worker's `time` the
/// idle time cpreplay adds to it as Cube's remapper does (docs/openmp.md), and omp_management
/// holds omp_fork (values are inclusive along the metric tree).
constexpr Metric kWaitMetrics[] = {Metric::MpiFinalizeWait,  Metric::MpiBarrierWait,
                                   Metric::MpiLatesender,    Metric::MpiLatereceiver,
                                   Metric::MpiEarlyreduce,   Metric::MpiEarlyscan,
                                   Metric::MpiLatebroadcast, Metric::MpiWaitNxn};
constexpr Metric kOmpWaitMetrics[] = {
    Metric::OmpManagement, Metric::OmpEbarrierWait, Metric::OmpIbarrierWait,
    Metric::OmpLockContentionCritical, Metric::OmpLockContentionApi, Metric::OmpOrdered,
    Metric::OmpIdleThreads};

/// §7.7 of one location, added to `row` (3n values, zeroed by the rank sum): its critical path,
/// time, and the subtracted metrics (MPI waits; with `openmp`, also kOmpWaitMetrics), each
/// inclusive along the call tree, as Cube's metric::fixed::...(i) sums them over locations.
void add_imbalance_rows(const CallTree& tree, const std::vector<double>& cp, const Severity& sev,
                        bool openmp, double* row) {
  const std::size_t n = tree.size();
  std::vector<double> waits_excl(n, 0.0);
  for (Metric m : kWaitMetrics)
    for (std::size_t c = 0; c < n; ++c) waits_excl[c] += sev.at(m, c);
  if (openmp)
    for (Metric m : kOmpWaitMetrics)
      for (std::size_t c = 0; c < n; ++c) waits_excl[c] += sev.at(m, c);
  const std::vector<double> cpi = inclusive_along_call_tree(tree, cp.data());
  const std::vector<double> ti = inclusive_along_call_tree(tree, sev.row(Metric::Time));
  const std::vector<double> wi = inclusive_along_call_tree(tree, waits_excl.data());
  for (std::size_t c = 0; c < n; ++c) {
    row[c] += cpi[c];
    row[n + c] += ti[c];
    row[2 * n + c] += wi[c];
  }
}

/// §7.7 critical_path_imbalance of one location from the sums of add_imbalance_rows over all
/// `locations` (sums: 3n values): where the location's inclusive critical path is positive,
/// max(0, (Σcp − (Σtime − Σwaits) / locations) / Σcp) × its own (exclusive) critical path.
void store_imbalance(const CallTree& tree, const std::vector<double>& cp, const double* sums,
                     double locations, Severity& sev) {
  const std::size_t n = tree.size();
  const std::vector<double> cpi = inclusive_along_call_tree(tree, cp.data());
  const double* s_cpi = sums;
  const double* s_ti = sums + n;
  const double* s_wi = sums + 2 * n;
  for (std::size_t c = 0; c < n; ++c) {
    if (cpi[c] <= 0.0 || s_cpi[c] <= 0.0) continue;
    const double share = (s_cpi[c] - (s_ti[c] - s_wi[c]) / locations) / s_cpi[c];
    if (share > 0.0) sev.at(Metric::CriticalPathImbalance, c) = share * cp[c];
  }
}

/// §7.4: the non-waiting time lt of a rank.
std::vector<double> non_waiting(const CriticalPathResult& cp) {
  std::vector<double> lt(cp.runtime.size());
  for (std::size_t c = 0; c < lt.size(); ++c)
    lt[c] = cp.runtime[c] - std::min(cp.runtime[c], cp.waits[c]);
  return lt;
}

/// One location's §7.5 activities into its severities, and its §7.6 waiting spread over the
/// call paths (alpha x excess into row[0..n), headroom share into row[n..2n)), added to `row`
/// (zeroed by the rank sum), for ranks and threads alike.
void add_location_rows(const std::vector<double>& gcp, double length,
                       const std::vector<double>& cp, const std::vector<double>& lt,
                       Severity& sev, double* row) {
  const std::size_t n = gcp.size();
  for (std::size_t c = 0; c < n; ++c) {
    sev.at(Metric::CriticalPath, c) = cp[c];
    if (gcp[c] > 0.0) sev.at(Metric::CriticalPathActivities, c) = std::min(gcp[c], lt[c]);
    if (lt[c] - gcp[c] > 0.0) sev.at(Metric::NonCriticalPathActivities, c) = lt[c] - gcp[c];
  }
  double sum_lt = 0.0, sum_ex = 0.0, sum_hr = 0.0, lplen = 0.0;
  std::vector<double> ex(n, 0.0), hr(n, 0.0);
  for (std::size_t c = 0; c < n; ++c) {
    sum_lt += lt[c];
    ex[c] = std::max(0.0, gcp[c] - lt[c]);
    sum_ex += ex[c];
    if (lt[c] == 0.0) {
      hr[c] = gcp[c];
      sum_hr += hr[c];
    } else if (lt[c] > 0.0) {
      lplen += std::max(lt[c], gcp[c]);
    }
  }
  // Scalasca 2.6 divides 0 by 0 here and loses the metric everywhere; expected.json guards it.
  const double alpha = sum_ex > 0.0 ? (length - sum_lt) / sum_ex : 0.0;
  const double f = sum_hr > 0.0 ? (length - lplen) / sum_hr : 0.0;
  for (std::size_t c = 0; c < n; ++c) {
    row[c] += alpha * ex[c];
    row[n + c] += f * hr[c];
  }
}

}  // namespace

CriticalPathSummary indicator_pass(const replay::World& world, const RankBlocks& blocks,
                                   const CallTree& tree,
                                   const std::vector<CriticalPathResult>& cps,
                                   std::vector<Severity>& sevs) {
  const std::size_t n = tree.size();
  const std::size_t held = cps.size();
  CriticalPathSummary summary;

  // §7.4: global profile gcp and the path length. Sums over ranks are in one fixed order
  // (replay::sum_over_ranks), so every value is the same for any number of processes.
  summary.profile = replay::sum_over_ranks(world, blocks, n, [&](std::size_t i, double* out) {
    std::copy(cps[i].cp.begin(), cps[i].cp.end(), out);
  });
  const std::vector<double>& gcp = summary.profile;
  for (double v : gcp) summary.length += v;

  // Per rank: §7.5 activities; §7.6 this rank's waiting, spread over the call paths where the
  // critical path is longer than its own non-waiting time (scaled[c], scaled[n + c]); §7.7 the
  // inclusive critical path, time and waiting (summed over all locations below).
  // The rows are made as the sum takes them, one rank at a time.
  constexpr std::size_t kRows = 5;
  auto rows_of = [&](std::size_t i, double* row) {
    const CriticalPathResult& cp = cps[i];
    Severity& sev = sevs[i];
    add_location_rows(gcp, summary.length, cp.cp, non_waiting(cp), sev, row);
    add_imbalance_rows(tree, cp.cp, sev, false, row + 2 * n);
  };
  const std::vector<double> sums = replay::sum_over_ranks(world, blocks, kRows * n, rows_of);
  const double locations = blocks.ranks();
  for (std::size_t i = 0; i < held; ++i) {
    const CriticalPathResult& cp = cps[i];
    Severity& sev = sevs[i];
    for (std::size_t c = 0; c < n; ++c) {
      if (cp.cp[c] <= 0.0 || gcp[c] <= 0.0) continue;
      const double share = cp.cp[c] / gcp[c];
      const double impact = share * sums[c];
      const double inter = share * sums[n + c];
      const double stored_impact = impact > 0.0 ? impact : 0.0;
      const double stored_inter = inter > 0.0 ? inter : 0.0;
      sev.at(Metric::CriticalImbalanceImpact, c) = stored_impact;
      sev.at(Metric::InterPartitionImbalance, c) = stored_inter;
      sev.at(Metric::IntraPartitionImbalance, c) = stored_impact - stored_inter;
    }
    // §7.7 critical_path_imbalance, from inclusive sums over all locations.
    store_imbalance(tree, cp.cp, sums.data() + 2 * n, locations, sev);
  }
  return summary;
}

namespace {

/// One location of a hybrid trace for the impact indicators: its critical path, its non-waiting
/// time lt (docs/openmp.md, "Impact indicators") and its severities.
struct ThreadLocation {
  const std::vector<double>* cp;
  std::vector<double> lt;
  Severity* sev;
};

/// lt of a thread location: time less the waiting Scalasca's synchpoint handler subtracts (MPI
/// wait states on the master, OpenMP barrier waits on every thread). A worker's time lacks
/// what scout.hyb's runtime map drops at each fork and at the end (TmapCacheHandler clears a
/// worker's open map there): its idle time, the join part of its management, and its `tail`
/// of every parallel region, from its last barrier's Enter (else its fork) to the region's
/// Leave.
std::vector<double> thread_non_waiting(const Severity& sev, const std::vector<double>* mpi_waits,
                                       const std::vector<double>* tail) {
  const std::size_t n = sev.callpaths();
  std::vector<double> lt(n);
  for (std::size_t c = 0; c < n; ++c) {
    // A worker's time includes its idle time (Cube's remapper rule, docs/openmp.md); scout's
    // runtime map never held it.
    double t = sev.at(Metric::Time, c) - sev.at(Metric::OmpIdleThreads, c);
    if (tail) t -= sev.at(Metric::OmpManagement, c) - sev.at(Metric::OmpFork, c) + (*tail)[c];
    double w = sev.at(Metric::OmpIbarrierWait, c) + sev.at(Metric::OmpEbarrierWait, c);
    if (mpi_waits) w += (*mpi_waits)[c];
    lt[c] = t - std::min(t, w);
  }
  return lt;
}

}  // namespace

CriticalPathSummary thread_critical_path_pass(
    const replay::World& world, const RankBlocks& blocks, const Definitions& defs,
    const CallTree& tree, const std::vector<CriticalPathResult>& cps, std::vector<Severity>& sevs,
    std::vector<std::vector<Severity>>& thread_sevs,
    const std::vector<std::vector<std::vector<double>>>& worker_tails) {
  const std::size_t n = tree.size();
  const std::size_t held = cps.size();
  CriticalPathSummary summary;
  summary.profile = replay::sum_over_ranks(world, blocks, n, [&](std::size_t i, double* out) {
    const CriticalPathResult& cp = cps[i];
    for (std::size_t c = 0; c < n; ++c) {
      double v = cp.cp[c];
      for (const std::vector<double>& t : cp.thread_cp) v += t[c];
      out[c] = v;
    }
  });
  const std::vector<double>& gcp = summary.profile;
  for (double v : gcp) summary.length += v;

  // Every thread is a location of the indicators (scalasca-metrics.md §7.5-§7.6), with the
  // global profile over all locations.
  std::vector<std::vector<ThreadLocation>> locations(held);
  for (std::size_t i = 0; i < held; ++i) {
    const CriticalPathResult& cp = cps[i];
    locations[i].push_back(
        ThreadLocation{&cp.cp, thread_non_waiting(sevs[i], &cp.waits, nullptr), &sevs[i]});
    for (std::size_t t = 0; t < cp.thread_cp.size() && t < thread_sevs[i].size(); ++t)
      locations[i].push_back(ThreadLocation{
          &cp.thread_cp[t],
          thread_non_waiting(thread_sevs[i][t], nullptr, &worker_tails.at(i).at(t)),
          &thread_sevs[i][t]});
  }
  // Per rank, its threads in thread order: the §7.6 rows (2n) and the §7.7 inclusive sums (3n)
  // of every thread, added into one row per rank, which the rank sum adds in its fixed order.
  auto rows_of = [&](std::size_t i, double* row) {
    for (const ThreadLocation& loc : locations[i]) {
      add_location_rows(gcp, summary.length, *loc.cp, loc.lt, *loc.sev, row);
      add_imbalance_rows(tree, *loc.cp, *loc.sev, true, row + 2 * n);
    }
  };
  const std::vector<double> sums = replay::sum_over_ranks(world, blocks, 5 * n, rows_of);
  // Cube's #locations: every thread of every rank (the report's system tree).
  std::size_t threads = 0;
  for (const Process& p : defs.processes) threads += 1 + p.workers.size();
  for (std::size_t i = 0; i < held; ++i)
    for (const ThreadLocation& loc : locations[i]) {
      for (std::size_t c = 0; c < n; ++c) {
        const double cpc = (*loc.cp)[c];
        if (cpc <= 0.0 || gcp[c] <= 0.0) continue;
        const double share = cpc / gcp[c];
        const double impact = std::max(0.0, share * sums[c]);
        const double inter = std::max(0.0, share * sums[n + c]);
        loc.sev->at(Metric::CriticalImbalanceImpact, c) = impact;
        loc.sev->at(Metric::InterPartitionImbalance, c) = inter;
        loc.sev->at(Metric::IntraPartitionImbalance, c) = impact - inter;
      }
      store_imbalance(tree, *loc.cp, sums.data() + 2 * n, static_cast<double>(threads),
                      *loc.sev);
    }
  return summary;
}

}  // namespace cpreplay::analysis
