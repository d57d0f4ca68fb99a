// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, forward clocks: every event's new time, one clock per scenario, part by part
// in windows and rounds; the records a step ships and the ones it waits for; the scenarios'
// changes applied to each activity.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "replay/rounding.hpp"
#include "replay/rank_retimer.hpp"

namespace cpreplay::replay::detail::retiming {

// Inlined into the steps: a call per changed activity (every activity of the top call paths)
// cost more than the changes themselves.
__attribute__((always_inline)) inline void RankRetimer::apply_changes(
    Clk* a, std::uint32_t cp, Clk d, const double* vis, EventIdx e, EventKind k) const {
  if (cp == UINT32_MAX) return;
  const ChangeRange& r = chg_first_[cp];
  // A balance change: the visit's factor, or the mean at the Leave of a visit without
  // non-waiting time, or nothing outside a visit (NaN).
  const auto balance = [&](std::uint32_t clock, int slot, double dd)
                           __attribute__((always_inline)) {
    const double f = vis[slot];
    if (f >= 0.0) {
      a[clock] += round_half_away(dd * f) - d;
    } else if (f < 0.0) {
      a[clock] -= d;
      if (k == EventKind::Leave && trace_.ref[e] == cp)
        a[clock] += round_half_away(visit_mean_[slot]);
    }
  };
  if (r.one_each) {
    // Zeroing needs no rounding: round_half_away(d * 0) = 0.
    if (r.zero_clock >= 0) a[r.zero_clock] -= d;
    const double dd = static_cast<double>(d);
    if (r.scale_clock >= 0) a[r.scale_clock] += round_half_away(dd * r.scale) - d;
    if (r.balance_clock >= 0)
      balance(static_cast<std::uint32_t>(r.balance_clock), r.balance_slot, dd);
    return;
  }
  const Mod* const m = chg_.data();
  for (std::uint32_t i = r.zero; i < r.factor; ++i) a[m[i].clock] -= d;
  const double dd = static_cast<double>(d);
  for (std::uint32_t i = r.factor; i < r.slot; ++i)
    a[m[i].clock] += round_half_away(dd * m[i].factor) - d;
  for (std::uint32_t i = r.slot; i < r.end; ++i) balance(m[i].clock, m[i].slot, dd);
}

void RankRetimer::forward_begin() {
  prefix_.assign(S_, 0);  // per clock: the latest begin of the last cut (M)
  last_.assign(S_, kNeg);
  tmp_.assign(S_, 0);
  if (thread_ != 0) first_.assign(S_, kPos);
  if (!team_.empty()) gates_forward_begin();
  if (thread_ == 0) plain_stops();
}

void RankRetimer::plain_stops() {
  // Every event the plain loop of forward_step would stop at, so that it runs from one to the
  // next without asking each event: synchronizations and OpenMP links (their words at once),
  // collectives' begins and ends, blocking sends whose record goes out and blocking receives
  // whose request does, and the test hook's event. A superset does no harm: the full step
  // handles every event.
  const auto n = static_cast<EventIdx>(trace_.size());
  stops_.resize(n);
  stops_.merge(sync_);
  if (threads_) stops_.merge(omp_);
  for (EventIdx e = sent_.next(0); e != kNoEvent && e < n; e = sent_.next(e + 1))
    if (trace_.kind[e] == EventKind::Send) stops_.set(e);
  for (EventIdx e = lr_req_.next(0); e != kNoEvent && e < n; e = lr_req_.next(e + 1))
    if (trace_.kind[e] == EventKind::Recv) stops_.set(e);
  for (const CollEntry& c : colls_) {
    if (c.begin < n) stops_.set(c.begin);
    if (c.end < n) stops_.set(c.end);
  }
  if (nudge_ < n) stops_.set(nudge_);
}

void RankRetimer::forward_window(std::size_t w0, std::size_t w1) {
  const std::size_t n = w1 - w0;
  parts_.assign(n, Part{});
  clk_.assign(n * stride(), 0);
  vis_.assign(n * std::max<std::size_t>(B_, 1), std::numeric_limits<double>::quiet_NaN());
  if (thread_ == 0) cut_clk_.assign(n * S_, kNeg);
  for (std::size_t i = 0; i < n; ++i) start_forward(parts_[i], w0 + i, i);
}

bool RankRetimer::forward_round(bool& unfinished) {
  bool moved = false;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i + kPrefetchAhead < parts_.size() && !parts_[i + kPrefetchAhead].done) {
      const EventIdx e = parts_[i + kPrefetchAhead].e;  // < the trace's size: not done
      prefetch_events(e, std::min<EventIdx>(kPrefetchEvents,
                                            static_cast<EventIdx>(trace_.size()) - e));
    }
    if (team_.empty()) {
      if (parts_[i].done) continue;
      moved |= forward_step(parts_[i], i);
      if (!parts_[i].done) unfinished = true;
      continue;
    }
    for (bool any = true; any;) {
      any = !parts_[i].done && forward_step(parts_[i], i);
      for (RankRetimer* w : team_)
        if (!w->parts_[i].done) any = w->forward_step(w->parts_[i], i) || any;
      moved = moved || any;
    }
    if (!parts_[i].done) unfinished = true;
    for (const RankRetimer* w : team_)
      if (!w->parts_[i].done) unfinished = true;
  }
  return moved;
}

void RankRetimer::forward_join(std::size_t w0, std::size_t w1, const std::vector<Clk>& global,
                  const std::vector<int>& who) {
  const std::size_t n = w1 - w0;
  if (thread_ != 0) {
    // A worker thread: its first and last events' times, from the start of their parts.
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t s = w0 + i;
      if (first_part_ == s)
        for (std::uint32_t c = 0; c < S_; ++c) first_[c] = prefix_[c] + first_clk_[c];
      if (last_part_ == s)
        for (std::uint32_t c = 0; c < S_; ++c) last_[c] = prefix_[c] + last_clk_[c];
      if (s < reset_m_.size())
        for (std::uint32_t c = 0; c < S_; ++c) prefix_[c] += global[i * S_ + c];
    }
    return;
  }
  const std::size_t cuts = w0 < resets_.size() ? std::min(w1, resets_.size()) - w0 : 0;
  if (path_ >= 0)
    for (std::size_t i = 0; i < cuts; ++i)
      if (who[i] != me_ && who[i] < defs_.ranks())
        hops_.push_back(Hop{resets_[w0 + i], who[i], Hop::kCut,
                            static_cast<std::uint32_t>(w0 + i), 0});
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s = w0 + i;
    if (s < resets_.size()) {
      for (std::uint32_t c = 0; c < S_; ++c) prefix_[c] += global[i * S_ + c];
      if (prefix_[0] != reset_m_[s] && error_.empty())
        error_ = defs_.anchor_path + ": rank " + std::to_string(me_) +
                 ": the re-timing replay with nothing changed missed the latest begin of "
                 "the collective it cuts the run at (the " + std::to_string(s + 1) + "-th)";
    } else if (trace_.size() > 0) {
      for (std::uint32_t c = 0; c < S_; ++c) last_[c] = prefix_[c] + last_clk_[c];
    }
  }
  // Hosts keep only what the backward replay needs once every begin came.
  for (auto& [key, h] : hosted_)
    if (h.got >= h.expected && h.waiting.empty()) {
      std::vector<Clk>().swap(h.clocks);
      std::vector<std::uint8_t>().swap(h.arrived);
    }
}

void RankRetimer::forward_end(const std::vector<Clk>& runtime, Clk t_max, Rank sink,
                              int sink_thread) {
  runtime_ = runtime;
  t_max_ = t_max;
  sink_ = sink;
  sink_thread_ = sink_thread;
  std::sort(released_events_.begin(), released_events_.end());
  // Records nobody waits for any more (released constraints) are dropped.
  inbox_.clear();
  std::vector<Clk>().swap(pool_);
  std::vector<std::uint32_t>().swap(free_);
  std::vector<Part>().swap(parts_);
  std::vector<Clk>().swap(clk_);
  stops_ = EventBits{};
}

void RankRetimer::start_forward(Part& g, std::size_t s, std::size_t slot) {
  g.index = static_cast<std::uint32_t>(s);
  g.start = part_start(s);
  g.stop = part_stop(s);
  g.e = g.start;
  g.base = s == 0 ? 0 : reset_m_[s - 1];
  g.cc = s == 0 ? 0 : first_coll_ending_after(g.start);
  Clk* a = &clk_[slot * stride()];
  double* vis = &vis_[slot * std::max<std::size_t>(B_, 1)];
  for (std::size_t b = 0; b < B_; ++b) vis[b] = std::numeric_limits<double>::quiet_NaN();
  if (!part_vis_first_.empty())
    for (std::uint32_t j = part_vis_first_[s]; j < part_vis_first_[s + 1]; ++j)
      vis[part_vis_[j].slot] = part_vis_[j].factor;
  if (thread_ != 0) {
    // A worker thread's part starts at a team begin, which its fork binds (forward_step
    // takes it from here, without the thread's events of earlier parts: the cut between
    // orders them); anything else keeps its distance to the part's start.
    if (g.start >= g.stop) {
      g.done = true;
      return;
    }
    const Clk init = sync_.test(g.start) ? kNeg : T(g.start) - g.base;
    for (std::uint32_t c = 0; c < S_; ++c) a[c] = init;
    g.prev = T(g.start);
    g.cp = activity_path(g.start);
    return;
  }
  if (g.start >= g.stop) {
    g.done = true;
    if (s < resets_.size() && error_.empty())
      error_ = "what-if replay: rank " + std::to_string(me_) + ": an empty part before a cut";
    return;
  }
  if (s == 0) {
    // The first event keeps its time in every scenario; forward_step takes it from here.
    for (std::uint32_t c = 0; c < S_; ++c) a[c] = T(0);
    g.prev = T(0);
    return;
  }
  // The cut's end: every rank leaves at the latest begin plus its own completion time.
  const EventIdx x = g.start;
  const Clk gap = T(x) - g.base;
  for (std::uint32_t c = 0; c < S_; ++c) a[c] = gap;
  const std::uint32_t cp = activity_path(x);
  apply_changes(a, cp, gap, vis, x, trace_.kind[x]);
  const bool leave = trace_.kind[x] == EventKind::Leave;
  g.cp = leave ? parent(trace_.ref[x]) : cp;
  if (leave && slot_of_[trace_.ref[x]] >= 0)
    vis[slot_of_[trace_.ref[x]]] = std::numeric_limits<double>::quiet_NaN();
  g.prev = T(x);
  g.e = x + 1;
  if (g.e >= g.stop) finish_part(g, slot);
}

void RankRetimer::finish_part(Part& g, std::size_t slot) {
  g.done = true;
  const Clk* a = &clk_[slot * stride()];
  if (thread_ != 0) {
    if (g.stop == trace_.size()) {
      last_clk_.assign(a, a + S_);
      last_part_ = g.index;
    }
    return;
  }
  if (g.index < resets_.size())
    std::copy(a, a + S_, &cut_clk_[slot * S_]);
  else
    last_clk_.assign(a, a + S_);
}

namespace {

/// next[c] = the latest of a[c] and the N partners' clock c, plus gap (N fixed: unrolled).
template <int N>
void latest_plus(Clk* next, const Clk* a, const Clk* const* partners, Clk gap, std::uint32_t S) {
  for (std::uint32_t c = 0; c < S; ++c) {
    Clk r = a[c];
    for (int i = 0; i < N; ++i) r = std::max(r, partners[i][c]);
    next[c] = r + gap;
  }
}

}  // namespace

__attribute__((always_inline)) inline bool RankRetimer::ship_send(EventIdx e, const Clk* enter,
                                                                 Clk lag) {
  const bool lr = lr_.test(e);
  const std::uint32_t i = sent_.rank(e);
  ByteBuffer& out = fwd_ex_->to(me_, send_dest_[i]);
  put(out, static_cast<std::uint8_t>(kLsF));
  put(out, e);
  put(out, send_request_[i]);
  put(out, static_cast<std::uint8_t>(lr ? 1 : 0));
  put_clocks(out, enter, lag);
  return lr;
}

__attribute__((always_inline)) inline void RankRetimer::ship_request(EventIdx e, const Clk* enter,
                                                                    Clk lag) {
  const EventIdx completion = trace_.ref[e];
  if (completion != kNoEvent && completion > e && completion < trace_.size() &&
      trace_.kind[completion] == EventKind::Irecv && recvd_.test(completion) && lr_req_.test(e)) {
    const std::uint32_t i = recvd_.rank(completion);
    ship_lr_forward(recv_source_[i], recv_sender_[i], enter, lag);
  }
}

CPREPLAY_CLOCK_LOOPS bool RankRetimer::forward_step(Part& g, std::size_t slot) {
  Clk* a = &clk_[slot * stride()];
  Clk* enter = a + S_;  // a master's only (MPI calls)
  double* vis = &vis_[slot * std::max<std::size_t>(B_, 1)];
  const std::uint32_t S = S_;
  bool moved = false;
  constexpr std::size_t kMaxPartners = 8;
  const Clk* partners[kMaxPartners];
  std::uint64_t keys[kMaxPartners];
  Clk pooled[kMaxPartners];  // a record's slot in pool_ (its value in inbox_)
  std::uint32_t gate_of[kMaxPartners];  // a thread's gate, or kNoLink: a record in inbox_
  Hop hops[kMaxPartners];  // where each partner's time comes from (for the profiled clock)
  // Ticks every clock is behind a: an event that neither waits nor is changed by a scenario
  // adds the same ticks to every clock, so they are summed here and added to the S clocks only
  // before a reads or copies them (integer sums: the same values in any order). A scenario's
  // changes only add to their clocks, so they go to a directly.
  Clk lag = 0;
  auto catch_up = [&] {
    if (lag == 0) return;
    for (std::uint32_t c = 0; c < S; ++c) a[c] += lag;
    lag = 0;
  };
  // An MPI call's Enter: its clocks as they are, and how far they lag (the records that ship
  // them add it to the first clock only: the others go as differences from it).
  auto snapshot_enter = [&] {
    std::memcpy(enter, a, S * sizeof(Clk));
    g.enter_lag = lag;
  };
  // Whether a blocking send waits for its Leave, and whether this is a master (whose plain
  // events take the short way), kept in locals.
  bool no_pending = g.pending.empty();
  const bool master = thread_ == 0;
  while (g.e < g.stop) {
    // A master's events that complete nothing, are no collective's begin or end, no OpenMP
    // synchronization and not the test hook's, and whose call does not wait for a Late
    // Receiver (a blocking send's Leave): their activities, the call paths Enters and Leaves
    // open or close, and the records a matched send or a receive request ships, nothing else of
    // the steps below applies (the unchanged clock keeps its check: only a synchronization or
    // the hook can move it). A blocking send or receive whose record must go out takes the
    // steps below (a send may then wait at its Leave; a receive ships before it waits). Those
    // events are the stops (plain_stops): the loop runs up to the next one. It keeps the
    // event, its predecessor's time and the call path in locals: as the part's fields they
    // were stored and loaded again at every event, behind the clocks' stores (which may alias
    // them).
    if (master && no_pending) {
      EventIdx e = g.e;
      Clk prev = g.prev;
      std::uint32_t cp = g.cp;
      const EventIdx stop = std::min(g.stop, stops_.next(e));
      for (; e < stop; ++e) {
        const EventKind k = trace_.kind[e];
        const bool region = k == EventKind::Enter || k == EventKind::Leave;
        const Clk t = T(e);
        const Clk d = t - prev;
        lag += d;
        apply_changes(a, cp, d, vis, e, k);
        prev = t;
        if (region) {
          const std::uint32_t r = trace_.ref[e];
          if (k == EventKind::Enter) {
            cp = r;
            if (mpi_path_[r]) snapshot_enter();
            const int b = slot_of_[r];
            if (b >= 0) {
              // A visit the walk of an enclosing one noted comes next (visit_factor's first
              // case, without the call).
              if (g.memo_head < g.memo_size && g.memo_enter[g.memo_head] == e)
                vis[b] = g.memo_factor[g.memo_head++];
              else
                vis[b] = visit_factor(g, e, b);
            }
          } else {
            const int b = slot_of_[r];
            if (b >= 0) vis[b] = std::numeric_limits<double>::quiet_NaN();
            cp = parent(r);
          }
        } else if (k == EventKind::Isend) {
          if (sent_.test(e)) ship_send(e, enter, g.enter_lag);
        } else if (k == EventKind::IrecvRequest) {
          ship_request(e, enter, g.enter_lag);
        }
      }
      if (e != g.e) moved = true;
      g.e = e;
      g.prev = prev;
      g.cp = cp;
      if (e >= g.stop) break;
    }
    const EventIdx e = g.e;
    const EventKind k = trace_.kind[e];
    const std::uint32_t link = link_of(e);
    // A worker thread's activities as activity_path has them (its outermost regions' parent
    // is its master's call path, not open on the thread).
    if (thread_ != 0) g.cp = activity_path(e);
    const bool recv = (k == EventKind::Recv || k == EventKind::Irecv) && recvd_.test(e);
    // Records that go out before this event may wait: a blocking receive's request.
    if (g.shipped != e) {
      g.shipped = e;
      if (k == EventKind::Recv && recv && lr_req_.test(e)) {
        const std::uint32_t i = recvd_.rank(e);
        ship_lr_forward(recv_source_[i], recv_sender_[i], enter, g.enter_lag);
      }
    }
    const bool sync = sync_.test(e) && g.released != e;
    std::size_t np = 0;
    if (sync) {
      bool missing = false;
      // Each partner's record, until one has not come (the step then stops here and looks
      // again next round); where its time comes from only for the profiled clock's path.
      const bool hops_wanted = path_ >= 0;
      auto need = [&](std::uint64_t key, auto&& hop) {
        if (missing) return;
        Clk value = 0;
        if (!inbox_.find(key, value)) {
          missing = true;
        } else if (np < kMaxPartners) {
          keys[np] = key;
          pooled[np] = value;
          gate_of[np] = kNoLink;
          if (hops_wanted) hops[np] = hop();
          partners[np++] = pool_at(value);
        }
      };
      auto late_receiver = [&](EventIdx send) {
        need(key_of(kLrF, 0, send), [&] {
          const std::uint32_t i = sent_.rank(send);
          return Hop{e, send_dest_[i], Hop::kCallOf, send_request_[i], 0};
        });
      };
      if (completion(k))
        completions_from(e, [&](Rec kind, EventIdx x) {
          if (kind == kLrF) return late_receiver(x);
          if (missing) return;
          const std::uint32_t i = recvd_.rank(x);
          const Rank source = recv_source_[i];
          const EventIdx sender = recv_sender_[i];
          need(key_of(kLsF, static_cast<std::uint32_t>(source), sender),
               [&] { return Hop{e, source, Hop::kCallOf, sender, 0}; });
        });
      for (const auto& [at, send] : g.pending)
        if (at == e) late_receiver(send);
      if (g.cc < colls_.size() && colls_[g.cc].end == e && colls_[g.cc].binds) {
        const CollEntry& c = colls_[g.cc];
        if (g.requested != e) {
          g.requested = e;
          ByteBuffer& out = fwd_ex_->to(me_, host_of(c.comm, c.k));
          put(out, static_cast<std::uint8_t>(kReqF));
          put(out, c.comm);
          put(out, c.k);
          put(out, c.local);
        }
        need(key_of(kDownF, c.comm, c.k), [&] { return Hop{e, -1, Hop::kBegin, c.comm, c.k}; });
      }
      if (link != kNoLink && !(link & kWrites)) {
        // An OpenMP synchronization: the gate holds its writers' latest new time once all
        // of them wrote, and which thread's event that was.
        const Clk* c = master_->gate_ready(link);
        if (c == nullptr) {
          missing = true;
        } else if (np < kMaxPartners) {
          keys[np] = 0;
          gate_of[np] = link;
          hops[np] = Hop{e, me_, Hop::kThread, static_cast<std::uint32_t>(c[S]),
                         static_cast<std::uint32_t>(c[S + 1])};
          partners[np++] = c;
        }
      }
      if (missing) {
        catch_up();
        return moved;
      }
    }
    // The new times.
    const Clk t = T(e);
    if (np == 0 && thread_ != 0 && e == g.start) {
      // A worker thread's part start replayed without its fork (a stall): its distance to
      // the part's start.
      lag = 0;
      for (std::uint32_t c = 0; c < S; ++c) a[c] = t - g.base;
    } else if (np == 0) {
      const Clk d = t - g.prev;
      lag += d;
      apply_changes(a, g.cp, d, vis, e, k);
    } else {
      catch_up();
      const Clk gap = gap_[sync_.rank(e)];
      Clk* next = tmp_.data();
      switch (np) {  // a waitall of two receives and two sends has four
        case 1: latest_plus<1>(next, a, partners, gap, S); break;
        case 2: latest_plus<2>(next, a, partners, gap, S); break;
        case 3: latest_plus<3>(next, a, partners, gap, S); break;
        case 4: latest_plus<4>(next, a, partners, gap, S); break;
        default:
          for (std::uint32_t c = 0; c < S; ++c) {
            Clk r = a[c];
            for (std::size_t i = 0; i < np; ++i) r = std::max(r, partners[i][c]);
            next[c] = r + gap;
          }
      }
      apply_changes(next, g.cp, gap, vis, e, k);
      if (path_ >= 0) {
        // The profiled clock's time came from a partner (strictly later than the local
        // predecessor's path): its critical path hops there.
        const std::size_t p = static_cast<std::size_t>(path_);
        Clk best = kNeg;
        std::size_t from = np;
        for (std::size_t i = 0; i < np; ++i)
          if (partners[i][p] > best) {
            best = partners[i][p];
            from = i;
          }
        const Clk scaled = next[p] - std::max(a[p], best);
        if (from < np && best + scaled > a[p] + std::max<Clk>(scaled, 0)) {
          Hop h = hops[from];
          if (h.kind == Hop::kBegin) h.rank = static_cast<Rank>(partners[from][S_]);
          if (h.kind == Hop::kThread) {
            thread_hop_.set(e);
            master_->gate_from_[gate_of[from]] = GateFrom{h.a, h.b};
          }
          else if (h.rank >= 0)
            hops_.push_back(h);
        }
      }
      for (std::uint32_t c = 0; c < S; ++c) a[c] = std::max(a[c], next[c]);
      for (std::size_t i = 0; i < np; ++i) {
        if (gate_of[i] != kNoLink) {
          master_->gate_read(gate_of[i]);
          continue;
        }
        pool_free(pooled[i]);
        inbox_.erase(keys[i]);
      }
    }
    if (e == nudge_) ++a[0];
    if (a[0] + lag != t - g.base && error_.empty()) {
      error_ = defs_.anchor_path + ": " + where() + ", event " + std::to_string(e) +
               ": the re-timing replay with nothing changed moved it by " +
               std::to_string(a[0] + lag - (t - g.base)) + " ticks";
      error_time_ = trace_.time[e];
    }
    if (link != kNoLink && (link & kWrites)) {
      catch_up();
      master_->gate_write(link & ~kWrites, a, thread_, e);
    }
    if (e == 0 && thread_ != 0) {
      catch_up();
      first_clk_.assign(a, a + S);
      first_part_ = g.index;
    }
    // What the event opens, closes or ships.
    switch (k) {
      case EventKind::Enter: {
        g.cp = trace_.ref[e];
        if (mpi_path_[g.cp] && thread_ == 0) snapshot_enter();
        const int b = slot_of_[g.cp];
        if (b >= 0) vis[b] = visit_factor(g, e, b);
        break;
      }
      case EventKind::Leave: {
        const int b = slot_of_[trace_.ref[e]];
        if (b >= 0) vis[b] = std::numeric_limits<double>::quiet_NaN();
        g.cp = parent(trace_.ref[e]);
        if (!g.pending.empty())
          g.pending.erase(std::remove_if(g.pending.begin(), g.pending.end(),
                                         [&](const auto& p) { return p.first == e; }),
                          g.pending.end());
        break;
      }
      case EventKind::Send: case EventKind::Isend:
        if (sent_.test(e) && ship_send(e, enter, g.enter_lag) && k == EventKind::Send) {
          const EventIdx leave = trace_.leave_of(trace_.call_of(e));
          if (leave != kNoEvent) g.pending.push_back({leave, e});
        }
        break;
      case EventKind::IrecvRequest:
        ship_request(e, enter, g.enter_lag);
        break;
      default:
        break;
    }
    if (g.cc < colls_.size() && colls_[g.cc].begin == e && colls_[g.cc].up &&
        colls_[g.cc].type != Bind::Reset) {
      const CollEntry& c = colls_[g.cc];
      ByteBuffer& out = fwd_ex_->to(me_, host_of(c.comm, c.k));
      put(out, static_cast<std::uint8_t>(kUpF));
      put(out, c.comm);
      put(out, c.k);
      put(out, c.local);
      put(out, static_cast<std::uint8_t>(c.source ? 1 : 0));
      catch_up();
      if (c.source) put_clocks(out, a);
    }
    if (g.cc < colls_.size() && colls_[g.cc].end == e) ++g.cc;
    no_pending = g.pending.empty();
    g.prev = t;
    ++g.e;
    moved = true;
  }
  catch_up();
  finish_part(g, slot);
  return moved;
}

CPREPLAY_CLOCK_LOOPS void RankRetimer::ship_lr_forward(Rank to, EventIdx sender_event,
                                                     const Clk* enter, Clk lag) {
  ByteBuffer& out = fwd_ex_->to(me_, to);
  put(out, static_cast<std::uint8_t>(kLrF));
  put(out, sender_event);
  put_clocks(out, enter, lag);
}

void RankRetimer::release_forward() {
  for (Part& g : parts_)
    if (!g.done && g.released != g.e) {
      g.released = g.e;
      released_events_.push_back(g.e);
      ++released_;
    }
}

}  // namespace cpreplay::replay::detail::retiming
