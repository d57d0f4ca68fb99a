// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, planning and preparation: the scenarios' changes per call path (with the
// balance statistics over all ranks), the matching's constraints, each collective instance's
// binding rule, the cut points that split the run into parts, and each synchronization's
// original completion time.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "replay/rank_retimer.hpp"

namespace cpreplay::replay::detail::retiming {

void RankRetimer::plan_stats() {
  const std::size_t n = tree_.size();
  sorted_changes_ = req_.changes;
  std::sort(sorted_changes_.begin(), sorted_changes_.end(),
            [](const TimeChange& a, const TimeChange& b) {
              return a.callpath != b.callpath ? a.callpath < b.callpath : a.clock < b.clock;
            });
  // Non-waiting exclusive time and visits of the call paths to balance, over all ranks.
  stat_of_.assign(n, UINT32_MAX);
  std::size_t m = 0;
  for (const TimeChange& c : sorted_changes_)
    if (c.callpath < n && c.kind != TimeChange::Kind::Factor &&
        stat_of_[c.callpath] == UINT32_MAX)
      stat_of_[c.callpath] = static_cast<std::uint32_t>(m++);
  stats_.assign(3 * m, 0);
  const bool profiled =
      !threads_ && thread_ == 0 && profile_exclusive_ != nullptr && profile_visits_ != nullptr;
  if (profiled) nonwaiting_from_profile();
  if (m == 0) return;
  if (profiled) {
    plan_stats_from_profile(m);
    return;
  }
  struct Open {
    std::uint32_t cp;
    EventIdx enter;
  };
  std::vector<Open> open;  // the open regions
  const std::size_t nparts = part_count();
  std::size_t next = 1;  // the part whose start comes next (a thread's parts may be empty)
  EventIdx next_start = next < nparts ? part_start(next) : kNoEvent;
  std::uint32_t inner = UINT32_MAX;  // the innermost open region's call path
  // Where the innermost open region's time goes: its statistic, or `other` (none), chosen
  // when the region opens or closes, not per event.
  std::int64_t other = 0;
  std::int64_t* acc = &other;
  const auto acc_of = [&](std::uint32_t cp) {
    return cp != UINT32_MAX && stat_of_[cp] != UINT32_MAX ? &stats_[stat_of_[cp]] : &other;
  };
  Clk prev = trace_.size() > 0 ? T(0) : 0;
  for (EventIdx e = 0; e < trace_.size(); ++e) {
    // The regions open where a part starts, for part_visits (their balance factors).
    for (; e == next_start; next_start = ++next < nparts ? part_start(next) : kNoEvent)
      for (const Open& o : open)
        if (stat_of_[o.cp] != UINT32_MAX)
          part_open_.emplace_back(static_cast<std::uint32_t>(next), o.enter);
    const EventKind k = trace_.kind[e];
    const Clk t = T(e);
    // (A worker thread's outermost regions hang below its master's call path, which is not
    // open on the thread: activity_path knows that.)
    if (threads_) acc = e > 0 ? acc_of(activity_path(e)) : &other;
    *acc += busy(e, t - prev);
    prev = t;
    if (k == EventKind::Enter) {
      inner = trace_.ref[e];
      open.push_back(Open{inner, e});
      acc = acc_of(inner);
      if (stat_of_[inner] != UINT32_MAX) stats_[m + stat_of_[inner]] += 1;
    } else if (k == EventKind::Leave && !open.empty()) {
      open.pop_back();
      inner = open.empty() ? UINT32_MAX : open.back().cp;
      acc = acc_of(inner);
    }
  }
  for (std::size_t i = 0; i < m; ++i) stats_[2 * m + i] = stats_[i] > 0 ? 1 : 0;
}

CPREPLAY_BIT_LOOPS void RankRetimer::nonwaiting_from_profile() {
  // The profile's ticks are the activities' times by innermost open region, as the walk in
  // plan_stats sums them; the non-waiting time is that less what each synchronization waits
  // (busy: its completion time instead of the whole activity).
  nonwaiting_.assign(profile_exclusive_, profile_exclusive_ + tree_.size());
  // (The first event's activity is empty and outside every region, as in the walk; a master's
  // first event is no synchronization: prepare's settle.)
  for (EventIdx e = sync_.next(1); e != kNoEvent && e < trace_.size(); e = sync_.next(e + 1)) {
    const std::uint32_t cp = activity_path(e);
    if (cp == UINT32_MAX) continue;
    const Clk d = T(e) - T(e - 1);
    nonwaiting_[cp] += busy(e, d) - d;
  }
}

void RankRetimer::plan_stats_from_profile(std::size_t m) {
  for (std::uint32_t cp = 0; cp < tree_.size(); ++cp) {
    const std::uint32_t i = stat_of_[cp];
    if (i == UINT32_MAX) continue;
    stats_[i] = nonwaiting_[cp];
    stats_[m + i] = static_cast<std::int64_t>(profile_visits_[cp]);
  }
  for (std::size_t i = 0; i < m; ++i) stats_[2 * m + i] = stats_[i] > 0 ? 1 : 0;
  // The regions open where each part starts (for part_visits), as plan_stats' walk finds them,
  // without walking every event: the open regions' call paths are the chain from the call path
  // before the part's first event up to the root, so only the Enters of the balanced ones are
  // looked for, scanning back from the part's start and stopping at the outermost of them. A
  // region not entered since the previous part's start was open there too: its Enter is the one
  // found then. A call path this rank visits once (main) is not looked for where it was open
  // at the previous part's start: that one visit is still the one open. (On the bench stencil
  // a scan then goes back to its iteration's start, a tenth of the events between two parts;
  // looking for main too, it went back to the previous part's start.)
  const std::size_t nparts = part_count();
  std::vector<std::uint32_t> chain;                            // innermost first
  std::vector<EventIdx> enters;                                // per chain entry, or kNoEvent
  std::vector<std::pair<std::uint32_t, EventIdx>> known, now;  // balanced open: path, Enter
  const auto enter_at_lo = [&](std::uint32_t cp) {  // where cp's region open at lo began
    for (const auto& [path, at] : known)
      if (path == cp) return at;
    return kNoEvent;
  };
  EventIdx lo = 0;  // the previous part's start
  for (std::size_t s = 1; s < nparts; ++s) {
    const EventIdx x = part_start(s);
    if (x >= trace_.size()) break;
    chain.clear();
    for (std::uint32_t cp = activity_path(x); cp != UINT32_MAX; cp = parent(cp))
      chain.push_back(cp);
    std::size_t all = 0;   // chain entries up to the outermost balanced one
    std::size_t need = 0;  // ...of them, up to the outermost one to look for
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const std::uint32_t cp = chain[i];
      if (stat_of_[cp] == UINT32_MAX) continue;
      all = i + 1;
      if (profile_visits_[cp] != 1 || enter_at_lo(cp) == kNoEvent) need = i + 1;
    }
    enters.assign(all, kNoEvent);
    std::size_t found = 0;
    int depth = 0;
    for (EventIdx i = x; found < need && i-- > lo;) {
      const EventKind k = trace_.kind[i];
      if (k == EventKind::Leave) {
        ++depth;
      } else if (k == EventKind::Enter) {
        if (depth == 0)
          enters[found++] = i;
        else
          --depth;
      }
    }
    now.clear();
    for (std::size_t i = all; i-- > 0;) {
      if (stat_of_[chain[i]] == UINT32_MAX) continue;
      const EventIdx enter = enters[i] != kNoEvent ? enters[i] : enter_at_lo(chain[i]);
      if (enter == kNoEvent) continue;  // (cannot happen: it was open at lo)
      now.emplace_back(chain[i], enter);
      part_open_.emplace_back(static_cast<std::uint32_t>(s), enter);
    }
    known.swap(now);
    lo = x;
  }
}

void RankRetimer::plan_finish(const std::vector<std::int64_t>& global_stats) {
  const std::size_t n = tree_.size();
  const std::size_t m = stats_.size() / 3;
  std::vector<double> local(stats_.begin(), stats_.end());
  std::vector<double> global(global_stats.begin(), global_stats.end());
  change_begin_.assign(n + 1, 0);
  slot_of_.assign(n, -1);
  for (const TimeChange& c : sorted_changes_) {
    if (c.callpath >= n || c.clock == 0 || c.clock >= S_) continue;
    Mod mod{c.clock, -1, c.value};
    if (c.kind == TimeChange::Kind::Balance) {
      const std::size_t i = stat_of_[c.callpath];
      if (global[m + i] <= 0.0) continue;  // never visited: nothing to balance
      mod.slot = static_cast<int>(visit_mean_.size());
      slot_of_[c.callpath] = mod.slot;
      visit_mean_.push_back(global[i] / global[m + i]);
      // A call path a master visits once (main, an initialization): its statistic is that
      // visit's non-waiting time, the sum the walk would find (the same activities, by
      // innermost open region, each its busy time), so the visit is not walked.
      only_visit_.push_back(!walk_every_visit_ && thread_ == 0 && stats_[m + i] == 1
                                ? stats_[i]
                                : Clk{-1});
    } else if (c.kind == TimeChange::Kind::Rebalance) {
      // A rank without time in it cannot take work there (it has no such code path).
      const std::size_t i = stat_of_[c.callpath];
      if (local[i] <= 0.0 || global[2 * m + i] <= 0.0) continue;
      mod.factor = global[i] / global[2 * m + i] / local[i];
    }
    mods_.push_back(mod);
    ++change_begin_[c.callpath + 1];
  }
  for (std::size_t c = 0; c < n; ++c) change_begin_[c + 1] += change_begin_[c];
  // The same changes by kind for apply_changes: zeroing, other factors, balance slots (each
  // adds to its own clock from the activity's time alone, so their order does not matter).
  chg_first_.assign(n, ChangeRange{});
  chg_.clear();
  for (std::size_t c = 0; c < n; ++c) {
    ChangeRange& r = chg_first_[c];
    const auto kind_of = [](const Mod& x) { return x.slot >= 0 ? 2 : x.factor == 0.0 ? 0 : 1; };
    std::uint32_t* ends[3] = {&r.factor, &r.slot, &r.end};
    r.zero = static_cast<std::uint32_t>(chg_.size());
    for (int kind = 0; kind < 3; ++kind) {
      for (std::uint32_t i = change_begin_[c]; i < change_begin_[c + 1]; ++i)
        if (kind_of(mods_[i]) == kind) chg_.push_back(mods_[i]);
      *ends[kind] = static_cast<std::uint32_t>(chg_.size());
    }
    r.one_each = r.factor - r.zero <= 1 && r.slot - r.factor <= 1 && r.end - r.slot <= 1;
    if (r.one_each) {
      if (r.factor > r.zero) r.zero_clock = static_cast<std::int32_t>(chg_[r.zero].clock);
      if (r.slot > r.factor) {
        r.scale_clock = static_cast<std::int32_t>(chg_[r.factor].clock);
        r.scale = chg_[r.factor].factor;
      }
      if (r.end > r.slot) {
        r.balance_clock = static_cast<std::int32_t>(chg_[r.slot].clock);
        r.balance_slot = chg_[r.slot].slot;
      }
    }
  }
  B_ = visit_mean_.size();
  mpi_path_.assign(n, 0);
  for (std::size_t c = 0; c < n; ++c)
    mpi_path_[c] = defs_.region(RegionId{trace_.region_of_path[c]}).is_mpi() ? 1 : 0;
  std::vector<TimeChange>().swap(sorted_changes_);
  std::vector<std::uint32_t>().swap(stat_of_);
  std::vector<std::int64_t>().swap(stats_);
}

CPREPLAY_BIT_LOOPS double RankRetimer::visit_factor(EventIdx enter, int slot) const {
  if (only_visit_[slot] >= 0) return only_visit_factor(slot);
  Clk x = 0;
  int depth = 0;
  Clk prev = T(enter);
  for (EventIdx i = enter + 1; i < trace_.size(); ++i) {
    const Clk t = T(i);
    if (depth == 0) x += busy(i, t - prev);
    prev = t;
    const EventKind k = trace_.kind[i];
    if (k == EventKind::Enter) {
      ++depth;
    } else if (k == EventKind::Leave) {
      if (depth == 0) break;
      --depth;
    }
  }
  return x > 0 ? visit_mean_[slot] / static_cast<double>(x) : -1.0;
}

CPREPLAY_BIT_LOOPS double RankRetimer::visit_factor(Part& g, EventIdx enter, int slot) const {
  while (g.memo_head < g.memo_size && g.memo_enter[g.memo_head] < enter) ++g.memo_head;
  if (g.memo_head < g.memo_size && g.memo_enter[g.memo_head] == enter)
    return g.memo_factor[g.memo_head++];
  if (only_visit_[slot] >= 0) return only_visit_factor(slot);
  // Walk this visit as visit_factor(enter, slot) does; the activities inside it at depth >= 1
  // belong to the innermost region open there, and where that is a balanced visit noted
  // below, they add to its sum. Each depth's activities go to one accumulator (the visit's,
  // a noted visit's, or `other` for a region not noted or nested deeper than kDepth), chosen
  // at its Enter: the walk adds without asking where.
  constexpr int kDepth = 32;
  Clk* acc_at[kDepth + 1];  // per depth below `enter`: where that depth's activities go
  Clk sum[Part::kMemo];
  int slots[Part::kMemo];
  std::uint8_t n = 0;
  Clk x = 0, other = 0;
  int depth = 0;
  Clk* acc = &x;
  acc_at[0] = &x;
  Clk prev = T(enter);
  for (EventIdx i = enter + 1; i < trace_.size(); ++i) {
    const Clk t = T(i);
    *acc += busy(i, t - prev);
    prev = t;
    const EventKind k = trace_.kind[i];
    if (k == EventKind::Enter) {
      ++depth;
      acc = &other;
      if (depth <= kDepth) {
        const int b = slot_of_[trace_.ref[i]];
        if (b >= 0 && n < Part::kMemo) {
          g.memo_enter[n] = i;
          slots[n] = b;
          sum[n] = 0;
          acc = &sum[n++];
        }
        acc_at[depth] = acc;
      }
    } else if (k == EventKind::Leave) {
      if (depth == 0) break;
      --depth;
      acc = depth <= kDepth ? acc_at[depth] : &other;
    }
  }
  for (std::uint8_t j = 0; j < n; ++j)
    g.memo_factor[j] = sum[j] > 0 ? visit_mean_[slots[j]] / static_cast<double>(sum[j]) : -1.0;
  g.memo_head = 0;
  g.memo_size = n;
  return x > 0 ? visit_mean_[slot] / static_cast<double>(x) : -1.0;
}

MatchRecorder::MatchRecorder(const Definitions& defs, const LocalTrace& trace)
    : defs_(defs), trace_(trace) {
  sent.resize(trace.size());
  lr.resize(trace.size());
  recvd.resize(trace.size());
  // Held through the later phases: not grown by doubling. Each side's tables are sized by the
  // trace's message events (its sends and receives together: every one of them matched in a
  // complete trace), a bound for either side whose pages beyond that side's own count are
  // never written, so never resident; counting each side's events took two passes over every
  // event's kind.
  const std::size_t messages = trace.p2p.size();
  send_request.reserve(messages);
  send_dest.reserve(messages);
  recv_sender.reserve(messages);
  recv_source.reserve(messages);
  recv_ready.reserve(messages);
  // Late Receiver entries: at most one per send.
  late_before.reserve(messages);
}

void MatchRecorder::collectives(const CollInstance* inst, const CollTiming* timing,
                                std::size_t n) {
  if (rules.empty()) rules.reserve(trace_.coll.size() + 2);  // + Init, Finalize
  for (std::size_t j = 0; j < n; ++j)
    rules.push_back(classify_instance(defs_, trace_, inst[j], timing[j]));
}

void MatchRecorder::receives(const MatchedRecv* m, std::size_t n, EventIdx) {
  for (std::size_t i = 0; i < n; ++i) {
    recvd.set(m[i].event);
    recv_sender.push_back(m[i].send.event);
    recv_source.push_back(m[i].send.rank);
    recv_ready.push_back(
        ready_times.encode(m[i].event, trace_.time[m[i].event], m[i].send.call_enter));
  }
}

void MatchRecorder::sends(const MatchedSend* m, std::size_t n, EventIdx) {
  for (std::size_t i = 0; i < n; ++i) {
    sent.set(m[i].event);
    send_request.push_back(m[i].recv.request_event);
    send_dest.push_back(m[i].recv.rank);
    EventIdx attach = kNoEvent;
    if (late_receiver_binds(m[i].event, m[i].recv.request_enter, attach)) {
      lr.set(m[i].event);
      late_before.push_back(
          ready_times.encode(attach, trace_.time[attach], m[i].recv.request_enter));
    }
  }
}

CPREPLAY_BIT_LOOPS void MatchRecorder::resolve_peers() {
  if (resolved_) return;
  resolved_ = true;
  send_dest.finish();
  recv_source.finish();
  late.reserve(late_before.size());
  std::size_t k = 0;
  for (EventIdx e = sent.next(0); e != kNoEvent && k < late_before.size(); e = sent.next(e + 1))
    if (lr.test(e)) late.push_back(LateEntry{binding_completion(e), late_before[k++]});
  std::vector<std::int32_t>().swap(late_before);
}

void RankRetimer::take_matches(MatchRecorder& m) {
  m.resolve_peers();
  sent_ = std::move(m.sent);
  lr_ = std::move(m.lr);
  recvd_ = std::move(m.recvd);
  send_request_ = std::move(m.send_request);
  send_dest_ = std::move(m.send_dest);
  recv_sender_ = std::move(m.recv_sender);
  recv_source_ = std::move(m.recv_source);
  recv_ready_ = std::move(m.recv_ready);
  late_ = std::move(m.late);
  ready_times_ = std::move(m.ready_times);
  // Room for the collectives' and cuts' entries to come (prepare_finish).
  ready_.reserve(ready_.size() + colls_.size() + infos_.size() + 2);
}

bool MatchRecorder::late_receiver_binds(EventIdx s, Ticks request_enter, EventIdx& attach) const {
  EventIdx c = s;
  if (trace_.kind[s] == EventKind::Isend) {
    c = trace_.message(s).partner;
    if (c == kNoEvent || trace_.kind[c] != EventKind::IsendComplete) return false;
  }
  // The sends a multi-wait call completes come one after another: its Leave found once, and
  // the later ones lie in it without a call_of where no region opens inside it (LastCall).
  const EventIdx before = last_call_.enter;
  const EventIdx call = last_call_.of(trace_, c);
  if (call == kNoEvent) return false;
  if (call != before) last_class_ = defs_.region(trace_.region_of(call)).mpi_class;
  const MpiClass cls = last_class_;
  if (cls != MpiClass::Send && cls != MpiClass::WaitSingle && cls != MpiClass::WaitMulti)
    return false;
  const EventIdx leave = last_call_.leave;
  if (leave == kNoEvent || !(trace_.time[leave] > request_enter)) return false;
  attach = trace_.kind[s] == EventKind::Send ? leave : c;
  return true;
}

CPREPLAY_BIT_LOOPS SendNote RankRetimer::send_note(std::size_t i) const {
  // The notes go out in order: the send after the previous note's is the next set bit.
  const EventIdx s = i == note_i_ + 1 && note_e_ != kNoEvent
                         ? sent_.next(note_e_ + 1)
                         : sent_.select(static_cast<std::uint32_t>(i));
  note_i_ = i;
  note_e_ = s;
  const EventIdx attach = lr_.test(s) ? late_[lr_.rank(s)].event : kNoEvent;
  return SendNote{send_dest_[i], send_request_[i],
                  static_cast<std::uint32_t>(candidate_segment(s)),
                  attach == kNoEvent ? UINT32_MAX
                                     : static_cast<std::uint32_t>(candidate_segment(attach))};
}

CPREPLAY_BIT_LOOPS void RankRetimer::take_send_note(const SendNote& note) {
  if (note.request >= trace_.size()) return;
  const std::size_t request = candidate_segment(note.request);
  if (note.attach != UINT32_MAX) {
    separate(note.attach, request);  // Late Receiver
    // Only a request whose send binds ships its call's Enter (forward) and hears back.
    lr_req_.set(note.request);
  }
  EventIdx completion = note.request;
  if (trace_.kind[note.request] == EventKind::IrecvRequest) completion = trace_.ref[note.request];
  if (completion < trace_.size() && recvd_.test(completion))
    separate(note.send, candidate_segment(completion));  // the receive waits
}

MemberNote RankRetimer::member_note(std::size_t i) const {
  const CollEntry& c = colls_[i];
  return MemberNote{host_of(c.comm, c.k), c.comm, c.k,
                    static_cast<std::uint32_t>(candidate_segment(c.begin))};
}

void RankRetimer::take_member_note(const MemberNote& m) {
  auto it = span_.emplace((std::uint64_t{m.comm} << 32) | m.k,
                          std::make_pair(m.segment, m.segment))
                .first;
  it->second.first = std::min(it->second.first, m.segment);
  it->second.second = std::max(it->second.second, m.segment);
}

void RankRetimer::separate_members() {
  for (const auto& [key, sp] : span_) separate(sp.first, sp.second);
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>().swap(span_);
  colls_.clear();
}

void RankRetimer::prepare_begin() {
  const std::size_t n = trace_.size();
  // A master's message bits come with its matching (take_matches), sized already: not twice at
  // the preparation's peak.
  if (thread_ != 0) {
    sent_.resize(n);
    lr_.resize(n);
    recvd_.resize(n);
  }
  sync_.resize(n);
  lr_req_.resize(n);
}

bool RankRetimer::prepare_candidates(CollectiveTable table) {
  table_ = std::move(table);
  const std::uint32_t ncomms = static_cast<std::uint32_t>(defs_.comms.size());
  best_ = UINT32_MAX;
  std::size_t best_count = 0;
  for (std::uint32_t c = 0; c <= ncomms; ++c)
    if (world_like(c) && table_.on(c).size() > best_count) {
      best_ = c;
      best_count = table_.on(c).size();
    }
  for (const InstanceInfo& info : infos_)
    if (info.entry.comm == best_) cands_.push_back(&info);
  std::sort(cands_.begin(), cands_.end(), [](const InstanceInfo* a, const InstanceInfo* b) {
    return a->entry.k < b->entry.k;
  });
  return cands_.size() == best_count;
}

void RankRetimer::prepare_messages(bool complete) {
  if (!complete) cands_.clear();
  for (const InstanceInfo* c : cands_) {
    cand_end_.push_back(c->entry.end);
    cand_m_.push_back(c->latest_begin);
    disq_.push_back(c->reset_ok ? 0 : 1);
  }
  // candidate_segment by counting, not searching (the notes ask it for every message).
  cand_bits_.resize(trace_.size());
  for (const EventIdx end : cand_end_) cand_bits_.set(end);
  cand_bits_.finish();
  // (2) Messages, matched as the forward replay matches them (the driver; take_matches).
}

void RankRetimer::prepare_separate() {
  sent_.finish();
  lr_.finish();
  recvd_.finish();
  for (const InstanceInfo& info : infos_)
    if (info.entry.type != Bind::None && info.entry.comm != best_) colls_.push_back(info.entry);
}

namespace {

/// Sorts by event, in place: by the top 11 bits first (American flag sort: each entry swapped
/// straight into its bucket), then each bucket by std::sort. Not stable: entries of one event
/// may change their order, which nothing depends on (their ready times are reduced by max).
/// In place because the ready times are the preparation's largest table: a radix sort's copy
/// of them was what-if's peak (2.5 MB per process on the bench reference trace).
template <class Entry>
void sort_by_event(std::vector<Entry>& v) {
  if (v.size() < 2) return;
  EventIdx top = 0;
  for (const Entry& r : v) top = std::max<EventIdx>(top, r.event);
  int bits = 0;
  while (bits < 32 && (top >> bits) != 0) ++bits;
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  const int shift = bits > kBits ? bits - kBits : 0;
  const auto digit = [shift](const Entry& r) { return static_cast<std::size_t>(r.event >> shift); };
  std::vector<std::size_t> next(kBuckets + 1, 0), end(kBuckets, 0);
  for (const Entry& r : v) ++next[digit(r) + 1];
  for (std::size_t b = 0; b < kBuckets; ++b) {
    next[b + 1] += next[b];
    end[b] = next[b + 1];
  }
  for (std::size_t b = 0; b < kBuckets; ++b)
    while (next[b] < end[b]) {
      Entry x = v[next[b]];
      for (std::size_t d = digit(x); d != b; d = digit(x)) std::swap(x, v[next[d]++]);
      v[next[b]++] = x;
    }
  if (shift == 0) return;  // one event per bucket
  const auto by_event = [](const Entry& a, const Entry& b) { return a.event < b.event; };
  std::size_t from = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (end[b] - from > 1)
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(from),
                v.begin() + static_cast<std::ptrdiff_t>(end[b]), by_event);
    from = end[b];
  }
}

}  // namespace

CPREPLAY_BIT_LOOPS void RankRetimer::prepare_finish(const std::vector<std::uint8_t>& disq) {
  const std::size_t n = trace_.size();
  for (std::size_t j = 0; j < cands_.size(); ++j)
    if (!disq[j]) {
      resets_.push_back(cand_end_[j]);
      reset_m_.push_back(static_cast<Clk>(cand_m_[j]));
      CollEntry e = cands_[j]->entry;
      e.type = Bind::Reset;
      colls_.push_back(e);
      ready_.push_back(Ready{e.end, cand_m_[j]});
    }
  std::vector<const InstanceInfo*>().swap(cands_);
  std::vector<EventIdx>().swap(cand_end_);
  cand_bits_ = EventBits{};
  std::vector<Ticks>().swap(cand_m_);
  std::vector<std::uint8_t>().swap(disq_);
  if (!team_.empty()) prepare_openmp();
  // (5) The instances the replay handles, in event order.
  for (const InstanceInfo& info : infos_)
    if (info.entry.type != Bind::None &&
        !(info.entry.comm == best_ &&
          std::binary_search(resets_.begin(), resets_.end(), info.entry.end))) {
      colls_.push_back(info.entry);
      if (info.entry.binds) ready_.push_back(Ready{info.entry.end, info.ready});
    }
  std::vector<InstanceInfo>().swap(infos_);
  std::sort(colls_.begin(), colls_.end(),
            [](const CollEntry& a, const CollEntry& b) { return a.end < b.end; });
  // (6) Each synchronization's original completion time: its end minus the latest original
  // ready time (its own previous event, or what the rules say it waits for). The receives come
  // in event order from their bits; the other entries, sorted, are merged with them.
  sort_by_event(ready_);
  sort_by_event(late_);
  // The completions of one call bind at its first one: entries are mapped to it in event order
  // and the entries of one event combined (the latest ready time).
  EventIdx call = kNoEvent, first = kNoEvent;
  LastCall calls;  // call_of for the entries, in event order
  EventIdx cur = kNoEvent;
  Ticks cur_ready = 0;
  auto settle = [&] {
    if (cur == kNoEvent || cur == 0 || cur >= n) return;
    const Ticks ready = std::max(cur_ready, trace_.time[cur - 1]);
    sync_.set(cur);
    gap_.push_back(T(cur) - static_cast<Clk>(ready));
  };
  auto take = [&](EventIdx e, Ticks time) {
    if (e < n && completion(trace_.kind[e])) {
      const EventIdx c = calls.of(trace_, e);
      if (c != call) {
        call = c;
        first = e;
      }
      e = first;
    }
    if (e == cur) {
      cur_ready = std::max(cur_ready, time);
      return;
    }
    settle();
    cur = e;
    cur_ready = time;
  };
  // Three streams in event order: the receives, the Late Receivers, the rest.
  std::size_t i = 0, k = 0;
  auto take_before = [&](EventIdx x) {
    for (;;) {
      const EventIdx a = i < ready_.size() ? ready_[i].event : kNoEvent;
      const EventIdx b = k < late_.size() ? late_[k].event : kNoEvent;
      if (std::min(a, b) >= x) return;
      if (a <= b) {
        take(a, ready_[i].time);
        ++i;
      } else {
        take(b, ready_times_.decode(b, trace_.time[b], late_[k].before));
        ++k;
      }
    }
  };
  std::uint32_t j = 0;
  for (EventIdx r = recvd_.next(0); r != kNoEvent; r = recvd_.next(r + 1), ++j) {
    take_before(r);
    take(r, ready_times_.decode(r, trace_.time[r], recv_ready_[j]));
  }
  take_before(kNoEvent);
  for (; i < ready_.size(); ++i) take(ready_[i].event, ready_[i].time);  // events kNoEvent
  settle();
  sync_.finish();
  std::vector<Ready>().swap(ready_);
  std::vector<std::int32_t>().swap(recv_ready_);
  std::vector<LateEntry>().swap(late_);
  ready_times_.release();
}

void RankRetimer::part_visits() {
  const std::size_t nparts = part_count();
  std::vector<std::uint32_t>().swap(part_vis_first_);
  std::vector<OpenVisit>().swap(part_vis_);
  std::vector<std::pair<std::uint32_t, EventIdx>> open;
  open.swap(part_open_);
  if (B_ == 0 || nparts <= 1 || open.empty()) return;
  part_vis_first_.assign(nparts + 1, 0);
  // A visit open at several part starts is walked once.
  std::unordered_map<EventIdx, double> known;
  for (const auto& [part, enter] : open) {
    const int slot = slot_of_[trace_.ref[enter]];
    if (slot < 0) continue;
    auto it = known.find(enter);
    if (it == known.end()) it = known.emplace(enter, visit_factor(enter, slot)).first;
    part_vis_.push_back(OpenVisit{slot, it->second});
    ++part_vis_first_[part + 1];
  }
  for (std::size_t s = 0; s < nparts; ++s) part_vis_first_[s + 1] += part_vis_first_[s];
  if (part_vis_.empty()) {
    std::vector<std::uint32_t>().swap(part_vis_first_);
  } else {
    part_vis_.shrink_to_fit();
  }
}

bool RankRetimer::world_like(std::uint32_t c) const {
  if (c == defs_.comms.size()) return true;  // MPI_Init/MPI_Finalize
  const Communicator& comm = defs_.comms[c];
  if (comm.is_self || comm.members.size() != static_cast<std::size_t>(defs_.ranks()))
    return false;
  std::vector<Rank> m = comm.members;
  std::sort(m.begin(), m.end());
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m[i] != static_cast<Rank>(i)) return false;
  return true;
}

namespace {

/// Rank `me`'s rank in communicator `comm` (the pseudo communicator of MPI_Init/Finalize: its
/// world rank).
std::uint32_t local_rank_in(const Definitions& defs, std::uint32_t comm, Rank me) {
  if (comm == defs.comms.size()) return static_cast<std::uint32_t>(me);
  const Communicator& c = defs.comms[comm];
  if (c.is_self) return 0;
  for (std::size_t i = 0; i < c.members.size(); ++i)
    if (c.members[i] == me) return static_cast<std::uint32_t>(i);
  return 0;
}

}  // namespace

InstanceInfo classify_instance(const Definitions& defs, const LocalTrace& trace,
                               const CollInstance& inst, const CollTiming& t) {
  const Rank me = trace.rank;
  InstanceInfo info;
  CollEntry& c = info.entry;
  c.begin = inst.begin;
  c.end = inst.end;
  c.comm = inst.comm;
  c.k = inst.index;
  c.local = local_rank_in(defs, inst.comm, me);
  info.latest_begin = t.latest_begin;
  if (!analyzed(defs, trace, inst) || t.comm_size <= 1) return info;
  std::uint64_t sent = 0, received = 0;
  if (trace.kind[inst.end] == EventKind::CollEnd) {
    sent = trace.coll_sent(inst.end);
    received = trace.coll_received(inst.end);
  }
  const bool payload = sent > 0 || received > 0;
  const Ticks b = trace.time[inst.begin];
  switch (inst.kind) {
    case CollKind::Barrier: case CollKind::Init: case CollKind::Finalize:
      c.type = Bind::All;
      c.binds = true;
      break;
    case CollKind::NxN:
      if (t.earliest_end > t.latest_begin) {
        c.type = Bind::All;
        c.binds = payload;
      } else if (t.has_sender) {
        c.type = Bind::Senders;
        c.binds = payload &&
                  (t.latest_sender == me || (received > 0 && b < t.latest_sender_begin));
      }
      break;
    case CollKind::OneToN:
      if (t.root_sent > 0) {
        c.type = Bind::Root;
        c.binds = me != t.root && received > 0;
      }
      break;
    case CollKind::NToOne:
      if (t.root_received > 0 && t.has_sender) {
        c.type = Bind::Senders;
        c.binds = me == t.root;
      }
      break;
    case CollKind::Scan:
      if (t.has_sender) {
        c.type = Bind::Scan;
        c.binds = payload && t.scan_has_sender;
      }
      break;
    default:
      break;
  }
  switch (c.type) {
    case Bind::All: info.ready = t.latest_begin; break;
    case Bind::Senders: info.ready = t.latest_sender_begin; break;
    case Bind::Root: info.ready = t.root_begin; break;
    case Bind::Scan: info.ready = t.scan_latest_begin; break;
    default: break;
  }
  switch (c.type) {
    case Bind::All: c.source = c.up = true; break;
    case Bind::Senders: case Bind::Scan: c.source = sent > 0; c.up = true; break;
    case Bind::Root: c.source = c.up = me == t.root; break;
    default: break;
  }
  // A cut: everybody waits for the latest begin, right after its own begin (the part after
  // it then starts at that latest begin plus each rank's own completion time, also where a
  // skewed clock puts the end before it).
  // An N x N whose end a skewed clock puts before the latest begin has partial overlap by
  // the rules; when every member sent and waits, it still waits for the latest of all.
  info.reset_ok = c.binds && inst.end == inst.begin + 1 &&
                  (c.type == Bind::All ||
                   (c.type == Bind::Senders && inst.kind == CollKind::NxN && sent > 0));
  return info;
}

}  // namespace cpreplay::replay::detail::retiming
