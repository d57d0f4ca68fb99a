// SPDX-License-Identifier: BSD-3-Clause
// The --timeline / --overview stage: local parts on every rank, streamed to rank 0's files.
#include "tools/views.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "analysis/overview.hpp"
#include "analysis/summary.hpp"
#include "analysis/timeline.hpp"
#include "io/output_file.hpp"
#include "io/overview_svg.hpp"
#include "io/timeline_writer.hpp"
#include "replay/stream.hpp"

namespace cpreplay::tools {
namespace {

constexpr std::size_t kOverviewBins = 500;  // 2 px each across the 1000 px plot
constexpr std::size_t kOverviewPaths = 8;
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
                        const std::vector<std::vector<analysis::PathStretch>>& stretches,
                        double cp_length) {
  ViewReport report;
  const bool root = world.rank() == 0;
  const int ranks = defs.ranks();
  const std::size_t held = shard.size();
  Ticks last = 0;
  const analysis::ViewClock clock = analysis::view_clock(world, defs, shard, &last);
  const std::uint64_t run_ns = clock.ns(last);

  // Local parts first: the timeline's budget and the overview's bins.
  std::vector<std::unique_ptr<analysis::TimelineSource>> sources;
  analysis::TimelineBudget budget;
  if (!out.timeline.empty()) {
    std::vector<analysis::TimelineSource*> all;
    std::uint64_t count = 0, handovers = 0;
    for (std::size_t i = 0; i < held; ++i) {
      sources.push_back(
          std::make_unique<analysis::TimelineSource>(shard.traces[i], waits[i], clock));
      all.push_back(sources.back().get());
      count += stretches[i].size();
      for (const analysis::PathStretch& s : stretches[i])
        handovers += s.from_rank >= 0 && s.from_rank != shard.traces[i].rank;
    }
    budget = analysis::timeline_budget(world, all, out.max_events, count, handovers);
  }
  analysis::OverviewLayout layout;
  std::vector<float> bins;  // the held ranks' bins, one rank after another
  if (!out.overview.empty()) {
    layout = analysis::overview_layout(world, shard.blocks, tree, sevs, clock.origin, last,
                                       kOverviewBins, kOverviewPaths);
    for (std::size_t i = 0; i < held; ++i) {
      const std::vector<float> mine = analysis::overview_bins(layout, tree, shard.traces[i],
                                                              waits[i], clock.ticks_per_second);
      bins.insert(bins.end(), mine.begin(), mine.end());
    }
  }

  // Process 0 opens its files (an error here stops every process) and writes the heads.
  std::unique_ptr<io::TimelineFormat> format;
  if (!sources.empty()) format = std::make_unique<io::TimelineFormat>(defs, tree);
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
        io::TimelineFormat::thread_name(head, r, 0, "call paths");
        io::TimelineFormat::thread_name(head, r, 1, "wait states");
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
      spec.bins = layout.bins;
      spec.run_seconds = static_cast<double>(run_ns) / 1e9;
      spec.title = title;
      for (std::size_t k = 0; k < layout.top.size(); ++k) {
        char share[48];
        std::snprintf(
            share, sizeof share, " (%.1f %% of all time)",
            layout.total_time > 0.0 ? 100.0 * layout.top_time[k] / layout.total_time : 0.0);
        spec.legend.push_back(analysis::callpath_name(defs, tree, layout.top[k]) + share);
      }
      svg = std::make_unique<io::OverviewSvg>(out.overview, spec);
    }
  });

  // Overview rows: process 0 adds up each band's ranks as they come, one process's block of
  // ranks at a time, in rank order.
  if (!out.overview.empty()) {
    if (root) {
      const std::size_t per_rank = bins.size() / held;
      const int per_band = io::OverviewSvg::ranks_per_band(ranks);
      std::vector<float> band(per_rank), theirs;
      for (int p = 0; p < world.size(); ++p) {
        const float* src = bins.data();
        if (p != 0) {
          theirs.resize(per_rank * static_cast<std::size_t>(shard.blocks.count(p)));
          MPI_Recv(theirs.data(), static_cast<int>(theirs.size()), MPI_FLOAT, p, kBinsTag,
                   world.comm(), MPI_STATUS_IGNORE);
          src = theirs.data();
        }
        for (Rank r = shard.blocks.first(p); r < shard.blocks.first(p + 1); ++r) {
          const float* rank_bins = src + static_cast<std::size_t>(r - shard.blocks.first(p)) * per_rank;
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
    std::vector<char> named(static_cast<std::size_t>(ranks), 0);
    bool have_prev = false;
    int prev_rank = 0;
    std::uint64_t prev_begin = 0, prev_end = 0;
    replay::merge_to_root(
        world, local, earlier,
        [&](const RankedStretch& ranked, int) {
          const analysis::PathStretch& s = ranked.stretch;
          const int r = ranked.rank;
          const std::uint64_t b = clock.ns(s.begin), e = clock.ns(s.end);
          const bool handover = have_prev && prev_rank != r;
          if (json) {
            if (!named[static_cast<std::size_t>(r)]) {
              io::TimelineFormat::thread_name(chunk, cp_pid, r, "rank " + std::to_string(r));
              named[static_cast<std::size_t>(r)] = 1;
            }
            // Flow ends sit just inside their stretches, so viewers bind them to the slice.
            if (handover)
              io::TimelineFormat::flow(
                  chunk, 's', flows / 2 + 1, cp_pid, prev_rank,
                  prev_end - std::min<std::uint64_t>((prev_end - prev_begin) / 2, 1));
            format->stretch(chunk, cp_pid, r, b, e - b, s.callpath);
            if (handover)
              io::TimelineFormat::flow(chunk, 'f', flows / 2 + 1, cp_pid, r,
                                       b + std::min<std::uint64_t>((e - b) / 2, 1));
            if (chunk.size() > kChunkBytes) {
              json->write(chunk);
              chunk.clear();
            }
          }
          if (handover) flows += 2;
          if (svg) {
            svg->add_path_point(static_cast<double>(b) / 1e9, r);
            svg->add_path_point(static_cast<double>(e) / 1e9, r);
          }
          have_prev = true;
          prev_rank = r;
          prev_begin = b;
          prev_end = e;
        },
        stretches_per_chunk(world.size()));
    if (json) json->write(chunk);
  }

  // Each rank's activity and wait states, formatted where they are and streamed to process 0,
  // the held ranks one after another.
  if (!sources.empty()) {
    std::vector<analysis::TimelineEvent> events;
    events.reserve(kEventsPerStep);
    std::size_t current = 0;
    replay::stream_to_root(
        world,
        [&](std::string& chunk) {
          bool more = true;
          while (more && chunk.size() < kChunkBytes) {
            events.clear();
            const int pid = shard.traces[current].rank;
            more = sources[current]->next(events, kEventsPerStep);
            if (!more && current + 1 < held) {
              sources[current++].reset();
              more = true;
            }
            for (const analysis::TimelineEvent& ev : events) {
              if (ev.kind == analysis::TimelineEvent::Activity)
                format->activity(chunk, pid, ev.ts_ns, ev.dur_ns, ev.callpath);
              else
                format->wait_state(chunk, pid, ev.ts_ns, ev.dur_ns,
                                   analysis::metric_info(ev.metric).disp_name, ev.partner, ev.wait,
                                   ev.callpath);
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
      json->write(io::TimelineFormat::footer(other));
      json->commit();
    }
    if (svg) svg->commit();
  });
  return report;
}

}  // namespace cpreplay::tools
