// SPDX-License-Identifier: BSD-3-Clause
// Trace-model helpers: role/paradigm names, scout's MPI name classification, the call tree.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay {

const char* role_name(RegionRole role) {
  // PEARL's strings (they end up in the Cube report and drive the time-breakdown masks).
  static const char* const kNames[] = {
      "unknown", "function", "wrapper", "loop", "code", "parallel", "sections", "section",
      "workshare", "single", "single sblock", "master", "critical", "critical sblock", "atomic",
      "barrier", "implicit barrier", "flush", "ordered", "ordered sblock", "task", "task create",
      "task wait", "one2all", "all2one", "all2all", "other collective", "file io", "point2point",
      "rma", "data transfer", "artificial", "thread create", "thread wait", "untied task",
      "allocate", "deallocate", "reallocate", "file io metadata"};
  const auto i = static_cast<std::size_t>(role);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

const char* paradigm_name(Paradigm paradigm) {
  static const char* const kNames[] = {
      "unknown", "user", "compiler", "openmp", "mpi", "cuda", "measurement", "pthread", "hmpp",
      "ompss", "hardware", "gaspi", "upc", "shmem", "winthread", "qtthread", "acethread",
      "tbbthread", "openacc", "opencl", "mtapi", "sampling", "none", "hip", "kokkos", "io"};
  const auto i = static_cast<std::size_t>(paradigm);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

MpiClass classify_mpi_region(const std::string& file, const std::string& name) {
  // scalasca-metrics.md §2.3: an MPI region is one whose source file is "MPI".
  if (file != "MPI") return MpiClass::None;
  if (name.size() < 4 || name.compare(0, 4, "MPI_") != 0) return MpiClass::Other;
  std::string n = name.substr(4);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "init" || n == "init_thread") return MpiClass::Init;
  if (n == "finalize") return MpiClass::Finalize;
  if (n.compare(0, 8, "sendrecv") == 0) return MpiClass::SendRecv;
  if (n == "send" || n == "ssend") return MpiClass::Send;
  if (n.find("send") != std::string::npos) return MpiClass::OtherSend;
  if (n.find("recv") != std::string::npos) return MpiClass::Recv;
  if (n == "wait" || n == "waitany") return MpiClass::WaitSingle;
  if (n == "waitall" || n == "waitsome") return MpiClass::WaitMulti;
  if (n == "test" || n == "testany" || n == "testall" || n == "testsome") return MpiClass::Test;
  return MpiClass::Other;
}

void TimeColumn::truncate(std::size_t n) {
  off_.resize(n);
  base_.resize((n + kBlockMask) >> kBlockBits);
  for (auto it = far_.begin(); it != far_.end();)
    it = it->first >= n ? far_.erase(it) : std::next(it);
}

std::size_t TimeColumn::upper_bound(Ticks t) const {
  std::size_t lo = 0, hi = size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if ((*this)[static_cast<EventIdx>(mid)] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::uint32_t MessageRecords::push_back(const P2pRecord& r) {
  const Channel c{r.comm, r.peer, r.tag};
  std::uint32_t channel = last_;
  if (channel == UINT32_MAX || !(channels_[channel] == c)) {
    auto it = index_.find(c);
    if (it != index_.end()) {
      channel = it->second;
    } else {
      channel = static_cast<std::uint32_t>(channels_.size());
      channels_.push_back(c);
      if (index_.size() < kIndexedChannels) index_.emplace(c, channel);
    }
    last_ = channel;
  }
  const auto slot = static_cast<std::uint32_t>(recs_.size());
  recs_.push_back(Packed{channel, r.partner, r.length});
  return slot;
}

std::size_t MessageRecords::bytes_used() const {
  return recs_.size() * sizeof(Packed) + channels_.capacity() * sizeof(Channel) +
         index_.size() * (sizeof(Channel) + sizeof(std::uint32_t) + 2 * sizeof(void*));
}

void LocalTrace::truncate(std::size_t n) {
  if (n >= size()) return;
  forget_calls();
  time.truncate(n);
  kind.truncate(n);
  ref.resize(n);
  std::size_t p2p_kept = 0, coll_kept = 0;
  for (EventIdx e = 0; e < n; ++e) {
    switch (kind[e]) {
      case EventKind::Send:
      case EventKind::Isend:
      case EventKind::Recv:
      case EventKind::Irecv: {
        const EventIdx partner = p2p[ref[e]].partner;
        if (partner != kNoEvent && partner >= n) p2p.set_partner(ref[e], kNoEvent);
        p2p_kept = ref[e] + std::size_t{1};
        break;
      }
      case EventKind::IrecvRequest:
        if (ref[e] != kNoEvent && ref[e] >= n) ref[e] = kNoEvent;
        break;
      case EventKind::CollBegin:
      case EventKind::CollEnd:
        coll_kept = ref[e] + std::size_t{1};
        break;
      default:
        break;
    }
  }
  p2p.resize(p2p_kept);
  for (auto it = long_messages.begin(); it != long_messages.end();)
    it = it->first >= p2p_kept ? long_messages.erase(it) : std::next(it);
  coll.resize(coll_kept);
  for (auto it = long_coll_bytes.begin(); it != long_coll_bytes.end();)
    it = it->first / 2 >= coll_kept ? long_coll_bytes.erase(it) : std::next(it);
}

LocalTrace::CachedCall& LocalTrace::cache_slot(EventIdx enter) const {
  for (CachedCall& c : cached_)
    if (c.enter == enter) return c;
  CachedCall& c = cached_[next_cached_];
  next_cached_ = (next_cached_ + 1) % kCachedCalls;
  c = CachedCall{enter, enter, kNoEvent, kNoEvent};
  return c;
}

void LocalTrace::forget_calls() const {
  for (CachedCall& c : cached_) c = CachedCall{};
  std::vector<EventIdx>().swap(call_marks_);
  std::vector<EventIdx>().swap(mark_stack_);
}

void LocalTrace::extend_marks() const {
  constexpr EventIdx kStride = EventIdx{1} << kMarkBits;
  const auto full = static_cast<EventIdx>((size() >> kMarkBits) << kMarkBits);
  for (auto i = static_cast<EventIdx>(call_marks_.size() << kMarkBits); i < full; ++i) {
    const EventKind k = kind[i];
    if (k == EventKind::Enter)
      mark_stack_.push_back(i);
    else if (k == EventKind::Leave && !mark_stack_.empty())
      mark_stack_.pop_back();
    if ((i & (kStride - 1)) == kStride - 1)
      call_marks_.push_back(mark_stack_.empty() ? kNoEvent : mark_stack_.back());
  }
}

EventIdx LocalTrace::call_of(EventIdx e) const {
  if (e > 0 && kind[e - 1] == EventKind::Enter) return e - 1;  // the common case: first event
  // The next most common: a few events into an MPI call (a waitall's later completions). An
  // Enter reached back without passing an Enter or Leave is the innermost open region.
  for (EventIdx i = e, steps = 0; i-- > 0 && steps < 8; ++steps) {
    const EventKind k = kind[i];
    if (k == EventKind::Enter) return i;
    if (k == EventKind::Leave) break;
  }
  for (const CachedCall& c : cached_)
    if (c.enter != kNoEvent && c.enter < e && (e <= c.inside || e == c.point)) return c.enter;
  // Back to the innermost open Enter, skipping closed regions. Every event passed outside them
  // (depth 0, neither Enter nor Leave) lies directly in the region e lies in: one a cached call
  // is known to hold answers at once. Without that, a lookup after a loop of closed regions
  // (a fork in the main loop, say) would scan back to the region's Enter every time.
  // Far from a mark (the mark after event i: the region open there; i + 1 == e is the plain
  // lookup), and marks built once the scan is long enough to need them.
  if (call_marks_.size() < (static_cast<std::size_t>(e) >> kMarkBits) &&
      e >= (EventIdx{4} << kMarkBits))
    extend_marks();
  int depth = 0;
  bool flat = true;  // no Enter/Leave passed: (i, e] all lie directly in the region
  for (EventIdx i = e; i-- > 0;) {
    constexpr EventIdx kMask = (EventIdx{1} << kMarkBits) - 1;
    if ((i & kMask) == kMask && (i >> kMarkBits) < call_marks_.size() && i + 1 < e) {
      // Events (i, e) left `depth` regions of those open after i, the innermost of which is
      // marked: the answer is its depth-th enclosing call.
      EventIdx open = call_marks_[i >> kMarkBits];
      for (; depth > 0 && open != kNoEvent; --depth) open = call_of(open);
      if (open != kNoEvent) cache_slot(open).point = e;
      return open;
    }
    const EventKind k = kind[i];
    if (k == EventKind::Leave) {
      ++depth;
      flat = false;
    } else if (k == EventKind::Enter) {
      if (depth == 0) {
        CachedCall& c = cache_slot(i);
        if (flat) c.inside = e;
        else c.point = e;
        return i;
      }
      --depth;
      flat = false;
    } else if (depth == 0) {
      for (CachedCall& c : cached_)
        if (c.enter != kNoEvent && c.enter < i && (i <= c.inside || i == c.point)) {
          if (flat && i == c.inside)
            c.inside = e;
          else
            c.point = e;
          return c.enter;
        }
    }
  }
  return kNoEvent;
}

EventIdx LocalTrace::leave_of(EventIdx enter) const {
  // The common case first: the Leave a few events on (an MPI call's own events, a waitall's
  // completions), found without the cache, whose slots then stay with the long regions.
  constexpr std::size_t kNear = 16;
  const std::size_t after = enter < size() ? size() - enter - 1 : 0;  // events after the Enter
  const auto near_end = static_cast<EventIdx>(enter + 1 + std::min(after, kNear));
  int depth = 0;
  for (EventIdx i = enter + 1; i < size(); ++i) {
    const bool far = i >= near_end;
    // Past a call's own events: a long region's Leave may be cached.
    if (i == near_end)
      for (const CachedCall& c : cached_)
        if (c.enter == enter && c.leave != kNoEvent) return c.leave;
    const EventKind k = kind[i];
    if (k == EventKind::Enter) {
      ++depth;
    } else if (k == EventKind::Leave) {
      if (depth == 0) {
        if (far) cache_slot(enter).leave = i;
        return i;
      }
      --depth;
    }
  }
  return kNoEvent;
}

EventIdx LocalTrace::enter_of(EventIdx leave) const {
  int depth = 0;
  for (EventIdx i = leave; i-- > 0;) {
    const EventKind k = kind[i];
    if (k == EventKind::Leave) {
      ++depth;
    } else if (k == EventKind::Enter) {
      if (depth == 0) return i;
      --depth;
    }
  }
  return kNoEvent;
}

std::size_t LocalTrace::bytes_used() const {
  return time.bytes_used() + kind.bytes_used() +
         ref.capacity() * sizeof(std::uint32_t) + p2p.bytes_used() +
         coll.size() * sizeof(CollRecord) + locks.size() * sizeof(LockRecord);
}

std::uint32_t CallTree::lookup_or_add(std::uint64_t key, CallpathId parent, RegionId region) {
  // Looked up first: emplace would allocate a node per call (one per Enter event while reading).
  if (const auto it = index_.find(key); it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  index_.emplace(key, id);
  nodes_.push_back(Node{region, parent});
  return id;
}

std::vector<std::vector<std::uint32_t>> CallTree::children() const {
  std::vector<std::vector<std::uint32_t>> result(nodes_.size());
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].parent.valid()) result[nodes_[i].parent.value].push_back(i);
  return result;
}

}  // namespace cpreplay
