// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, backward slack: each event's latest time in the unchanged run that keeps
// the run's length, part by part from the end, with the records that carry it back to the
// partners; activities within the slack limit are summed per call path.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "replay/rank_retimer.hpp"

namespace cpreplay::replay::detail::retiming {

void RankRetimer::backward_begin() {
  slack_ticks_ = slack_ticks(req_.slack_limit);
  near_critical_.assign(tree_.size(), 0);
  parent_of_.resize(tree_.size());
  for (std::uint32_t c = 0; c < tree_.size(); ++c) parent_of_[c] = parent(c);
  if (!team_.empty()) gates_backward_begin();
  // Hosts answer at once where no binding member covers a source.
  for (auto& [key, h] : hosted_)
    host_reply_backward(h, static_cast<std::uint32_t>(key >> 32),
                        static_cast<std::uint32_t>(key));
}

void RankRetimer::backward_window(std::size_t w0, std::size_t w1) {
  parts_.assign(w1 - w0, Part{});
  for (std::size_t i = 0; i < parts_.size(); ++i) start_backward(parts_[i], w0 + i);
}

bool RankRetimer::backward_round(bool& unfinished) {
  bool moved = false;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    Part& g = parts_[i];
    if (i + kPrefetchAhead < parts_.size() && !parts_[i + kPrefetchAhead].done) {
      const EventIdx e = parts_[i + kPrefetchAhead].e;  // steps back from here
      const EventIdx from = e > kPrefetchEvents ? e - kPrefetchEvents : 0;
      prefetch_events(from, e + 1 - from);
    }
    if (team_.empty()) {
      if (g.done) continue;
      moved |= backward_step(g);
      if (!g.done) unfinished = true;
      continue;
    }
    // As forward: the rank's threads in turn until none moves.
    for (bool any = true; any;) {
      any = !g.done && backward_step(g);
      for (RankRetimer* w : team_)
        if (!w->parts_[i].done) any = w->backward_step(w->parts_[i]) || any;
      moved = moved || any;
    }
    if (!g.done) unfinished = true;
    for (const RankRetimer* w : team_)
      if (!w->parts_[i].done) unfinished = true;
  }
  return moved;
}

void RankRetimer::release_backward() {
  for (Part& g : parts_)
    if (!g.done && g.released != g.e) {
      g.released = g.e;
      ++released_;
    }
}

void RankRetimer::start_backward(Part& g, std::size_t s) {
  g.index = static_cast<std::uint32_t>(s);
  g.start = part_start(s);
  g.stop = part_stop(s);
  if (g.start >= g.stop) {
    g.done = true;
    return;
  }
  if (slack_replay_ != nullptr && (*slack_replay_)[s] == 0) {
    if (!near_done_) near_whole_part(g.start, g.stop);
    g.done = true;
    return;
  }
  g.e = g.stop - 1;
  // The cut that ends the part: every rank's begin may come as late as the latest one did
  // (that begin is on the critical path). The last part ends with the run. A worker
  // thread's events of the part come before its master's part of the cut.
  g.L = s < reset_m_.size() ? reset_m_[s] : t_max_;
  g.cc = first_coll_ending_after(g.e);  // entries before it end at or before e
  g.cp = activity_path(g.e);
}

void RankRetimer::slack_bound(std::vector<std::uint8_t>& replay) const {
  const std::size_t parts = part_count();
  for (std::size_t s = 0; s < parts && s < replay.size(); ++s) {
    const EventIdx start = part_start(s), stop = part_stop(s);
    if (start >= stop) continue;
    const Clk m = s < reset_m_.size() ? reset_m_[s] : t_max_;
    // U - T at the part's last event, then, going back, its change at each synchronization
    // after the part's first event: that activity less its non-waiting time. A change is never
    // negative (a ready time is never before the predecessor's time, and times do not go
    // backwards: the reader refuses that), so U - T is largest at the part's first event; were
    // one negative, the part is replayed, which is exact in any case.
    Clk most = m - T(stop - 1);
    bool within = most <= slack_ticks_;
    for (EventIdx e = sync_.next(start + 1); within && e != kNoEvent && e < stop;
         e = sync_.next(e + 1)) {
      if (released_forward(e)) continue;  // stepped as a plain activity (backward_step)
      const Clk change = (T(e) - T(e - 1)) - std::max<Clk>(gap_[sync_.rank(e)], 0);
      most += change;
      within = change >= 0 && most <= slack_ticks_;
    }
    if (!within) replay[s] = 1;
  }
}

void RankRetimer::near_whole_part(EventIdx start, EventIdx stop) {
  // backward_step's additions with every slack within the limit, from the part's last event
  // back to its first (integer ticks: the same sums in any order).
  EventIdx e = stop - 1;
  Clk t = T(e);
  std::uint32_t cp = activity_path(e);
  for (;;) {
    const bool sync = sync_.test(e) && !released_forward(e);
    const Clk before = e > 0 ? T(e - 1) : t;
    if ((e > 0 || sync) && cp != UINT32_MAX)
      near_critical_[cp] += sync ? std::max<Clk>(gap_[sync_.rank(e)], 0) : t - before;
    if (e == start) return;
    --e;
    t = before;
    const EventKind k = trace_.kind[e];
    cp = thread_ == 0 && k == EventKind::Enter ? parent_of_[trace_.ref[e]]
                                               : path_before(e, k, cp);
  }
}

bool RankRetimer::near_from_profile() {
  // (The sums were taken before the forward replay: they hold while it replayed every
  // synchronization with its partners.)
  if (nonwaiting_.empty() || !released_events_.empty()) return false;
  near_critical_.swap(nonwaiting_);
  std::vector<Clk>().swap(nonwaiting_);
  near_done_ = true;
  return true;
}

bool RankRetimer::backward_step(Part& g) {
  bool moved = false;
  // Event e's time and kind, carried from one event to the one before it (each is read once).
  EventIdx e = g.e;
  Clk t = T(e);
  EventKind k = trace_.kind[e];
  const std::size_t ncolls = colls_.size();
  const Clk slack = slack_ticks_;
  const auto step_back = [&](Clk before) {
    --g.e;
    e = g.e;
    t = before;
    k = trace_.kind[e];
    g.cp = path_before(e, k, g.cp);
  };
  for (;;) {
    // A stretch of Enters and Leaves that nobody waits at, that complete nothing and are no
    // collective's begin or OpenMP synchronization: only their activities (steps (1) and (2)
    // below have nothing to do). The slack L - t is the same along it (both move back by each
    // activity), so whether its activities are near-critical is decided once.
    const auto plain = [&](EventIdx x, EventKind kx) {
      return (kx == EventKind::Enter || kx == EventKind::Leave) && x > g.start &&
             link_of(x) == kNoLink && !sync_.test(x) &&
             !(g.cc < ncolls && colls_[g.cc].begin == x);
    };
    if (g.waits.empty() && plain(e, k)) {
      const bool near = g.L - t <= slack;
      std::uint32_t cp = g.cp;
      Clk L = g.L;
      do {
        const Clk before = T(e - 1);
        const Clk own = t - before;
        if (near && cp != UINT32_MAX) near_critical_[cp] += own;
        L -= own;
        while (g.cc > 0 && colls_[g.cc - 1].end >= e) --g.cc;
        --e;
        t = before;
        k = trace_.kind[e];
        // The call path before a master's Enter is its parent's (a table, not the tree).
        cp = thread_ == 0 && k == EventKind::Enter ? parent_of_[trace_.ref[e]]
                                                   : path_before(e, k, cp);
      } while (plain(e, k));
      g.e = e;
      g.L = L;
      g.cp = cp;
      moved = true;
      continue;
    }
    const std::uint32_t link = link_of(e);
    // The collective whose begin e may be: the first entry ending after e.
    const CollEntry* begin_of = g.cc < ncolls && colls_[g.cc].begin == e &&
                                        colls_[g.cc].source && colls_[g.cc].type != Bind::Reset
                                    ? &colls_[g.cc]
                                    : nullptr;
    // (1) Records this event needs: it is the partner of later synchronizations.
    if (g.released != e) {
      bool missing = false;
      Clk v = 0;
      for (const Part::Wait& w : g.waits)
        if (w.at == e && !inbox_.find(w.key, v)) missing = true;
      if (begin_of != nullptr && !inbox_.find(key_of(kDownB, begin_of->comm, begin_of->k), v))
        missing = true;
      // An OpenMP synchronization's writer: the latest times its readers allow.
      if (link != kNoLink && (link & kWrites) && !master_->gate_given(link & ~kWrites, v))
        missing = true;
      if (missing) return moved;
      if (link != kNoLink && (link & kWrites)) g.L = std::min(g.L, v);
      auto take = [&](std::uint64_t key) {
        Clk value = kPos;
        inbox_.find(key, value);
        g.L = std::min(g.L, value);
        inbox_.erase(key);
      };
      for (const Part::Wait& w : g.waits)
        if (w.at == e) take(w.key);
      if (begin_of != nullptr) take(key_of(kDownB, begin_of->comm, begin_of->k));
    }
    if (!g.waits.empty())
      g.waits.erase(std::remove_if(g.waits.begin(), g.waits.end(),
                                   [&](const Part::Wait& w) { return w.at == e; }),
                    g.waits.end());
    // (2) The activity that ends here, and the synchronization it completes.
    const bool sync = sync_.test(e) && !released_forward(e);
    const Clk before = e > 0 ? T(e - 1) : t;
    // (A worker thread's first event can be a synchronization: a team begin.)
    if (e > 0 || sync) {
      const Clk d = t - before;
      const Clk gap = sync ? gap_[sync_.rank(e)] : 0;
      const Clk own = sync ? std::max<Clk>(gap, 0) : d;  // non-waiting, and the local edge
      const std::uint32_t cp = g.cp;
      if (cp != UINT32_MAX && g.L - t <= slack)
        near_critical_[cp] += own;
      if (sync && !(thread_ == 0 && g.index > 0 && e == g.start))
        ship_backward(g, e, k, g.L - gap);
      if (sync && link != kNoLink && !(link & kWrites)) master_->gate_give(link, g.L - gap);
      register_waits(g, e, k);
      g.L -= own;
    }
    while (g.cc > 0 && colls_[g.cc - 1].end >= e) --g.cc;
    moved = true;
    if (e == g.start) {
      g.done = true;
      return moved;
    }
    step_back(before);
  }
}

void RankRetimer::ship_backward(Part& g, EventIdx e, EventKind k, Clk value) {
  auto late_receiver = [&](EventIdx send) {
    const std::uint32_t i = sent_.rank(send);
    ByteBuffer& out = bwd_ex_->to(me_, send_dest_[i]);
    put(out, static_cast<std::uint8_t>(kLrB));
    put(out, send_request_[i]);
    put(out, value);
  };
  if (completion(k)) {
    completions_from(e, [&](Rec kind, EventIdx x) {
      if (kind == kLrF) return late_receiver(x);
      const std::uint32_t i = recvd_.rank(x);
      ByteBuffer& out = bwd_ex_->to(me_, recv_source_[i]);
      put(out, static_cast<std::uint8_t>(kLsB));
      put(out, recv_sender_[i]);
      put(out, value);
    });
  } else if (k == EventKind::Leave) {
    // A blocking send's call: its binding sends lie between its Enter and this Leave.
    for (EventIdx i = e; i-- > 0;) {
      const EventKind ki = trace_.kind[i];
      if (ki == EventKind::Enter || ki == EventKind::Leave) break;
      if (ki == EventKind::Send && lr_.test(i)) late_receiver(i);
    }
  }
  if (g.cc > 0 && colls_[g.cc - 1].end == e) {
    const CollEntry& c = colls_[g.cc - 1];
    if (c.binds && c.type != Bind::Reset && c.type != Bind::None) {
      ByteBuffer& out = bwd_ex_->to(me_, host_of(c.comm, c.k));
      put(out, static_cast<std::uint8_t>(kUpB));
      put(out, c.comm);
      put(out, c.k);
      put(out, c.local);
      put(out, value);
    }
  }
}

void RankRetimer::register_waits(Part& g, EventIdx e, EventKind k) {
  // Each field stored on its own: a Wait built whole on the stack and copied in one 16-byte
  // move stalled on the two smaller stores that built it (most of this function's time).
  const auto wait = [&g](EventIdx at, std::uint64_t key) {
    Part::Wait& w = g.waits.emplace_back();
    w.at = at;
    w.key = key;
  };
  if ((k == EventKind::Send || k == EventKind::Isend) && sent_.test(e)) {
    const EventIdx call = trace_.call_of(e);
    if (call != kNoEvent && call >= g.start) wait(call, key_of(kLsB, 0, e));
  }
  const bool request =
      (k == EventKind::Recv && recvd_.test(e)) || k == EventKind::IrecvRequest;
  if (request && lr_req_.test(e)) {
    const EventIdx call = trace_.call_of(e);
    if (call != kNoEvent && call >= g.start) wait(call, key_of(kLrB, 0, e));
  }
}

}  // namespace cpreplay::replay::detail::retiming
