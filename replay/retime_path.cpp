// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, the profiled clock's critical path: the hops recorded by the forward
// replay resolved backward from the run's last event, across ranks and a rank's threads, and each
// stretch's time credited to its call paths.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpreplay/error.hpp"
#include "replay/rank_retimer.hpp"
#include "replay/rounding.hpp"

namespace cpreplay::replay::detail::retiming {

EventIdx RankRetimer::hop_target(const HopTarget& t, Rank source) const {
  EventIdx y = kNoEvent;
  switch (t.kind) {
    case Hop::kCallOf:
      if (t.a < trace_.size()) y = trace_.call_of(t.a);
      break;
    case Hop::kBegin:
      if (t.b < table_.on(t.a).size()) {
        const EventIdx end = table_.on(t.a)[t.b];
        y = trace_.kind[end] == EventKind::CollEnd ? trace_.coll[trace_.ref[end]].begin
                                                   : trace_.enter_of(end);
      }
      break;
    default:
      if (t.a < resets_.size()) y = resets_[t.a] - 1;
  }
  if (y == kNoEvent || y >= trace_.size())
    throw ReplayError(defs_.anchor_path + ": " + where() +
                      ": the re-timed run's critical path comes from rank " +
                      std::to_string(source) + " to an event it does not have");
  return y;
}

std::uint32_t RankRetimer::resolve(RankRetimer* at, EventIdx y) {
  std::vector<std::pair<RankRetimer*, std::uint32_t>>& trail = trail_;
  trail.clear();
  std::uint32_t result = UINT32_MAX;
  for (;;) {
    const std::uint32_t m = at->hop_before(y);
    const std::uint32_t t = latest_bit_before(at->thread_hop_, y);
    const EventIdx x = t == UINT32_MAX ? kNoEvent : at->thread_hop_.select(t);
    if (t == UINT32_MAX || (m != UINT32_MAX && at->hops_[m].event > x)) {
      result = m;
      break;
    }
    std::uint32_t& memo = at->thread_memo_[t];
    if (memo == kVisiting)
      throw ReplayError(defs_.anchor_path + ": " + at->where() + ", event " +
                        std::to_string(x) +
                        ": the re-timed run's critical path comes back here (a cycle)");
    if (memo != kUnknown) {
      result = memo == kNowhere ? UINT32_MAX : memo;
      break;
    }
    memo = kVisiting;
    trail.emplace_back(at, t);
    const GateFrom h = at->thread_hop_at(x);
    at = &thread_location(h.thread);
    y = h.event;
  }
  for (const auto& [loc, t] : trail)
    loc->thread_memo_[t] = result == UINT32_MAX ? kNowhere : result;
  return result;
}

void RankRetimer::credit_from(RankRetimer* at, EventIdx y) {
  for (;;) {
    const std::uint32_t m = at->hop_before(y);
    const std::uint32_t t = latest_bit_before(at->thread_hop_, y);
    const EventIdx x = t == UINT32_MAX ? kNoEvent : at->thread_hop_.select(t);
    if (t == UINT32_MAX || (m != UINT32_MAX && at->hops_[m].event > x)) {
      at->credit(m == UINT32_MAX ? kNoEvent : at->hops_[m].event, y);
      return;
    }
    const GateFrom h = at->thread_hop_at(x);
    at->credit(x, y);
    at = &thread_location(h.thread);
    y = h.event;
  }
}

void RankRetimer::path_begin() {
  auto by_event = [](const auto& a, const auto& b) { return a.event < b.event; };
  std::sort(hops_.begin(), hops_.end(), by_event);
  if (!thread_hop_.empty()) {
    thread_hop_.finish();
    thread_memo_.assign(thread_hop_.rank(static_cast<EventIdx>(trace_.size())), kUnknown);
  }
  factor_.assign(tree_.size(), 1.0);
  for (std::size_t c = 0; c < tree_.size(); ++c)
    for (std::uint32_t i = change_begin_[c]; i < change_begin_[c + 1]; ++i)
      if (mods_[i].clock == static_cast<std::uint32_t>(path_) && mods_[i].slot < 0)
        factor_[c] = mods_[i].factor;
  profile_.assign(tree_.size(), 0);
}

void RankRetimer::credit(EventIdx x, EventIdx y) {
  EventIdx i = 1;
  if (x != kNoEvent) {
    const std::uint32_t cp = activity_path(x);
    if (cp != UINT32_MAX && sync_.test(x))
      profile_[cp] += std::max<Clk>(
          round_half_away(static_cast<double>(gap_[sync_.rank(x)]) * factor_[cp]), 0);
    i = x + 1;
  }
  for (; i <= y && i < trace_.size(); ++i) {
    const std::uint32_t cp = activity_path(i);
    if (cp == UINT32_MAX) continue;
    const bool sync = sync_.test(i) && !released_forward(i);
    const Clk d = sync ? std::max<Clk>(gap_[sync_.rank(i)], 0) : T(i) - T(i - 1);
    profile_[cp] += std::max<Clk>(round_half_away(static_cast<double>(d) * factor_[cp]), 0);
  }
}

void RankRetimer::path_end(std::vector<double>& out) {
  release_hops();
  for (const RankRetimer* w : team_)
    for (std::size_t c = 0; c < profile_.size(); ++c) profile_[c] += w->profile_[c];
  for (std::size_t c = 0; c < profile_.size(); ++c) out.push_back(seconds(profile_[c]));
  std::vector<Clk>().swap(profile_);
}

void RankRetimer::thread_path_end() {
  release_hops();
  std::vector<Clk>().swap(profile_);
}

void RankRetimer::release_hops() {
  std::vector<Hop>().swap(hops_);
  thread_hop_ = EventBits{};
  std::vector<GateFrom>().swap(gate_from_);
  std::vector<std::uint32_t>().swap(thread_memo_);
}

}  // namespace cpreplay::replay::detail::retiming
