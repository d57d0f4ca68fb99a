// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, OpenMP (hybrid traces): the gates through which a rank's threads
// synchronize in memory (forks, barrier instances, joins, lock hand-overs), found once the cuts
// are known, and their forward clocks and backward minima.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "replay/rank_retimer.hpp"

namespace cpreplay::replay::detail::retiming {

void RankRetimer::index_openmp_events() {
  const std::size_t n = trace_.size();
  omp_events_.resize(n);
  std::vector<std::uint32_t> open;
  PathColumn paths;
  for (EventIdx e = 0; e < n; ++e) {
    const EventKind k = trace_.kind[e];
    if (k == EventKind::Enter) {
      if (thread_ != 0 && open.empty()) {
        omp_events_.set(e);
        paths.push_back(UINT32_MAX);
      }
      open.push_back(trace_.ref[e]);
    } else if (k == EventKind::Leave) {
      if (!open.empty()) open.pop_back();
    } else if (k == EventKind::ThreadFork || k == EventKind::ThreadJoin ||
               k == EventKind::ThreadTeam || k == EventKind::ThreadLock) {
      omp_events_.set(e);
      std::uint32_t cp = open.empty() ? UINT32_MAX : open.back();
      if (thread_ != 0 && open.empty() && k == EventKind::ThreadTeam && trace_.ref[e] == 0 &&
          e + 1 < n && trace_.kind[e + 1] == EventKind::Enter)
        cp = trace_.ref[e + 1];
      paths.push_back(cp);
    }
  }
  omp_events_.finish();
  paths.finish();
  omp_path_ = std::move(paths);
}

void RankRetimer::openmp_disqualify() {
  auto mark = [&](EventIdx fork, EventIdx join) {
    auto it = std::upper_bound(cand_end_.begin(), cand_end_.end(), fork);
    for (; it != cand_end_.end() && *it < join; ++it) disq_[it - cand_end_.begin()] = 1;
  };
  EventIdx fork = kNoEvent;
  for (EventIdx e = 0; e < trace_.size(); ++e) {
    const EventKind k = trace_.kind[e];
    if (k == EventKind::ThreadFork) {
      if (fork != kNoEvent) mark(fork, e);
      fork = e;
    } else if (k == EventKind::ThreadJoin && fork != kNoEvent) {
      mark(fork, e);
      fork = kNoEvent;
    }
  }
  if (fork != kNoEvent) mark(fork, static_cast<EventIdx>(trace_.size()));
}

void RankRetimer::prepare_openmp() {
  const std::size_t locs = team_.size() + 1;
  auto at = [&](std::size_t l) -> RankRetimer& { return l == 0 ? *this : *team_[l - 1]; };
  const std::size_t nparts = resets_.size() + 1;
  auto master_part = [&](EventIdx e) {
    return static_cast<std::uint32_t>(std::upper_bound(resets_.begin(), resets_.end(), e) -
                                      resets_.begin());
  };
  for (std::size_t l = 0; l < locs; ++l) {
    at(l).threads_ = true;
    at(l).index_openmp_events();
    at(l).reset_m_ = reset_m_;
  }
  // The team instances: the master's forks and their joins (nesting is refused on reading).
  std::vector<EventIdx> forks, joins;
  std::vector<Ticks> fork_time;
  for (EventIdx e = 0; e < trace_.size(); ++e) {
    if (trace_.kind[e] == EventKind::ThreadFork) {
      forks.push_back(e);
      fork_time.push_back(trace_.time[e]);
      joins.push_back(kNoEvent);
    } else if (trace_.kind[e] == EventKind::ThreadJoin && !joins.empty() &&
               joins.back() == kNoEvent) {
      joins.back() = e;
    }
  }
  // A team begin belongs to the master's latest fork at or before it (analysis/openmp.cpp).
  auto instance_at = [&](Ticks t) {
    auto it = std::upper_bound(fork_time.begin(), fork_time.end(), t);
    return it == fork_time.begin() ? UINT32_MAX
                                   : static_cast<std::uint32_t>(it - fork_time.begin() - 1);
  };
  // A worker's events go to the part of the fork of their team: from a team begin up to the
  // next one (the events before its first team begin: to that team's part).
  for (std::size_t l = 1; l < locs; ++l) {
    RankRetimer& w = at(l);
    const LocalTrace& t = w.trace_;
    w.wstart_.assign(nparts + 1, static_cast<EventIdx>(t.size()));
    std::uint32_t cur = UINT32_MAX;
    for (EventIdx e = 0; e < t.size(); ++e) {
      if (t.kind[e] != EventKind::ThreadTeam || t.ref[e] != 0) continue;
      const std::uint32_t k = instance_at(t.time[e]);
      const std::uint32_t p = k == UINT32_MAX ? 0 : master_part(forks[k]);
      if (cur == UINT32_MAX) {
        for (std::uint32_t s = 0; s <= p; ++s) w.wstart_[s] = 0;
      } else {
        for (std::uint32_t s = cur + 1; s <= p; ++s) w.wstart_[s] = e;
      }
      cur = cur == UINT32_MAX ? p : std::max(cur, p);
    }
    if (cur == UINT32_MAX) w.wstart_[0] = 0;
  }
  auto part_of = [&](std::size_t l, EventIdx e) -> std::uint32_t {
    if (l == 0) return master_part(e);
    const std::vector<EventIdx>& ws = at(l).wstart_;
    return static_cast<std::uint32_t>(std::upper_bound(ws.begin(), ws.end(), e) - ws.begin() -
                                      1);
  };

  // The links, location by location (a list per location: sorted and filtered one location
  // at a time, so no copy of all of them is ever made at once).
  struct Link {
    EventIdx event;
    std::uint32_t gate;  ///< with kWrites for a writer
  };
  std::vector<std::vector<Link>> links(locs);
  std::uint32_t gates = 0;
  std::vector<std::uint32_t> fork_gate(forks.size()), join_gate(forks.size(), UINT32_MAX);
  for (std::size_t k = 0; k < forks.size(); ++k) {
    fork_gate[k] = gates++;
    links[0].push_back(Link{forks[k], fork_gate[k] | kWrites});
    if (joins[k] != kNoEvent) {
      join_gate[k] = gates++;
      links[0].push_back(Link{joins[k], join_gate[k]});
    }
  }
  std::vector<std::vector<std::uint32_t>> barrier_gate(forks.size());  // [team][j] -> gate
  struct LockEvent {
    std::uint64_t key;  ///< (lock << 32) | order
    std::uint32_t loc;
    EventIdx event;
    std::uint32_t team;  ///< the thread team instance it happens in, or UINT32_MAX
  };
  std::vector<LockEvent> releases, acquires;
  const std::vector<std::uint8_t>& barrier = req_.barrier_paths;
  for (std::size_t l = 0; l < locs; ++l) {
    const LocalTrace& t = at(l).trace_;
    const auto loc = static_cast<std::uint32_t>(l);
    std::uint32_t team = UINT32_MAX, seq = 0;
    for (EventIdx e = 0; e < t.size(); ++e) {
      switch (t.kind[e]) {
        case EventKind::ThreadTeam:
          if (t.ref[e] == 0) {
            team = instance_at(t.time[e]);
            seq = 0;
            if (l > 0 && team != UINT32_MAX) links[l].push_back(Link{e, fork_gate[team]});
          } else {
            if (l > 0 && team != UINT32_MAX && join_gate[team] != UINT32_MAX)
              links[l].push_back(Link{e, join_gate[team] | kWrites});
            team = UINT32_MAX;
          }
          break;
        case EventKind::Enter: {
          const std::uint32_t cp = t.ref[e];
          if (team == UINT32_MAX || cp >= barrier.size() || !barrier[cp]) break;
          // The j-th barrier of every team member is one instance (analysis/openmp.cpp).
          std::vector<std::uint32_t>& instances = barrier_gate[team];
          if (seq == instances.size()) instances.push_back(gates++);
          const std::uint32_t gate = instances[seq++];
          links[l].push_back(Link{e, gate | kWrites});
          const EventIdx leave = t.leave_of(e);
          if (leave != kNoEvent) links[l].push_back(Link{leave, gate});
          break;
        }
        case EventKind::ThreadLock: {
          const LockRecord& rec = t.locks[t.ref[e]];
          if (!rec.openmp) break;
          const LockEvent x{(std::uint64_t{rec.lock} << 32) | rec.order, loc, e, team};
          (rec.acquire ? acquires : releases).push_back(x);
          break;
        }
        default:
          break;
      }
    }
  }
  // A lock acquisition of order k waits for the release of order k - 1: a gate between two
  // threads of one team instance. On one thread its own order has them; across instances
  // the join before and the fork after (and any cut between) do.
  auto by_key = [](const LockEvent& a, const LockEvent& b) { return a.key < b.key; };
  std::stable_sort(releases.begin(), releases.end(), by_key);
  for (const LockEvent& acq : acquires) {
    if ((acq.key & 0xFFFFFFFFu) <= 1) continue;
    const LockEvent probe{acq.key - 1, 0, 0, 0};
    auto it = std::lower_bound(releases.begin(), releases.end(), probe, by_key);
    if (it == releases.end() || it->key != probe.key) continue;
    if (it->team != acq.team || it->team == UINT32_MAX || it->loc == acq.loc) continue;
    links[it->loc].push_back(Link{it->event, gates | kWrites});
    links[acq.loc].push_back(Link{acq.event, gates++});
  }
  std::vector<LockEvent>().swap(releases);
  std::vector<LockEvent>().swap(acquires);
  std::vector<std::vector<std::uint32_t>>().swap(barrier_gate);
  if (gates >= kWrites - 1)
    throw ReplayError(defs_.anchor_path + ": " + where() +
                      ": more OpenMP synchronizations than the what-if replay handles (2^31)");

  // Every link of a gate lies in its first writer's part (a trace whose threads disagree
  // about their teams may say otherwise: such links are dropped), one link per event, and
  // only gates with writers and readers count.
  // First writer: in location order, each location's links as they were found (a lock's gate
  // has one writer).
  std::vector<std::uint32_t> gate_part(gates, UINT32_MAX);
  for (std::size_t l = 0; l < locs; ++l)
    for (const Link& k : links[l])
      if (k.gate & kWrites) {
        const std::uint32_t g = k.gate & ~kWrites;
        if (gate_part[g] == UINT32_MAX) gate_part[g] = part_of(l, k.event);
      }
  // Each location's links become its gate per linked event (omp_, link_: 4 B, not a Link's
  // 8) one location at a time, so the lists of all locations are never held beside them.
  gates_.assign(gates, Gate{});
  std::vector<Ticks> ready(gates, 0);  // the gate's writers' latest original time
  for (std::size_t l = 0; l < locs; ++l) {
    RankRetimer& r = at(l);
    std::vector<Link> list;
    list.swap(links[l]);  // gone after this location
    // By event; of several links of one event the first found stays.
    std::stable_sort(list.begin(), list.end(),
                     [](const Link& a, const Link& b) { return a.event < b.event; });
    r.omp_.resize(r.trace_.size());
    r.link_.clear();
    r.link_.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Link k = list[i];
      const std::uint32_t g = k.gate & ~kWrites;
      if (i > 0 && list[i - 1].event == k.event) continue;
      if (gate_part[g] == UINT32_MAX || part_of(l, k.event) != gate_part[g]) continue;
      std::uint16_t& count = k.gate & kWrites ? gates_[g].writers : gates_[g].readers;
      if (count == Gate::kMaxCount)
        throw ReplayError(defs_.anchor_path + ": " + where() +
                          ": an OpenMP synchronization of more threads than the what-if replay "
                          "handles (65,535)");
      ++count;
      if (k.gate & kWrites) ready[g] = std::max(ready[g], r.trace_.time[k.event]);
      r.omp_.set(k.event);
      r.link_.push_back(k.gate);
    }
  }
  std::vector<std::vector<Link>>().swap(links);
  std::vector<std::uint32_t>().swap(gate_part);
  auto live = [&](std::uint32_t g) { return gates_[g].writers > 0 && gates_[g].readers > 0; };
  for (std::size_t l = 0; l < locs; ++l) {
    RankRetimer& r = at(l);
    // Only gates with writers and readers count: the others' links go (compacted in place).
    std::size_t n_kept = 0, reads = 0, i = 0;
    for (EventIdx e = r.omp_.next(0); e != kNoEvent; e = r.omp_.next(e + 1), ++i) {
      const std::uint32_t link = r.link_[i];
      if (!live(link & ~kWrites)) {
        r.omp_.reset(e);
        continue;
      }
      r.link_[n_kept++] = link;
      if (!(link & kWrites)) ++reads;
    }
    if (n_kept < r.link_.size()) {
      r.link_.resize(n_kept);
      r.link_.shrink_to_fit();
    }
    r.omp_.finish();
    if (l > 0) r.gap_.reserve(r.gap_.size() + reads);
    // The profiled clock's hops between threads: a bit per event (those that read a gate).
    if (r.path_ >= 0) r.thread_hop_.resize(r.trace_.size());
    i = 0;
    for (EventIdx e = r.omp_.next(0); e != kNoEvent; e = r.omp_.next(e + 1), ++i) {
      const std::uint32_t link = r.link_[i];
      if (link & kWrites) continue;
      const std::uint32_t g = link;
      if (l == 0) {
        ready_.push_back(Ready{e, ready[g]});
        continue;
      }
      // A thread's bound event ends at the gate's new time plus its completion: from the
      // later of the gate's writers and its own previous event (not at its part's start,
      // which no event of an earlier part binds).
      Ticks from = ready[g];
      if (e > r.wstart_[part_of(l, e)]) from = std::max(from, r.trace_.time[e - 1]);
      r.sync_.set(e);
      r.gap_.push_back(r.T(e) - static_cast<Clk>(from));
    }
    if (l > 0) r.sync_.finish();
  }
  for (Gate& g : gates_)
    if (g.writers == 0 || g.readers == 0) g = Gate{};
  if (path_ >= 0) gate_from_.assign(gates_.size(), GateFrom{});
}

void RankRetimer::gates_forward_begin() {
  for (Gate& g : gates_) g.got = g.read = 0, g.slot = UINT32_MAX;
  gate_pool_.clear();
  gate_free_.clear();
}

void RankRetimer::gate_write(std::uint32_t id, const Clk* a, int thread, EventIdx e) {
  Gate& g = gates_[id];
  const std::size_t stride = S_ + 2;
  if (g.slot == UINT32_MAX) {
    if (!gate_free_.empty()) {
      g.slot = gate_free_.back();
      gate_free_.pop_back();
    } else {
      g.slot = static_cast<std::uint32_t>(gate_pool_.size() / stride);
      gate_pool_.resize(gate_pool_.size() + stride);
    }
    Clk* c = &gate_pool_[g.slot * stride];
    std::copy(a, a + S_, c);
    c[S_] = thread;
    c[S_ + 1] = e;
  } else {
    Clk* c = &gate_pool_[g.slot * stride];
    // Ties go to the lower thread, so the path does not depend on the order of the steps.
    if (path_ >= 0 && (a[path_] > c[path_] || (a[path_] == c[path_] && thread < c[S_]))) {
      c[S_] = thread;
      c[S_ + 1] = e;
    }
    for (std::uint32_t s = 0; s < S_; ++s) c[s] = std::max(c[s], a[s]);
  }
  ++g.got;
}

void RankRetimer::gates_backward_begin() {
  for (Gate& g : gates_) g.got = 0;
  gate_min_.assign(gates_.size(), kPos);
  std::vector<Clk>().swap(gate_pool_);
  std::vector<std::uint32_t>().swap(gate_free_);
}

}  // namespace cpreplay::replay::detail::retiming
