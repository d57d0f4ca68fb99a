// SPDX-License-Identifier: BSD-3-Clause
// Critical path as Scalasca's bwc pass finds it, with ownership passed by token.
#include "analysis/critical_path.hpp"

#include <algorithm>
#include <cmath>

#include "cpreplay/error.hpp"
#include "replay/backward.hpp"

namespace cpreplay::analysis {
namespace {

enum TokenKind : std::uint32_t { kStart = 0, kEvent = 1, kCollective = 2, kEndOfTrace = 3 };

struct Interval {
  EventIdx from;  ///< synchpoint X where ownership left this rank (kNoEvent: program start)
  EventIdx to;    ///< end event of the owned stretch
  std::uint32_t callpath;
  double wait;  ///< wait(X), subtracted at cnode(X); 0 for the final stretch
  Rank from_rank;  ///< X's partner, where the path came from; -1 for the final stretch
};

/// Latest Enter/Leave event strictly before e (the cut of a synchpoint, §7.2), or -1.
std::int64_t cut_of(const LocalTrace& trace, EventIdx e) {
  for (std::int64_t i = static_cast<std::int64_t>(e) - 1; i >= 0; --i)
    if (trace.kind[i] == EventKind::Enter || trace.kind[i] == EventKind::Leave) return i;
  return -1;
}

}  // namespace

CriticalPathResult critical_path_pass(const replay::World& world, const Definitions& defs,
                                      const CallTree& tree, const LocalTrace& trace,
                                      const WaitStateResult& waits,
                                      const replay::CollectiveTable& collectives,
                                      Rank partial_start) {
  const bool no_finalize = world.any(waits.finalize_leave == kNoEvent);
  if (no_finalize && partial_start < 0)
    world.agree([&] {
      if (waits.finalize_leave == kNoEvent)
        throw IncompleteTraceError(defs.anchor_path + ": rank " + std::to_string(trace.rank) +
                                   ": the trace has no MPI_Finalize (the rank did not finish; "
                                   "--partial analyzes the run up to where it stopped)");
    });

  std::vector<Interval> intervals;
  // The path ends where the run ends: the last MPI_Finalize entered, or with --partial and no
  // MPI_Finalize, the end of the events of the rank that stopped first.
  const replay::Hop start =
      no_finalize ? replay::Hop{partial_start, replay::Token{kEndOfTrace, 0, 0}}
                  : replay::Hop{waits.finalize_latest_rank, replay::Token{kStart, 0, 0}};
  replay::walk_ownership(world, start, [&](const replay::Token& token) {
    EventIdx end = waits.finalize_leave;
    if (token.kind == kEvent) {
      end = static_cast<EventIdx>(token.target);
    } else if (token.kind == kCollective) {
      end = collectives.ends[token.comm][token.target];
    } else if (token.kind == kEndOfTrace) {
      end = static_cast<EventIdx>(trace.size());
    }
    // The latest wait state strictly before the end of the owned stretch.
    auto it = std::lower_bound(waits.waits.begin(), waits.waits.end(), end,
                               [](const WaitState& w, EventIdx e) { return w.event < e; });
    if (it == waits.waits.begin() ||
        (waits.init_leave != kNoEvent && std::prev(it)->event < waits.init_leave)) {
      intervals.push_back(Interval{waits.init_leave, end, UINT32_MAX, 0.0, -1});
      return replay::Hop{trace.rank, replay::Token{replay::Token::kDone, 0, 0}};
    }
    const WaitState& x = *std::prev(it);
    intervals.push_back(Interval{x.event, end, x.callpath, x.wait, x.target_rank});
    return replay::Hop{x.target_rank,
                       replay::Token{x.hop == HopKind::Event ? kEvent : kCollective, x.comm,
                                     x.target}};
  });

  CriticalPathResult result;
  result.cp.assign(tree.size(), 0.0);
  result.runtime.assign(tree.size(), 0.0);
  result.waits.assign(tree.size(), 0.0);
  result.owned_segments = intervals.size();
  for (const WaitState& w : waits.waits) result.waits[w.callpath] += w.wait;

  // Segment credits are computed on the fly (no per-event arrays): an Enter/Leave event i
  // credits t_i - t_prev to its target, prev being the Enter/Leave before it.
  auto target_of = [&](EventIdx i) -> std::uint32_t {
    if (trace.kind[i] == EventKind::Leave) return trace.ref[i];
    const CallpathId parent = tree.node(CallpathId{trace.ref[i]}).parent;
    return parent.valid() ? parent.value : UINT32_MAX;
  };
  auto is_el = [&](std::int64_t i) {
    return trace.kind[i] == EventKind::Enter || trace.kind[i] == EventKind::Leave;
  };
  // Adds the credits of the Enter/Leave events in (from, to] to `cp`, returns those at `at`.
  auto accumulate = [&](std::int64_t from, std::int64_t to, std::vector<double>& out,
                        std::uint32_t at) {
    double at_sum = 0.0;
    std::int64_t prev = from;  // the cut itself is an Enter/Leave event (or -1)
    while (prev >= 0 && !is_el(prev)) --prev;
    for (std::int64_t i = from + 1; i <= to; ++i) {
      if (!is_el(i)) continue;
      if (prev >= 0) {
        const std::uint32_t target = target_of(static_cast<EventIdx>(i));
        if (target != UINT32_MAX) {
          const double credit = defs.clock.span(trace.time[prev], trace.time[i]);
          out[target] += credit;
          if (target == at) at_sum += credit;
        }
      }
      prev = i;
    }
    return at_sum;
  };
  if (trace.size() > 0)
    accumulate(-1, static_cast<std::int64_t>(trace.size()) - 1, result.runtime, UINT32_MAX);
  for (const Interval& iv : intervals) {
    const std::int64_t from = iv.from == kNoEvent ? -1 : cut_of(trace, iv.from);
    const std::int64_t to = cut_of(trace, iv.to);
    const double at_x = accumulate(from, to, result.cp, iv.callpath);
    const double lost = iv.callpath != UINT32_MAX ? std::min(iv.wait, at_x) : 0.0;
    if (iv.callpath != UINT32_MAX) result.cp[iv.callpath] -= lost;
    // The same stretch in time, for the timeline: it starts where the waiting at X ended.
    if (trace.size() == 0) continue;
    const Ticks cut_t = from >= 0 ? trace.time[static_cast<EventIdx>(from)] : trace.time.front();
    const Ticks end_t = std::max(cut_t, to >= 0 ? trace.time[static_cast<EventIdx>(to)] : cut_t);
    const auto lost_t = static_cast<Ticks>(
        std::llround(lost * static_cast<double>(defs.clock.ticks_per_second)));
    const std::uint32_t end_path = iv.to < trace.size() ? trace.callpath_of(iv.to)
                                   : to >= 0 ? trace.ref[static_cast<EventIdx>(to)]
                                             : UINT32_MAX;
    result.stretches.push_back(PathStretch{std::min(cut_t + lost_t, end_t), end_t, iv.from, iv.to,
                                           end_path, iv.from_rank});
  }
  std::reverse(result.stretches.begin(), result.stretches.end());  // the walk went backwards
  return result;
}

}  // namespace cpreplay::analysis
