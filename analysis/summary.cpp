// SPDX-License-Identifier: BSD-3-Clause
// Summary reductions and findings. Everything is derived from the metrics; nothing is
// specific to a program, call-path name or rank count.
#include "analysis/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/openmp.hpp"
#include "analysis/profile.hpp"
#include "cpreplay/names.hpp"
#include "replay/rank_sum.hpp"

namespace cpreplay::analysis {
namespace {

/// The wait-state metrics the summary ranks (leaves of the wait-state tree; no overlaps).
constexpr Metric kWaitRows[] = {
    Metric::MpiLatesender,    Metric::MpiLatereceiver,    Metric::MpiBarrierWait,
    Metric::MpiBarrierCompletion, Metric::MpiWaitNxn,     Metric::MpiNxnCompletion,
    Metric::MpiLatebroadcast, Metric::MpiEarlyreduce,     Metric::MpiEarlyscan,
    Metric::MpiInitCompletion, Metric::MpiFinalizeWait};
constexpr std::size_t kWaitCount = sizeof(kWaitRows) / sizeof(kWaitRows[0]);

/// Rows reduced with SUM: time, critical path, its imbalance, impact metrics, wait metrics.
constexpr Metric kSumRows[] = {
    Metric::Time, Metric::CriticalPath, Metric::CriticalPathImbalance,
    Metric::CriticalPathActivities, Metric::CriticalImbalanceImpact,
    Metric::IntraPartitionImbalance, Metric::InterPartitionImbalance,
    Metric::NonCriticalPathActivities};
constexpr std::size_t kSumCount = sizeof(kSumRows) / sizeof(kSumRows[0]);

constexpr std::size_t kWorst = 10;

/// The delay costs that cause each kind of waiting (scalasca-metrics.md §8.2-§8.4), and the
/// wait-state classes of §8.5 where they exist (Metric::Count: none).
struct CauseRows {
  Metric wait, short_term, long_term, indirect, propagating;
};
constexpr CauseRows kCauses[] = {
    {Metric::MpiLatesender, Metric::DelayLatesender, Metric::DelayLatesenderLongterm,
     Metric::MpiWaitIndirectLatesender, Metric::MpiWaitPropagatingLs},
    {Metric::MpiLatereceiver, Metric::DelayLatereceiver, Metric::DelayLatereceiverLongterm,
     Metric::MpiWaitIndirectLatereceiver, Metric::MpiWaitPropagatingLr},
    {Metric::MpiBarrierWait, Metric::DelayBarrier, Metric::DelayBarrierLongterm, Metric::Count,
     Metric::Count},
    {Metric::MpiWaitNxn, Metric::DelayN2n, Metric::DelayN2nLongterm, Metric::Count,
     Metric::Count},
    {Metric::MpiLatebroadcast, Metric::Delay12n, Metric::Delay12nLongterm, Metric::Count,
     Metric::Count},
    {Metric::MpiEarlyreduce, Metric::DelayN21, Metric::DelayN21Longterm, Metric::Count,
     Metric::Count}};
constexpr std::size_t kCauseCount = sizeof(kCauses) / sizeof(kCauses[0]);
/// Rows per pattern in the reduction: short-term, long-term, indirect, propagating.
constexpr std::size_t kCauseRows = 4;
/// Call paths examined per pattern, and ranks looked up per call path.
constexpr std::size_t kTopCauses = 3;
constexpr std::size_t kTopRanks = 4;
/// A call path is named as a cause when its delay is at least this share of the wait state...
constexpr double kCauseOfWait = 0.10;
/// ...and at least this share of the critical-path length (one rank's time scale).
constexpr double kCauseOfPath = 0.01;
/// Ranks are named when at most kTopRanks of them hold this share of the call path's delay.
constexpr double kRanksCover = 0.90;
/// A rank counts as causing when it holds more than this (the traces' clock tick).
constexpr double kNoDelay = 1e-9;
/// Root-cause findings: the largest wait states, each at least this share of allocation time.
constexpr std::size_t kCauseFindings = 3;
constexpr double kCauseFindingShare = 0.01;

struct WorstWire {
  double duration;
  double start;
  std::int32_t metric;
  std::int32_t rank;
  std::uint32_t callpath;
  std::uint32_t pad;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string secs(double s) {
  if (s >= 100.0) return fmt("%.1f s", s);
  if (s >= 0.1) return fmt("%.2f s", s);
  if (s >= 1e-3) return fmt("%.2f ms", s * 1e3);
  return fmt("%.2f us", s * 1e6);
}

std::string pct(double fraction) { return fmt("%.1f %%", fraction * 100.0); }

/// "foo on rank 0 (3.00 s direct, 1.67 s through other waits)".
/// A region name as a sentence shows it (docs: README "The summary").
std::string sentence_name(const std::string& name) {
  return shorten_name(name, kSentenceNameWidth);
}

std::string cause_phrase(const SummaryWaitMetric::Cause& c) {
  std::string amounts;
  if (c.short_term > 0.0) amounts = secs(c.short_term) + " direct";
  if (c.long_term > 0.0)
    amounts += (amounts.empty() ? "" : ", ") + secs(c.long_term) + " through other waits";
  return sentence_name(callee_of(c.path)) + " on " + c.rank_names + " (" + amounts + ")";
}

/// What a user can do about each kind of waiting.
const char* advice(Metric m) {
  switch (m) {
    case Metric::MpiLatesender:
      return "receivers wait for messages sent late: look at what the senders compute before "
             "they send";
    case Metric::MpiLatereceiver:
      return "synchronous sends wait for receivers that post late: post receives earlier or "
             "use non-blocking sends";
    case Metric::MpiBarrierWait:
      return "ranks arrive at barriers at different times: balance the work before them or "
             "remove barriers that are not needed";
    case Metric::MpiWaitNxn:
      return "ranks arrive at all-to-all collectives at different times: balance the work "
             "before them";
    case Metric::MpiLatebroadcast:
      return "the root enters broadcasts/scatters late: make the root's preceding work "
             "lighter";
    case Metric::MpiEarlyreduce:
      return "the root of reductions/gathers arrives early and waits for the last sender";
    case Metric::MpiFinalizeWait:
      return "ranks finish at different times: the final part of the run is imbalanced";
    default:
      return "";
  }
}

}  // namespace

std::string callpath_name(const Definitions& defs, const CallTree& tree, std::uint32_t cp) {
  std::string path;
  for (CallpathId c{cp}; c.valid(); c = tree.node(c).parent)
    path = demangle(defs.region(tree.node(c).region).name) + (path.empty() ? "" : "/" + path);
  return path;
}

std::vector<std::string> callpath_names(const Definitions& defs, const CallTree& tree) {
  const std::size_t n = tree.size();
  std::vector<std::string> regions(defs.regions.size());
  std::vector<std::uint8_t> known(defs.regions.size(), 0);
  auto region = [&](CallpathId c) -> const std::string& {
    const RegionId r = tree.node(c).region;
    if (!known[r.value]) {
      regions[r.value] = demangle(defs.region(r).name);
      known[r.value] = 1;
    }
    return regions[r.value];
  };
  std::vector<std::string> names(n);
  std::vector<std::uint8_t> done(n, 0);
  std::vector<std::uint32_t> chain;
  for (std::uint32_t cp = 0; cp < n; ++cp) {
    // The ancestors not named yet, innermost first; then named from the outermost in.
    for (CallpathId c{cp}; c.valid() && !done[c.value]; c = tree.node(c).parent)
      chain.push_back(c.value);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const CallpathId c{*it};
      const CallpathId parent = tree.node(c).parent;
      names[*it] = parent.valid() ? names[parent.value] + "/" + region(c) : region(c);
      done[*it] = 1;
    }
    chain.clear();
  }
  return names;
}

std::string rank_list(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j - i >= 2) {
      parts.push_back(std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]));
    } else {
      for (std::size_t k = i; k <= j; ++k) parts.push_back(std::to_string(ranks[k]));
    }
    i = j + 1;
  }
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

Summary build_summary(const replay::World& world, const Definitions& defs, const CallTree& tree,
                      const Shard& shard, const std::vector<Severity>& sevs,
                      const std::vector<WaitStateResult>& waits, const CriticalPathSummary& path,
                      const std::vector<std::vector<Severity>>* threads) {
  const std::size_t n = tree.size();
  const std::vector<std::string> names = callpath_names(defs, tree);
  // (A call path id out of range reads as callpath_name has it: empty.)
  auto name_of = [&](std::uint32_t cp) -> const std::string& {
    static const std::string none;
    return cp < names.size() ? names[cp] : none;
  };
  const int ranks = defs.ranks();
  const std::size_t held = shard.size();
  // The locations of the critical-path table and the impact split, as of the indicators: the
  // ranks, or on hybrid traces every thread of every rank (docs/openmp.md), numbered
  // rank-major, thread-minor as in the report's system tree.
  const bool hybrid = threads != nullptr;
  static const std::vector<Severity> kNoThreads;
  auto workers_of = [&](std::size_t i) -> const std::vector<Severity>& {
    return hybrid && i < threads->size() ? (*threads)[i] : kNoThreads;
  };
  std::vector<int> loc_first(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r)
    loc_first[r + 1] = loc_first[r] + (hybrid ? static_cast<int>(defs.processes[r].locations) : 1);
  const int locations = loc_first[ranks];
  // "rank 3", or on hybrid traces "thread 2 of rank 3", for a location number.
  auto location_name = [&](int loc) {
    const int r = static_cast<int>(
        std::upper_bound(loc_first.begin(), loc_first.end(), loc) - loc_first.begin() - 1);
    return hybrid ? "thread " + std::to_string(loc - loc_first[r]) + " of rank " +
                        std::to_string(r)
                  : "rank " + std::to_string(r);
  };
  Summary s;
  s.trace = defs.anchor_path;
  s.ranks = ranks;
  s.processes = shard.blocks.processes();
  s.ranks_per_process_max = shard.blocks.count(0);
  s.ranks_per_process_min = shard.blocks.count(shard.blocks.processes() - 1);
  s.critical_path_length = path.length;

  // Per-call-path sums over ranks (in one fixed order: replay::sum_over_ranks), per-call-path
  // maxima with their rank. Layout: kSumRows, kWaitRows, inclusive time, then kCauseRows rows
  // per entry of kCauses.
  constexpr std::size_t kCauseBase = kSumCount + kWaitCount + 1;
  const std::size_t width = (kCauseBase + kCauseRows * kCauseCount) * n;
  const std::vector<double> sum =
      replay::sum_over_ranks(world, shard.blocks, width, [&](std::size_t i, double* local) {
        const Severity& sev = sevs[i];
        for (std::size_t k = 0; k < kSumCount; ++k)
          std::copy(sev.row(kSumRows[k]), sev.row(kSumRows[k]) + n, local + k * n);
        for (std::size_t k = 0; k < kWaitCount; ++k)
          std::copy(sev.row(kWaitRows[k]), sev.row(kWaitRows[k]) + n,
                    local + (kSumCount + k) * n);
        const std::vector<double> incl = inclusive_along_call_tree(tree, sev.row(Metric::Time));
        std::copy(incl.begin(), incl.end(), local + (kSumCount + kWaitCount) * n);
        // Hybrid traces: the rank's worker threads in thread order, as the indicators add them
        // (time, critical path and the indicators are per thread; the MPI waits are the
        // master's). Their time includes their idle time, so the allocation time is every
        // thread's.
        for (const Severity& worker : workers_of(i)) {
          for (std::size_t k = 0; k < kSumCount; ++k) {
            const double* from = worker.row(kSumRows[k]);
            for (std::size_t c = 0; c < n; ++c) local[k * n + c] += from[c];
          }
          const std::vector<double> w_incl =
              inclusive_along_call_tree(tree, worker.row(Metric::Time));
          for (std::size_t c = 0; c < n; ++c) local[(kSumCount + kWaitCount) * n + c] += w_incl[c];
        }
        for (std::size_t p = 0; p < kCauseCount; ++p) {
          const Metric rows[kCauseRows] = {kCauses[p].short_term, kCauses[p].long_term,
                                           kCauses[p].indirect, kCauses[p].propagating};
          for (std::size_t k = 0; k < kCauseRows; ++k) {
            if (rows[k] == Metric::Count) continue;
            double* to = local + (kCauseBase + p * kCauseRows + k) * n;
            std::copy(sev.row(rows[k]), sev.row(rows[k]) + n, to);
            // A rank's delays are those of all its threads (a slow worker names its rank).
            if (k < 2)
              for (const Severity& worker : workers_of(i)) {
                const double* from = worker.row(rows[k]);
                for (std::size_t c = 0; c < n; ++c) to[c] += from[c];
              }
          }
        }
      });
  struct DoubleInt {
    double v;
    int r;
  };
  // MAXLOC: the larger value, on ties the lower rank; the held ranks first, then processes.
  auto better = [](const DoubleInt& a, const DoubleInt& b) {
    return a.v > b.v || (a.v == b.v && a.r < b.r);
  };
  // The largest exclusive time per call path on one location (rank, or thread of a hybrid
  // trace), with the location's number; ties to the lower number.
  std::vector<DoubleInt> mine(n), most(n);
  for (std::size_t c = 0; c < n; ++c) {
    mine[c] = DoubleInt{sevs[0].at(Metric::Time, c), loc_first[shard.first()]};
    for (std::size_t i = 0; i < held; ++i) {
      const int loc = loc_first[shard.first() + static_cast<Rank>(i)];
      if (i > 0) {
        const DoubleInt v{sevs[i].at(Metric::Time, c), loc};
        if (better(v, mine[c])) mine[c] = v;
      }
      const std::vector<Severity>& workers = workers_of(i);
      for (std::size_t t = 0; t < workers.size(); ++t) {
        const DoubleInt v{workers[t].at(Metric::Time, c), loc + static_cast<int>(t) + 1};
        if (better(v, mine[c])) mine[c] = v;
      }
    }
  }
  MPI_Allreduce(mine.data(), most.data(), static_cast<int>(n), MPI_DOUBLE_INT, MPI_MAXLOC,
                world.comm());
  auto row = [&](std::size_t k) { return sum.data() + k * n; };
  const double* time_sum = row(0);
  const double* cp_sum = row(1);
  const double* cpi_sum = row(2);
  const double* incl_sum = row(kSumCount + kWaitCount);

  // Root causes. Process 0 picks each pattern's kTopCauses call paths by delay summed over
  // ranks (short + long-term) and broadcasts them, so that every process looks up the same
  // slots; then kTopRanks rounds of MAXLOC find the ranks with the most delay in each slot, and
  // a sum counts the ranks that have any. Each process sends O(patterns x kTopCauses) values.
  constexpr std::size_t kSlots = kCauseCount * kTopCauses;
  auto delay_sum = [&](std::size_t p, std::uint32_t c) {
    return row(kCauseBase + p * kCauseRows)[c] + row(kCauseBase + p * kCauseRows + 1)[c];
  };
  std::uint32_t slot[kSlots];
  std::fill(slot, slot + kSlots, UINT32_MAX);
  if (world.rank() == 0)
    for (std::size_t p = 0; p < kCauseCount; ++p) {
      std::vector<std::pair<double, std::uint32_t>> by_delay;
      for (std::uint32_t c = 0; c < n; ++c)
        if (delay_sum(p, c) > 0.0) by_delay.push_back({-delay_sum(p, c), c});  // ties: lower id
      const std::size_t top = std::min(kTopCauses, by_delay.size());
      std::partial_sort(by_delay.begin(), by_delay.begin() + top, by_delay.end());
      for (std::size_t i = 0; i < top; ++i) slot[p * kTopCauses + i] = by_delay[i].second;
    }
  MPI_Bcast(slot, static_cast<int>(kSlots), MPI_UINT32_T, 0, world.comm());
  // A held rank's delay of one kind at call path c: its master's and its threads'.
  auto rank_delay_at = [&](std::size_t i, Metric m, std::uint32_t c) {
    double v = sevs[i].at(m, c);
    for (const Severity& worker : workers_of(i)) v += worker.at(m, c);
    return v;
  };
  // Per held rank and slot: its delay there (0 once it has been named).
  std::vector<double> rank_delay(held * kSlots, 0.0);
  DoubleInt slot_mine[kSlots], slot_best[kSlots];
  DoubleInt slot_top[kTopRanks][kSlots];
  int slot_has[kSlots], slot_count[kSlots];
  std::fill(slot_has, slot_has + kSlots, 0);
  for (std::size_t i = 0; i < held; ++i)
    for (std::size_t k = 0; k < kSlots; ++k) {
      const std::size_t p = k / kTopCauses;
      const double v = slot[k] == UINT32_MAX ? 0.0
                                             : rank_delay_at(i, kCauses[p].short_term, slot[k]) +
                                                   rank_delay_at(i, kCauses[p].long_term, slot[k]);
      rank_delay[i * kSlots + k] = v > kNoDelay ? v : 0.0;
      slot_has[k] += v > kNoDelay ? 1 : 0;
    }
  MPI_Reduce(slot_has, slot_count, static_cast<int>(kSlots), MPI_INT, MPI_SUM, 0, world.comm());
  for (std::size_t round = 0; round < kTopRanks; ++round) {
    for (std::size_t k = 0; k < kSlots; ++k) {
      slot_mine[k] = DoubleInt{rank_delay[k], shard.first()};
      for (std::size_t i = 1; i < held; ++i) {
        const DoubleInt v{rank_delay[i * kSlots + k], shard.first() + static_cast<Rank>(i)};
        if (better(v, slot_mine[k])) slot_mine[k] = v;
      }
    }
    MPI_Allreduce(slot_mine, slot_best, static_cast<int>(kSlots), MPI_DOUBLE_INT, MPI_MAXLOC,
                  world.comm());
    for (std::size_t k = 0; k < kSlots; ++k) {
      slot_top[round][k] = slot_best[k];
      // The winner steps aside so that the next round finds the next rank.
      if (shard.holds(slot_best[k].r)) rank_delay[shard.index(slot_best[k].r) * kSlots + k] = 0.0;
    }
  }

  // Trace extent and sizes.
  Ticks first = ~Ticks{0}, last = 0;
  std::uint64_t counts[3] = {0, 0, 0};
  for (std::size_t i = 0; i < held; ++i) {
    const LocalTrace& trace = shard.traces[i];
    if (trace.size()) {
      first = std::min(first, trace.time.front());
      last = std::max(last, trace.time.back());
    }
    // The trace's event records, also those the analysis does not keep (metric samples): what
    // Score-P wrote and --count-events announces.
    auto records = [](const LocalTrace& t) {
      return std::max<std::uint64_t>(t.records, t.size());
    };
    counts[0] += records(trace);
    if (i < shard.workers.size())  // hybrid traces: every thread's events
      for (const LocalTrace& worker : shard.workers[i]) counts[0] += records(worker);
    counts[1] += waits[i].p2p_clock_violations;
    counts[2] += waits[i].coll_clock_violations;
  }
  Ticks gfirst = 0, glast = 0;
  MPI_Allreduce(&first, &gfirst, 1, MPI_UINT64_T, MPI_MIN, world.comm());
  MPI_Allreduce(&last, &glast, 1, MPI_UINT64_T, MPI_MAX, world.comm());
  s.wall_clock = glast >= gfirst ? defs.clock.span(gfirst, glast) : 0.0;
  std::uint64_t gcounts[3] = {0, 0, 0};
  MPI_Allreduce(counts, gcounts, 3, MPI_UINT64_T, MPI_SUM, world.comm());
  s.events = gcounts[0];
  s.p2p_clock_violations = gcounts[1];
  s.coll_clock_violations = gcounts[2];
  for (std::uint32_t c = 0; c < n; ++c)
    if (!tree.node(CallpathId{c}).parent.valid()) s.allocation_time += incl_sum[c];

  // The most severe instances: each rank's top ones, gathered on process 0 in rank order.
  std::vector<WorstWire> out(held * kWorst, WorstWire{-1.0, 0.0, 0, 0, 0, 0});
  for (std::size_t i = 0; i < held; ++i) {
    const LocalTrace& trace = shard.traces[i];
    std::vector<WaitState> top(std::min(kWorst, waits[i].waits.size()));
    std::partial_sort_copy(waits[i].waits.begin(), waits[i].waits.end(), top.begin(), top.end(),
                           [](const WaitState& a, const WaitState& b) { return a.wait > b.wait; });
    for (std::size_t k = 0; k < top.size(); ++k) {
      const Ticks start = wait_start(trace, top[k]);
      out[i * kWorst + k] =
          WorstWire{top[k].wait, start >= gfirst ? defs.clock.span(gfirst, start) : 0.0,
                    static_cast<std::int32_t>(top[k].metric), trace.rank, top[k].callpath, 0};
    }
  }
  std::vector<WorstWire> all(world.rank() == 0 ? kWorst * static_cast<std::size_t>(ranks) : 0);
  {
    constexpr int kBytes = static_cast<int>(kWorst * sizeof(WorstWire));
    std::vector<int> bytes(static_cast<std::size_t>(world.size())),
        displs(static_cast<std::size_t>(world.size()));
    for (int p = 0; p < world.size(); ++p) {
      bytes[static_cast<std::size_t>(p)] = shard.blocks.count(p) * kBytes;
      displs[static_cast<std::size_t>(p)] = shard.blocks.first(p) * kBytes;
    }
    MPI_Gatherv(out.data(), static_cast<int>(held) * kBytes, MPI_BYTE, all.data(), bytes.data(),
                displs.data(), MPI_BYTE, 0, world.comm());
  }

  // Inter-partition diagnosis needs, on every process, the call path with the largest
  // inter-partition imbalance; then the waiting and the work of the ranks that never run it.
  // Partitions are ranks also on hybrid traces (a rank's threads are in its partition): a rank
  // runs the call path if one of its threads spends time there other than idling (a worker's
  // time includes its idle time in the master's serial code, docs/openmp.md), and its work is
  // all its threads' computation.
  std::uint32_t bottleneck = UINT32_MAX;
  double best_inter = 0.0;
  for (std::uint32_t c = 0; c < n; ++c)
    if (row(6)[c] > best_inter) {
      best_inter = row(6)[c];
      bottleneck = c;
    }
  const std::vector<double> others_sum =
      replay::sum_over_ranks(world, shard.blocks, n + 2, [&](std::size_t i, double* others) {
        if (bottleneck == UINT32_MAX) return;
        const Severity& sev = sevs[i];
        if (inclusive_along_call_tree(tree, sev.row(Metric::Time))[bottleneck] != 0.0) return;
        const std::vector<Severity>& workers = workers_of(i);
        for (const Severity& worker : workers) {
          std::vector<double> busy(n);
          for (std::size_t c = 0; c < n; ++c)
            busy[c] = worker.at(Metric::Time, c) - worker.at(Metric::OmpIdleThreads, c);
          if (inclusive_along_call_tree(tree, busy.data())[bottleneck] != 0.0) return;
        }
        for (std::uint32_t c = 0; c < n; ++c) {
          const Region& r = defs.region(tree.node(CallpathId{c}).region);
          if (!r.is_mpi() && tree.node(CallpathId{c}).parent.valid()) {
            others[c] = sev.at(Metric::Comp, c);
            for (const Severity& worker : workers) others[c] += worker.at(Metric::Comp, c);
          }
          for (Metric m : kWaitRows) others[n] += sev.at(m, c);
        }
        others[n + 1] = 1.0;
      });
  if (world.rank() != 0) return s;

  // Critical-path table.
  for (std::uint32_t c = 0; c < n; ++c) {
    if (cp_sum[c] <= 0.0) continue;
    SummaryCallpath row_c;
    row_c.path = name_of(c);
    row_c.name = demangle(defs.region(tree.node(CallpathId{c}).region).name);
    row_c.critical_path = cp_sum[c];
    row_c.critical_path_share = path.length > 0.0 ? cp_sum[c] / path.length : 0.0;
    row_c.imbalance = cpi_sum[c];
    row_c.imbalance_share = path.length > 0.0 ? cpi_sum[c] / path.length : 0.0;
    row_c.time_total = time_sum[c];
    row_c.time_average = time_sum[c] / locations;
    row_c.time_max = most[c].v;
    row_c.imbalance_percent = row_c.time_average > 0.0 ? cpi_sum[c] / row_c.time_average : 0.0;
    row_c.profile_imbalance = std::max(0.0, row_c.time_max - row_c.time_average);
    s.callpaths.push_back(row_c);
  }
  std::sort(s.callpaths.begin(), s.callpaths.end(),
            [](const SummaryCallpath& a, const SummaryCallpath& b) {
              return a.critical_path > b.critical_path;
            });

  // Wait states.
  for (std::size_t k = 0; k < kWaitCount; ++k) {
    const double* w = row(kSumCount + k);
    SummaryWaitMetric m;
    m.metric = metric_info(kWaitRows[k]).uniq_name;
    m.name = metric_info(kWaitRows[k]).disp_name;
    std::vector<std::pair<double, std::uint32_t>> where;
    for (std::uint32_t c = 0; c < n; ++c)
      if (w[c] > 0.0) {
        m.seconds += w[c];
        where.push_back({w[c], c});
      }
    if (m.seconds <= 0.0) continue;
    m.share = s.allocation_time > 0.0 ? m.seconds / s.allocation_time : 0.0;
    std::sort(where.rbegin(), where.rend());
    for (std::size_t i = 0; i < where.size() && i < 3; ++i)
      m.callpaths.push_back({name_of(where[i].second), where[i].first});
    for (std::size_t p = 0; p < kCauseCount; ++p) {
      if (kCauses[p].wait != kWaitRows[k]) continue;
      const double* rows = row(kCauseBase + p * kCauseRows);
      m.has_causes = true;
      m.has_classes = kCauses[p].indirect != Metric::Count;
      for (std::uint32_t c = 0; c < n; ++c) {
        m.delay_short_term += rows[c];
        m.delay_long_term += rows[n + c];
        m.indirect += rows[2 * n + c];
        m.propagating += rows[3 * n + c];
      }
      for (std::size_t t = 0; t < kTopCauses; ++t) {
        const std::size_t i = p * kTopCauses + t;
        if (slot[i] == UINT32_MAX) break;
        // The rule for naming a cause (README, "The summary").
        const double delay = delay_sum(p, slot[i]);
        if (delay < kCauseOfWait * m.seconds || delay < kCauseOfPath * path.length) break;
        SummaryWaitMetric::Cause cause;
        cause.path = name_of(slot[i]);
        cause.short_term = rows[slot[i]];
        cause.long_term = rows[n + slot[i]];
        cause.rank_count = slot_count[i];
        double covered = 0.0;
        for (std::size_t r = 0; r < kTopRanks && slot_top[r][i].v > 0.0; ++r) {
          cause.ranks.push_back({slot_top[r][i].r, slot_top[r][i].v});
          covered += slot_top[r][i].v;
          if (cause.named_ranks == 0 && covered >= kRanksCover * delay)
            cause.named_ranks = static_cast<int>(r + 1);
        }
        std::vector<int> named;
        for (int r = 0; r < cause.named_ranks; ++r) named.push_back(cause.ranks[r].rank);
        cause.rank_names = cause.named_ranks > 0 ? rank_list(named)
                           : cause.rank_count > static_cast<int>(kTopRanks)
                               ? std::to_string(cause.rank_count) + " ranks"
                               : std::string("many ranks");
        m.caused_by.push_back(cause);
      }
    }
    s.waits.push_back(m);
  }
  std::sort(s.waits.begin(), s.waits.end(),
            [](const SummaryWaitMetric& a, const SummaryWaitMetric& b) {
              return a.seconds > b.seconds;
            });

  // Impact.
  SummaryImpact& im = s.impact;
  im.total = locations * path.length;
  for (std::uint32_t c = 0; c < n; ++c) {
    im.critical_path_activities += row(3)[c];
    im.imbalance_impact += row(4)[c];
    im.intra_partition += row(5)[c];
    im.inter_partition += row(6)[c];
    im.non_critical_path_activities += row(7)[c];
  }

  // Findings: load imbalance on the critical path, per call path.
  for (const SummaryCallpath& c : s.callpaths) {
    if (c.imbalance_share < 0.05) continue;
    const std::uint32_t cpid = [&] {
      for (std::uint32_t i = 0; i < n; ++i)
        if (name_of(i) == c.path) return i;
      return 0u;
    }();
    // Where partitions doing different work explain the imbalance, the partition finding
    // below says what to do; a per-rank rebalance would be the wrong advice. On hybrid traces
    // the workers idling in the masters' serial code are such partitions too (every thread a
    // location): the idle-threads finding says what to do there.
    if (row(6)[cpid] >= 0.5 * row(4)[cpid] && row(6)[cpid] > 0.0) continue;
    // A parallel region's own time on the path is fork/join management and a barrier's is
    // synchronization: no work to redistribute. Their imbalance is the share of the work below
    // them (Cube's formula takes it from the subtree), which the work's own call paths and the
    // OpenMP barrier findings name.
    if (hybrid && omp_construct(defs.region(tree.node(CallpathId{cpid}).region)) !=
                      OmpConstruct::None)
      continue;
    std::string text = sentence_name(c.name) + ": load imbalance costs " + secs(c.imbalance) +
                       " (" + pct(c.imbalance_share) + " of the runtime, " +
                       pct(c.imbalance_percent) + " of its average time); ";
    const std::string heaviest = location_name(most[cpid].r);
    const char* where = hybrid ? "threads" : "ranks";
    if (c.profile_imbalance < 0.5 * c.imbalance)
      text += std::string("the overload moves between ") + where +
              ", so a static rebalance will not fix it";
    else if (c.profile_imbalance >= 0.8 * c.imbalance)
      text += std::string("the same ") + where + " carry the overload throughout (" + heaviest +
              " has the most): a static redistribution of work fixes it";
    else
      text += std::string("part of the overload stays on the same ") + where + " (" + heaviest +
              " has the most), part moves between " + where;
    s.findings.push_back(text);
  }
  // Inter-partition imbalance: one partition makes the others wait.
  if (bottleneck != UINT32_MAX && im.total > 0.0 && best_inter >= 0.05 * im.total &&
      others_sum[n + 1] > 0.0) {
    std::uint32_t other = UINT32_MAX;
    double most_work = 0.0;
    for (std::uint32_t c = 0; c < n; ++c)
      if (others_sum[c] > most_work) {
        most_work = others_sum[c];
        other = c;
      }
    const std::string name =
        sentence_name(demangle(defs.region(tree.node(CallpathId{bottleneck}).region).name));
    const std::string other_name =
        other == UINT32_MAX ? "the other"
                            : sentence_name(
                                  demangle(defs.region(tree.node(CallpathId{other}).region).name));
    s.findings.push_back(name + " partition is the bottleneck: " + other_name + " ranks wait " +
                         secs(others_sum[n]) + "; move ranks from " + other_name + " to " +
                         name + " (inter-partition imbalance costs " + secs(best_inter) + ")");
  }
  // The largest kind of waiting.
  if (!s.waits.empty() && s.waits.front().share >= 0.05) {
    const SummaryWaitMetric& w = s.waits.front();
    Metric m = Metric::MpiLatesender;
    for (Metric k : kWaitRows)
      if (w.metric == metric_info(k).uniq_name) m = k;
    std::string text = w.name + " costs " + secs(w.seconds) + " (" + pct(w.share) +
                       " of the allocation time), most of it in " +
                       sentence_name(callee_of(w.callpaths.front().path));
    if (*advice(m)) text += std::string(": ") + advice(m);
    s.findings.push_back(text);
  }

  // Root causes of the largest wait states, where a call path passes the rule above.
  for (std::size_t i = 0; i < s.waits.size() && i < kCauseFindings; ++i) {
    const SummaryWaitMetric& w = s.waits[i];
    if (w.caused_by.empty() || w.share < kCauseFindingShare) continue;
    std::vector<std::string> in;
    for (const auto& c : w.callpaths) {
      const std::string name = sentence_name(callee_of(c.path));
      if (std::find(in.begin(), in.end(), name) == in.end()) in.push_back(name);
    }
    std::string text = w.name + " in ";
    for (std::size_t k = 0; k < in.size(); ++k)
      text += (k == 0 ? "" : k + 1 == in.size() ? " and " : ", ") + in[k];
    text += " (" + secs(w.seconds) + ") is caused by ";
    for (std::size_t k = 0; k < w.caused_by.size(); ++k)
      text += (k == 0 ? "" : k + 1 == w.caused_by.size() ? " and " : ", ") +
              cause_phrase(w.caused_by[k]);
    s.findings.push_back(text);
  }

  std::sort(all.begin(), all.end(),
            [](const WorstWire& a, const WorstWire& b) {
              if (a.duration != b.duration) return a.duration > b.duration;
              if (a.start != b.start) return a.start < b.start;
              return a.rank < b.rank;
            });
  for (const WorstWire& w : all) {
    if (w.duration <= 0.0 || s.worst.size() == kWorst) break;
    SummaryWaitInstance inst;
    const MetricInfo& info = metric_info(static_cast<Metric>(w.metric));
    inst.metric = info.uniq_name;
    inst.name = info.disp_name;
    inst.path = name_of(w.callpath);
    inst.rank = w.rank;
    inst.start = w.start;
    inst.duration = w.duration;
    s.worst.push_back(inst);
  }
  return s;
}


void add_openmp_summary(const replay::World& world, const Definitions& defs, const CallTree& tree,
                        const Shard& shard, const std::vector<Severity>& sevs,
                        const std::vector<std::vector<Severity>>& workers, Summary& s) {
  SummaryOpenMp& o = s.openmp;
  o.hybrid = true;
  const std::size_t n = tree.size();
  // Barrier call paths (each a column of per-location waiting).
  std::vector<std::uint32_t> barriers;
  for (std::uint32_t c = 0; c < n; ++c) {
    if (is_omp_barrier(omp_construct(defs.region(tree.node(CallpathId{c}).region))))
      barriers.push_back(c);
  }
  constexpr std::size_t kTotals = 9;  // idle, limited, management, ib, eb, lc, la, time, worker
  const std::size_t width = kTotals + barriers.size();
  std::vector<double> mine;
  auto add_location = [&](const Severity& sev, bool worker) {
    auto total = [&](Metric m) {
      double v = 0.0;
      for (std::size_t c = 0; c < n; ++c) v += sev.row(m)[c];
      return v;
    };
    const double time = total(Metric::Time);
    const double row[kTotals] = {total(Metric::OmpIdleThreads),
                                 total(Metric::OmpLimitedParallelism),
                                 total(Metric::OmpManagement),
                                 total(Metric::OmpIbarrierWait),
                                 total(Metric::OmpEbarrierWait),
                                 total(Metric::OmpLockContentionCritical),
                                 total(Metric::OmpLockContentionApi),
                                 time,
                                 worker ? 1.0 : 0.0};
    mine.insert(mine.end(), row, row + kTotals);
    for (std::uint32_t c : barriers)
      mine.push_back(sev.at(Metric::OmpIbarrierWait, c) + sev.at(Metric::OmpEbarrierWait, c));
  };
  for (std::size_t i = 0; i < shard.size(); ++i) {
    add_location(sevs[i], false);
    if (i < workers.size())
      for (const Severity& w : workers[i]) add_location(w, true);
  }
  // Location order on process 0 (rank-major, thread-minor): sums in one fixed order.
  std::vector<std::size_t> first(static_cast<std::size_t>(defs.ranks()) + 1, 0);
  std::vector<std::string> key;
  for (int r = 0; r < defs.ranks(); ++r) {
    first[r + 1] = first[r] + defs.processes[r].locations;
    for (std::uint32_t t = 0; t < defs.processes[r].locations; ++t)
      key.push_back(std::to_string(r) + "." + std::to_string(t));
  }
  const std::size_t locations = first.back();
  o.locations = static_cast<int>(locations);
  std::vector<int> counts(static_cast<std::size_t>(world.size())),
      displs(static_cast<std::size_t>(world.size()));
  for (int p = 0; p < world.size(); ++p) {
    const std::size_t a = first[shard.blocks.first(p)], b = first[shard.blocks.first(p + 1)];
    counts[p] = static_cast<int>((b - a) * width);
    displs[p] = static_cast<int>(a * width);
  }
  std::vector<double> all(world.rank() == 0 ? locations * width : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, world.comm());
  if (world.rank() != 0) return;
  for (std::size_t l = 0; l < locations; ++l) {
    const double* v = &all[l * width];
    o.idle_serial += v[0] - v[1];
    o.limited_parallelism += v[1];
    o.management += v[2];
    o.ibarrier_wait += v[3];
    o.ebarrier_wait += v[4];
    o.lock_critical += v[5];
    o.lock_api += v[6];
    if (v[8] != 0.0) o.worker_time += v[7];
  }
  // allocation_time already holds the workers' time (build_summary with their severities).
  for (std::size_t b = 0; b < barriers.size(); ++b) {
    SummaryOmpBarrier bar;
    bar.path = callpath_name(defs, tree, barriers[b]);
    const CallpathId parent = tree.node(CallpathId{barriers[b]}).parent;
    const Region& region = defs.region(tree.node(CallpathId{barriers[b]}).region);
    // An implicit barrier ends the construct it is in; an explicit one stands for itself.
    bar.construct = omp_construct(region) == OmpConstruct::ImplicitBarrier && parent.valid()
                        ? demangle(defs.region(tree.node(parent).region).name)
                        : demangle(region.name);
    std::vector<std::pair<double, std::size_t>> waits;  // (wait, location) where it was visited
    for (std::size_t l = 0; l < locations; ++l) {
      const double w = all[l * width + kTotals + b];
      bar.seconds += w;
      waits.emplace_back(w, l);
    }
    if (bar.seconds <= 0.0) continue;
    // Threads that never visit it (other parallel regions) have no time there either.
    std::sort(waits.begin(), waits.end());
    for (std::size_t k = 0; k < waits.size() && bar.last_to_arrive.size() < 4; ++k)
      if (waits[k].first <= 0.05 * waits.back().first)
        bar.last_to_arrive.push_back(key[waits[k].second]);
    for (std::size_t k = waits.size(); k-- > 0 && bar.waiting_most.size() < 4;) {
      if (waits[k].first <= 0.5 * waits.back().first) break;
      bar.waiting_most.push_back(key[waits[k].second]);
      bar.waiting_most_s.push_back(waits[k].first);
    }
    o.barriers.push_back(std::move(bar));
  }
  std::stable_sort(o.barriers.begin(), o.barriers.end(),
                   [](const SummaryOmpBarrier& a, const SummaryOmpBarrier& b) {
                     return a.seconds > b.seconds;
                   });
  if (o.barriers.size() > 3) o.barriers.resize(3);

  // Findings, beside the MPI ones: what a user of a hybrid code looks at first.
  const double total = s.allocation_time > 0.0 ? s.allocation_time : 1.0;
  if (o.idle_serial >= 0.01 * total)
    s.findings.push_back("Idle threads: worker threads are idle for " + secs(o.idle_serial) +
                         " (" + pct(o.idle_serial / total) +
                         " of the allocation time) while the master threads run serial code "
                         "outside parallel regions (omp_idle_threads): parallelize those parts "
                         "or run fewer threads per rank");
  if (o.limited_parallelism >= 0.01 * total)
    s.findings.push_back("Limited parallelism: threads left out of smaller teams are idle for " +
                         secs(o.limited_parallelism) + " (" +
                         pct(o.limited_parallelism / total) + " of the allocation time)");
  for (const SummaryOmpBarrier& b : o.barriers) {
    if (b.seconds < 0.01 * total) continue;
    std::string text = "OpenMP imbalance in " + sentence_name(b.construct) + ": threads wait " +
                       secs(b.seconds) + " (" + pct(b.seconds / total) +
                       " of the allocation time) at " + sentence_name(callee_of(b.path));
    if (!b.last_to_arrive.empty()) {
      text += "; last to arrive (the slow threads): ";
      for (std::size_t k = 0; k < b.last_to_arrive.size(); ++k)
        text += (k ? ", " : "") + b.last_to_arrive[k];
    }
    if (!b.waiting_most.empty()) {
      text += "; waiting most: ";
      for (std::size_t k = 0; k < b.waiting_most.size(); ++k)
        text += (k ? ", " : "") + b.waiting_most[k] + " (" + secs(b.waiting_most_s[k]) + ")";
    }
    s.findings.push_back(text + " (threads as rank.thread): balance the work of the loop's "
                                "threads (schedule clause, chunk size)");
  }
  const double locks = o.lock_critical + o.lock_api;
  if (locks >= 0.01 * total)
    s.findings.push_back("OpenMP lock contention costs " + secs(locks) + " (" +
                         pct(locks / total) + " of the allocation time; " +
                         secs(o.lock_critical) + " in critical sections, " + secs(o.lock_api) +
                         " in lock API calls): threads wait for each other to enter");
}

}  // namespace cpreplay::analysis
