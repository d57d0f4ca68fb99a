// SPDX-License-Identifier: BSD-3-Clause
// The --timeline / --overview stage: local parts on every rank (every thread of a hybrid rank),
// streamed to rank 0's files.
#include "tools/views.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "analysis/overview.hpp"
#include "analysis/summary.hpp"
#include "analysis/timeline.hpp"
#include "cpreplay/names.hpp"
#include "io/output_file.hpp"
#include "io/overview_svg.hpp"
#include "io/timeline_writer.hpp"
#include "replay/stream.hpp"

namespace cpreplay::tools {
namespace {

constexpr std::size_t kOverviewBins = 500;  // 2 px each across the 1000 px plot
constexpr std::size_t kOverviewPaths = 8;
constexpr std::size_t kLegendPathWidth = 100;  // characters; the legend is 1160 px wide
constexpr std::size_t kChunkBytes = std::size_t{1} << 19;  // per MPI message of the stream
constexpr std::size_t kEventsPerStep = 4096;
constexpr int kBinsTag = 7504;
/// Critical-path stretches per chunk of the merge (40 B each): process 0 holds one chunk per
/// process, about 4 MB in all, in as few round trips as that allows (each costs a yield when
/// processes outnumber cores).
std::size_t stretches_per_chunk(int processes) {
  return std::clamp<std::size_t>(std::size_t{100000} / static_cast<std::size_t>(processes), 256,
                                 4096);
}

/// A stretch of the critical path with the rank that owned it.
struct RankedStretch {
  analysis::PathStretch stretch;
  Rank rank;
};

/// Where each thread of each rank goes (docs: README "Seeing the critical path move"): in rank
/// r's process, thread t's region visits on tid t and its wait states on tid T + t (T: the
/// rank's threads; pure MPI: 0 and 1 as always); in the critical-path process one tid per
/// thread location in rank-major order (pure MPI: the rank).
class Locations {
 public:
  explicit Locations(const Definitions& defs) : hybrid_(defs.hybrid()) {
    first_.reserve(defs.processes.size() + 1);
    first_.push_back(0);
    for (const Process& p : defs.processes)
      first_.push_back(first_.back() + 1 + static_cast<int>(p.workers.size()));
  }
  bool hybrid() const { return hybrid_; }
  int threads(Rank r) const { return first_[r + 1] - first_[r]; }
  int activity_tid(Rank, int thread) const { return thread; }
  int wait_tid(Rank r, int thread) const { return threads(r) + thread; }
  int path_tid(Rank r, int thread) const { return first_[r] + thread; }
  int count() const { return first_.back(); }
  /// Thread locations of ranks [a, b).
  int between(Rank a, Rank b) const { return first_[b] - first_[a]; }
  /// The stretch name's thread: -1 for pure MPI ("rank R"), else the thread.
  int stretch_thread(int thread) const { return hybrid_ ? thread : -1; }
  /// Hybrid traces: each rank's thread locations; empty for pure MPI (OverviewSpec::threads).
  std::vector<int> per_rank() const {
    std::vector<int> v;
    for (std::size_t r = 0; hybrid_ && r + 1 < first_.size(); ++r)
      v.push_back(first_[r + 1] - first_[r]);
    return v;
  }

 private:
  bool hybrid_;
  std::vector<int> first_;  ///< first_[r]: thread locations of the ranks before r
};

/// A thread's name for the timeline: its OTF2 location name ("Master thread", "OMP thread 2"),
/// or "thread t" when the trace has none.
std::string thread_label(const Definitions& defs, Rank r, int thread) {
  const Process& p = defs.processes[static_cast<std::size_t>(r)];
  const std::string& name =
      thread == 0 ? p.location_name : p.workers[static_cast<std::size_t>(thread - 1)].name;
  return name.empty() ? "thread " + std::to_string(thread) : name;
}

/// One location's timeline source and where its events go.
struct Source {
  std::unique_ptr<analysis::TimelineSource> timeline;
  Rank rank;
  int thread;
};

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// 1234567 -> "1,234,567", for the terminal.
std::string grouped(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string micros(std::uint64_t ns) { return number(static_cast<double>(ns) / 1e3) + " us"; }

std::string reduction_sentence(const analysis::TimelineBudget& b) {
  if (!b.reduced()) return "";
  std::string s = grouped(b.total()) + " timeline events are more than --timeline-max-events " +
                  grouped(b.max_events) + ": ";
  if (b.activity_kept < b.activity_total)
    s += grouped(b.activity_total - b.activity_kept) + " region visits shorter than " +
         micros(b.activity_min_ns) + " merged into their parents";
  if (b.waits_kept < b.waits_total) {
    if (b.activity_kept < b.activity_total) s += ", ";
    s += grouped(b.waits_total - b.waits_kept) + " wait states shorter than " +
         micros(b.wait_min_ns) + " left out";
  }
  s += "; the critical path is kept whole";
  if (b.kept() > b.max_events) s += " (it alone exceeds the limit)";
  return s;
}

}  // namespace

ViewReport export_views(const replay::World& world, const ViewOutputs& out, const Definitions& defs,
                        const CallTree& tree, const Shard& shard,
                        const std::vector<analysis::WaitStateResult>& waits,
                        const std::vector<analysis::Severity>& sevs,
                        const std::vector<std::vector<analysis::Severity>>& worker_sevs,
                        const std::vector<analysis::OmpWaits>& omp_waits,
                        const std::vector<std::vector<analysis::PathStretch>>& stretches,
                        double cp_length) {
  ViewReport report;
  const bool root = world.rank() == 0;
  const int ranks = defs.ranks();
  const std::size_t held = shard.size();
  const Locations where(defs);
  Ticks last = 0;
  const analysis::ViewClock clock = analysis::view_clock(world, defs, shard, &last);
  const std::uint64_t run_ns = clock.ns(last);
  // Thread t of held rank i: its events and OpenMP wait states (the MPI ones are the master's).
  auto thread_trace = [&](std::size_t i, int t) -> const LocalTrace& {
    return t == 0 ? shard.traces[i] : shard.workers[i][static_cast<std::size_t>(t - 1)];
  };
  auto omp_of = [&](std::size_t i, int t) -> std::pair<const analysis::OmpWaitState*, std::size_t> {
    if (i >= omp_waits.size()) return {nullptr, 0};
    return {omp_waits[i].of(static_cast<std::size_t>(t)),
            omp_waits[i].count(static_cast<std::size_t>(t))};
  };
  auto threads_of = [&](std::size_t i) { return where.threads(shard.traces[i].rank); };

  // Local parts first: the timeline's budget and the overview's bins.
  std::vector<Source> sources;
  analysis::TimelineBudget budget;
  if (!out.timeline.empty()) {
    std::vector<analysis::TimelineSource*> all;
    std::uint64_t count = 0, handovers = 0;
    for (std::size_t i = 0; i < held; ++i) {
      for (int t = 0; t < threads_of(i); ++t) {
        const auto [omp, omp_count] = omp_of(i, t);
        sources.push_back(Source{std::make_unique<analysis::TimelineSource>(
                                     thread_trace(i, t), t == 0 ? &waits[i] : nullptr, omp,
                                     omp_count, clock),
                                 shard.traces[i].rank, t});
        all.push_back(sources.back().timeline.get());
      }
      count += stretches[i].size();
      for (const analysis::PathStretch& s : stretches[i])
        handovers += s.from_rank >= 0 &&
                     (s.from_rank != shard.traces[i].rank || s.from_thread != s.thread);
    }
    budget = analysis::timeline_budget(world, all, out.max_events, count, handovers);
  }
  analysis::OverviewLayout layout;
  // The held locations' bins, one after another: per thread when the picture has a row per
  // thread, else per rank (its threads added up in thread order).
  const std::vector<int> threads_per_rank = where.per_rank();
  const bool thread_rows = io::OverviewSvg::rows_per_thread(threads_per_rank);
  std::vector<float> bins;
  if (!out.overview.empty()) {
    layout = analysis::overview_layout(world, shard.blocks, tree, sevs, worker_sevs, clock.origin,
                                       last, kOverviewBins, kOverviewPaths);
    for (std::size_t i = 0; i < held; ++i) {
      const std::size_t start = bins.size();
      for (int t = 0; t < threads_of(i); ++t) {
        const auto [omp, omp_count] = omp_of(i, t);
        const std::vector<float> mine =
            analysis::overview_bins(layout, tree, thread_trace(i, t), t == 0 ? &waits[i] : nullptr,
                                    omp, omp_count, clock.ticks_per_second);
        if (t == 0 || thread_rows) {
          bins.insert(bins.end(), mine.begin(), mine.end());
        } else {
          for (std::size_t k = 0; k < mine.size(); ++k) bins[start + k] += mine[k];
        }
      }
    }
  }

  // Process 0 opens its files (an error here stops every process) and writes the heads.
  std::unique_ptr<io::TimelineFormat> format;
  if (!out.timeline.empty()) format = std::make_unique<io::TimelineFormat>(defs, tree);
  std::unique_ptr<io::OutputFile> json;
  std::unique_ptr<io::OverviewSvg> svg;
  const int cp_pid = ranks;  // the "critical path" process follows the ranks
  world.agree([&] {
    if (!root) return;
    const std::string title = defs.anchor_path + " - " + std::to_string(ranks) + " ranks, run " +
                              number(static_cast<double>(run_ns) / 1e9) + " s, critical path " +
                              number(cp_length) + " s";
    if (!out.timeline.empty()) {
      json = std::make_unique<io::OutputFile>(out.timeline, "timeline");
      std::string head = io::TimelineFormat::header(cp_pid, "critical path", -1);
      for (int r = 0; r < ranks; ++r) {
        io::TimelineFormat::process_name(head, r, "rank " + std::to_string(r), r);
        if (!where.hybrid()) {
          io::TimelineFormat::thread_name(head, r, 0, "call paths");
          io::TimelineFormat::thread_name(head, r, 1, "wait states");
        }
        for (int t = 0; where.hybrid() && t < where.threads(r); ++t) {
          // Each thread's wait states right below its region visits.
          const std::string name = thread_label(defs, r, t);
          io::TimelineFormat::thread_name(head, r, where.activity_tid(r, t), name);
          io::TimelineFormat::thread_sort_index(head, r, where.activity_tid(r, t), 2 * t);
          io::TimelineFormat::thread_name(head, r, where.wait_tid(r, t), name + ": wait states");
          io::TimelineFormat::thread_sort_index(head, r, where.wait_tid(r, t), 2 * t + 1);
        }
        if (head.size() > kChunkBytes) {
          json->write(head);
          head.clear();
        }
      }
      json->write(head);
    }
    if (!out.overview.empty()) {
      io::OverviewSpec spec;
      spec.ranks = ranks;
      spec.threads = threads_per_rank;
      spec.bins = layout.bins;
      spec.run_seconds = static_cast<double>(run_ns) / 1e9;
      spec.title = title;
      // The legend's call paths shortened as the summary's (never two alike).
      std::vector<std::string> paths;
      for (const std::uint32_t c : layout.top)
        paths.push_back(analysis::callpath_name(defs, tree, c));
      const std::vector<std::string> shown = shorten_callpaths(paths, kLegendPathWidth);
      for (std::size_t k = 0; k < layout.top.size(); ++k) {
        char share[48];
        std::snprintf(
            share, sizeof share, " (%.1f %% of all time)",
            layout.total_time > 0.0 ? 100.0 * layout.top_time[k] / layout.total_time : 0.0);
        spec.legend.push_back(shown[k] + share);
      }
      svg = std::make_unique<io::OverviewSvg>(out.overview, spec);
    }
  });

  // Overview rows: process 0 adds up each band's ranks as they come, one process's block of
  // ranks at a time, in rank order (hybrid traces with a row per thread: each thread's row).
  if (!out.overview.empty()) {
    if (root) {
      const std::size_t per_row = layout.bins * layout.columns();
      const int per_band = io::OverviewSvg::ranks_per_band(ranks);
      std::vector<float> band(per_row), theirs;
      for (int p = 0; p < world.size(); ++p) {
        const float* src = bins.data();
        const Rank first = shard.blocks.first(p), end = shard.blocks.first(p + 1);
        if (p != 0) {
          theirs.resize(per_row * static_cast<std::size_t>(thread_rows ? where.between(first, end)
                                                                       : end - first));
          MPI_Recv(theirs.data(), static_cast<int>(theirs.size()), MPI_FLOAT, p, kBinsTag,
                   world.comm(), MPI_STATUS_IGNORE);
          src = theirs.data();
        }
        if (thread_rows) {
          for (Rank r = first; r < end; ++r)
            for (int t = 0; t < where.threads(r); ++t)
              svg->add_thread_row(
                  r, t,
                  src + static_cast<std::size_t>(where.between(first, r) + t) * per_row);
          continue;
        }
        for (Rank r = first; r < end; ++r) {
          const float* rank_bins = src + static_cast<std::size_t>(r - first) * per_row;
          if (r % per_band == 0) std::fill(band.begin(), band.end(), 0.0f);
          for (std::size_t i = 0; i < band.size(); ++i) band[i] += rank_bins[i];
          if ((r + 1) % per_band == 0 || r == ranks - 1)
            svg->add_band(r - r % per_band, r, band.data());
        }
      }
    } else {
      MPI_Send(bins.data(), static_cast<int>(bins.size()), MPI_FLOAT, 0, kBinsTag, world.comm());
    }
    std::vector<float>().swap(bins);
  }

  // The critical path in time order, merged from the ranks' stretches: the held ranks' first
  // (ties: the lower rank), then the processes'.
  std::uint64_t flows = 0;
  {
    auto earlier = [](const RankedStretch& x, const RankedStretch& y) {
      const analysis::PathStretch& a = x.stretch;
      const analysis::PathStretch& b = y.stretch;
      if (a.begin != b.begin) return a.begin < b.begin;
      if (a.end != b.end) return a.end < b.end;
      return x.rank < y.rank;
    };
    std::vector<RankedStretch> local;
    for (std::size_t i = 0; i < held; ++i)
      for (const analysis::PathStretch& s : stretches[i])
        local.push_back(RankedStretch{s, shard.traces[i].rank});
    std::stable_sort(local.begin(), local.end(), earlier);
    std::string chunk;
    std::vector<char> named(static_cast<std::size_t>(where.count()), 0);
    bool have_prev = false;
    int prev_tid = 0;
    std::uint64_t prev_begin = 0, prev_end = 0;
    replay::merge_to_root(
        world, local, earlier,
        [&](const RankedStretch& ranked, int) {
          const analysis::PathStretch& s = ranked.stretch;
          const int r = ranked.rank;
          const int tid = where.path_tid(r, s.thread);
          const std::uint64_t b = clock.ns(s.begin), e = clock.ns(s.end);
          const bool handover = have_prev && prev_tid != tid;
          if (json) {
            if (!named[static_cast<std::size_t>(tid)]) {
              io::TimelineFormat::thread_name(
                  chunk, cp_pid, tid,
                  "rank " + std::to_string(r) +
                      (where.hybrid() ? " thread " + std::to_string(s.thread) : std::string()));
              named[static_cast<std::size_t>(tid)] = 1;
            }
            // Flow ends sit just inside their stretches, so viewers bind them to the slice.
            if (handover)
              io::TimelineFormat::flow(
                  chunk, 's', flows / 2 + 1, cp_pid, prev_tid,
                  prev_end - std::min<std::uint64_t>((prev_end - prev_begin) / 2, 1));
            format->stretch(chunk, cp_pid, tid, r, where.stretch_thread(s.thread), b, e - b,
                            s.callpath);
            if (handover)
              io::TimelineFormat::flow(chunk, 'f', flows / 2 + 1, cp_pid, tid,
                                       b + std::min<std::uint64_t>((e - b) / 2, 1));
            if (chunk.size() > kChunkBytes) {
              json->write(chunk);
              chunk.clear();
            }
          }
          if (handover) flows += 2;
          if (svg) {
            svg->add_path_point(static_cast<double>(b) / 1e9, r, s.thread);
            svg->add_path_point(static_cast<double>(e) / 1e9, r, s.thread);
          }
          have_prev = true;
          prev_tid = tid;
          prev_begin = b;
          prev_end = e;
        },
        stretches_per_chunk(world.size()));
    if (json) json->write(chunk);
  }

  // Each location's activity and wait states, formatted where they are and streamed to process
  // 0, the held ranks' threads one after another.
  if (!out.timeline.empty()) {
    std::vector<analysis::TimelineEvent> events;
    events.reserve(kEventsPerStep);
    std::size_t current = 0;
    replay::stream_to_root(
        world,
        [&](std::string& chunk) {
          bool more = !sources.empty();
          while (more && chunk.size() < kChunkBytes) {
            events.clear();
            const Source& source = sources[current];
            const int pid = source.rank;
            const int activity_tid = where.activity_tid(source.rank, source.thread);
            const int wait_tid = where.wait_tid(source.rank, source.thread);
            more = source.timeline->next(events, kEventsPerStep);
            for (const analysis::TimelineEvent& ev : events) {
              if (ev.kind == analysis::TimelineEvent::Activity)
                format->activity(chunk, pid, activity_tid, ev.ts_ns, ev.dur_ns, ev.callpath);
              else
                format->wait_state(chunk, pid, wait_tid, ev.ts_ns, ev.dur_ns,
                                   analysis::timeline_wait_name(ev.metric), ev.partner,
                                   ev.partner_is_thread, ev.wait, ev.callpath);
            }
            if (!more && current + 1 < sources.size()) {
              sources[current++].timeline.reset();
              more = true;
            }
          }
          return more;
        },
        [&](const char* data, std::size_t bytes) { json->write(data, bytes); });
    sources.clear();
  }

  report.events_total = budget.total();
  report.events_written = budget.stretches + flows + budget.activity_kept + budget.waits_kept;
  report.reduction = reduction_sentence(budget);
  world.agree([&] {
    if (!root) return;
    if (json) {
      const std::vector<std::pair<std::string, std::string>> other = {
          {"generator", io::TimelineFormat::quote(out.creator)},
          {"trace", io::TimelineFormat::quote(defs.anchor_path)},
          {"ranks", std::to_string(ranks)},
          {"time_origin", io::TimelineFormat::quote("ts is in microseconds since the trace's "
                                                    "first event")},
          {"run_length_s", number(static_cast<double>(run_ns) / 1e9)},
          {"critical_path_length_s", number(cp_length)},
          {"critical_path_stretches", std::to_string(budget.stretches)},
          {"critical_path_handovers", std::to_string(flows / 2)},
          {"max_events", std::to_string(budget.max_events)},
          {"events_total", std::to_string(report.events_total)},
          {"events_written", std::to_string(report.events_written)},
          {"reduced", budget.reduced() ? "true" : "false"},
          {"activity_merged_into_parent",
           std::to_string(budget.activity_total - budget.activity_kept)},
          {"activity_min_us", number(static_cast<double>(budget.activity_min_ns) / 1e3)},
          {"wait_states_left_out", std::to_string(budget.waits_total - budget.waits_kept)},
          {"wait_state_min_us", number(static_cast<double>(budget.wait_min_ns) / 1e3)},
          {"note", io::TimelineFormat::quote(report.reduction.empty()
                                                 ? "every region visit and wait state is included"
                                                 : report.reduction)}};
      json->write(format->footer(other));
      json->commit();
    }
    if (svg) svg->commit();
  });
  return report;
}

}  // namespace cpreplay::tools
