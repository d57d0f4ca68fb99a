// SPDX-License-Identifier: BSD-3-Clause
// Delay costs and wait-state classes as Scalasca 2.6's bwc/fwc passes compute them
// (scalasca-metrics.md §8; the rules the spec leaves open are in docs/root-cause.md).
#include "analysis/root_cause.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/openmp.hpp"
#include "cpreplay/error.hpp"
#include "replay/flat_index.hpp"
#include "replay/memory.hpp"
#include "replay/record_exchange.hpp"

namespace cpreplay::analysis {
namespace {

/// The long-term patterns, each with its own cost per wait state (§8.3). OpenMP's two exist in
/// hybrid traces only: pure-MPI runs carry and ship the first kMpiPatterns.
enum Pattern : int { kLs, kLr, kBarrier, kN2n, k12n, kN21, kOmpBarrier, kOmpIdle, kPatterns };
constexpr int kMpiPatterns = kOmpBarrier;
constexpr Metric kShortTerm[kPatterns] = {Metric::DelayLatesender, Metric::DelayLatereceiver,
                                          Metric::DelayBarrier,    Metric::DelayN2n,
                                          Metric::Delay12n,        Metric::DelayN21,
                                          Metric::DelayOmpbarrier, Metric::DelayOmpidle};
constexpr Metric kLongTerm[kPatterns] = {
    Metric::DelayLatesenderLongterm, Metric::DelayLatereceiverLongterm,
    Metric::DelayBarrierLongterm,    Metric::DelayN2nLongterm,
    Metric::Delay12nLongterm,        Metric::DelayN21Longterm,
    Metric::DelayOmpbarrierLongterm, Metric::DelayOmpidleLongterm};
/// Keys of a collective delay: the waiting time, then each pattern's cost.
constexpr int kKeys = 1 + kPatterns;

enum RecordKind : std::uint8_t {
  kLsPartner = 1,   ///< prephase: "your send is the partner of my Late Sender" (+ my leave)
  kLrPartner,       ///< prephase: "your receive request is the partner of my Late Receiver"
  kWaiter,          ///< prephase: "I waited for you in this 1-to-N instance"
  kP2pDelay,        ///< backward: wait, U map and costs of a Late Sender / Late Receiver
  kCollGroup,       ///< backward: the causer's G map and Gw to a member
  kCollReply,       ///< backward: a member's scaled d map and scales to the causer
  kIndirect,        ///< forward: indirect waiting for a Late Sender / Late Receiver event
};

using TimeMap = std::vector<std::pair<std::uint32_t, double>>;  ///< sorted by call path

void put_map(replay::RecordWriter& w, const TimeMap& m) {
  char* p = w.extend(sizeof(std::uint32_t) + m.size() * (sizeof(std::uint32_t) + sizeof(double)));
  p = replay::RecordWriter::put_at(p, static_cast<std::uint32_t>(m.size()));
  for (const auto& [c, v] : m) {
    p = replay::RecordWriter::put_at(p, c);
    p = replay::RecordWriter::put_at(p, v);
  }
}

/// Reads a map into `m`, reusing its storage.
void get_map(replay::RecordReader& r, TimeMap& m) {
  m.resize(r.get<std::uint32_t>());
  for (auto& [c, v] : m) {
    c = r.get<std::uint32_t>();
    v = r.get<double>();
  }
}

double lookup(const TimeMap& m, std::uint32_t c) {
  const auto it = std::lower_bound(m.begin(), m.end(), c,
                                   [](const auto& e, std::uint32_t k) { return e.first < k; });
  return it != m.end() && it->first == c ? it->second : 0.0;
}

/// Entries of a − b that are > 0 (CalculateDiff) into `out`, and their sum. Both maps are sorted
/// by call path: one merge.
void diff(const TimeMap& a, const TimeMap& b, TimeMap& out, double& sum) {
  out.clear();
  sum = 0.0;
  auto it = b.begin();
  for (const auto& [c, v] : a) {
    while (it != b.end() && it->first < c) ++it;
    const double d = v - (it != b.end() && it->first == c ? it->second : 0.0);
    if (d > 0.0) {
      out.emplace_back(c, d);
      sum += d;
    }
  }
}

struct P2pInput {  ///< a Late Sender / Late Receiver the waiting side shipped
  std::uint32_t source_event = 0;
  double wait = 0.0;
  std::array<double, kPatterns> cost{};
  TimeMap u;
};

struct GroupInput {  ///< what the causer of a collective sent a member
  bool individual = false;
  double gw = 0.0;
  TimeMap g;
};

struct PendingCollective {  ///< a causer waiting for its members' replies (or replies early)
  struct Reply {
    Rank member = 0;
    bool individual = false;
    std::uint32_t offset = 0;  ///< its scales (one per key), then its d (one per path), in `values`
  };
  std::size_t expected = 0;
  std::vector<Reply> replies;        ///< in arrival order; applied in member order
  std::vector<double> values;
  std::vector<std::uint32_t> paths;  ///< G's call paths, the order of every reply's vectors
  void clear() {
    expected = 0;
    replies.clear();
    values.clear();
    paths.clear();
  }
};

/// Slots that keep their storage when reused: what is in flight changes every round, and a
/// fresh map or vector per record cost more than the delay arithmetic itself.
template <class T>
class Pool {
 public:
  std::uint32_t take() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<std::uint32_t>(items_.size() - 1);
    }
    const std::uint32_t i = free_.back();
    free_.pop_back();
    return i;
  }
  void give(std::uint32_t i) { free_.push_back(i); }
  T& operator[](std::uint32_t i) { return items_[i]; }

 private:
  std::deque<T> items_;  ///< references stay valid while it grows
  std::vector<std::uint32_t> free_;
};

/// Severities summed exactly, in fixed point: each value is rounded once to a multiple of
/// 2^-64 s (far below a tick), the sums are integers, and each cell is rounded to a double once
/// at the end. The result does not depend on the order the points resolve in, so no point's
/// severities wait for a later point's (scout sums in reverse event order; the two differ by
/// less than 1e-15 relative, docs/root-cause.md). Sparse: only the cells the pass touches.
class ExactSums {
 public:
  void add(Metric m, std::uint32_t callpath, double v) {
    const std::uint64_t key = (static_cast<std::uint64_t>(m) << 32) | callpath;
    std::uint32_t slot = index_.find(key);
    if (slot == replay::FlatIndex::kNone) {
      slot = static_cast<std::uint32_t>(sums_.size());
      sums_.push_back(0);
      keys_.push_back(key);
      index_.set(key, slot);
    }
    sums_[slot] += static_cast<__int128>(std::nearbyint(std::ldexp(v, 64)));
  }
  /// Adds every cell's rounded sum to `sev`.
  void add_to(Severity& sev) const {
    for (std::size_t i = 0; i < sums_.size(); ++i)
      sev.add(static_cast<Metric>(keys_[i] >> 32), static_cast<std::uint32_t>(keys_[i]),
              std::ldexp(static_cast<double>(sums_[i]), -64));
  }

 private:
  replay::FlatIndex index_;
  std::vector<__int128> sums_;
  std::vector<std::uint64_t> keys_;
};

std::uint64_t collective_key(std::uint32_t comm, std::uint32_t instance) {
  return (std::uint64_t{comm} << 32) | instance;
}

/// Which ranks belong to which communicator, as sorted lists built on first use: one table per
/// process, shared by the ranks it holds (nothing per pair of ranks).
class MemberSets {
 public:
  explicit MemberSets(const Definitions& defs) : defs_(defs), sorted_(defs.comms.size()) {}
  /// Whether world rank k belongs to communicator `comm` (a communicator of every rank answers
  /// at once).
  bool contains(std::uint32_t comm, Rank k) {
    if (comm >= defs_.comms.size()) return true;
    auto& sorted = sorted_[comm];
    if (sorted.empty()) {
      sorted = defs_.comms[comm].members;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      if (sorted.empty()) sorted.push_back(-1);  // no members: never a partner
    }
    if (sorted.size() == static_cast<std::size_t>(defs_.ranks())) return k >= 0 && k < defs_.ranks();
    return std::binary_search(sorted.begin(), sorted.end(), k);
  }

 private:
  const Definitions& defs_;
  std::vector<std::vector<Rank>> sorted_;
};

/// A worker thread's OpenMP synchronization point (the master's are SyncPoints). 20 B, packed
/// as SyncPoint is.
#pragma pack(push, 4)
struct OmpPoint {
  Ticks start = 0;            ///< fork point: the master's fork; barrier point: its Enter
  double cut_length = 0.0;    ///< total - completion, as for SyncPoint
  /// A fork point: Enter of the parallel region; a barrier point: Leave of the barrier (the
  /// event's kind tells them apart; its `ref` is the point's call path).
  EventIdx event = kNoEvent;
};
#pragma pack(pop)
static_assert(sizeof(OmpPoint) == 20, "one per worker thread's fork and barrier");

/// One thread's visit of an OpenMP barrier instance. The visits of an instance are adjacent,
/// by thread, the first one flagged. 16 B.
struct BarrierVisit {
  EventIdx enter = kNoEvent;  ///< the barrier's Enter
  EventIdx event = kNoEvent;  ///< the barrier's Leave
  std::uint32_t point = 0;  ///< master: its SyncPoint index (after sorting); worker: omp_points_
  std::uint32_t thread : 31;
  std::uint32_t first : 1;  ///< the instance's first visit
};
static_assert(sizeof(BarrierVisit) == 16, "one per thread's barrier visit");

/// One held rank's side of the backward replay. The driver (root_cause_pass) runs the rounds
/// for all held ranks together: every rank steps, one exchange moves what they produced
/// (records to co-located ranks in memory), every rank takes in what came.
class RootCause {
 public:
  /// Points in flight per rank at most, whatever --window says: the points between the replay's
  /// front and its anchors then stay in the cache. 1,024 was the fastest of 1,024/2,048/4,096 on
  /// the reference trace (0.13-0.15 s against 0.14-0.17 s, bench/RESULTS.md) and the leanest.
  static constexpr std::size_t kMaxWindow = 1024;

  /// `workers` and `worker_sevs`: the rank's threads 1, 2, ... and their severities (hybrid
  /// traces; empty for pure MPI).
  RootCause(const Definitions& defs, const CallTree& tree, const LocalTrace& trace,
            const std::vector<LocalTrace>& workers, std::vector<Severity>* worker_sevs,
            WaitStateResult& waits, Severity& sev, std::size_t window,
            replay::RecordExchange& exchange, MemberSets& members)
      : defs_(defs), tree_(tree), trace_(trace), workers_(workers), worker_sevs_(worker_sevs),
        sev_(sev), me_(trace.rank), exchange_(exchange), members_(members),
        own_(waits.syncpoints), window_(std::clamp<std::size_t>(window, 1, kMaxWindow)),
        hybrid_(defs.hybrid()), patterns_(hybrid_ ? kPatterns : kMpiPatterns),
        thread_delays_(workers.size()) {}

  /// Prephase, before the exchange: tells partners about their partner-side points.
  void post_partners() {
    for (const SyncPoint& sp : own_) {
      if (sp.kind == SyncKind::LateSender || sp.kind == SyncKind::LateReceiver) {
        replay::RecordWriter w(exchange_.to(me_, sp.peer));
        w.put(sp.kind == SyncKind::LateSender ? kLsPartner : kLrPartner);
        w.put(sp.target);
        w.put(leave_time(trace_.call_of(sp.event)));
      } else if (sp.kind == SyncKind::OneToN && sp.causer(me_) != me_) {
        replay::RecordWriter to_root(exchange_.to(me_, sp.causer(me_)));
        to_root.put(kWaiter);
        to_root.put(sp.comm);
        to_root.put(sp.target);
      }
    }
  }

  /// Prephase, after the exchange: the partner points that came (the exchange's blocks can go
  /// once every held rank has read them).
  void take_partners() { add_partner_points(); }

  /// Prephase, last: the OpenMP points, the points in event order, and every consuming
  /// point's interval.
  void plan_points() {
    if (hybrid_) add_openmp_points();
    sort_points();
    if (hybrid_) link_openmp_points();
    for (std::size_t i = 0; i < sps_.size(); ++i) {
      if (is_collective(sps_[i].kind) && sps_[i].kind != SyncKind::Init &&
          sps_[i].kind != SyncKind::Finalize)
        collective_index_.push_back(
            InstancePoint{collective_key(sps_[i].comm, sps_[i].target), static_cast<std::uint32_t>(i)});
    }
    // By key; of two points of one instance the later one counts (as a map's last write).
    std::stable_sort(collective_index_.begin(), collective_index_.end(),
                     [](const InstancePoint& a, const InstancePoint& b) { return a.key < b.key; });
    collective_index_.shrink_to_fit();
    scratch_.assign(tree_.size(), 0);
    wait_scratch_.assign(tree_.size(), 0.0);
    seen_.assign(tree_.size(), 0);
    wait_seen_.assign(tree_.size(), 0);
    parent_.resize(tree_.size());
    for (std::size_t c = 0; c < tree_.size(); ++c) {
      const CallpathId parent = tree_.node(CallpathId{static_cast<std::uint32_t>(c)}).parent;
      parent_[c] = parent.valid() ? parent.value : UINT32_MAX;
    }
    plan();
  }

  std::size_t synchpoints() const { return sps_.size(); }

  /// The delay severities and wait-state classes into the rank's severities, at the end.
  void finish() {
    delays_.add_to(sev_);
    if (worker_sevs_)
      for (std::size_t t = 0; t < thread_delays_.size() && t < worker_sevs_->size(); ++t)
        thread_delays_[t].add_to((*worker_sevs_)[t]);
    classify();
  }

  /// One round's work before the exchange; true if anything happened.
  bool step() { return step_points(); }
  /// What the exchange brought; true if anything came.
  bool receive() { return receive_records(); }
  bool done() const { return flush_ <= 0 && low_ <= 0; }
  /// Skips the points whose records never come (see skip_points); returns how many.
  std::uint64_t skip_stuck() { return skip_points(); }

 private:
  static bool is_collective(SyncKind k) {
    return k != SyncKind::LateSender && k != SyncKind::LateSenderPartner &&
           k != SyncKind::LateReceiver && k != SyncKind::LateReceiverPartner && !is_openmp(k);
  }
  static bool is_openmp(SyncKind k) {
    return k == SyncKind::OmpFork || k == SyncKind::OmpBarrier || k == SyncKind::OmpEnd;
  }

  double span(Ticks a, Ticks b) const {
    return b >= a ? defs_.clock.span(a, b) : -defs_.clock.span(b, a);
  }
  Ticks leave_time(EventIdx call) const {
    const EventIdx leave = trace_.leave_of(call);
    return trace_.time[leave != kNoEvent ? leave : call];
  }

  // ---- Prephase: partner-side points and 1-to-N waiter sets (one exchange) ---------------
  void add_partner_points() {
    std::vector<bool> taken(trace_.size());  // events that are own points already: 1 bit each
    for (const SyncPoint& sp : own_) taken[sp.event] = true;
    // Two reads of what came: the first only counts, so the table is allocated once.
    std::size_t partners = 0;
    read_prephase([&](RecordKind, Rank, EventIdx) { ++partners; }, false);
    // Moved block by block: the deque frees what has been taken, so both never coexist whole.
    sps_.reserve(own_.size() + partners);
    // The deque's blocks sit in slabs of their own (replay::SlabDeque): each slab goes back to
    // the system once its points are moved, so they are not resident twice at the peak.
    while (!own_.empty()) {
      sps_.push_back(own_.front());
      own_.pop_front();
    }
    replay::SlabDeque<SyncPoint>().swap(own_);
    read_prephase(
        [&](RecordKind kind, Rank source, EventIdx event) {
          // The first registration of an event wins (scout's synchpoint map never overwrites).
          if (event >= taken.size() || taken[event]) return;
          const EventIdx call = trace_.call_of(event);
          const Ticks enter = trace_.time[call];
          const Ticks leave = leave_time(call);
          SyncPoint sp;
          sp.kind = kind == kLsPartner ? SyncKind::LateSenderPartner
                                       : SyncKind::LateReceiverPartner;
          sp.cut_length = span(enter, leave) - (leave > their_leave_ ? span(their_leave_, leave) : 0.0);
          sp.event = event;
          sp.callpath = trace_.ref[call];
          sp.peer = source;
          sps_.push_back(sp);
        },
        true);
    for (auto& [key, ranks] : waiters_) std::sort(ranks.begin(), ranks.end());
  }

  /// Reads the prephase records: partner points go to `on_partner` (with their sender's leave in
  /// their_leave_), waiter sets are filled when `waiters` is set.
  template <class F>
  void read_prephase(F&& on_partner, bool waiters) {
    exchange_.for_each_from(me_, [&](Rank source, const char* data, std::size_t bytes) {
      replay::RecordReader r(data, bytes);
      while (!r.done()) {
        const auto kind = r.get<RecordKind>();
        if (kind == kWaiter) {
          const auto comm = r.get<std::uint32_t>();
          const auto instance = r.get<std::uint32_t>();
          if (waiters) waiters_[collective_key(comm, instance)].push_back(source);
          continue;
        }
        const auto event = r.get<EventIdx>();
        their_leave_ = r.get<Ticks>();
        on_partner(kind, source, event);
      }
    });
  }

  /// Event order, stable. The forward replay and the partners' records deliver the points in a
  /// few sorted runs (5 on the reference trace), so the runs are merged pairwise: a few passes
  /// instead of a full sort's log2(n).
  void sort_points() {
    const auto less = [](const SyncPoint& a, const SyncPoint& b) { return a.event < b.event; };
    std::vector<std::size_t> bounds{0};
    for (std::size_t i = 1; i < sps_.size(); ++i)
      if (less(sps_[i], sps_[i - 1])) bounds.push_back(i);
    bounds.push_back(sps_.size());
    while (bounds.size() > 2) {
      std::vector<std::size_t> merged{0};
      for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
        if (r + 2 < bounds.size()) {
          std::inplace_merge(sps_.begin() + static_cast<std::ptrdiff_t>(bounds[r]),
                             sps_.begin() + static_cast<std::ptrdiff_t>(bounds[r + 1]),
                             sps_.begin() + static_cast<std::ptrdiff_t>(bounds[r + 2]), less);
          merged.push_back(bounds[r + 2]);
        } else {
          merged.push_back(bounds[r + 1]);
        }
      }
      bounds.swap(merged);
    }
  }

  // ---- Partner sets (who a synchpoint synchronizes with) -----------------------------------
  const std::vector<Rank>* members(const SyncPoint& sp) const {
    if (sp.kind == SyncKind::Init || sp.kind == SyncKind::Finalize) return nullptr;  // all
    if (sp.comm >= defs_.comms.size()) return nullptr;
    return &defs_.comms[sp.comm].members;
  }

  bool contains(const SyncPoint& sp, Rank k) const {
    switch (sp.kind) {
      case SyncKind::Init:
      case SyncKind::Finalize:
        return true;
      case SyncKind::Barrier:
      case SyncKind::NxN:
        // N x N with partial overlap synchronizes only its syncpoint ranks; the members are
        // used here (docs/root-cause.md, limits).
        return members_.contains(sp.comm, k);
      case SyncKind::OneToN:
        if (sp.causer(me_) == me_) {
          const auto it = waiters_.find(collective_key(sp.comm, sp.target));
          return it != waiters_.end() && std::binary_search(it->second.begin(), it->second.end(), k);
        }
        return k == sp.causer(me_);
      default:
        return k == sp.peer;
    }
  }

  /// Latest synchpoint strictly before `x` that synchronizes with rank k, or -1.
  std::int64_t prev(std::int64_t x, Rank k) const {
    for (std::int64_t j = x - 1; j >= 0; --j)
      if (contains(sps_[j], k)) return j;
    return -1;
  }

  // ---- Time segments (§7.2) ----------------------------------------------------------------
  // runtime(a, x) is read off the events between the two cuts, not stored per synchpoint: an
  // interval is about one iteration of events, so all queries together cost about one more
  // pass over the trace, and nothing per synchpoint is kept (a pooled segment table cost 3.5 MB
  // per rank on the reference trace).

  /// Events where time changes hands: Enter and Leave, and on a hybrid trace's master its
  /// ThreadFork and ThreadJoin (scout's runtime maps give the fork's and the join's management
  /// time to the parallel region, docs/root-cause.md, OpenMP).
  bool is_boundary(EventKind k) const {
    return k == EventKind::Enter || k == EventKind::Leave ||
           (hybrid_ && (k == EventKind::ThreadFork || k == EventKind::ThreadJoin));
  }

  /// The cut of synchpoint x: the last boundary strictly before its event, or -1 (the cut of a
  /// fork point is its ThreadFork).
  std::int64_t cut(std::int64_t x) const {
    if (x < 0) return -1;
    return last_boundary_before(trace_, sps_[x].event);
  }

  std::int64_t last_boundary_before(const LocalTrace& trace, std::size_t event) const {
    for (std::int64_t i = static_cast<std::int64_t>(event) - 1; i >= 0; --i)
      if (is_boundary(trace.kind[static_cast<EventIdx>(i)])) return i;
    return -1;
  }

  /// Where the time of the segment that ends at boundary i goes: the region left, the parent of
  /// the region entered; on the master the time from a fork to the parallel region's Enter, and
  /// from its Leave to the join, to the parallel region (`prev` is the boundary before i).
  std::uint32_t segment_owner(const LocalTrace& trace, EventIdx i, std::int64_t prev) const {
    const EventKind k = trace.kind[i];
    if (k == EventKind::Leave) return trace.ref[i];
    if (k == EventKind::Enter) {
      if (hybrid_ && prev >= 0 && trace.kind[static_cast<EventIdx>(prev)] == EventKind::ThreadFork)
        return trace.ref[i];
      return parent_[trace.ref[i]];
    }
    if (k == EventKind::ThreadJoin)
      return prev >= 0 ? trace.ref[static_cast<EventIdx>(prev)] : UINT32_MAX;
    // ThreadFork: the region it happens in, the parent of the parallel region entered next.
    for (std::size_t e = i + 1; e < trace.size(); ++e)
      if (trace.kind[e] == EventKind::Enter) return parent_[trace.ref[e]];
    return UINT32_MAX;
  }

  /// Adds the exclusive time per call path between boundaries `from` (-1: the first boundary)
  /// and `to` of `trace` into scratch_ (touched_ lists the call paths).
  void add_segments(const LocalTrace& trace, std::int64_t from, std::int64_t to) {
    if (!hybrid_) return add_mpi_segments(trace, from, to);
    std::int64_t prev_el = from;
    for (std::int64_t i = from + 1; i <= to; ++i) {
      const EventKind k = trace.kind[static_cast<EventIdx>(i)];
      if (!is_boundary(k)) continue;
      if (prev_el >= 0) {
        const std::uint32_t target = segment_owner(trace, static_cast<EventIdx>(i), prev_el);
        if (target != UINT32_MAX) {
          const Ticks t0 = trace.time[static_cast<EventIdx>(prev_el)];
          const Ticks t1 = trace.time[static_cast<EventIdx>(i)];
          add_ticks(target, t1 > t0 ? t1 - t0 : 0);
        }
      }
      prev_el = i;
    }
  }

  /// add_segments for pure-MPI traces, where the boundaries are Enter and Leave only (the
  /// events of most intervals): the same sums, each boundary's time decoded once.
  void add_mpi_segments(const LocalTrace& trace, std::int64_t from, std::int64_t to) {
    std::int64_t i = from + 1;
    if (from < 0) {  // the first boundary opens the first segment
      for (i = 0; i <= to; ++i) {
        const EventKind k = trace.kind[static_cast<EventIdx>(i)];
        if (k == EventKind::Enter || k == EventKind::Leave) break;
      }
      if (i > to) return;
      from = i++;
    }
    Ticks t0 = trace.time[static_cast<EventIdx>(from)];
    for (; i <= to; ++i) {
      const auto e = static_cast<EventIdx>(i);
      const EventKind k = trace.kind[e];
      std::uint32_t target;
      if (k == EventKind::Leave)
        target = trace.ref[e];
      else if (k == EventKind::Enter)
        target = parent_[trace.ref[e]];
      else
        continue;
      const Ticks t1 = trace.time[e];
      if (target != UINT32_MAX) add_ticks(target, t1 > t0 ? t1 - t0 : 0);
      t0 = t1;
    }
  }

  void add_ticks(std::uint32_t callpath, Ticks ticks) {
    if (!seen_[callpath]) {
      seen_[callpath] = 1;
      touched_.push_back(callpath);
    }
    scratch_[callpath] += ticks;
  }

  /// scratch_ less the wait scratch into `out` (entries > 0, sorted), both scratches zeroed.
  void take_segments(TimeMap& out) {
    std::sort(touched_.begin(), touched_.end());
    out.clear();
    const double tps = static_cast<double>(defs_.clock.ticks_per_second);
    for (std::uint32_t c : touched_) {
      const double d = static_cast<double>(scratch_[c]) / tps - wait_scratch_[c];
      if (d > 0.0) out.emplace_back(c, d);
      scratch_[c] = 0;
      seen_[c] = 0;
    }
    touched_.clear();
    for (std::uint32_t c : wait_touched_) {
      wait_scratch_[c] = 0.0;
      wait_seen_[c] = 0;
    }
    wait_touched_.clear();
  }

  /// Takes `cut` off call path c of `out` (never below 0): only the completion part of the
  /// synchpoint an interval begins at remains.
  static void cut_off(TimeMap& out, std::uint32_t c, double cut) {
    auto it = std::lower_bound(out.begin(), out.end(), c,
                               [](const auto& e, std::uint32_t k) { return e.first < k; });
    if (it != out.end() && it->first == c) it->second = std::max(it->second - cut, 0.0);
  }

  /// prune(a, x) (§8.1) into `out`: runtime(a, x) — the exclusive time per call path from
  /// cut(a) to cut(x) — minus the waiting time of the synchpoints strictly between a and x,
  /// only the entries > 0, sorted by call path; and only the completion part of a's own call.
  /// One pass over the events and one over the points, summed in dense scratch arrays: no
  /// allocation once the buffers have grown. Tick sums are exact; each call path's total is
  /// converted once; waits are summed in point order.
  void prune(std::int64_t a, std::int64_t x, TimeMap& out, double* wait_sum = nullptr) {
    runtime_less_waits(a, x, cut(a), out, wait_sum);
    if (a >= 0) cut_off(out, sps_[a].callpath, sps_[a].cut_length);
  }

  /// runtime from boundary `from` to cut(x), less the waits of the points strictly between a
  /// and x: prune() without the cut at a.
  void runtime_less_waits(std::int64_t a, std::int64_t x, std::int64_t from, TimeMap& out,
                          double* wait_sum) {
    double wsum = 0.0;
    wait_touched_.clear();
    for (std::int64_t j = a + 1; j < x; ++j) {
      if (!(sps_[j].wait > 0.0)) continue;
      const std::uint32_t c = sps_[j].callpath;
      if (!wait_seen_[c]) {
        wait_seen_[c] = 1;
        wait_touched_.push_back(c);
      }
      wait_scratch_[c] += sps_[j].wait;
      wsum += sps_[j].wait;
    }
    if (wait_sum) *wait_sum = wsum;
    add_segments(trace_, from, cut(x));
    take_segments(out);
  }

  // ---- The backward replay as dataflow ----------------------------------------------------
  // A point runs as soon as what it needs is there: a partner point its waiter's record, a
  // member its causer's G and its own final costs, a waiter its final costs, a causer its
  // members' replies. A wait state's costs are final once every later point whose interval
  // P(A, X) holds it has run (pending_). Points are taken on in reverse event order, at most
  // `window_` unresolved at a time, so records in flight stay bounded. Every sum is formed in
  // reverse event order of the points that contribute (cost parts sorted, severities flushed
  // in order), as scout's strictly backward replay forms them: results do not depend on rounds,
  // window or arrival order.

  enum State : std::uint8_t { kInactive, kActive, kResolved };

  /// One contribution to a pending wait state's costs; a point's contributions form a list
  /// through `next` (newest first) in one pooled array.
  struct CostPart {
    std::int32_t next;  ///< the point's previous contribution, or -1
    std::int32_t from;  ///< the contributing point
    std::uint8_t seq;   ///< order among one point's contributions to one pattern
    std::uint8_t pattern;
    double value;
  };

  /// Appends to one of the pooled lists; returns the new head.
  template <class Part>
  static std::int32_t push_part(std::vector<Part>& pool, std::vector<std::int32_t>& free,
                                const Part& part) {
    if (free.empty()) {
      pool.push_back(part);
      return static_cast<std::int32_t>(pool.size() - 1);
    }
    const std::int32_t i = free.back();
    free.pop_back();
    pool[static_cast<std::size_t>(i)] = part;
    return i;
  }

  bool is_consumer(std::size_t j) const {
    const SyncPoint& sp = sps_[j];
    if (sp.kind == SyncKind::LateSenderPartner || sp.kind == SyncKind::LateReceiverPartner ||
        is_openmp(sp.kind))
      return true;
    return is_group(sp.kind) && sp.causer(me_) == me_;
  }

  static bool is_group(SyncKind k) {
    return k == SyncKind::Barrier || k == SyncKind::NxN || k == SyncKind::OneToN ||
           k == SyncKind::NToOne;
  }

  /// Intervals of every consuming point, and how many of them hold each wait state.
  void plan() {
    const std::size_t n = sps_.size();
    anchor_a_.assign(n, -1);
    pending_.assign(n, 0);
    state_.assign(n, kInactive);
    std::int32_t previous_omp = -1;
    for (std::size_t j = 0; j < n; ++j) {
      if (!is_consumer(j)) continue;
      const auto x = static_cast<std::int64_t>(j);
      if (is_group(sps_[j].kind)) {
        plans_.emplace_back(j, group_anchor(x));
        anchor_a_[j] = plans_.back().second.a;
      } else if (is_openmp(sps_[j].kind)) {
        // scout's findPreviousOmpSynchpoint: the master's previous fork or barrier point.
        anchor_a_[j] = previous_omp;
        if (sps_[j].kind != SyncKind::OmpEnd) previous_omp = static_cast<std::int32_t>(j);
      } else {
        anchor_a_[j] = prev(x, sps_[j].peer);
      }
      for (std::int64_t e = anchor_a_[j] + 1; e < x; ++e)
        if (sps_[e].wait > 0.0) ++pending_[e];
    }
    low_ = static_cast<std::int64_t>(n);
    flush_ = static_cast<std::int64_t>(n);
  }

  /// Activates points downwards while fewer than `window_` are unresolved, and runs every
  /// point that can run. A point only ever enables points below it (it releases the wait
  /// states of its interval), so one descending pass over the active points runs everything
  /// that can run this round; only points activated after it need another pass. True if
  /// anything happened.
  bool step_points() {
    bool moved = false;
    for (;;) {
      while (low_ > 0 && active_ < window_) {
        --low_;
        state_[low_] = kActive;
        ++active_;
        if (is_group(sps_[low_].kind) && sps_[low_].causer(me_) == me_) send_group(low_);
        wake(low_);
      }
      // Only the points something happened to are tried (activation, a record, the last
      // contribution to their costs), the highest first: a point that runs can only enable
      // points below it, which join the queue at once.
      for (std::int64_t j; (j = take_ready()) >= 0;) {
        if (state_[j] != kActive || !try_run(j)) continue;
        state_[j] = kResolved;
        --active_;
        moved = true;
      }
      flush();
      // Room in the window again: activate more.
      if (low_ == 0 || active_ >= window_) break;
    }
    return moved;
  }

  /// Queues point j to be tried (again) in this round.
  void wake(std::int64_t j) {
    if (j < 0 || state_[j] != kActive) return;
    const auto u = static_cast<std::uint64_t>(j);
    if (ready_.size() <= u >> 6) ready_.resize((u >> 6) + 1, 0);
    ready_[u >> 6] |= std::uint64_t{1} << (u & 63);
    ready_top_ = std::max(ready_top_, j);
  }

  /// The highest queued point, taken off the queue, or -1. Every queued point is at most
  /// ready_top_, so the scan goes down from there and the points come highest first, as from
  /// a max-heap (a set of bits: a point queued twice is tried once, which is the same).
  std::int64_t take_ready() {
    while (ready_top_ >= 0) {
      const auto w = static_cast<std::size_t>(ready_top_ >> 6);
      const unsigned bit = static_cast<unsigned>(ready_top_ & 63);
      const std::uint64_t below = bit == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << bit) - 1;
      const std::uint64_t bits = ready_[w] & below;
      if (bits == 0) {
        ready_top_ = static_cast<std::int64_t>(w) * 64 - 1;
        continue;
      }
      const std::int64_t j = static_cast<std::int64_t>(w) * 64 + 63 - __builtin_clzll(bits);
      ready_[w] &= ~(std::uint64_t{1} << (j & 63));
      ready_top_ = j;
      return j;
    }
    return -1;
  }

  /// The point of an event (sps_ is in event order), or -1.
  std::int64_t point_of(EventIdx event) const {
    const auto it = std::lower_bound(sps_.begin(), sps_.end(), event,
                                     [](const SyncPoint& sp, EventIdx e) { return sp.event < e; });
    return it != sps_.end() && it->event == event ? it - sps_.begin() : -1;
  }

  /// The point of a collective instance on this rank, or -1.
  std::int64_t point_of_instance(std::uint64_t key) const {
    auto it = std::upper_bound(collective_index_.begin(), collective_index_.end(), key,
                               [](std::uint64_t k, const InstancePoint& p) { return k < p.key; });
    if (it == collective_index_.begin() || (--it)->key != key) return -1;
    return static_cast<std::int64_t>(it->point);
  }

  /// Moves flush_ down over the points resolved from the top: everything above it is done.
  void flush() {
    while (flush_ > 0 && state_[flush_ - 1] == kResolved) --flush_;
  }

  /// Resolves every active point that waits for a record that will not come: a partner point
  /// without its waiter's record adds nothing, a member without its causer's G replies with
  /// nothing, a causer takes the replies it has. Returns how many were skipped.
  std::uint64_t skip_points() {
    std::uint64_t skipped = 0;
    for (std::int64_t j = flush_ - 1; j >= low_; --j) {
      if (state_[j] != kActive) continue;
      const SyncPoint& sp = sps_[j];
      const std::uint64_t key = collective_key(sp.comm, sp.target);
      if (sp.kind == SyncKind::LateSenderPartner || sp.kind == SyncKind::LateReceiverPartner) {
        if (p2p_in_.contains(sp.event)) continue;
        const std::uint32_t slot = p2p_pool_.take();
        p2p_pool_[slot] = P2pInput{};  // wait 0: nothing to add
        p2p_in_.set(sp.event, slot);
        ++skipped;
      } else if (is_group(sp.kind) && sp.causer(me_) != me_) {
        if (group_in_.contains(key)) continue;
        const std::uint32_t slot = group_pool_.take();
        group_pool_[slot] = GroupInput{};  // empty G: a reply of nothing
        group_in_.set(key, slot);
        ++skipped;
      } else if (is_group(sp.kind)) {
        auto& pc = pending(key);
        if (pc.replies.size() >= pc.expected) continue;
        pc.expected = pc.replies.size();
        ++skipped;
      }
    }
    for (std::int64_t j = flush_ - 1; j >= low_; --j) wake(j);
    return skipped;
  }

  /// Runs point j if it can; false if it still waits for something.
  bool try_run(std::int64_t j) {
    const SyncPoint& sp = sps_[j];
    switch (sp.kind) {
      case SyncKind::LateSender:
      case SyncKind::LateReceiver:
        if (pending_[j] > 0) return false;
        send_p2p(j, final_costs(j));
        propagated(j);
        return true;
      case SyncKind::LateSenderPartner:
      case SyncKind::LateReceiverPartner: {
        const std::uint32_t slot = p2p_in_.find(sp.event);
        if (slot == replay::FlatIndex::kNone) return false;
        p2p_delay(j, p2p_pool_[slot]);
        p2p_in_.erase(sp.event);
        p2p_pool_.give(slot);
        release(j);
        return true;
      }
      case SyncKind::Barrier:
      case SyncKind::NxN:
      case SyncKind::OneToN:
      case SyncKind::NToOne: {
        const std::uint64_t key = collective_key(sp.comm, sp.target);
        if (sp.causer(me_) != me_) {
          const std::uint32_t slot = group_in_.find(key);
          if (slot == replay::FlatIndex::kNone || pending_[j] > 0) return false;
          reply(j, group_pool_[slot], final_costs(j));
          group_in_.erase(key);
          group_pool_.give(slot);
          return true;
        }
        const std::uint32_t slot = pending_groups_.find(key);
        if (slot == replay::FlatIndex::kNone ||
            pending_pool_[slot].replies.size() < pending_pool_[slot].expected)
          return false;
        apply_collective(j, pending_pool_[slot]);
        pending_groups_.erase(key);
        pending_pool_.give(slot);
        release(j);
        return true;
      }
      case SyncKind::Init:
      case SyncKind::Finalize:
        drop_costs(j);  // nothing leaves from here: its costs end with it
        return true;
      case SyncKind::OmpFork:
      case SyncKind::OmpEnd:
        omp_idle(j);
        release(j);
        return true;
      case SyncKind::OmpBarrier:
        if (pending_[j] > 0) return false;
        omp_barrier(j, final_costs(j));
        release(j);
        return true;
    }
    return true;
  }

  /// A consuming point ran: the wait states of its interval have one contribution less to wait for.
  void release(std::int64_t j) {
    for (std::int64_t e = anchor_a_[j] + 1; e < j; ++e)
      if (sps_[e].wait > 0.0 && --pending_[e] == 0) wake(e);
  }

  /// Propagating wait states (§8.5): the largest share of a Late Sender / Late Receiver wait e
  /// that caused waiting elsewhere, kept while consumers above e may still raise it.
  void propagate(std::int64_t e, double share) {
    const auto key = static_cast<std::uint64_t>(e);
    const std::uint32_t slot = prop_index_.find(key);
    if (slot != replay::FlatIndex::kNone) {
      prop_[slot] = std::max(prop_[slot], share);
      return;
    }
    std::uint32_t fresh;
    if (prop_free_.empty()) {
      fresh = static_cast<std::uint32_t>(prop_.size());
      prop_.push_back(share);
    } else {
      fresh = prop_free_.back();
      prop_free_.pop_back();
      prop_[fresh] = share;
    }
    prop_index_.set(key, fresh);
  }

  /// Wait state e runs: every consumer whose interval holds it has run, its share is final.
  void propagated(std::int64_t e) {
    const auto key = static_cast<std::uint64_t>(e);
    const std::uint32_t slot = prop_index_.find(key);
    if (slot == replay::FlatIndex::kNone) return;
    prop_index_.erase(key);
    prop_free_.push_back(slot);
    if (prop_[slot] > 0.0)
      delays_.add(sps_[e].kind == SyncKind::LateSender ? Metric::MpiWaitPropagatingLs
                                                       : Metric::MpiWaitPropagatingLr,
                  sps_[e].callpath, prop_[slot]);
  }

  /// A severity of a delay: summed exactly, so the order points resolve in does not matter.
  void emit(Metric m, std::uint32_t callpath, double v) { delays_.add(m, callpath, v); }

  struct CostAdd {
    int pattern;
    std::uint8_t seq;
    double value;
  };

  /// Point `from`'s contributions to wait state e's costs, in the order given.
  void add_costs(std::int64_t e, std::int64_t from, const CostAdd* adds, int n) {
    if (n == 0) return;
    bool inserted = false;
    std::uint32_t* head = cost_head_.find_or_insert(static_cast<std::uint64_t>(e), 0, inserted);
    std::int32_t next = inserted ? -1 : static_cast<std::int32_t>(*head);
    for (int i = 0; i < n; ++i)
      next = push_part(cost_parts_, cost_free_,
                       CostPart{next, static_cast<std::int32_t>(from), adds[i].seq,
                                static_cast<std::uint8_t>(adds[i].pattern), adds[i].value});
    *head = static_cast<std::uint32_t>(next);
  }

  /// Drops a point's pending cost contributions (nothing leaves from it).
  void drop_costs(std::int64_t e) {
    const auto key = static_cast<std::uint64_t>(e);
    const std::uint32_t head = cost_head_.find(key);
    if (head == replay::FlatIndex::kNone) return;
    cost_head_.erase(key);
    for (std::int32_t i = static_cast<std::int32_t>(head); i >= 0; i = cost_parts_[i].next)
      cost_free_.push_back(i);
  }

  /// A wait state's costs: its contributions summed in reverse order of the points they came
  /// from (final once nothing above it is pending).
  std::array<double, kPatterns> final_costs(std::int64_t e) {
    std::array<double, kPatterns> cost{};
    const auto key = static_cast<std::uint64_t>(e);
    const std::uint32_t head = cost_head_.find(key);
    if (head == replay::FlatIndex::kNone) return cost;
    cost_head_.erase(key);
    // The list is newest first; in the order they were added, then sorted.
    list_.clear();
    for (std::int32_t i = static_cast<std::int32_t>(head); i >= 0; i = cost_parts_[i].next)
      list_.push_back(i);
    std::reverse(list_.begin(), list_.end());
    std::stable_sort(list_.begin(), list_.end(), [this](std::int32_t i, std::int32_t j) {
      const CostPart& a = cost_parts_[static_cast<std::size_t>(i)];
      const CostPart& b = cost_parts_[static_cast<std::size_t>(j)];
      return a.from != b.from ? a.from > b.from : a.seq < b.seq;
    });
    for (std::int32_t i : list_) {
      const CostPart& p = cost_parts_[static_cast<std::size_t>(i)];
      cost[p.pattern] += p.value;
      cost_free_.push_back(i);
    }
    return cost;
  }

  /// The waiting side of a Late Sender / Late Receiver ships its wait, U and costs (§8.2).
  void send_p2p(std::int64_t x, const std::array<double, kPatterns>& cost) {
    const SyncPoint& sp = sps_[x];
    if (!(sp.wait > 0.0)) return;
    replay::RecordWriter w(exchange_.to(me_, sp.peer));
    w.put(kP2pDelay);
    w.put(sp.target);
    w.put(sp.event);
    w.put(double{sp.wait});  // SyncPoint is packed: put() takes a reference, so a copy
    for (int p = 0; p < patterns_; ++p) w.put(cost[p]);
    prune(prev(x, sp.peer), x, pruned_);
    put_map(w, pruned_);
  }

  /// The causing side of a Late Sender / Late Receiver (§8.2, §8.3, §8.5).
  void p2p_delay(std::int64_t x, const P2pInput& in) {
    const SyncPoint& sp = sps_[x];
    if (!(in.wait > 0.0)) return;
    const int type = sp.kind == SyncKind::LateSenderPartner ? kLs : kLr;
    const std::int64_t a = anchor_a_[x];
    double wsum = 0.0, dsum = 0.0;
    prune(a, x, pruned_, &wsum);
    TimeMap& d = diff_;
    diff(pruned_, in.u, d, dsum);
    const double den = dsum + wsum;
    const double sigma = den > 0.0 ? std::min(in.wait / den, 1.0) : 0.0;
    if (dsum > 0.0)
      for (const auto& [c, v] : d) emit(kShortTerm[type], c, sigma * v);
    if (den > 0.0) {
      std::array<double, kPatterns> scale{};
      bool any = false;
      for (int p = 0; p < patterns_; ++p) {
        const double rho = in.cost[p] / den;
        if (rho > 0.0)
          for (const auto& [c, v] : d) emit(kLongTerm[p], c, rho * v);
        scale[p] = p == type ? sigma + rho : rho;
        any = any || scale[p] > 0.0;
      }
      // One pass over the interval; each wait state gets its parts in pattern order.
      if (any)
        for (std::int64_t e = a + 1; e < x; ++e) {
          const double w = sps_[e].wait;
          if (!(w > 0.0)) continue;
          CostAdd adds[kPatterns];
          int n = 0;
          for (int p = 0; p < patterns_; ++p)
            if (scale[p] > 0.0) adds[n++] = CostAdd{p, 0, scale[p] * w};
          add_costs(e, x, adds, n);
        }
    }
    if (wsum > 0.0) {
      // Indirect: the share of the wait that other wait states caused goes back to the waiter.
      replay::RecordWriter w(exchange_.to(me_, sp.peer));
      w.put(kIndirect);
      w.put(in.source_event);
      w.put(static_cast<std::uint8_t>(type));
      w.put(sigma * wsum);
      if (sigma > 0.0)
        for (std::int64_t e = a + 1; e < x; ++e)
          if (sps_[e].wait > 0.0 && (sps_[e].kind == SyncKind::LateSender ||
                                     sps_[e].kind == SyncKind::LateReceiver))
            propagate(e, sigma * sps_[e].wait);
    }
  }

  static int pattern_of(SyncKind k) {
    switch (k) {
      case SyncKind::Barrier: return kBarrier;
      case SyncKind::NxN: return kN2n;
      case SyncKind::OneToN: return k12n;
      default: return kN21;
    }
  }

  /// Who the causer sends its G to: every member for barrier and N x N, the waiters for
  /// 1-to-N, the root for N-to-1.
  std::vector<Rank> group_targets(const SyncPoint& sp) const {
    std::vector<Rank> out;
    if (sp.kind == SyncKind::OneToN) {
      const auto it = waiters_.find(collective_key(sp.comm, sp.target));
      if (it != waiters_.end()) out = it->second;
    } else if (sp.kind == SyncKind::NToOne) {
      out.push_back(sp.peer);
    } else if (const auto* m = members(sp)) {
      for (Rank r : *m)
        if (r != me_) out.push_back(r);
    }
    return out;
  }

  struct GroupPlan {
    std::int64_t a = -1;
    std::map<Rank, std::int64_t> anchor;  ///< member -> its individual A_k
  };

  /// The plan of causer point x (plans_ is in point order).
  const GroupPlan& plan_of(std::int64_t x) const {
    const auto it = std::lower_bound(
        plans_.begin(), plans_.end(), static_cast<std::size_t>(x),
        [](const std::pair<std::size_t, GroupPlan>& p, std::size_t k) { return p.first < k; });
    return it->second;
  }

  /// The pending collective of instance `key`, created empty if new.
  PendingCollective& pending(std::uint64_t key) {
    std::uint32_t slot = pending_groups_.find(key);
    if (slot == replay::FlatIndex::kNone) {
      slot = pending_pool_.take();
      pending_pool_[slot].clear();
      pending_groups_.set(key, slot);
    }
    return pending_pool_[slot];
  }

  /// A: the latest synchpoint that covers every member not yet covered; the members an
  /// earlier partial cover reached keep theirs as their individual A_k (§8.4 step 1).
  GroupPlan group_anchor(std::int64_t x) const {
    const SyncPoint& sp = sps_[x];
    GroupPlan plan;
    std::vector<Rank> remaining;
    if (const auto* m = members(sp)) {
      for (Rank r : *m)
        if (r != me_) remaining.push_back(r);
    } else {
      for (Rank r = 0; r < defs_.ranks(); ++r)
        if (r != me_) remaining.push_back(r);
    }
    for (std::int64_t j = x - 1; j >= 0 && !remaining.empty(); --j) {
      std::vector<Rank> covered, rest;
      for (Rank r : remaining) (contains(sps_[j], r) ? covered : rest).push_back(r);
      if (rest.empty()) {
        plan.a = j;
        return plan;
      }
      for (Rank r : covered) plan.anchor[r] = j;
      remaining.swap(rest);
    }
    return plan;
  }

  void send_group(std::int64_t x) {
    const SyncPoint& sp = sps_[x];
    const GroupPlan& plan = plan_of(x);
    PendingCollective& pc = pending(collective_key(sp.comm, sp.target));
    double gw = 0.0;
    TimeMap& g = group_g_;
    prune(plan.a, x, g, &gw);
    for (const auto& [c, v] : g) pc.paths.push_back(c);
    std::map<std::int64_t, std::pair<TimeMap, double>> individual;
    for (const auto& [r, ak] : plan.anchor)
      if (!individual.count(ak)) {
        double w = 0.0;
        TimeMap gk;
        prune(ak, x, gk, &w);
        individual[ak] = {std::move(gk), w};
      }
    const std::vector<Rank> targets = group_targets(sp);
    pc.expected = targets.size();
    for (Rank r : targets) {
      replay::RecordWriter w(exchange_.to(me_, r));
      w.put(kCollGroup);
      w.put(sp.comm);
      w.put(sp.target);
      const auto ak = plan.anchor.find(r);
      if (ak == plan.anchor.end()) {
        w.put(std::uint8_t{0});
        w.put(gw);
        put_map(w, g);
      } else {
        // G_k and Gw_k, projected onto G's call paths.
        const auto& [gk, wk] = individual[ak->second];
        TimeMap projected;
        for (const auto& [c, v] : g) projected.emplace_back(c, lookup(gk, c));
        w.put(std::uint8_t{1});
        w.put(wk);
        put_map(w, projected);
      }
    }
  }

  /// A member's share of a collective delay: d_i and its scale per key (§8.4 step 2-3).
  void reply(std::int64_t x, const GroupInput& in, const std::array<double, kPatterns>& cost) {
    const SyncPoint& sp = sps_[x];
    const TimeMap& local = pruned_;
    prune(prev(x, sp.causer(me_)), x, pruned_);
    std::vector<double>& d = reply_d_;
    d.assign(in.g.size(), 0.0);
    double dsum = 0.0;
    for (std::size_t i = 0; i < in.g.size(); ++i) {
      d[i] = std::max(in.g[i].second - lookup(local, in.g[i].first), 0.0);
      dsum += d[i];
    }
    std::array<double, kKeys> keys{};
    keys[0] = std::max(double{sp.wait}, 0.0);  // SyncPoint is packed: a copy
    for (int p = 0; p < patterns_; ++p) keys[1 + p] = cost[p];
    send_reply(sp.causer(me_), sp.comm, sp.target, in.individual, d, dsum, in.gw, keys);
  }

  void send_reply(Rank causer, std::uint32_t comm, std::uint32_t instance, bool individual,
                  const std::vector<double>& d, double dsum, double gw,
                  const std::array<double, kKeys>& keys) {
    // The causer sums every key's scale times d: the scales and d travel (1 + patterns + n
    // values instead of (1 + patterns) x (1 + n) products); it forms the products.
    replay::RecordWriter w(exchange_.to(me_, causer));
    w.put(kCollReply);
    w.put(comm);
    w.put(instance);
    w.put(static_cast<std::uint8_t>(individual));
    w.put(static_cast<std::uint32_t>(d.size()));
    for (int k = 0; k < patterns_ + 1; ++k) {
      const double s = dsum + gw > 0.0 ? keys[k] / (dsum + gw) : 0.0;
      w.put(s);
    }
    char* p = w.extend(d.size() * sizeof(double));
    if (!d.empty()) std::memcpy(p, d.data(), d.size() * sizeof(double));
  }

  /// On the causer: the members' sums become its delays, their scales its costs (§8.4 3-4).
  void apply_collective(std::int64_t x, const PendingCollective& pc) {
    const SyncPoint& sp = sps_[x];
    const GroupPlan& plan = plan_of(x);
    const int type = pattern_of(sp.kind);
    const std::size_t n = pc.paths.size();
    std::vector<double>& sums = sums_;  // kKeys rows of n
    sums.assign(static_cast<std::size_t>(patterns_ + 1) * n, 0.0);
    std::array<double, kKeys> base{};
    // Every individual A_k is a step of the scale, whether or not its member replied (a member
    // that is no synchronization point of this instance adds 0 there): scout's scale map has an
    // entry per A_k of the whole communicator (docs/root-cause.md, rule 3).
    std::map<std::int64_t, std::array<double, kKeys>> at_anchor;
    for (const auto& [member, ak] : plan.anchor) at_anchor[ak];
    // Replies are summed in member order, whatever order they arrived in.
    list_.clear();
    for (std::size_t i = 0; i < pc.replies.size(); ++i) list_.push_back(static_cast<std::int32_t>(i));
    std::sort(list_.begin(), list_.end(), [&pc](std::int32_t a, std::int32_t b) {
      return pc.replies[static_cast<std::size_t>(a)].member <
             pc.replies[static_cast<std::size_t>(b)].member;
    });
    for (std::int32_t index : list_) {
      const PendingCollective::Reply& reply = pc.replies[static_cast<std::size_t>(index)];
      const double* scales = pc.values.data() + reply.offset;
      const double* d = scales + patterns_ + 1;
      const auto ak = plan.anchor.find(reply.member);
      for (int k = 0; k < patterns_ + 1; ++k) {
        const double s = scales[k];
        for (std::size_t i = 0; i < n; ++i) sums[k * n + i] += d[i] * s;
        if (reply.individual && ak != plan.anchor.end())
          at_anchor[ak->second][k] += s;
        else
          base[k] += s;
      }
    }
    auto add_rows = [&](Metric m, int key) {
      const double* row = sums.data() + static_cast<std::size_t>(key) * n;
      double total = 0.0;
      for (std::size_t i = 0; i < n; ++i) total += row[i];
      if (!(total > 0.0)) return;
      for (std::size_t i = 0; i < n; ++i) emit(m, pc.paths[i], row[i]);
    };
    add_rows(kShortTerm[type], 0);
    for (int p = 0; p < patterns_; ++p) add_rows(kLongTerm[p], 1 + p);
    // Scale per wait state of P(A, X): the members without an individual A_k from A on; at each
    // A_k the scale of the ranks attached to earlier ones joins (scout's "lag").
    // Parts per wait state in this order: each pattern's long-term (seq 0), then this
    // pattern's short-term (seq 1). The scale of a key holds from A on; at each A_k (all lie
    // above A) it becomes the running sum of the scales of A and the earlier A_k.
    constexpr int kParts = kPatterns + 1;
    int key[kParts], pattern[kParts];
    std::uint8_t seq[kParts];
    for (int p = 0; p < patterns_; ++p) {
      key[p] = 1 + p;
      pattern[p] = p;
      seq[p] = 0;
    }
    key[patterns_] = 0;
    pattern[patterns_] = type;
    seq[patterns_] = 1;
    double scale[kParts], running[kParts];
    for (int i = 0; i <= patterns_; ++i) scale[i] = running[i] = base[key[i]];
    auto next = at_anchor.begin();
    for (std::int64_t j = plan.a + 1; j < x; ++j) {
      if (next != at_anchor.end() && next->first == j) {
        for (int i = 0; i <= patterns_; ++i) {
          scale[i] = running[i];
          running[i] += next->second[key[i]];
        }
        ++next;
      }
      const double w = sps_[j].wait;
      if (!(w > 0.0)) continue;
      CostAdd adds[kParts];
      int n = 0;
      for (int i = 0; i <= patterns_; ++i)
        if (scale[i] > 0.0) adds[n++] = CostAdd{pattern[i], seq[i], scale[i] * w};
      add_costs(j, x, adds, n);
    }
  }

  // ---- OpenMP (hybrid traces; docs/root-cause.md, OpenMP) ---------------------------------
  // scout.hyb's OpenMP synchronization points: every thread's Enter of a parallel region (a
  // fork point: no wait; completion = Enter - the team's earliest Enter) and Leave of a barrier
  // (wait = the team's last Enter - own Enter; completion 0). The master's join the points of
  // its rank's MPI intervals (their OpenMP barrier waits are wait states there, with costs);
  // the workers' only bound their own barrier intervals. All threads of a rank are held here,
  // so a barrier instance is computed in memory when the master's point of it runs.

  const LocalTrace& thread_trace(std::uint32_t t) const {
    return t == 0 ? trace_ : workers_[t - 1];
  }

  /// Every thread's fork and barrier points: the master's into sps_ (with the end point of the
  /// last serial section), the workers' into omp_points_, the barrier visits into visits_.
  void add_openmp_points() {
    const OmpTeams teams = omp_teams(defs_, tree_, trace_, workers_);
    const auto threads = static_cast<std::uint32_t>(teams.threads);
    // Counted first: every table is allocated once, at its size (a run has one fork and
    // barrier point per thread and instance; doubling would leave up to half of them empty).
    {
      std::size_t master = 1, visits = 0;  // the master's, with the end of the trace
      std::vector<std::size_t> worker(workers_.size(), 0);
      for (std::uint32_t k = 0; k < teams.forks.size(); ++k) {
        const std::size_t barriers = teams.visit(k, 0).count;
        for (std::uint32_t t = 0; t < threads; ++t) {
          if (teams.visit(k, t).enter == kNoEvent) continue;
          (t == 0 ? master : worker[t - 1]) += 1 + barriers;
          visits += barriers;
        }
      }
      sps_.reserve(sps_.size() + master);
      visits_.reserve(visits);
      omp_points_.assign(workers_.size(), {});
      for (std::size_t t = 0; t < workers_.size(); ++t) omp_points_[t].reserve(worker[t]);
    }
    for (std::uint32_t k = 0; k < teams.forks.size(); ++k) {
      const Ticks fork = trace_.time[teams.forks[k]];
      // Fork points: total = Enter - fork, completion = Enter - the team's earliest Enter.
      Ticks earliest = std::numeric_limits<Ticks>::max();
      for (std::uint32_t t = 0; t < threads; ++t) {
        const TeamVisit& v = teams.visit(k, t);
        if (v.enter != kNoEvent) earliest = std::min(earliest, thread_trace(t).time[v.enter]);
      }
      for (std::uint32_t t = 0; t < threads; ++t) {
        const TeamVisit& v = teams.visit(k, t);
        if (v.enter == kNoEvent) continue;
        const LocalTrace& trace = thread_trace(t);
        const Ticks enter = trace.time[v.enter];
        const double total = enter > fork ? defs_.clock.span(fork, enter) : 0.0;
        const double completion = enter > earliest ? defs_.clock.span(earliest, enter) : 0.0;
        if (t == 0)
          sps_.push_back(omp_point(SyncKind::OmpFork, v.enter, trace.ref[v.enter], 0.0,
                                   total - completion));
        else
          omp_points_[t - 1].push_back(OmpPoint{fork, total - completion, v.enter});
      }
      // Barrier points, instance by instance: wait = the team's last Enter - own Enter.
      const std::size_t barriers = teams.visit(k, 0).count;
      for (std::size_t j = 0; j < barriers; ++j) {
        Ticks last = 0;
        for (std::uint32_t t = 0; t < threads; ++t) {
          const TeamVisit& v = teams.visit(k, t);
          if (v.enter != kNoEvent) last = std::max(last, thread_trace(t).time[teams.barrier(v, j).first]);
        }
        const auto first = static_cast<std::uint32_t>(visits_.size());
        for (std::uint32_t t = 0; t < threads; ++t) {
          const TeamVisit& v = teams.visit(k, t);
          if (v.enter == kNoEvent) continue;
          const LocalTrace& trace = thread_trace(t);
          const auto [benter, bleave] = teams.barrier(v, j);
          const Ticks enter = trace.time[benter];
          const double wait = last > enter ? defs_.clock.span(enter, last) : 0.0;
          const double total = defs_.clock.span(enter, std::max(enter, trace.time[bleave]));
          BarrierVisit b{benter, bleave, 0, t, visits_.size() == first ? 1u : 0u};
          if (t == 0) {
            SyncPoint sp = omp_point(SyncKind::OmpBarrier, bleave, trace.ref[bleave], wait, total);
            sp.target = first;  // its instance's first visit
            sps_.push_back(sp);
          } else {
            b.point = static_cast<std::uint32_t>(omp_points_[t - 1].size());
            omp_points_[t - 1].push_back(OmpPoint{enter, total, bleave});
          }
          visits_.push_back(b);
        }
      }
    }
    // The last serial section ends with the trace (scout's PREPARE of the backward replay).
    sps_.push_back(omp_point(SyncKind::OmpEnd, static_cast<EventIdx>(trace_.size()), 0, 0.0, 0.0));
  }

  static SyncPoint omp_point(SyncKind kind, EventIdx event, std::uint32_t callpath, double wait,
                             double cut_length) {
    SyncPoint sp;
    sp.kind = kind;
    sp.event = event;
    sp.callpath = callpath;
    sp.wait = wait;
    sp.cut_length = cut_length;
    sp.peer = -1;  // synchronizes with no other rank
    return sp;
  }

  /// After sorting: the master's visits point at their SyncPoints.
  void link_openmp_points() {
    for (BarrierVisit& b : visits_)
      if (b.thread == 0) b.point = static_cast<std::uint32_t>(point_of(b.event));
  }

  /// A worker's prune(previous OpenMP point, point p): the exclusive time per call path from
  /// the previous point's cut (a fork point's is the master's fork: the time up to the Enter
  /// belongs to the parallel region) to p's, less the previous point's cut_length. Workers have
  /// no other points, so no waits lie between.
  void thread_prune(std::uint32_t t, std::uint32_t p, TimeMap& out) {
    const LocalTrace& trace = workers_[t - 1];
    const std::vector<OmpPoint>& points = omp_points_[t - 1];
    const std::int64_t to = last_boundary_before(trace, points[p].event);
    std::int64_t from = -1;
    const OmpPoint* a = p > 0 ? &points[p - 1] : nullptr;
    if (a && trace.kind[a->event] == EventKind::Enter) {  // a fork point
      const Ticks enter = trace.time[a->event];
      const Ticks start = a->start;  // OmpPoint is packed: a copy, not a reference
      add_ticks(trace.ref[a->event], enter > start ? enter - start : 0);
      from = a->event;
    } else if (a) {
      from = last_boundary_before(trace, a->event);
    }
    add_segments(trace, from, to);
    take_segments(out);
    if (a) cut_off(out, trace.ref[a->event], a->cut_length);
  }

  /// A severity of a delay on thread t of this rank.
  void emit_on(std::uint32_t t, Metric m, std::uint32_t callpath, double v) {
    if (t == 0)
      delays_.add(m, callpath, v);
    else
      thread_delays_[t - 1].add(m, callpath, v);
  }

  /// Idle threads (scout's DELAY_OMPIDLE at the master's fork, and at the end of the trace):
  /// the master's time in the serial section since the previous region's join, less its waits,
  /// times (threads - 1) on the master; the section's wait states get (threads - 1) x their
  /// wait as idleness costs.
  void omp_idle(std::int64_t x) {
    const double scale = static_cast<double>(workers_.size());
    if (!(scale > 0.0)) return;
    const std::int64_t a = anchor_a_[x];
    // The section begins at the master's ThreadJoin after the previous OpenMP point (the
    // first section at the beginning). A region never joined (a --partial cut inside it) has no
    // serial section after it: nothing idles there.
    std::int64_t from = -1;
    if (a >= 0) {
      for (std::size_t e = sps_[a].event; e < trace_.size() && from < 0; ++e)
        if (trace_.kind[e] == EventKind::ThreadJoin) from = static_cast<std::int64_t>(e);
      if (from < 0) return;
    }
    double wsum = 0.0, dsum = 0.0;
    runtime_less_waits(a, x, from, pruned_, &wsum);
    for (const auto& [c, v] : pruned_) dsum += v;
    if (!(dsum + wsum > 0.0)) return;
    if (dsum > 0.0)
      for (const auto& [c, v] : pruned_) emit(Metric::DelayOmpidle, c, scale * v);
    if (wsum > 0.0)
      for (std::int64_t e = a + 1; e < x; ++e)
        if (sps_[e].wait > 0.0) {
          const CostAdd add{kOmpIdle, 0, scale * sps_[e].wait};
          add_costs(e, x, &add, 1);
        }
  }

  /// An OpenMP barrier instance, when the master's point j of it runs (scout's
  /// CalculateOmpBarrierDelay): every thread's interval since its previous OpenMP point against
  /// the latest thread's; per key (the waiting time, each long-term pattern's cost but the
  /// barrier one's) a thread's scale is its input / (its d sum + the latest's waits). The
  /// latest thread gets the delays, and the wait states of its interval the summed scales.
  void omp_barrier(std::int64_t j, const std::array<double, kPatterns>& master_cost) {
    const std::size_t first = sps_[j].target;
    std::size_t end = first;
    while (end < visits_.size() && (end == first || !visits_[end].first)) ++end;
    const auto enter_of = [&](const BarrierVisit& b) { return thread_trace(b.thread).time[b.enter]; };
    std::size_t latest = first;  // ties: the lowest thread, as the critical path's
    for (std::size_t v = first; v < end; ++v)
      if (enter_of(visits_[v]) > enter_of(visits_[latest])) latest = v;
    const BarrierVisit& lv = visits_[latest];
    // Keys: 0 = waiting time (short-term; its scales feed the barrier's long-term costs), then
    // the long-term patterns whose costs cross OpenMP barriers.
    constexpr int kOmpKeys = 1 + kMpiPatterns + 1;
    constexpr int kKeyPattern[kOmpKeys] = {kOmpBarrier, kLs, kLr, kBarrier, kN2n, k12n, kN21, kOmpIdle};
    double propwait = 0.0;
    TimeMap& latest_map = group_g_;
    if (lv.thread == 0)
      prune(anchor_a_[lv.point], static_cast<std::int64_t>(lv.point), latest_map, &propwait);
    else
      thread_prune(lv.thread, lv.point, latest_map);
    const std::size_t n = latest_map.size();
    std::vector<double>& sums = sums_;  // kOmpKeys rows of n, over the latest's call paths
    sums.assign(kOmpKeys * n, 0.0);
    double sum_scale[kOmpKeys] = {};
    for (std::size_t v = first; v < end; ++v) {
      const BarrierVisit& b = visits_[v];
      if (v == latest) continue;  // its d is empty: scale x nothing
      if (b.thread == 0)
        prune(anchor_a_[b.point], static_cast<std::int64_t>(b.point), pruned_);
      else
        thread_prune(b.thread, b.point, pruned_);
      std::vector<double>& d = reply_d_;
      d.assign(n, 0.0);
      double dsum = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        d[i] = std::max(latest_map[i].second - lookup(pruned_, latest_map[i].first), 0.0);
        dsum += d[i];
      }
      if (!(dsum + propwait > 0.0)) continue;
      for (int k = 0; k < kOmpKeys; ++k) {
        const double input = k == 0 ? defs_.clock.span(enter_of(b), enter_of(lv))
                                    : (b.thread == 0 ? master_cost[kKeyPattern[k]] : 0.0);
        const double s = input / (dsum + propwait);
        if (!(s > 0.0)) continue;
        sum_scale[k] += s;
        for (std::size_t i = 0; i < n; ++i) sums[k * n + i] += s * d[i];
      }
    }
    for (int k = 0; k < kOmpKeys; ++k) {
      const double* row = sums.data() + static_cast<std::size_t>(k) * n;
      double total = 0.0;
      for (std::size_t i = 0; i < n; ++i) total += row[i];
      if (!(total > 0.0)) continue;
      const Metric m = k == 0 ? Metric::DelayOmpbarrier : kLongTerm[kKeyPattern[k]];
      for (std::size_t i = 0; i < n; ++i) emit_on(lv.thread, m, latest_map[i].first, row[i]);
    }
    // Long-term costs for the wait states of the latest thread's interval (only the master's
    // intervals hold any): each pattern its own key's summed scale, the barrier pattern the
    // waiting time's.
    if (lv.thread != 0) return;
    const std::int64_t x = static_cast<std::int64_t>(lv.point);
    for (std::int64_t e = anchor_a_[x] + 1; e < x; ++e) {
      const double w = sps_[e].wait;
      if (!(w > 0.0)) continue;
      CostAdd adds[kOmpKeys];
      int count = 0;
      for (int k = 1; k < kOmpKeys; ++k)
        if (sum_scale[k] > 0.0) adds[count++] = CostAdd{kKeyPattern[k], 0, sum_scale[k] * w};
      if (sum_scale[0] > 0.0) adds[count++] = CostAdd{kOmpBarrier, 0, sum_scale[0] * w};
      add_costs(e, x, adds, count);
    }
  }

  // ---- Receiving -----------------------------------------------------------------------
  bool receive_records() {
    bool any = false;
    exchange_.for_each_from(me_, [&](Rank source, const char* data, std::size_t bytes) {
      replay::RecordReader r(data, bytes);
      while (!r.done()) {
        any = true;
        const auto kind = r.get<RecordKind>();
        switch (kind) {
          case kP2pDelay: {
            const auto target = r.get<EventIdx>();
            std::uint32_t slot = p2p_in_.find(target);
            if (slot == replay::FlatIndex::kNone) {
              slot = p2p_pool_.take();
              p2p_in_.set(target, slot);
            }
            P2pInput& in = p2p_pool_[slot];
            in.source_event = r.get<EventIdx>();
            in.wait = r.get<double>();
            for (int p = 0; p < patterns_; ++p) in.cost[p] = r.get<double>();
            get_map(r, in.u);
            wake(point_of(target));
            break;
          }
          case kCollGroup: {
            const auto comm = r.get<std::uint32_t>();
            const auto instance = r.get<std::uint32_t>();
            const std::uint64_t key = collective_key(comm, instance);
            std::uint32_t slot = group_in_.find(key);
            const bool fresh = slot == replay::FlatIndex::kNone;
            if (fresh) slot = group_pool_.take();
            GroupInput& in = group_pool_[slot];
            in.individual = r.get<std::uint8_t>() != 0;
            in.gw = r.get<double>();
            get_map(r, in.g);
            if (point_of_instance(key) < 0) {
              // Not a synchronization point here: nothing to add, but the causer counts on us.
              send_reply(source, comm, instance, in.individual,
                         std::vector<double>(in.g.size(), 0.0), 0.0, in.gw, {});
              if (fresh) group_pool_.give(slot);
            } else {
              if (fresh) group_in_.set(key, slot);
              wake(point_of_instance(key));
            }
            break;
          }
          case kCollReply: {
            const auto comm = r.get<std::uint32_t>();
            const auto instance = r.get<std::uint32_t>();
            const bool individual = r.get<std::uint8_t>() != 0;
            const auto n = r.get<std::uint32_t>();
            PendingCollective& pc = pending(collective_key(comm, instance));
            PendingCollective::Reply reply{source, individual,
                                           static_cast<std::uint32_t>(pc.values.size())};
            // Every key's scale, then d (apply_collective forms the products).
            for (std::size_t i = 0; i < static_cast<std::size_t>(patterns_ + 1) + n; ++i)
              pc.values.push_back(r.get<double>());
            // A second reply of one member replaces the first (none comes in a sound trace).
            auto same = std::find_if(pc.replies.begin(), pc.replies.end(),
                                     [source](const auto& e) { return e.member == source; });
            if (same != pc.replies.end())
              *same = reply;
            else
              pc.replies.push_back(reply);
            if (pc.replies.size() >= pc.expected) wake(point_of_instance(collective_key(comm, instance)));
            break;
          }
          case kIndirect: {
            const auto event = r.get<EventIdx>();
            const auto type = r.get<std::uint8_t>();
            const double value = r.get<double>();
            if (value > 0.0) indirect_.push_back(Indirect{event, type, value});
            break;
          }
          default:
            throw ReplayError(defs_.anchor_path + ": rank " + std::to_string(me_) +
                              ": backward replay: unknown record from rank " +
                              std::to_string(source));
        }
      }
    });
    return any;
  }

  /// Indirect wait states (§8.5): the share of a Late Sender / Late Receiver wait that other
  /// wait states caused, as the partners reported it.
  void classify() {
    // Indirect waiting arrives in any order; added in event order, as scout's forward pass adds it.
    // A waiting event told twice keeps the last value, as a map assignment would.
    std::stable_sort(indirect_.begin(), indirect_.end(),
                     [](const Indirect& a, const Indirect& b) { return a.event < b.event; });
    for (std::size_t i = 0; i < indirect_.size(); ++i) {
      const Indirect& in = indirect_[i];
      if (i + 1 < indirect_.size() && indirect_[i + 1].event == in.event) continue;
      sev_.add(in.type == kLs ? Metric::MpiWaitIndirectLatesender
                              : Metric::MpiWaitIndirectLatereceiver,
               trace_.ref[trace_.call_of(in.event)], in.value);
    }
  }

  const Definitions& defs_;
  const CallTree& tree_;
  const LocalTrace& trace_;
  const std::vector<LocalTrace>& workers_;  ///< threads 1, 2, ... (hybrid traces)
  std::vector<Severity>* worker_sevs_;      ///< their severities, or null
  Severity& sev_;
  const Rank me_;  ///< the trace rank
  replay::RecordExchange& exchange_;  ///< the process's, shared by its ranks
  MemberSets& members_;               ///< the process's, shared by its ranks
  replay::SlabDeque<SyncPoint>& own_;  ///< the forward replay's points, until they move to sps_
  std::vector<SyncPoint> sps_;  ///< event order
  Ticks their_leave_ = 0;  ///< prephase: the partner record being read
  std::unordered_map<std::uint64_t, std::vector<Rank>> waiters_;  ///< 1-to-N root: its waiters
  /// Instances where this rank has a point, by key (12 B each; a hash index was 4 x that).
#pragma pack(push, 4)
  struct InstancePoint {
    std::uint64_t key;
    std::uint32_t point;
  };
#pragma pack(pop)
  std::vector<InstancePoint> collective_index_;
  replay::FlatIndex prop_index_;  ///< Late Sender / Receiver wait state -> its share in prop_
  std::vector<double> prop_;
  std::vector<std::uint32_t> prop_free_;
  std::vector<Ticks> scratch_;  ///< dense per call path, kept zero
  std::vector<double> wait_scratch_;  ///< dense per call path, kept zero
  std::vector<char> seen_;      ///< dense per call path, kept zero
  std::vector<char> wait_seen_;  ///< dense per call path, kept zero
  std::vector<std::uint32_t> parent_;  ///< per call path: its parent, UINT32_MAX for a root
  std::vector<std::uint32_t> wait_touched_;
  std::vector<std::uint32_t> touched_;
  replay::FlatIndex p2p_in_;  ///< partner event -> its waiter's record in p2p_pool_
  Pool<P2pInput> p2p_pool_;
  replay::FlatIndex group_in_;  ///< instance -> the causer's G in group_pool_ (members)
  Pool<GroupInput> group_pool_;
  replay::FlatIndex pending_groups_;  ///< instance -> its replies in pending_pool_ (causers)
  Pool<PendingCollective> pending_pool_;
  struct Indirect {
    EventIdx event;  ///< the waiting event
    std::uint8_t type;
    double value;
  };
  std::vector<Indirect> indirect_;  ///< in arrival order
  TimeMap pruned_, diff_, group_g_;   ///< scratch maps, reused
  std::vector<double> reply_d_, sums_;

  std::vector<std::pair<std::size_t, GroupPlan>> plans_;  ///< causer points: A and the A_k
  std::vector<std::int32_t> anchor_a_;  ///< consuming points: A of their interval P(A, X)
  std::vector<std::int32_t> pending_;   ///< wait states: consuming points still to run above
  std::vector<std::uint8_t> state_;
  replay::FlatIndex cost_head_;  ///< pending wait state -> its newest cost part
  std::vector<CostPart> cost_parts_;
  std::vector<std::int32_t> cost_free_;
  ExactSums delays_;  ///< the delay severities, added to sev_ at the end
  std::vector<std::int32_t> list_;  ///< scratch: one point's parts
  std::vector<std::uint64_t> ready_;  ///< points to try: one bit each
  std::int64_t ready_top_ = -1;       ///< no queued point is above it
  std::size_t window_ = 4096;
  const bool hybrid_;   ///< threads: OpenMP points, Fork/Join in the time segments
  const int patterns_;  ///< long-term patterns carried: the MPI ones, or all with OpenMP's
  std::vector<ExactSums> thread_delays_;  ///< per worker thread: its delay severities
  std::vector<std::vector<OmpPoint>> omp_points_;  ///< per worker thread, in event order
  std::vector<BarrierVisit> visits_;  ///< every thread's barrier visits, by instance and thread
  std::size_t active_ = 0;  ///< activated, not yet resolved
  std::int64_t low_ = 0;    ///< points >= low_ are activated
  std::int64_t flush_ = 0;  ///< points >= flush_ have had their severities added
};

}  // namespace

RootCauseResult root_cause_pass(const replay::World& world, const Definitions& defs,
                                const CallTree& tree, const Shard& shard,
                                std::vector<WaitStateResult>& waits, std::vector<Severity>& sevs,
                                std::vector<std::vector<Severity>>* worker_sevs,
                                std::size_t window) {
  replay::RecordExchange exchange(world, shard.blocks);
  MemberSets members(defs);
  std::deque<RootCause> ranks;  // not movable: they share the exchange
  static const std::vector<LocalTrace> kNoThreads;
  for (std::size_t i = 0; i < shard.size(); ++i) {
    const bool threads = i < shard.workers.size();
    ranks.emplace_back(defs, tree, shard.traces[i], threads ? shard.workers[i] : kNoThreads,
                       worker_sevs && i < worker_sevs->size() ? &(*worker_sevs)[i] : nullptr,
                       waits[i], sevs[i], window, exchange, members);
  }
  for (RootCause& rc : ranks) rc.post_partners();
  exchange.exchange();
  for (RootCause& rc : ranks) rc.take_partners();
  exchange.release_buffers();  // the prephase's blocks: one record per partner point, run-long
  for (RootCause& rc : ranks) rc.plan_points();

  RootCauseResult result;
  for (const RootCause& rc : ranks) result.synchpoints += rc.synchpoints();
  // Rounds: every held rank steps in rank order, one exchange, every held rank takes in what
  // came. The rounds are those of one process per rank: records between co-located ranks take
  // the exchange's in-memory path in the same round, so every value and the round count are
  // the same for any number of processes.
  bool received = false;
  for (;;) {
    bool moved = false, done = true;
    for (RootCause& rc : ranks) {
      moved = rc.step() || moved;
      done = done && rc.done();
    }
    // Two questions ride with the round's block sizes: is some process not done or sending,
    // and did some process get anywhere since the last round (docs: as at one rank per process).
    const int flags[2] = {done && exchange.outbox_empty() ? 0 : 1, moved || received ? 1 : 0};
    int any[2] = {0, 0};
    exchange.exchange(flags, any);
    received = false;
    for (RootCause& rc : ranks) received = rc.receive() || received;
    ++result.rounds;
    if (any[0] == 0) break;
    // Nothing moved anywhere and nothing came: the records these points wait for never come
    // (a trace whose parts do not fit together). They are skipped, counted and named in one
    // line; everything else is kept.
    if (any[1] == 0)
      for (RootCause& rc : ranks) result.skipped += rc.skip_stuck();
  }
  MPI_Allreduce(MPI_IN_PLACE, &result.skipped, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  for (RootCause& rc : ranks) rc.finish();
  return result;
}

}  // namespace cpreplay::analysis
