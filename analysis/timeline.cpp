// SPDX-License-Identifier: BSD-3-Clause
// Timeline events of one rank for --timeline, and the budget that --timeline-max-events sets.
#include "analysis/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cpreplay::analysis {
namespace {

/// Events per block: a region open at a multiple of this is looked up in TimelineSource::long_,
/// every other one closes within the block after its Enter. Bounds the pending visits.
constexpr EventIdx kBlock = EventIdx{1} << 14;

/// Log-linear duration histogram: exact below 8 ns, then 8 buckets per power of two (a kept
/// threshold at most 12.5 % coarser than the exact one).
constexpr std::size_t kBuckets = 8 + 61 * 8;

std::size_t bucket_of(std::uint64_t ns) {
  if (ns < 8) return static_cast<std::size_t>(ns);
  const int e = 63 - __builtin_clzll(ns);  // >= 3
  const auto sub = static_cast<std::size_t>((ns >> (e - 3)) & 7);
  return 8 + static_cast<std::size_t>(e - 3) * 8 + sub;
}

/// The smallest duration of bucket b (UINT64_MAX past the last).
std::uint64_t bucket_floor(std::size_t b) {
  if (b < 8) return b;
  if (b >= kBuckets) return UINT64_MAX;
  const std::size_t e = (b - 8) / 8 + 3;
  return (std::uint64_t{8} + (b - 8) % 8) << (e - 3);
}

/// The shortest duration to keep so that at most `budget` events remain, and how many do.
std::pair<std::uint64_t, std::uint64_t> threshold(const std::vector<std::uint64_t>& hist,
                                                  std::uint64_t budget) {
  std::uint64_t kept = 0;
  for (std::size_t b = kBuckets; b-- > 0;) {
    if (kept + hist[b] > budget) return {bucket_floor(b + 1), kept};
    kept += hist[b];
  }
  return {0, kept};
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (std::uint64_t x : v) s += x;
  return s;
}

}  // namespace

std::uint64_t ViewClock::ns(Ticks t) const {
  if (t <= origin) return 0;
  const Ticks d = t - origin;
  if (ticks_per_second == 1000000000u) return d;  // Score-P's usual clock: no conversion
  // Rounding a product is monotone in d, so nesting survives; a 128-bit division per event
  // would cost more than the formatting.
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(d) * ns_per_tick));
}

Ticks ViewClock::ticks(double seconds) const {
  return static_cast<Ticks>(std::llround(seconds * static_cast<double>(ticks_per_second)));
}

ViewClock view_clock(const replay::World& world, const Definitions& defs, const Shard& shard,
                     Ticks* last) {
  Ticks ends[2] = {0, 0};
  auto extend = [&](const LocalTrace& trace) {
    if (trace.size()) {
      ends[0] = std::max(ends[0], ~trace.time.front());
      ends[1] = std::max(ends[1], trace.time.back());
    }
  };
  for (const LocalTrace& trace : shard.traces) extend(trace);
  for (const std::vector<LocalTrace>& threads : shard.workers)
    for (const LocalTrace& trace : threads) extend(trace);
  Ticks global[2] = {0, 0};
  MPI_Allreduce(ends, global, 2, MPI_UINT64_T, MPI_MAX, world.comm());
  ViewClock clock;
  clock.origin = ~global[0];
  clock.ticks_per_second = defs.clock.ticks_per_second ? defs.clock.ticks_per_second : 1;
  clock.ns_per_tick = 1e9 / static_cast<double>(clock.ticks_per_second);
  if (last != nullptr) *last = std::max(global[1], clock.origin);
  return clock;
}

const char* timeline_wait_name(Metric metric) {
  // Scalasca's display names of the OpenMP waits repeat the MPI ones ("Wait at Barrier"); in
  // one list of wait states they must differ.
  switch (metric) {
    case Metric::OmpEbarrierWait: return "Wait at OpenMP Barrier";
    case Metric::OmpIbarrierWait: return "Wait at OpenMP Implicit Barrier";
    case Metric::OmpLockContentionCritical: return "OpenMP Critical Contention";
    case Metric::OmpLockContentionApi: return "OpenMP Lock Contention";
    default: return metric_info(metric).disp_name;
  }
}

const std::size_t TimelineSource::kHistogramBuckets = kBuckets;

TimelineSource::TimelineSource(const LocalTrace& trace, const WaitStateResult* waits,
                               const OmpWaitState* omp, std::size_t omp_count,
                               const ViewClock& clock)
    : trace_(trace),
      waits_(waits),
      omp_(omp),
      omp_count_(omp_count),
      clock_(clock),
      activity_hist_(kBuckets, 0),
      wait_hist_(kBuckets, 0) {
  // First pass: durations for the budget, and the Leave of regions open at a block boundary.
  std::vector<EventIdx> stack;
  std::size_t long_depth = 0;  // stack entries below this depth were open at a boundary
  const auto n = static_cast<EventIdx>(trace_.size());
  for (EventIdx e = 0; e < n; ++e) {
    if (e % kBlock == 0) long_depth = stack.size();
    const EventKind k = trace_.kind[e];
    if (k == EventKind::Enter) {
      stack.push_back(e);
    } else if (k == EventKind::Leave && !stack.empty()) {
      const EventIdx enter = stack.back();
      stack.pop_back();
      const std::uint64_t leave_ns = clock_.ns(trace_.time[e]);
      ++activity_hist_[bucket_of(leave_ns - clock_.ns(trace_.time[enter]))];
      if (stack.size() < long_depth) {
        long_depth = stack.size();
        long_.emplace_back(enter, leave_ns);
      }
    }
  }
  // Regions never left (a damaged trace) end with the rank's last event.
  const std::uint64_t end_ns = n ? clock_.ns(trace_.time.back()) : 0;
  for (EventIdx enter : stack) {
    ++activity_hist_[bucket_of(end_ns - clock_.ns(trace_.time[enter]))];
    long_.emplace_back(enter, end_ns);
  }
  std::sort(long_.begin(), long_.end());
  if (waits_ != nullptr)
    for (const WaitState& w : waits_->waits) {
      const Ticks start = wait_start(trace_, w);
      ++wait_hist_[bucket_of(clock_.ns(start + clock_.ticks(w.wait)) - clock_.ns(start))];
    }
  for (std::size_t i = 0; i < omp_count_; ++i) {
    const OmpWaitState& w = omp_[i];
    ++wait_hist_[bucket_of(clock_.ns(w.begin + clock_.ticks(w.wait)) - clock_.ns(w.begin))];
  }
}

void TimelineSource::take_histograms(std::vector<std::uint64_t>& into) {
  for (std::size_t b = 0; b < kBuckets; ++b) {
    into[b] += activity_hist_[b];
    into[kBuckets + b] += wait_hist_[b];
  }
  std::vector<std::uint64_t>().swap(activity_hist_);
  std::vector<std::uint64_t>().swap(wait_hist_);
}

void TimelineSource::keep(const TimelineBudget& budget) {
  activity_min_ns_ = budget.activity_min_ns;
  wait_min_ns_ = budget.wait_min_ns;
}

TimelineBudget timeline_budget(const replay::World& world,
                               const std::vector<TimelineSource*>& sources,
                               std::uint64_t max_events, std::uint64_t local_stretches,
                               std::uint64_t local_handovers) {
  std::vector<std::uint64_t> local(2 * kBuckets + 2, 0), global(2 * kBuckets + 2);
  for (TimelineSource* source : sources) source->take_histograms(local);
  local[2 * kBuckets] = local_stretches;
  local[2 * kBuckets + 1] = local_handovers;
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_UINT64_T, MPI_SUM,
                world.comm());
  const std::vector<std::uint64_t> activity_hist(global.begin(), global.begin() + kBuckets);
  const std::vector<std::uint64_t> wait_hist(global.begin() + kBuckets,
                                             global.begin() + 2 * kBuckets);

  TimelineBudget b;
  b.max_events = max_events;
  b.stretches = global[2 * kBuckets];
  b.flows = 2 * global[2 * kBuckets + 1];
  b.activity_total = sum(activity_hist);
  b.waits_total = sum(wait_hist);
  b.activity_kept = b.activity_total;
  b.waits_kept = b.waits_total;
  // The critical path is kept whole even beyond the limit; the rest shares what is left.
  const std::uint64_t fixed = b.stretches + b.flows;
  const std::uint64_t room = max_events > fixed ? max_events - fixed : 0;
  if (b.activity_total + b.waits_total > room) {
    // The longest wait states get up to half (more if activity needs less), activity the rest.
    const std::uint64_t for_waits =
        std::min(b.waits_total,
                 std::max((room + 1) / 2, room > b.activity_total ? room - b.activity_total : 0));
    std::tie(b.wait_min_ns, b.waits_kept) = threshold(wait_hist, for_waits);
    std::tie(b.activity_min_ns, b.activity_kept) = threshold(activity_hist, room - b.waits_kept);
  }
  for (TimelineSource* source : sources) source->keep(b);
  return b;
}

void TimelineSource::flush_activity(std::vector<TimelineEvent>& out) {
  while (pending_head_ < pending_.size() && pending_[pending_head_].state != 0) {
    const Pending& p = pending_[pending_head_++];
    if (p.state != 1) continue;
    TimelineEvent ev;
    ev.ts_ns = p.ts_ns;
    ev.dur_ns = p.dur_ns;
    ev.callpath = p.callpath;
    out.push_back(ev);
  }
  if (pending_head_ == pending_.size()) {  // nothing open refers into it any more
    pending_.clear();
    pending_head_ = 0;
  }
}

void TimelineSource::flush_waits(std::vector<TimelineEvent>& out) {
  // Wait states of one MPI call start together: longest first, so they nest.
  std::stable_sort(
      same_start_.begin(), same_start_.end(),
      [](const TimelineEvent& a, const TimelineEvent& b) { return a.dur_ns > b.dur_ns; });
  out.insert(out.end(), same_start_.begin(), same_start_.end());
  same_start_.clear();
}

bool TimelineSource::next(std::vector<TimelineEvent>& out, std::size_t max) {
  constexpr std::uint32_t kLongVisit = UINT32_MAX;
  const auto n = static_cast<EventIdx>(trace_.size());
  while (next_event_ < n && out.size() < max) {
    const EventIdx e = next_event_++;
    if (e % kBlock == 0) flush_activity(out);  // only long visits are open here
    const EventKind k = trace_.kind[e];
    if (k == EventKind::Enter) {
      const std::uint64_t ts = clock_.ns(trace_.time[e]);
      if (next_long_ < long_.size() && long_[next_long_].first == e) {
        const std::uint64_t dur = long_[next_long_++].second - ts;
        pending_.push_back(Pending{ts, dur, trace_.ref[e],
                                   static_cast<std::uint8_t>(dur >= activity_min_ns_ ? 1 : 2)});
        stack_.push_back(kLongVisit);
      } else {
        stack_.push_back(static_cast<std::uint32_t>(pending_.size()));
        pending_.push_back(Pending{ts, 0, trace_.ref[e], 0});
      }
    } else if (k == EventKind::Leave && !stack_.empty()) {
      const std::uint32_t slot = stack_.back();
      stack_.pop_back();
      if (slot != kLongVisit) {
        Pending& p = pending_[slot];
        p.dur_ns = clock_.ns(trace_.time[e]) - p.ts_ns;
        p.state = p.dur_ns >= activity_min_ns_ ? 1 : 2;
      }
      flush_activity(out);
    }
  }
  if (next_event_ < n) return true;
  flush_activity(out);  // whatever is still open is a long visit, complete already
  // MPI and OpenMP wait states merged by start (a master thread has both; the earlier first,
  // MPI on ties).
  const std::size_t n_mpi = mpi_waits();
  while ((next_wait_ < n_mpi || next_omp_ < omp_count_) && out.size() < max) {
    TimelineEvent ev;
    ev.kind = TimelineEvent::Wait;
    Ticks start = 0;
    const Ticks mpi_start = next_wait_ < n_mpi ? wait_start(trace_, waits_->waits[next_wait_]) : 0;
    if (next_wait_ < n_mpi && (next_omp_ == omp_count_ || mpi_start <= omp_[next_omp_].begin)) {
      const WaitState& w = waits_->waits[next_wait_++];
      start = mpi_start;
      ev.wait = w.wait;
      ev.callpath = w.callpath;
      ev.partner = w.target_rank;
      ev.metric = w.metric;
    } else {
      const OmpWaitState& w = omp_[next_omp_++];
      start = w.begin;
      ev.wait = w.wait;
      ev.callpath = w.callpath;
      ev.partner = static_cast<Rank>(w.partner);
      ev.metric = w.metric;
      ev.partner_is_thread = true;
    }
    ev.ts_ns = clock_.ns(start);
    ev.dur_ns = clock_.ns(start + clock_.ticks(ev.wait)) - ev.ts_ns;
    if (ev.dur_ns < wait_min_ns_) continue;
    if (!same_start_.empty() && same_start_.front().ts_ns != ev.ts_ns) flush_waits(out);
    same_start_.push_back(ev);
  }
  if (next_wait_ < n_mpi || next_omp_ < omp_count_) return true;
  flush_waits(out);
  return false;
}

}  // namespace cpreplay::analysis
