// SPDX-License-Identifier: BSD-3-Clause
// What-if scenarios for the top call paths, their gains, near-critical time and the finding.
#include "analysis/what_if.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "analysis/openmp.hpp"
#include "analysis/summary.hpp"
#include "cpreplay/error.hpp"
#include "cpreplay/names.hpp"
#include "replay/rank_sum.hpp"
#include "replay/retime.hpp"

namespace cpreplay::analysis {
namespace {

/// A gain counts for the finding when it is at least this share of the runtime...
constexpr double kFindingShare = 0.05;
/// ...and the other kind of balancing gets less than this share of it.
constexpr double kFindingContrast = 0.5;
/// Call paths named for a scenario's critical path.
constexpr std::size_t kScenarioPathTop = 5;

std::string secs(double s) {
  char buf[64];
  const double a = std::fabs(s);
  if (a < 0.5e-9) return "0 s";  // below a nanosecond: rounding of the scaled durations
  if (a >= 100.0)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (a >= 0.1)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", fraction * 100.0);
  return buf;
}

}  // namespace

void check_what_if_regions(const Definitions& defs, const WhatIfSettings& settings) {
  for (const auto& [name, factor] : settings.changes) {
    bool known = false;
    // The trace's name or the demangled one the summary shows.
    for (const Region& r : defs.regions)
      known = known || r.name == name || demangle(r.name) == name;
    if (!known) {
      char f[32];
      std::snprintf(f, sizeof f, "%g", factor);
      throw UsageError("--what-if '" + name + "=" + f + "': " + defs.anchor_path +
                       " has no region named '" + name + "'");
    }
  }
}

WhatIfResult what_if_pass(const replay::World& world, const Definitions& defs,
                          const CallTree& tree, const Shard& shard, std::vector<Severity>& sevs,
                          std::vector<std::vector<Severity>>* thread_sevs,
                          const CriticalPathSummary& path, const WhatIfSettings& settings) {
  const std::size_t n = tree.size();
  const double tps = static_cast<double>(defs.clock.ticks_per_second);
  WhatIfResult result;
  result.near_critical_fraction = settings.near_critical;

  // The top call paths by critical-path time (the same on every rank: the profile is global).
  std::vector<std::uint32_t> top;
  for (std::uint32_t c = 0; c < n && c < path.profile.size(); ++c)
    if (path.profile[c] > 0.0) top.push_back(c);
  std::stable_sort(top.begin(), top.end(), [&](std::uint32_t a, std::uint32_t b) {
    return path.profile[a] > path.profile[b];
  });
  if (top.size() > settings.top) top.resize(settings.top);
  const std::size_t K = top.size();
  result.top = K;

  // The scenarios: clock 0 unchanged; 1..K zeroed; K+1..2K balanced; 2K+1..3K rebalanced;
  // then the user's. Balance and rebalance act on non-waiting time (the engine measures it).
  replay::RetimeRequest request;
  request.window = settings.window;
  request.tolerate_unmatched = settings.partial;
  request.matches = settings.matches;
  for (std::size_t k = 0; k < K; ++k) {
    const std::uint32_t c = top[k];
    request.changes.push_back({static_cast<std::uint32_t>(1 + k), c,
                               replay::TimeChange::Kind::Factor, 0.0});
    request.changes.push_back({static_cast<std::uint32_t>(1 + K + k), c,
                               replay::TimeChange::Kind::Balance, 1.0});
    request.changes.push_back({static_cast<std::uint32_t>(1 + 2 * K + k), c,
                               replay::TimeChange::Kind::Rebalance, 1.0});
  }
  std::uint32_t clocks = static_cast<std::uint32_t>(1 + 3 * K);
  if (!settings.changes.empty()) {
    const std::uint32_t user = clocks++;
    std::unordered_map<std::string, double> factor;
    for (const auto& [name, f] : settings.changes) factor[name] = f;
    for (std::uint32_t c = 0; c < n; ++c) {
      const std::string& name = defs.region(tree.node(CallpathId{c}).region).name;
      auto it = factor.find(name);
      if (it == factor.end()) it = factor.find(demangle(name));
      if (it != factor.end())
        request.changes.push_back({user, c, replay::TimeChange::Kind::Factor, it->second});
    }
    request.path_clock = static_cast<int>(user);
  }
  request.clocks = clocks;
  result.clocks = clocks;
  if (settings.profile != nullptr && settings.profile->size() == shard.size() && !defs.hybrid())
    for (const CallpathTicks& t : *settings.profile) {
      const bool whole = t.exclusive.size() == n && t.visits.size() == n;
      request.profile_exclusive.push_back(whole ? t.exclusive.data() : nullptr);
      request.profile_visits.push_back(whole ? t.visits.data() : nullptr);
    }
  if (defs.hybrid()) {
    // The thread teams' barriers, recognised by name as the OpenMP pass does.
    request.barrier_paths.assign(n, 0);
    const std::vector<OmpConstruct> construct = omp_constructs(defs, tree);
    for (std::uint32_t c = 0; c < n; ++c) request.barrier_paths[c] = is_omp_barrier(construct[c]);
    result.path_profile = path.profile;
  }

  // The slack limit in ticks: δ x the run's length (first to last event over all locations).
  Ticks ends[2] = {0, 0};
  auto extend = [&](const LocalTrace& trace) {
    if (trace.size() == 0) return;
    ends[0] = std::max(ends[0], ~trace.time.front());
    ends[1] = std::max(ends[1], trace.time.back());
  };
  for (const LocalTrace& trace : shard.traces) extend(trace);
  for (const std::vector<LocalTrace>& threads : shard.workers)
    for (const LocalTrace& trace : threads) extend(trace);
  MPI_Allreduce(MPI_IN_PLACE, ends, 2, MPI_UINT64_T, MPI_MAX, world.comm());
  const Ticks first = ~ends[0], last = ends[1];
  const double length = last >= first ? static_cast<double>(last - first) : 0.0;
  request.slack_limit = settings.near_critical * length;
  // The re-timing replay computes with signed 64-bit ticks (replay/rounding.hpp needs |x| <
  // 2^63): a scenario that could stretch the run past 2^62 ticks is refused, not overflowed.
  for (const auto& [name, f] : settings.changes) {
    if (last < first || static_cast<double>(first) + std::max(f, 1.0) * length < 0x1p62) continue;
    char factor[32], seconds[32];
    std::snprintf(factor, sizeof factor, "%g", f);
    std::snprintf(seconds, sizeof seconds, "%g", f * length / tps);
    throw UsageError("--what-if '" + name + "=" + factor + "': the run would last up to " +
                     seconds + " s, more than the re-timing replay can represent (2^62 ticks)");
  }

  const replay::RetimeResult r = replay::retime(world, defs, tree, shard, request);
  result.runtime = static_cast<double>(r.runtime[0]) / tps;
  for (std::size_t k = 0; k < K; ++k) {
    auto gain = [&](std::size_t clock) {
      return static_cast<double>(r.runtime[0] - r.runtime[clock]) / tps;
    };
    result.gains.push_back({top[k], gain(1 + k), gain(1 + K + k), gain(1 + 2 * K + k)});
  }
  // Per held rank its row; the sums over ranks in the fixed order of the trace ranks (the
  // same bits for every number of processes, docs/replay-engine.md §7).
  if (r.near_critical.size() == shard.size() * n) {
    for (std::size_t i = 0; i < shard.size(); ++i)
      for (std::uint32_t c = 0; c < n; ++c)
        sevs[i].at(Metric::NearCriticalPath, c) = r.near_critical[i * n + c];
    // Hybrid traces: every thread's row into its location, and the ranks' rows (all their
    // threads) into the sums.
    if (thread_sevs != nullptr && !r.thread_near_critical.empty()) {
      std::size_t row = 0;
      for (std::size_t i = 0; i < shard.size() && i < thread_sevs->size(); ++i)
        for (Severity& sev : (*thread_sevs)[i]) {
          for (std::uint32_t c = 0; c < n; ++c)
            sev.at(Metric::NearCriticalPath, c) = r.thread_near_critical[row * n + c];
          ++row;
        }
    }
    result.near_critical = replay::sum_over_ranks(
        world, shard.blocks, n,
        r.rank_near_critical.empty() ? r.near_critical : r.rank_near_critical);
  }
  if (!settings.changes.empty()) {
    result.has_scenario = true;
    result.changes = settings.changes;
    result.scenario_runtime = static_cast<double>(r.runtime[clocks - 1]) / tps;
    if (r.path_profile.size() == shard.size() * n)
      result.scenario_path = replay::sum_over_ranks(world, shard.blocks, n, r.path_profile);
  }
  result.parts = r.parts;
  result.forward_rounds = r.forward_rounds;
  result.backward_rounds = r.backward_rounds;
  result.released = r.released;
  result.prepare_seconds = r.prepare_seconds;
  result.forward_seconds = r.forward_seconds;
  result.backward_seconds = r.backward_seconds;
  return result;
}

void describe_what_if(Summary& s, const WhatIfResult& r, const Definitions& defs,
                      const CallTree& tree) {
  SummaryWhatIf& w = s.what_if;
  w.computed = true;
  w.runtime = r.runtime;
  w.near_critical_fraction = r.near_critical_fraction;
  w.top = static_cast<int>(r.top);
  w.released = r.released;
  const std::vector<std::string> names = callpath_names(defs, tree);
  // (A call path id out of range reads as callpath_name has it: empty.)
  auto name_of = [&](std::uint32_t cp) -> const std::string& {
    static const std::string none;
    return cp < names.size() ? names[cp] : none;
  };
  // The summary's call-path rows by name (the last of equal names, as a search would find).
  std::unordered_map<std::string, const SummaryCallpath*> rows;
  for (const SummaryCallpath& sc : s.callpaths) rows[sc.path] = &sc;
  // Each region's name demangled once: hundreds of near-critical call paths share a few dozen
  // regions (HPCCG's C++ names took 20 M instructions, demangled per row).
  std::unordered_map<std::uint32_t, std::string> demangled;
  auto row = [&](std::uint32_t c) {
    SummaryWhatIfCallpath p;
    p.path = name_of(c);
    const RegionId region = tree.node(CallpathId{c}).region;
    auto it = demangled.find(region.value);
    if (it == demangled.end())
      it = demangled.emplace(region.value, demangle(defs.region(region).name)).first;
    p.name = it->second;
    if (const auto it = rows.find(p.path); it != rows.end()) {
      p.critical_path = it->second->critical_path;
      p.imbalance = it->second->imbalance;
    }
    p.near_critical = c < r.near_critical.size() ? r.near_critical[c] : 0.0;
    // Hybrid traces: the critical path over all thread locations (the summary's call-path
    // rows are the master threads').
    if (c < r.path_profile.size()) p.critical_path = r.path_profile[c];
    return p;
  };
  std::vector<char> listed(tree.size(), 0);
  for (const WhatIfResult::Gains& g : r.gains) {
    SummaryWhatIfCallpath p = row(g.callpath);
    p.has_gains = true;
    p.zeroing_gain = g.zeroing;
    p.balance_gain = g.balance;
    p.rebalance_gain = g.rebalance;
    w.callpaths.push_back(p);
    listed[g.callpath] = 1;
  }
  std::vector<std::uint32_t> others;
  for (std::uint32_t c = 0; c < r.near_critical.size(); ++c)
    if (!listed[c] && r.near_critical[c] > 0.0) others.push_back(c);
  std::stable_sort(others.begin(), others.end(), [&](std::uint32_t a, std::uint32_t b) {
    return r.near_critical[a] > r.near_critical[b];
  });
  for (std::uint32_t c : others) w.callpaths.push_back(row(c));

  if (r.has_scenario) {
    SummaryWhatIfScenario sc;
    sc.changes = r.changes;
    sc.runtime = r.scenario_runtime;
    double length = 0.0;
    for (double v : r.scenario_path) length += v;
    std::vector<std::uint32_t> on;
    for (std::uint32_t c = 0; c < r.scenario_path.size(); ++c)
      if (r.scenario_path[c] > 0.0) on.push_back(c);
    std::stable_sort(on.begin(), on.end(), [&](std::uint32_t a, std::uint32_t b) {
      return r.scenario_path[a] > r.scenario_path[b];
    });
    for (std::size_t i = 0; i < on.size() && i < kScenarioPathTop; ++i)
      sc.critical_path.push_back({name_of(on[i]), r.scenario_path[on[i]],
                                  length > 0.0 ? r.scenario_path[on[i]] / length : 0.0});
    w.scenarios.push_back(sc);
  }

  // The finding: one kind of balancing pays, the other would not.
  for (const SummaryWhatIfCallpath& p : w.callpaths) {
    if (!p.has_gains || r.runtime <= 0.0) continue;
    const double floor = kFindingShare * r.runtime;
    if (p.balance_gain >= floor && p.rebalance_gain < kFindingContrast * p.balance_gain)
      s.findings.push_back(
          shorten_name(p.name, kSentenceNameWidth) + ": balancing every instance would save " +
          secs(p.balance_gain) + " (" +
          pct(p.balance_gain / r.runtime) + " of the runtime), a static rebalance of its work "
          "per rank only " + secs(std::max(0.0, p.rebalance_gain)) +
          ": the overload moves between ranks, so only dynamic load balancing pays");
    else if (p.rebalance_gain >= floor && p.balance_gain < kFindingContrast * p.rebalance_gain)
      s.findings.push_back(
          shorten_name(p.name, kSentenceNameWidth) +
          ": a static rebalance of its work per rank would save " +
          secs(p.rebalance_gain) + " (" + pct(p.rebalance_gain / r.runtime) +
          " of the runtime), balancing each instance only " +
          secs(std::max(0.0, p.balance_gain)) +
          ": the ranks differ in how often they run it, not in how long one run takes");
  }
}

}  // namespace cpreplay::analysis
