// SPDX-License-Identifier: BSD-3-Clause
// Critical path as Scalasca's bwc pass finds it: ownership is a linked list over wait states,
// ranked from its head by pointer jumping (docs/replay-engine.md §5.4 rule 2).
#include "analysis/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "analysis/openmp.hpp"
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

namespace {

/// Where ownership goes and comes from, between trace ranks: the hop of a wait state of rank
/// `from` into rank `to`.
struct AddressedHop {
  HopQuery hop;
  Rank from;
  Rank to;
};

/// A marked wait state's hop, sent to the next owner with its place on the path.
struct AddressedStretch {
  AddressedHop hop;
  std::uint32_t position;
};

/// One held rank's side of the pass: its wait states as nodes of the list, its owned
/// stretches, and the stretch accounting.
class RankPath {
 public:
  RankPath(const Definitions& defs, const LocalTrace& trace, const WaitStateResult& waits,
           const replay::CollectiveTable& collectives,
           const std::vector<LocalTrace>* workers = nullptr)
      : defs_(defs), trace_(trace), waits_(waits), collectives_(collectives), workers_(workers) {}

  std::size_t size() const { return waits_.waits.size(); }

  /// The end event a hop into this rank names (the end of the owned stretch).
  EventIdx end_of(Rank source, const HopQuery& q) const {
    if (q.comm == kEventHop) {
      if (q.target >= trace_.size())
        throw ReplayError(defs_.anchor_path + ": rank " + std::to_string(trace_.rank) +
                          ": the critical path comes from rank " + std::to_string(source) +
                          " to event " + std::to_string(q.target) + ", past the last event");
      return q.target;
    }
    const std::vector<EventIdx>& ends = collectives_.on(q.comm);
    if (q.target >= ends.size())
      throw ReplayError(defs_.anchor_path + ": rank " + std::to_string(trace_.rank) +
                        ": the critical path comes from rank " + std::to_string(source) +
                        " to collective instance " + std::to_string(q.target) +
                        " on communicator " + std::to_string(q.comm) + ", which it never reached");
    return ends[q.target];
  }

  /// The latest wait state strictly before the end of an owned stretch: its index, or size()
  /// when the path ends on this rank (no wait state, or only ones before MPI_Init's Leave).
  std::size_t owner_before(EventIdx end) const {
    const auto& w = waits_.waits;
    auto it = std::lower_bound(w.begin(), w.end(), end,
                               [](const WaitState& s, EventIdx e) { return s.event < e; });
    if (it == w.begin() ||
        (waits_.init_leave != kNoEvent && std::prev(it)->event < waits_.init_leave))
      return size();
    return static_cast<std::size_t>(std::prev(it) - w.begin());
  }

  /// The stretch that ends at `end` on this rank, the position-th of the walk (0: the last one
  /// in time, which ends the run).
  std::size_t own(EventIdx end, std::uint32_t position) {
    const std::size_t x = owner_before(end);
    if (x == size()) {
      intervals_.push_back(Interval{waits_.init_leave, end, UINT32_MAX, 0.0, -1, position});
    } else {
      const WaitState& w = waits_.waits[x];
      intervals_.push_back(Interval{w.event, end, w.callpath, w.wait, w.target_rank, position});
    }
    return x;
  }

  /// The owned segments' credits and stretches.
  CriticalPathResult accumulate(const CallTree& tree);

 private:
  const Definitions& defs_;
  const LocalTrace& trace_;
  const WaitStateResult& waits_;
  const replay::CollectiveTable& collectives_;
  const std::vector<LocalTrace>* workers_;  ///< hybrid traces: threads 1, 2, ...; else null
  std::vector<Interval> intervals_;
};

/// A piece of the path on one thread of a rank, for the timeline (PathStretch).
struct ThreadPiece {
  std::uint32_t thread;
  Ticks begin;
  Ticks end;
  std::uint32_t callpath;  ///< the thread's call path at `end`
};

/// The critical path through the threads of one rank (docs/openmp.md, "Critical path"): the
/// master's parallel-region instances and every thread's visit of them, and the backward walk
/// from a join to its fork.
class ThreadPaths {
 public:
  ThreadPaths(const Definitions& defs, const CallTree& tree, const LocalTrace& master,
              const std::vector<LocalTrace>& workers)
      : defs_(defs), tree_(tree), master_(master), workers_(workers),
        threads_(workers.size() + 1), teams_(omp_teams(defs, tree, master, workers)),
        forks_(teams_.forks), joins_(teams_.joins), visits_(teams_.visits) {}

  /// The instance the master forks at event e, if its join is at or before `to` (else SIZE_MAX).
  std::size_t instance_of_fork(EventIdx e, EventIdx to) const {
    const auto it = std::lower_bound(forks_.begin(), forks_.end(), e);
    if (it == forks_.end() || *it != e) return SIZE_MAX;
    const auto k = static_cast<std::size_t>(it - forks_.begin());
    if (joins_[k] == kNoEvent || joins_[k] > to) return SIZE_MAX;
    const TeamVisit& m = visits_[k * threads_];
    return m.enter != kNoEvent && m.leave != kNoEvent ? k : SIZE_MAX;
  }
  EventIdx join_of(std::size_t k) const { return joins_[k]; }

  /// Credits the path from instance k's join back to its fork: on the master from the join to its
  /// Leave of the parallel region; at each barrier (backwards) the owner keeps the time after the
  /// team's last Enter and the path moves on to the thread that entered last (the owner itself
  /// if it did; of several, the lowest thread number); at the owner's Enter of the parallel region
  /// the stretch since the fork is the owner's (omp_fork time), and the path returns to the master
  /// at the fork. out[t]: thread t's credits per call path. `pieces` gets who carried the path
  /// when, from the fork to the join, in time order.
  void walk(std::size_t k, const std::vector<std::vector<double>*>& out,
            std::vector<ThreadPiece>& pieces) const {
    const Ticks fork_t = master_.time[forks_[k]];
    const Ticks join_t = master_.time[joins_[k]];
    const TeamVisit* team = &visits_[k * threads_];
    const TeamVisit& mv = team[0];
    const std::size_t barriers = mv.count;
    (*out[0])[master_.ref[mv.leave]] += defs_.clock.span(master_.time[mv.leave], join_t);
    std::size_t owner = 0;
    EventIdx upto = mv.leave;
    // The owner carries the path from the team's last arrival at a barrier (or the fork) to
    // piece_end; collected backwards, reversed at the end.
    const std::size_t first_piece = pieces.size();
    Ticks piece_end = join_t;
    std::uint32_t piece_path = master_.callpath_of(joins_[k]);
    for (std::size_t j = barriers; j > 0; --j) {
      const LocalTrace& tr = trace(owner);
      const auto [enter, leave] = teams_.barrier(team[owner], j - 1);
      credit(tr, *out[owner], leave, upto, UINT32_MAX);
      Ticks last = 0;
      for (std::size_t t = 0; t < threads_; ++t)
        if (team[t].enter != kNoEvent)
          last = std::max(last, trace(t).time[teams_.barrier(team[t], j - 1).first]);
      const std::uint32_t at = tr.ref[leave];
      const double at_barrier = credit(tr, *out[owner], enter, leave, at);
      if (tr.time[enter] < last) {
        (*out[owner])[at] -= std::min(defs_.clock.span(tr.time[enter], last), at_barrier);
        pieces.push_back(ThreadPiece{static_cast<std::uint32_t>(owner), last, piece_end,
                                     piece_path});
        for (std::size_t t = 0; t < threads_; ++t)
          if (team[t].enter != kNoEvent &&
              trace(t).time[teams_.barrier(team[t], j - 1).first] == last) {
            owner = t;
            break;
          }
        piece_end = last;
        piece_path = trace(owner).ref[teams_.barrier(team[owner], j - 1).first];
      }
      upto = teams_.barrier(team[owner], j - 1).first;
    }
    const LocalTrace& tr = trace(owner);
    credit(tr, *out[owner], team[owner].enter, upto, UINT32_MAX);
    const EventIdx enter = team[owner].enter;
    if (tr.time[enter] > fork_t)
      (*out[owner])[tr.ref[enter]] += defs_.clock.span(fork_t, tr.time[enter]);
    pieces.push_back(ThreadPiece{static_cast<std::uint32_t>(owner), fork_t, piece_end, piece_path});
    std::reverse(pieces.begin() + static_cast<std::ptrdiff_t>(first_piece), pieces.end());
  }

  /// Target call path of an Enter/Leave event's segment (its region left, or the parent of the
  /// region entered).
  std::uint32_t target_of(const LocalTrace& tr, EventIdx i) const {
    if (tr.kind[i] == EventKind::Leave) return tr.ref[i];
    const CallpathId parent = tree_.node(CallpathId{tr.ref[i]}).parent;
    return parent.valid() ? parent.value : UINT32_MAX;
  }

 private:
  const LocalTrace& trace(std::size_t t) const { return t == 0 ? master_ : workers_[t - 1]; }

  /// Credits the segments of the Enter/Leave events in (a, b] of one thread (a is one), as the
  /// time metric does; returns those at call path `at`.
  double credit(const LocalTrace& tr, std::vector<double>& out, EventIdx a, EventIdx b,
                std::uint32_t at) const {
    double at_sum = 0.0;
    EventIdx prev = a;
    for (EventIdx i = a + 1; i <= b; ++i) {
      if (!tr.is_enter_or_leave(i)) continue;
      const std::uint32_t target = target_of(tr, i);
      if (target != UINT32_MAX) {
        const double c = defs_.clock.span(tr.time[prev], tr.time[i]);
        out[target] += c;
        if (target == at) at_sum += c;
      }
      prev = i;
    }
    return at_sum;
  }

  const Definitions& defs_;
  const CallTree& tree_;
  const LocalTrace& master_;
  const std::vector<LocalTrace>& workers_;
  const std::size_t threads_;
  const OmpTeams teams_;  ///< the parallel-region instances and every thread's visit of them
  const std::vector<EventIdx>& forks_;    ///< the master's ThreadFork events, in order
  const std::vector<EventIdx>& joins_;    ///< the matching ThreadJoin (kNoEvent: none)
  const std::vector<TeamVisit>& visits_;  ///< [instance * threads + thread]
};

CriticalPathResult RankPath::accumulate(const CallTree& tree) {
  const LocalTrace& trace = trace_;
  const Definitions& defs = defs_;
  // Credits are summed in path order, as the walk did, so every value is bit-identical.
  std::sort(intervals_.begin(), intervals_.end(),
            [](const Interval& a, const Interval& b) { return a.position < b.position; });

  CriticalPathResult result;
  result.cp.assign(tree.size(), 0.0);
  result.runtime.assign(tree.size(), 0.0);
  result.waits.assign(tree.size(), 0.0);
  result.owned_segments = intervals_.size();
  for (const WaitState& w : waits_.waits) result.waits[w.callpath] += w.wait;

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
  // Hybrid traces: the master's segments, except that a parallel region lying wholly inside the
  // stretch is walked through the threads (ThreadPaths::walk). A region the stretch only partly
  // covers (an MPI wait state of the master inside it) stays the master's, as for pure MPI.
  std::unique_ptr<ThreadPaths> threads;
  std::vector<std::vector<double>*> outs;
  if (workers_ != nullptr && !workers_->empty()) {
    threads = std::make_unique<ThreadPaths>(defs, tree, trace, *workers_);
    result.thread_cp.assign(workers_->size(), std::vector<double>(tree.size(), 0.0));
    outs.push_back(&result.cp);
    for (std::vector<double>& v : result.thread_cp) outs.push_back(&v);
  }
  // The pieces of the current stretch that the walk through the threads found, in time order:
  // the master's up to each fork (from kStretchBegin: the stretch's begin, or the previous
  // join), then the threads' of that parallel region.
  constexpr Ticks kStretchBegin = ~Ticks{0};
  std::vector<ThreadPiece> walked;
  Ticks gap_from = kStretchBegin;
  auto accumulate_threads = [&](std::int64_t from, std::int64_t to, std::uint32_t at) {
    double at_sum = 0.0;
    walked.clear();
    gap_from = kStretchBegin;
    std::int64_t prev = from;
    while (prev >= 0 && !is_el(prev)) --prev;
    bool have_prev = prev >= 0;
    Ticks prev_t = have_prev ? trace.time[static_cast<EventIdx>(prev)] : 0;
    auto add = [&](std::uint32_t target, double credit) {
      if (target == UINT32_MAX) return;
      result.cp[target] += credit;
      if (target == at) at_sum += credit;
    };
    for (std::int64_t i = from + 1; i <= to; ++i) {
      const auto e = static_cast<EventIdx>(i);
      if (trace.kind[e] == EventKind::ThreadFork) {
        const std::size_t k = threads->instance_of_fork(e, static_cast<EventIdx>(to));
        if (k == SIZE_MAX) continue;
        // Up to the fork, as the next Enter/Leave (the master's Enter of the region) credits.
        EventIdx next = e + 1;
        while (!trace.is_enter_or_leave(next)) ++next;
        if (have_prev) add(threads->target_of(trace, next), defs.clock.span(prev_t, trace.time[e]));
        walked.push_back(ThreadPiece{0, gap_from, trace.time[e], trace.callpath_of(e)});
        threads->walk(k, outs, walked);
        i = threads->join_of(k);
        gap_from = trace.time[static_cast<EventIdx>(i)];
        prev_t = trace.time[static_cast<EventIdx>(i)];
        have_prev = true;
        continue;
      }
      if (!is_el(i)) continue;
      if (have_prev) add(target_of(e), defs.clock.span(prev_t, trace.time[e]));
      prev_t = trace.time[e];
      have_prev = true;
    }
    return at_sum;
  };
  for (const Interval& iv : intervals_) {
    const std::int64_t from = iv.from == kNoEvent ? -1 : cut_of(trace, iv.from);
    const std::int64_t to = cut_of(trace, iv.to);
    const double at_x = threads ? accumulate_threads(from, to, iv.callpath)
                                : accumulate(from, to, result.cp, iv.callpath);
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
    const PathStretch whole{std::min(cut_t + lost_t, end_t), end_t, iv.from, iv.to, end_path,
                            iv.from_rank};
    if (walked.empty()) {
      result.stretches.push_back(whole);
      continue;
    }
    // Hybrid: the pieces each thread carried, within the stretch; those without time go, and
    // consecutive ones of a thread are one. Pushed last piece first (the list is reversed below).
    walked.push_back(ThreadPiece{0, gap_from, end_t, end_path});
    std::vector<ThreadPiece> kept;
    for (ThreadPiece p : walked) {
      p.begin = std::clamp(p.begin == kStretchBegin ? whole.begin : p.begin, whole.begin, end_t);
      p.end = std::clamp(p.end, p.begin, end_t);
      if (p.end == p.begin) continue;
      if (!kept.empty() && kept.back().thread == p.thread) {
        kept.back().end = p.end;
        kept.back().callpath = p.callpath;
      } else {
        kept.push_back(p);
      }
    }
    if (kept.empty()) kept.push_back(ThreadPiece{0, whole.begin, end_t, end_path});
    for (std::size_t n = kept.size(); n-- > 0;) {
      PathStretch piece = whole;
      piece.begin = kept[n].begin;
      piece.end = kept[n].end;
      piece.callpath = kept[n].callpath;
      piece.thread = static_cast<int>(kept[n].thread);
      if (n > 0) {
        piece.from_rank = trace.rank;
        piece.from_thread = static_cast<int>(kept[n - 1].thread);
      }
      result.stretches.push_back(piece);
    }
  }
  std::reverse(result.stretches.begin(), result.stretches.end());  // the walk went backwards
  return result;
}

}  // namespace

std::vector<CriticalPathResult> critical_path_pass(
    const replay::World& world, const Definitions& defs, const CallTree& tree, const Shard& shard,
    const std::vector<WaitStateResult>& waits,
    const std::vector<replay::CollectiveTable>& collectives, Rank partial_start) {
  const std::size_t held = shard.size();
  const RankBlocks& blocks = shard.blocks;
  // One reduction for two facts: whether some rank has no MPI_Finalize, and how many wait
  // states there are (every exchange below ships at most one record per wait state, and MPI's
  // int counts hold 2^31).
  std::uint64_t facts[2] = {0, 0};
  for (const WaitStateResult& w : waits) {
    facts[0] += w.finalize_leave == kNoEvent ? 1u : 0u;
    facts[1] += w.waits.size();
  }
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
      for (std::size_t i = 0; i < held; ++i)
        if (waits[i].finalize_leave == kNoEvent)
          throw IncompleteTraceError(defs.anchor_path + ": rank " +
                                     std::to_string(shard.traces[i].rank) +
                                     ": the trace has no MPI_Finalize (the rank did not finish; "
                                     "--partial analyzes the run up to where it stopped)");
    });

  // One node per wait state; the path from a wait state goes to the latest wait state of its
  // target rank strictly before the target's end event (or ends there, on that rank). Every
  // rank can answer that for every hop into it, so the successor links are computed all at once
  // and the path is ranked from its head in log2(hops) rounds, instead of one sequential hop per
  // owner change (bench/RESULTS.md: a token walk waits for a scheduler slice per hop under load).
  // The list spans processes: a process's nodes are the wait states of its ranks, one rank
  // after another (node = first_node[i] + wait state index).
  std::vector<RankPath> paths;
  paths.reserve(held);
  std::vector<std::uint32_t> first_node(held + 1, 0);
  for (std::size_t i = 0; i < held; ++i) {
    paths.emplace_back(defs, shard.traces[i], waits[i], collectives[i],
                       shard.workers.empty() ? nullptr : &shard.workers[i]);
    first_node[i + 1] = first_node[i] + static_cast<std::uint32_t>(waits[i].waits.size());
  }
  const std::size_t n = first_node[held];
  auto rank_of_node = [&](std::size_t k) {
    return static_cast<std::size_t>(
        std::upper_bound(first_node.begin(), first_node.end(), static_cast<std::uint32_t>(k)) -
        first_node.begin() - 1);
  };
  auto wait_of = [&](std::size_t k) -> const WaitState& {
    const std::size_t i = rank_of_node(k);
    return waits[i].waits[k - first_node[i]];
  };
  auto hop_from = [&](std::size_t k) {
    const std::size_t i = rank_of_node(k);
    const WaitState& w = waits[i].waits[k - first_node[i]];
    return AddressedHop{hop_of(w), shard.traces[i].rank, w.target_rank};
  };
  // The node a hop into a held rank leads to (UINT32_MAX: the path ends on that rank).
  auto successor = [&](const AddressedHop& h) -> std::uint32_t {
    const std::size_t i = shard.index(h.to);
    const std::size_t x = paths[i].owner_before(paths[i].end_of(h.from, h.hop));
    return x == paths[i].size() ? UINT32_MAX : first_node[i] + static_cast<std::uint32_t>(x);
  };

  // (1) Successor links, one batched request per process holding target ranks.
  std::vector<replay::NodeRef> next(n);
  replay::ask_each<AddressedHop, std::uint32_t>(
      world, n, [&](std::size_t k) { return blocks.owner(wait_of(k).target_rank); },
      [&](std::size_t k) { return hop_from(k); },
      [&](Rank, const AddressedHop& h) { return successor(h); },
      [&](std::size_t k, std::uint32_t succ) {
        if (succ != UINT32_MAX) next[k] = replay::NodeRef{blocks.owner(wait_of(k).target_rank), succ};
      });

  // The head: the path ends where the run ends: the last MPI_Finalize entered, or with
  // --partial and no MPI_Finalize, the end of the events of the rank that stopped first.
  Rank start = partial_start;
  if (!no_finalize)
    start = held > 0 ? waits[0].finalize_latest_rank : 0;  // the same on every rank
  const int start_process = blocks.owner(start);
  replay::NodeRef head;
  if (shard.holds(start)) {
    const std::size_t i = shard.index(start);
    const EventIdx end =
        no_finalize ? static_cast<EventIdx>(shard.traces[i].size()) : waits[i].finalize_leave;
    const std::size_t x = paths[i].own(end, 0);
    if (x != paths[i].size())
      head = replay::NodeRef{start_process, first_node[i] + static_cast<std::uint32_t>(x)};
  }
  MPI_Bcast(&head, sizeof head, MPI_BYTE, start_process, world.comm());

  // (2) Which wait states are on the path, and where.
  auto cycle_error = [&](std::uint32_t k) {
    const std::size_t i = rank_of_node(k);
    return defs.anchor_path + ": rank " + std::to_string(shard.traces[i].rank) + ", event " +
           std::to_string(waits[i].waits[k - first_node[i]].event) +
           ": the critical path comes back to this wait state (its hops form a cycle, which "
           "no real run's communication can)";
  };
  const replay::ListRanking ranked =
      replay::rank_list(world, std::move(next), head, cycle_error);

  // (3) Each stretch on the path is owned by the rank the previous one hands over to. (1) has
  // checked every hop, so end_of cannot throw here.
  replay::send_each<AddressedStretch>(
      world, n,
      [&](std::size_t k) {
        return ranked.position[k] == replay::kOffList ? -1 : blocks.owner(wait_of(k).target_rank);
      },
      [&](std::size_t k) { return AddressedStretch{hop_from(k), ranked.position[k] + 1}; },
      [&](Rank, const AddressedStretch& r) {
        RankPath& p = paths[shard.index(r.hop.to)];
        p.own(p.end_of(r.hop.from, r.hop.hop), r.position);
      });

  std::vector<CriticalPathResult> results;
  results.reserve(held);
  if (shard.workers.empty()) {
    for (RankPath& p : paths) results.push_back(p.accumulate(tree));
  } else {
    // Following the threads can find a team that does not fit together (TraceError): every
    // process stops at this boundary.
    world.agree([&] {
      for (RankPath& p : paths) results.push_back(p.accumulate(tree));
    });
  }
  return results;
}

}  // namespace cpreplay::analysis
