// SPDX-License-Identifier: BSD-3-Clause
// Critical path as Scalasca's bwc pass finds it: ownership is a linked list over wait states,
// ranked from its head by pointer jumping (docs/replay-engine.md §5.4 rule 2).
#include "analysis/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "cpreplay/error.hpp"
#include "replay/pointer_jump.hpp"

namespace cpreplay::analysis {
namespace {

struct Interval {
  EventIdx from;  ///< synchpoint X where ownership left this rank (kNoEvent: program start)
  EventIdx to;    ///< end event of the owned stretch
  std::uint32_t callpath;
  double wait;  ///< wait(X), subtracted at cnode(X); 0 for the final stretch
  Rank from_rank;  ///< X's partner, where the path came from; -1 for the final stretch
  std::uint32_t position;  ///< the stretch's place in the walk (0: the one the path starts with)
};

/// Where ownership goes from a wait state: the target's event, or for a collective its
/// instance (`comm` kEventHop: an event). Resolved to an end event on the target rank.
struct HopQuery {
  std::uint32_t comm;
  std::uint32_t target;
};
constexpr std::uint32_t kEventHop = 0xFFFFFFFFu;

/// A marked wait state's hop, sent to the next owner with its place on the path.
struct StretchRecord {
  HopQuery hop;
  std::uint32_t position;
};

HopQuery hop_of(const WaitState& w) {
  return HopQuery{w.hop == HopKind::Event ? kEventHop : w.comm, w.target};
}

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
  // One reduction for two facts: whether some rank has no MPI_Finalize, and how many wait
  // states there are (every exchange below ships at most one record per wait state, and MPI's
  // int counts hold 2^31).
  std::uint64_t facts[2] = {waits.finalize_leave == kNoEvent ? 1u : 0u, waits.waits.size()};
  MPI_Allreduce(MPI_IN_PLACE, facts, 2, MPI_UINT64_T, MPI_SUM, world.comm());
  const bool no_finalize = facts[0] > 0;
  if (facts[1] >= (std::uint64_t{1} << 31))
    world.agree([&] {
      if (world.rank() == 0)
        throw ReplayError(defs.anchor_path + ": " + std::to_string(facts[1]) +
                          " wait states, more than the critical-path search handles (2^31)");
    });
  if (no_finalize && partial_start < 0)
    world.agree([&] {
      if (waits.finalize_leave == kNoEvent)
        throw IncompleteTraceError(defs.anchor_path + ": rank " + std::to_string(trace.rank) +
                                   ": the trace has no MPI_Finalize (the rank did not finish; "
                                   "--partial analyzes the run up to where it stopped)");
    });

  // One node per wait state; the path from a wait state goes to the latest wait state of its
  // target rank strictly before the target's end event (or ends there, on that rank). Every
  // rank can answer that for every hop into it, so the successor links are computed all at once
  // and the path is ranked from its head in log2(hops) rounds, instead of one sequential hop per
  // owner change (bench/RESULTS.md: a token walk waits for a scheduler slice per hop under load).
  const std::size_t n = waits.waits.size();
  // The end event a hop into this rank names (the end of the owned stretch).
  auto end_of = [&](Rank source, const HopQuery& q) -> EventIdx {
    if (q.comm == kEventHop) {
      if (q.target >= trace.size())
        throw ReplayError(defs.anchor_path + ": rank " + std::to_string(trace.rank) +
                          ": the critical path comes from rank " + std::to_string(source) +
                          " to event " + std::to_string(q.target) + ", past the last event");
      return q.target;
    }
    if (q.comm >= collectives.ends.size() || q.target >= collectives.ends[q.comm].size())
      throw ReplayError(defs.anchor_path + ": rank " + std::to_string(trace.rank) +
                        ": the critical path comes from rank " + std::to_string(source) +
                        " to collective instance " + std::to_string(q.target) +
                        " on communicator " + std::to_string(q.comm) + ", which it never reached");
    return collectives.ends[q.comm][q.target];
  };
  // The latest wait state strictly before the end of an owned stretch: its index, or n when
  // the path ends on this rank (no wait state, or only ones before MPI_Init's Leave).
  auto owner_before = [&](EventIdx end) -> std::size_t {
    auto it = std::lower_bound(waits.waits.begin(), waits.waits.end(), end,
                               [](const WaitState& w, EventIdx e) { return w.event < e; });
    if (it == waits.waits.begin() ||
        (waits.init_leave != kNoEvent && std::prev(it)->event < waits.init_leave))
      return n;
    return static_cast<std::size_t>(std::prev(it) - waits.waits.begin());
  };
  std::vector<Interval> intervals;
  // The stretch that ends at `end` on this rank, the position-th of the walk (0: the last one
  // in time, which ends the run).
  auto own = [&](EventIdx end, std::uint32_t position) {
    const std::size_t x = owner_before(end);
    if (x == n) {
      intervals.push_back(Interval{waits.init_leave, end, UINT32_MAX, 0.0, -1, position});
    } else {
      const WaitState& w = waits.waits[x];
      intervals.push_back(Interval{w.event, end, w.callpath, w.wait, w.target_rank, position});
    }
    return x;
  };

  // (1) Successor links, one batched request per target rank.
  std::vector<replay::NodeRef> next(n);
  replay::ask_each<HopQuery, std::uint32_t>(
      world, n, [&](std::size_t i) { return waits.waits[i].target_rank; },
      [&](std::size_t i) { return hop_of(waits.waits[i]); },
      [&](Rank source, const HopQuery& q) {
        const std::size_t x = owner_before(end_of(source, q));
        return x == n ? UINT32_MAX : static_cast<std::uint32_t>(x);
      },
      [&](std::size_t i, std::uint32_t succ) {
        if (succ != UINT32_MAX) next[i] = replay::NodeRef{waits.waits[i].target_rank, succ};
      });

  // The head: the path ends where the run ends: the last MPI_Finalize entered, or with
  // --partial and no MPI_Finalize, the end of the events of the rank that stopped first.
  const Rank start = no_finalize ? partial_start : waits.finalize_latest_rank;
  replay::NodeRef head;
  if (start == world.rank()) {
    const EventIdx end = no_finalize ? static_cast<EventIdx>(trace.size()) : waits.finalize_leave;
    const std::size_t x = own(end, 0);
    if (x != n) head = replay::NodeRef{start, static_cast<std::uint32_t>(x)};
  }
  MPI_Bcast(&head, sizeof head, MPI_BYTE, start, world.comm());

  // (2) Which wait states are on the path, and where.
  auto cycle_error = [&](std::uint32_t i) {
    return defs.anchor_path + ": rank " + std::to_string(trace.rank) + ", event " +
           std::to_string(waits.waits[i].event) +
           ": the critical path comes back to this wait state (its hops form a cycle, which "
           "no real run's communication can)";
  };
  const replay::ListRanking ranked =
      replay::rank_list(world, std::move(next), head, cycle_error);

  // (3) Each stretch on the path is owned by the rank the previous one hands over to. (1) has
  // checked every hop, so end_of cannot throw here.
  replay::send_each<StretchRecord>(
      world, n,
      [&](std::size_t i) {
        return ranked.position[i] == replay::kOffList ? Rank{-1} : waits.waits[i].target_rank;
      },
      [&](std::size_t i) {
        return StretchRecord{hop_of(waits.waits[i]), ranked.position[i] + 1};
      },
      [&](Rank source, const StretchRecord& r) { own(end_of(source, r.hop), r.position); });
  // Credits are summed in path order, as the walk did, so every value is bit-identical.
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.position < b.position; });

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
