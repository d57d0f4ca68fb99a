// SPDX-License-Identifier: BSD-3-Clause
// Performance-impact heuristics of the critical-path paper, as Scalasca and Cube compute them.
#include "analysis/indicators.hpp"

#include <algorithm>

#include "analysis/profile.hpp"

namespace cpreplay::analysis {
namespace {

std::vector<double> sum_over_ranks(const replay::World& world, const std::vector<double>& v) {
  std::vector<double> out(v.size(), 0.0);
  MPI_Allreduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                world.comm());
  return out;
}

/// The wait metrics Cube subtracts from time for critical_path_imbalance (§7.7).
constexpr Metric kWaitMetrics[] = {Metric::MpiFinalizeWait,  Metric::MpiBarrierWait,
                                   Metric::MpiLatesender,    Metric::MpiLatereceiver,
                                   Metric::MpiEarlyreduce,   Metric::MpiEarlyscan,
                                   Metric::MpiLatebroadcast, Metric::MpiWaitNxn};

}  // namespace

CriticalPathSummary indicator_pass(const replay::World& world, const CallTree& tree,
                                   const CriticalPathResult& cp, Severity& sev) {
  const std::size_t n = tree.size();
  CriticalPathSummary summary;

  // §7.4: non-waiting time lt, global profile gcp and the path length.
  std::vector<double> lt(n);
  for (std::size_t c = 0; c < n; ++c)
    lt[c] = cp.runtime[c] - std::min(cp.runtime[c], cp.waits[c]);
  summary.profile = sum_over_ranks(world, cp.cp);
  const std::vector<double>& gcp = summary.profile;
  for (double v : gcp) summary.length += v;

  // §7.5 activities.
  for (std::size_t c = 0; c < n; ++c) {
    sev.at(Metric::CriticalPath, c) = cp.cp[c];
    if (gcp[c] > 0.0) sev.at(Metric::CriticalPathActivities, c) = std::min(gcp[c], lt[c]);
    if (lt[c] - gcp[c] > 0.0) sev.at(Metric::NonCriticalPathActivities, c) = lt[c] - gcp[c];
  }

  // §7.6 imbalance impact: this rank's waiting, spread over the call paths where the critical
  // path is longer than its own non-waiting time.
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
  const double alpha = sum_ex > 0.0 ? (summary.length - sum_lt) / sum_ex : 0.0;
  const double f = sum_hr > 0.0 ? (summary.length - lplen) / sum_hr : 0.0;
  std::vector<double> scaled(2 * n);
  for (std::size_t c = 0; c < n; ++c) {
    scaled[c] = alpha * ex[c];
    scaled[n + c] = f * hr[c];
  }
  const std::vector<double> global = sum_over_ranks(world, scaled);
  for (std::size_t c = 0; c < n; ++c) {
    if (cp.cp[c] <= 0.0 || gcp[c] <= 0.0) continue;
    const double share = cp.cp[c] / gcp[c];
    const double impact = share * global[c];
    const double inter = share * global[n + c];
    const double stored_impact = impact > 0.0 ? impact : 0.0;
    const double stored_inter = inter > 0.0 ? inter : 0.0;
    sev.at(Metric::CriticalImbalanceImpact, c) = stored_impact;
    sev.at(Metric::InterPartitionImbalance, c) = stored_inter;
    sev.at(Metric::IntraPartitionImbalance, c) = stored_impact - stored_inter;
  }

  // §7.7 critical_path_imbalance, from inclusive sums over all locations.
  std::vector<double> local(3 * n, 0.0);
  std::vector<double> waits_excl(n, 0.0);
  for (Metric m : kWaitMetrics)
    for (std::size_t c = 0; c < n; ++c) waits_excl[c] += sev.at(m, c);
  const std::vector<double> cpi = inclusive_along_call_tree(tree, cp.cp.data());
  const std::vector<double> ti = inclusive_along_call_tree(tree, sev.row(Metric::Time));
  const std::vector<double> wi = inclusive_along_call_tree(tree, waits_excl.data());
  for (std::size_t c = 0; c < n; ++c) {
    local[c] = cpi[c];
    local[n + c] = ti[c];
    local[2 * n + c] = wi[c];
  }
  const std::vector<double> sums = sum_over_ranks(world, local);
  const double locations = world.size();
  for (std::size_t c = 0; c < n; ++c) {
    if (cpi[c] <= 0.0 || sums[c] <= 0.0) continue;
    const double share = (sums[c] - (sums[n + c] - sums[2 * n + c]) / locations) / sums[c];
    if (share > 0.0) sev.at(Metric::CriticalPathImbalance, c) = share * cp.cp[c];
  }
  return summary;
}

}  // namespace cpreplay::analysis
