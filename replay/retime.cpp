// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay: a forward dataflow over messages and collectives with one clock per
// scenario, and a backward one for the slack, in rounds on the record transport.
#include "replay/retime.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "cpreplay/error.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/pointer_jump.hpp"
#include "replay/record_exchange.hpp"
#include "replay/rounding.hpp"

namespace cpreplay::replay {
namespace {

using Clk = std::int64_t;
constexpr Clk kNeg = std::numeric_limits<Clk>::min() / 4;  // "no constraint" in max
constexpr Clk kPos = std::numeric_limits<Clk>::max() / 4;  // "no constraint" in min

/// Record kinds on the transport: forward (F) and backward (B).
enum Rec : std::uint8_t {
  kLsF = 1,  ///< sender -> receiver: the send call's Enter, per clock
  kLrF,      ///< receiver -> sender: the receive request call's Enter, per clock
  kUpF,      ///< member -> host: a collective begin, per clock (or "not a source")
  kReqF,     ///< binding member -> host: "tell me my constraint"
  kDownF,    ///< host -> binding member: its constraint, per clock
  kLsB,      ///< receiver -> sender: latest time for the send call's Enter
  kLrB,      ///< sender -> receiver: latest time for the request call's Enter
  kUpB,      ///< binding member -> host: latest time its begin sources allow
  kDownB,    ///< host -> source member: latest time for its begin
};

/// How a collective instance binds (the wait-state rules, scalasca-metrics.md §4).
enum class Bind : std::uint8_t {
  None,     ///< nobody waits (zero payload, non-blocking, Alltoallv/w, alone)
  All,      ///< binding members wait for the latest begin of all members
  Senders,  ///< binding members wait for the latest begin of the members that sent
  Root,     ///< binding members wait for the root's begin
  Scan,     ///< a binding member waits for the latest begin of the senders up to itself
  Reset,    ///< All, on all ranks, every rank binding: the run is cut into parts there
};

struct CollEntry {
  EventIdx begin = kNoEvent;
  EventIdx end = kNoEvent;
  std::uint32_t comm = 0;
  std::uint32_t k = 0;
  std::uint32_t local = 0;  ///< this rank's communicator-local rank
  Bind type = Bind::None;
  bool binds = false;   ///< this rank's end waits (rules)
  bool source = false;  ///< this rank's begin is a partner of the binding members
  bool up = false;      ///< this rank sends its begin (or a marker) to the host
};

/// One bit per event, and the number of set bits before an event in O(1): the per-message and
/// per-synchronization tables are indexed by it, so no lookup searches (0.19 B per event).
class EventBits {
 public:
  void resize(std::size_t events) { words_.assign((events + 63) / 64 + 1, 0); }
  void set(EventIdx e) { words_[e >> 6] |= std::uint64_t{1} << (e & 63); }
  bool test(EventIdx e) const { return (words_[e >> 6] >> (e & 63)) & 1u; }
  /// After the last set(): makes rank() work.
  void finish() {
    before_.resize(words_.size());
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < words_.size(); ++i) {
      before_[i] = count;
      count += static_cast<std::uint32_t>(__builtin_popcountll(words_[i]));
    }
  }
  /// Set bits before e (the index of e's entry when e is set).
  std::uint32_t rank(EventIdx e) const {
    const std::uint64_t below = words_[e >> 6] & ((std::uint64_t{1} << (e & 63)) - 1);
    return before_[e >> 6] + static_cast<std::uint32_t>(__builtin_popcountll(below));
  }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint32_t> before_;
};

/// A synchronization whose time, in the profiled clock, came from a partner: the re-timed run's
/// critical path jumps from it to the partner's event. 20 B.
struct Hop {
  enum Kind : std::uint8_t {
    kCallOf,  ///< the Enter of the MPI call holding event a on `rank`
    kBegin,   ///< the begin of instance b on communicator a
    kCut,     ///< the begin of the a-th cut
    kThread,  ///< event b of thread a of the same rank (an OpenMP synchronization's partner)
  };
  EventIdx event = kNoEvent;  ///< the synchronization on this location
  Rank rank = -1;             ///< where the path continues
  std::uint8_t kind = kCallOf;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

/// A hop as its target rank gets it: which of its events the path reaches.
struct HopTarget {
  std::uint32_t kind;
  std::uint32_t a;
  std::uint32_t b;
};

std::uint64_t key_of(Rec r, std::uint32_t hi, std::uint32_t lo) {
  return (std::uint64_t{r} << 56) | (std::uint64_t{hi} << 32) | lo;
}

/// Open-addressing map from non-zero 64-bit keys to values (records waiting for their event):
/// one probe sequence per lookup, no allocation per record.
class FlatMap {
 public:
  FlatMap() { keys_.assign(64, 0), vals_.assign(64, 0); }
  bool find(std::uint64_t key, Clk& value) const {
    for (std::size_t i = slot(key);; i = (i + 1) & mask()) {
      if (keys_[i] == key) {
        value = vals_[i];
        return true;
      }
      if (keys_[i] == 0) return false;
    }
  }
  /// Inserts; a key already present is overwritten (returns false).
  bool insert(std::uint64_t key, Clk value) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask()) {
      if (keys_[i] == key) {
        vals_[i] = value;
        return false;
      }
      if (keys_[i] == 0) {
        keys_[i] = key;
        vals_[i] = value;
        ++size_;
        return true;
      }
    }
  }
  void erase(std::uint64_t key) {
    std::size_t i = slot(key);
    for (;; i = (i + 1) & mask()) {
      if (keys_[i] == 0) return;
      if (keys_[i] == key) break;
    }
    // Backward shift: later entries of the probe run move up, so lookups never see a hole.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (keys_[j] == 0) break;
      const std::size_t home = slot(keys_[j]);
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        keys_[i] = keys_[j];
        vals_[i] = vals_[j];
        i = j;
      }
    }
    keys_[i] = 0;
    --size_;
  }
  std::size_t size() const { return size_; }
  void clear() {
    keys_.assign(64, 0);
    vals_.assign(64, 0);
    size_ = 0;
  }

 private:
  std::size_t mask() const { return keys_.size() - 1; }
  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask();
  }
  void grow() {
    std::vector<std::uint64_t> keys(keys_.size() * 2, 0);
    std::vector<Clk> vals(keys.size(), 0);
    keys.swap(keys_);
    vals.swap(vals_);
    size_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0) insert(keys[i], vals[i]);
  }
  std::vector<std::uint64_t> keys_;
  std::vector<Clk> vals_;
  std::size_t size_ = 0;
};

/// Per collective instance on its host (the member of local rank k mod size).
struct HostInstance {
  Bind type = Bind::None;
  std::uint32_t comm = 0;
  std::uint32_t size = 0;
  std::uint32_t expected = 0;  ///< begin records to wait for
  std::uint32_t got = 0;
  std::vector<Clk> clocks;     ///< max per clock; Scan: size x clocks, per local rank
  Rank argmax = -1;            ///< whose begin is latest in the profiled clock (not Scan)
  std::vector<std::uint8_t> arrived;  ///< Scan: per local rank
  std::vector<std::pair<Rank, std::uint32_t>> waiting;  ///< binders to answer (rank, local)
  std::uint32_t binders = 0;
  std::vector<std::uint32_t> binder_locals;  ///< Scan
  std::vector<std::uint32_t> source_locals;  ///< Senders, Scan, Root
  // Backward.
  std::uint32_t binders_in = 0;
  Clk min_value = kPos;
  std::vector<Clk> binder_values;  ///< Scan: per binder_locals entry
  std::vector<std::uint8_t> binder_in;  ///< Scan
  std::vector<std::uint8_t> replied;  ///< per source (All: per local rank)
  bool all_replied = false;
};

/// A matched send's note to its receiver: in which candidate segments the send and its binding
/// completion lie.
struct SendNote {
  Rank dest;             ///< the receiver
  EventIdx request;      ///< the receiver's request event
  std::uint32_t send;    ///< the send's segment
  std::uint32_t attach;  ///< the binding completion's segment, or UINT32_MAX
};

/// A collective member's note to the instance's host: in which segment it begins.
struct MemberNote {
  Rank dest;  ///< the host
  std::uint32_t comm, k, segment;
};

class Retimer;

/// What every held rank's replay shares.
struct Context {
  const Definitions& defs;
  const CallTree& tree;
  const RetimeRequest& req;
  std::uint32_t S;     ///< clocks
  std::size_t window;  ///< parts per window
  int path;            ///< the clock whose critical path is profiled, or -1
};

/// One held rank's side of the re-timing replay (its master thread's; in hybrid traces also
/// one per worker thread, which its master steps beside it). The driver (Retimer, below) runs
/// each phase for all held ranks in rank order and does the reductions once per process; the
/// rounds are those of one process per rank: every rank steps, one exchange moves what they
/// produced (records to co-located ranks in memory), every rank takes in what came.
class RankRetimer {
 public:
  /// `master`: the rank's master thread's replay, for a worker thread's (docs/what-if.md,
  /// "Threads"); nullptr for a master.
  RankRetimer(const Context& ctx, const LocalTrace& trace, RankRetimer* master = nullptr)
      : defs_(ctx.defs), tree_(ctx.tree), trace_(trace), req_(ctx.req),
        me_(trace.rank), thread_(trace.thread), S_(ctx.S), window_(ctx.window), path_(ctx.path),
        master_(master != nullptr ? master : this) {
    // Test hook (tests/e2e/what_if_test.cpp): CPREPLAY_TEST_RETIME_NUDGE=R:E moves event E of
    // rank R (R.T:E: of its thread T) by one tick in the unchanged clock, to show that the
    // replay's check catches it.
    if (const char* nudge = std::getenv("CPREPLAY_TEST_RETIME_NUDGE")) {
      int rank = -1, thread = 0;
      unsigned long event = 0;
      if (std::sscanf(nudge, "%d.%d:%lu", &rank, &thread, &event) == 3 ||
          std::sscanf(nudge, "%d:%lu", &rank, &event) == 2)
        if (rank == me_ && thread == thread_) nudge_ = static_cast<EventIdx>(event);
    }
  }
  RankRetimer(const RankRetimer&) = delete;
  RankRetimer& operator=(const RankRetimer&) = delete;

  const std::string& error() const { return error_; }
  std::uint64_t released() const { return released_; }

 private:
  friend class Retimer;

  // ---- Time and call paths -----------------------------------------------------------------
  Clk T(EventIdx e) const { return static_cast<Clk>(trace_.time[e]); }
  double seconds(Clk ticks) const {
    return static_cast<double>(ticks) / static_cast<double>(defs_.clock.ticks_per_second);
  }
  std::uint32_t parent(std::uint32_t cp) const {
    const CallpathId p = tree_.node(CallpathId{cp}).parent;
    return p.valid() ? p.value : UINT32_MAX;
  }
  /// The call path of the activity that ends at e (the innermost region open before e).
  std::uint32_t activity_path(EventIdx e) const {
    switch (trace_.kind[e]) {
      case EventKind::Enter:
        // A worker thread's outermost regions: their parent (its master's call path at the
        // fork) is not open on the thread (index_openmp_events).
        if (thread_ != 0 && omp_path_.size() > 0 && omp_events_.test(e))
          return omp_path_[omp_events_.rank(e)];
        return parent(trace_.ref[e]);
      case EventKind::Leave: return trace_.ref[e];
      case EventKind::ThreadFork: case EventKind::ThreadJoin: case EventKind::ThreadTeam:
      case EventKind::ThreadLock:
        // Looked up, not searched: the region enclosing an OpenMP event may lie far back.
        if (omp_path_.size() > 0) return omp_path_[omp_events_.rank(e)];
        [[fallthrough]];
      default: {
        const EventIdx call = trace_.call_of(e);
        return call == kNoEvent ? UINT32_MAX : trace_.ref[call];
      }
    }
  }
  Rank peer(EventIdx e) const { return peer_rank(defs_, trace_, e); }
  MpiClass call_class(EventIdx call) const {
    return defs_.region(trace_.region_of(call)).mpi_class;
  }
  /// The original non-waiting time of the activity that ends at e (e > 0).
  Clk busy(EventIdx e, Clk d) const {
    return sync_.test(e) ? std::max<Clk>(gap_[sync_.rank(e)], 0) : d;
  }

  /// A receive or send completion: all of them in one MPI call complete together (a Waitall
  /// records them at its end, after waiting for the last), so their constraints bind at the
  /// first of them (scalasca-metrics.md §5: in a multi-wait call only the longest wait counts).
  static bool completion(EventKind k) {
    return k == EventKind::Recv || k == EventKind::Irecv || k == EventKind::IsendComplete;
  }
  /// Calls f(Rec, event) for every partner the completions of x's call from x on wait for:
  /// (kLsF, matched receive completion) and (kLrF, send whose completion binds).
  template <class F>
  void completions_from(EventIdx x, F&& f) const {
    for (EventIdx i = x; i < trace_.size(); ++i) {
      const EventKind k = trace_.kind[i];
      if (k == EventKind::Enter || k == EventKind::Leave) break;
      if ((k == EventKind::Recv || k == EventKind::Irecv) && recvd_.test(i)) f(kLsF, i);
      if (k == EventKind::IsendComplete) {
        const EventIdx isend = trace_.ref[i];
        if (isend < i && trace_.kind[isend] == EventKind::Isend && lr_.test(isend))
          f(kLrF, isend);
      }
    }
  }

  // ---- Scenarios ---------------------------------------------------------------------------
  struct Mod {
    std::uint32_t clock;
    int slot;  ///< Balance: its slot among the open visits; -1: a factor
    double factor;
  };

  /// Changes per call path (CSR); a balance slot per Balance change; rebalance factors from
  /// every rank's non-waiting time in the call path. First this rank's ticks and visits of the
  /// call paths to balance (integers: their sum over ranks does not depend on the order)...
  void plan_stats() {
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
    if (m == 0) return;
    std::vector<std::uint32_t> open;  // call paths of the open regions
    for (EventIdx e = 0; e < trace_.size(); ++e) {
      const EventKind k = trace_.kind[e];
      // (A worker thread's outermost regions hang below its master's call path, which is not
      // open on the thread: activity_path knows that.)
      const std::uint32_t cp = threads_       ? activity_path(e)
                               : open.empty() ? UINT32_MAX
                                              : open.back();
      if (e > 0 && cp != UINT32_MAX && stat_of_[cp] != UINT32_MAX)
        stats_[stat_of_[cp]] += busy(e, T(e) - T(e - 1));
      if (k == EventKind::Enter) {
        open.push_back(trace_.ref[e]);
        if (stat_of_[trace_.ref[e]] != UINT32_MAX) stats_[m + stat_of_[trace_.ref[e]]] += 1;
      } else if (k == EventKind::Leave && !open.empty()) {
        open.pop_back();
      }
    }
    for (std::size_t i = 0; i < m; ++i) stats_[2 * m + i] = stats_[i] > 0 ? 1 : 0;
  }

  /// ...then, with `global` (stats_ summed over all ranks), the changes.
  void plan_finish(const std::vector<std::int64_t>& global_stats) {
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
    B_ = visit_mean_.size();
    mpi_path_.assign(n, 0);
    for (std::size_t c = 0; c < n; ++c)
      mpi_path_[c] = defs_.region(RegionId{trace_.region_of_path[c]}).is_mpi() ? 1 : 0;
    std::vector<TimeChange>().swap(sorted_changes_);
    std::vector<std::uint32_t>().swap(stat_of_);
    std::vector<std::int64_t>().swap(stats_);
  }

  bool changed(std::uint32_t cp) const {
    return cp != UINT32_MAX && change_begin_[cp] != change_begin_[cp + 1];
  }

  /// Adds to each clock what the scenario makes of `d` ticks of non-waiting time in call path
  /// cp (the base value d is already added to every clock). `vis` holds the open visits'
  /// balance factors.
  void apply_changes(Clk* a, std::uint32_t cp, Clk d, const double* vis, EventIdx e) const {
    for (std::uint32_t i = change_begin_[cp]; i < change_begin_[cp + 1]; ++i) {
      const Mod& m = mods_[i];
      double f = m.factor;
      if (m.slot >= 0) {
        f = vis[m.slot];
        if (f < 0.0) {
          // A visit without non-waiting time: the mean is added at its Leave.
          a[m.clock] -= d;
          if (trace_.kind[e] == EventKind::Leave && trace_.ref[e] == cp)
            a[m.clock] += round_half_away(visit_mean_[m.slot]);
          continue;
        }
        if (std::isnan(f)) continue;
      }
      a[m.clock] += round_half_away(static_cast<double>(d) * f) - d;
    }
  }

  /// The factor that gives the visit entered at `enter` the balance slot's mean non-waiting
  /// time; -1 for a visit without non-waiting time.
  double visit_factor(EventIdx enter, int slot) const {
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

  // ---- Preparation: matching, collective rules, the cut points -------------------------------
  class MatchSink final : public MessageSink {
   public:
    explicit MatchSink(RankRetimer& r) : r_(r) {}
    void receives(const MatchedRecv* m, std::size_t n, EventIdx) override {
      for (std::size_t i = 0; i < n; ++i) {
        r_.recvd_.set(m[i].event);
        r_.recv_sender_.push_back(m[i].send.event);
        r_.recv_source_.push_back(r_.peer(m[i].event));
        r_.ready_.push_back(Ready{m[i].event, m[i].send.call_enter});
      }
    }
    void sends(const MatchedSend* m, std::size_t n, EventIdx) override {
      for (std::size_t i = 0; i < n; ++i) {
        r_.sent_.set(m[i].event);
        r_.send_request_.push_back(m[i].recv.request_event);
        r_.send_dest_.push_back(r_.peer(m[i].event));
        EventIdx attach = kNoEvent;
        if (r_.late_receiver_binds(m[i].event, m[i].recv.request_enter, attach)) {
          r_.lr_.set(m[i].event);
          r_.ready_.push_back(Ready{attach, m[i].recv.request_enter});
        }
        r_.send_event_.push_back(m[i].event);
        r_.send_attach_.push_back(attach);
      }
    }

   private:
    RankRetimer& r_;
  };

  /// Late Receiver (scalasca-metrics.md §5.3): a synchronous send's completion waits for the
  /// receive request when its call ends after the request was entered. `attach`: the event the
  /// constraint binds (the blocking send call's Leave, or the MpiIsendComplete).
  bool late_receiver_binds(EventIdx s, Ticks request_enter, EventIdx& attach) const {
    EventIdx c = s;
    if (trace_.kind[s] == EventKind::Isend) {
      c = trace_.message(s).partner;
      if (c == kNoEvent || trace_.kind[c] != EventKind::IsendComplete) return false;
    }
    const EventIdx call = trace_.call_of(c);
    if (call == kNoEvent) return false;
    const MpiClass cls = call_class(call);
    if (cls != MpiClass::Send && cls != MpiClass::WaitSingle && cls != MpiClass::WaitMulti)
      return false;
    const EventIdx leave = trace_.leave_of(call);
    if (leave == kNoEvent || !(trace_.time[leave] > request_enter)) return false;
    attach = trace_.kind[s] == EventKind::Send ? leave : c;
    return true;
  }

  /// Segment of event e among the candidate cut points: how many candidate ends are <= e.
  std::size_t candidate_segment(EventIdx e) const {
    return static_cast<std::size_t>(std::upper_bound(cand_end_.begin(), cand_end_.end(), e) -
                                    cand_end_.begin());
  }

  /// Candidates a .. b - 1 (or b .. a - 1) lie between a constraint in segment a and its
  /// partner in segment b: they are no cuts.
  void separate(std::size_t a, std::size_t b) {
    for (std::size_t j = std::min(a, b); j < std::max(a, b) && j < disq_.size(); ++j) disq_[j] = 1;
  }

  // Which candidate segment each partner of a constraint lies in is told to the constraint's
  // side in one exchange per kind (the driver's separate_partners): senders tell receivers
  // where their sends (and binding completions) are; members tell the instance's host where
  // they begin. Exact also where clocks disagree (comparing times would not be).

  /// The note on the i-th matched send, for its receiver.
  SendNote send_note(std::size_t i) const {
    const EventIdx attach = send_attach_[i];
    return SendNote{send_dest_[i], send_request_[i],
                    static_cast<std::uint32_t>(candidate_segment(send_event_[i])),
                    attach == kNoEvent ? UINT32_MAX
                                       : static_cast<std::uint32_t>(candidate_segment(attach))};
  }

  void take_send_note(const SendNote& note) {
    if (note.request >= trace_.size()) return;
    const std::size_t request = candidate_segment(note.request);
    if (note.attach != UINT32_MAX) separate(note.attach, request);  // Late Receiver
    EventIdx completion = note.request;
    if (trace_.kind[note.request] == EventKind::IrecvRequest) completion = trace_.ref[note.request];
    if (completion < trace_.size() && recvd_.test(completion))
      separate(note.send, candidate_segment(completion));  // the receive waits
  }

  /// Where this rank begins the i-th collective, for the instance's host.
  MemberNote member_note(std::size_t i) const {
    const CollEntry& c = colls_[i];
    return MemberNote{host_of(c.comm, c.k), c.comm, c.k,
                      static_cast<std::uint32_t>(candidate_segment(c.begin))};
  }

  void take_member_note(const MemberNote& m) {
    auto it = span_.emplace((std::uint64_t{m.comm} << 32) | m.k,
                            std::make_pair(m.segment, m.segment))
                  .first;
    it->second.first = std::min(it->second.first, m.segment);
    it->second.second = std::max(it->second.second, m.segment);
  }

  /// After the senders' exchange: what only it needed (before the members' exchange, so
  /// both are never held at once).
  void drop_send_notes() {
    std::vector<EventIdx>().swap(send_event_);
    std::vector<EventIdx>().swap(send_attach_);
  }

  /// After both exchanges: the candidates between an instance's members are no cuts.
  void separate_members() {
    for (const auto& [key, sp] : span_) separate(sp.first, sp.second);
    std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>().swap(span_);
    colls_.clear();
  }

  struct InstanceInfo {
    CollEntry entry;
    Ticks latest_begin = 0;
    Ticks ready = 0;        ///< binding: the original time of what it waits for
    bool reset_ok = false;  ///< this rank allows a cut here
  };

  /// 12 B, not 16: one per receive and binding synchronization, all held until the end of the
  /// preparation (the what-if phase's peak); x86-64 reads the unaligned time as fast.
#pragma pack(push, 4)
  struct Ready {
    EventIdx event;
    Ticks time;
  };
#pragma pack(pop)
  static_assert(sizeof(Ready) == 12, "Ready is held per synchronization");

  // ---- Preparation, in phases between which the driver reduces over all ranks ------------
  /// (0) Before the collective timings.
  void prepare_begin() {
    const std::size_t n = trace_.size();
    sent_.resize(n);
    lr_.resize(n);
    recvd_.resize(n);
    sync_.resize(n);
    lr_req_.resize(n);
  }

  /// (1) Collective rules, from the forward replay's timings (the driver's sink hands them
  /// here), then the cut candidates: the instances of one communicator holding every rank (the
  /// one with the most instances; MPI_Init/MPI_Finalize when there is none). Counts agree on all
  /// ranks. Returns whether this rank saw every candidate (--partial may have dropped some).
  bool prepare_candidates(CollectiveTable table) {
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

  /// (1b) With `complete` agreed over all ranks (else no cuts): the candidates' facts; then
  /// the sink for the message matching.
  void prepare_messages(bool complete) {
    if (!complete) cands_.clear();
    for (const InstanceInfo* c : cands_) {
      cand_end_.push_back(c->entry.end);
      cand_m_.push_back(c->latest_begin);
      disq_.push_back(c->reset_ok ? 0 : 1);
    }
    // (2) Messages, matched as the forward replay matches them (the driver).
    ready_.reserve(trace_.p2p.size() + colls_.size() + infos_.size());
  }

  /// (3) After the matching: no constraint may reach across a cut: messages, and collectives
  /// other than the candidates (whose members all lie between the same two candidates). The
  /// driver's exchanges mark the candidates they cross (separate_partners).
  void prepare_separate() {
    sent_.finish();
    recvd_.finish();
    for (const InstanceInfo& info : infos_)
      if (info.entry.type != Bind::None && info.entry.comm != best_) colls_.push_back(info.entry);
  }

  /// (4) With `disq` (ORed over all ranks): the cuts every rank allows, and the rest.
  void prepare_finish(const std::vector<std::uint8_t>& disq) {
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
    // ready time (its own previous event, or what the rules say it waits for).
    std::sort(ready_.begin(), ready_.end(),
              [](const Ready& a, const Ready& b) { return a.event < b.event; });
    // The completions of one call bind at its first one.
    EventIdx call = kNoEvent, first = kNoEvent;
    for (Ready& r : ready_) {
      if (r.event >= n || !completion(trace_.kind[r.event])) continue;
      const EventIdx c = trace_.call_of(r.event);
      if (c != call) {
        call = c;
        first = r.event;
      }
      r.event = first;
    }
    for (std::size_t i = 0; i < ready_.size(); ++i) {
      const EventIdx e = ready_[i].event;
      Ticks ready = ready_[i].time;
      for (; i + 1 < ready_.size() && ready_[i + 1].event == e; ++i) {
        const Ticks time = ready_[i + 1].time;  // Ready is packed: a copy for std::max's references
        ready = std::max(ready, time);
      }
      if (e == 0 || e >= n) continue;
      ready = std::max(ready, trace_.time[e - 1]);
      sync_.set(e);
      gap_.push_back(T(e) - static_cast<Clk>(ready));
    }
    sync_.finish();
    std::vector<Ready>().swap(ready_);
  }

  /// Where each part starts: the open balance visits there.
  void part_visits() {
    const std::size_t nparts = part_count();
    part_visits_.assign(nparts * B_, std::numeric_limits<double>::quiet_NaN());
    if (B_ == 0 || nparts <= 1) return;
    struct Open {
      EventIdx enter;
      int slot;
      double factor;
      bool known;
    };
    std::vector<Open> stack;
    bool any = false;
    std::size_t next = 1;  // the part whose start comes next (a thread's parts may be empty)
    for (EventIdx e = 0; e < trace_.size() && next < nparts; ++e) {
      for (; next < nparts && part_start(next) == e; ++next)
        for (Open& o : stack) {
          if (o.slot < 0) continue;
          if (!o.known) {
            o.factor = visit_factor(o.enter, o.slot);
            o.known = true;
          }
          part_visits_[next * B_ + static_cast<std::size_t>(o.slot)] = o.factor;
          any = true;
        }
      if (trace_.kind[e] == EventKind::Enter)
        stack.push_back(Open{e, slot_of_[trace_.ref[e]], 0.0, false});
      else if (trace_.kind[e] == EventKind::Leave && !stack.empty())
        stack.pop_back();
    }
    // A worker thread's parts start outside its regions: usually nothing to keep.
    if (thread_ != 0 && !any) std::vector<double>().swap(part_visits_);
  }

  bool world_like(std::uint32_t c) const {
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

  std::uint32_t local_rank(std::uint32_t comm) const {
    if (comm == defs_.comms.size()) return static_cast<std::uint32_t>(me_);
    const Communicator& c = defs_.comms[comm];
    if (c.is_self) return 0;
    for (std::size_t i = 0; i < c.members.size(); ++i)
      if (c.members[i] == me_) return static_cast<std::uint32_t>(i);
    return 0;
  }

  Rank world_of(std::uint32_t comm, std::uint32_t local) const {
    if (comm == defs_.comms.size()) return static_cast<Rank>(local);
    return defs_.comms[comm].world_rank(local, me_);
  }

  std::uint32_t comm_size(std::uint32_t comm) const {
    if (comm == defs_.comms.size()) return static_cast<std::uint32_t>(defs_.ranks());
    return defs_.comms[comm].size();
  }

  /// The instance's binding rule on this rank (the wait-state pass's rules, decided on the
  /// original run; the re-timed run recomputes only the times).
  InstanceInfo classify(const CollInstance& inst, const CollTiming& t) const {
    InstanceInfo info;
    CollEntry& c = info.entry;
    c.begin = inst.begin;
    c.end = inst.end;
    c.comm = inst.comm;
    c.k = inst.index;
    c.local = local_rank(inst.comm);
    info.latest_begin = t.latest_begin;
    if (!analyzed(defs_, trace_, inst) || t.comm_size <= 1) return info;
    std::uint64_t sent = 0, received = 0;
    if (trace_.kind[inst.end] == EventKind::CollEnd) {
      sent = trace_.coll_sent(inst.end);
      received = trace_.coll_received(inst.end);
    }
    const bool payload = sent > 0 || received > 0;
    const Ticks b = trace_.time[inst.begin];
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
                    (t.latest_sender == me_ || (received > 0 && b < t.latest_sender_begin));
        }
        break;
      case CollKind::OneToN:
        if (t.root_sent > 0) {
          c.type = Bind::Root;
          c.binds = me_ != t.root && received > 0;
        }
        break;
      case CollKind::NToOne:
        if (t.root_received > 0 && t.has_sender) {
          c.type = Bind::Senders;
          c.binds = me_ == t.root;
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
      case Bind::Root: c.source = c.up = me_ == t.root; break;
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

  // ---- OpenMP (hybrid traces): a rank's threads synchronize in memory ------------------------
  // A master replays its rank's worker threads (team_) beside it, part by part. Their OpenMP
  // synchronizations meet at gates: one per fork, barrier instance, join and lock hand-over,
  // written by the events whose new times bind (the latest counts) and read by the events they
  // bind (docs/what-if.md, "Threads"). All threads of a rank are on this process, so a gate is
  // plain memory, filled and read within a round.

  /// One gate, on the master. 20 B per OpenMP synchronization.
  struct Gate {
    std::uint32_t writers = 0;  ///< events whose new times it combines
    std::uint32_t readers = 0;  ///< events it binds
    std::uint32_t got = 0;      ///< forward: writes so far; backward: readers' values so far
    std::uint32_t read = 0;     ///< forward: reads so far
    std::uint32_t slot = UINT32_MAX;  ///< forward: its clocks in gate_pool_, while in use
  };
  /// A location's link to a gate: the gate's index, with kWrites when the event writes it.
  static constexpr std::uint32_t kWrites = 1u << 31;
  static constexpr std::uint32_t kNoLink = UINT32_MAX;

  std::uint32_t link_of(EventIdx e) const {
    return threads_ && omp_.test(e) ? link_[omp_.rank(e)] : kNoLink;
  }

  std::string where() const {
    return "rank " + std::to_string(me_) +
           (thread_ != 0 ? ", thread " + std::to_string(thread_) : std::string());
  }

  /// The call path of the activity that ends at each OpenMP event (ThreadFork/Join/Team/Lock),
  /// so that activity_path never searches back for it: the region open there, except that a
  /// worker thread's team begin, outside any region of its own, ends the time since the fork
  /// (scout's omp_fork), which belongs to the parallel region the thread enters next. Also a
  /// worker thread's Enters outside any region (none: the thread runs nothing there).
  void index_openmp_events() {
    const std::size_t n = trace_.size();
    omp_events_.resize(n);
    std::vector<std::uint32_t> open, paths;
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
    omp_path_ = std::move(paths);
  }

  /// Before the cuts are agreed (a master with threads): no cut inside a parallel region, so
  /// that every team's synchronizations lie in one part.
  void openmp_disqualify() {
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

  /// (4b) A master with threads, once the cuts are known: the part each thread event is
  /// replayed in, the gates and their links, and each bound event's completion time (the
  /// master's go with its MPI ones into ready_; the threads' are set here).
  void prepare_openmp() {
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

    // The links, location by location.
    struct Link {
      std::uint32_t loc;
      EventIdx event;
      std::uint32_t gate;  ///< with kWrites for a writer
    };
    std::vector<Link> links;
    std::uint32_t gates = 0;
    std::vector<std::uint32_t> fork_gate(forks.size()), join_gate(forks.size(), UINT32_MAX);
    for (std::size_t k = 0; k < forks.size(); ++k) {
      fork_gate[k] = gates++;
      links.push_back(Link{0, forks[k], fork_gate[k] | kWrites});
      if (joins[k] != kNoEvent) {
        join_gate[k] = gates++;
        links.push_back(Link{0, joins[k], join_gate[k]});
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
              if (l > 0 && team != UINT32_MAX) links.push_back(Link{loc, e, fork_gate[team]});
            } else {
              if (l > 0 && team != UINT32_MAX && join_gate[team] != UINT32_MAX)
                links.push_back(Link{loc, e, join_gate[team] | kWrites});
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
            links.push_back(Link{loc, e, gate | kWrites});
            const EventIdx leave = t.leave_of(e);
            if (leave != kNoEvent) links.push_back(Link{loc, leave, gate});
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
      links.push_back(Link{it->loc, it->event, gates | kWrites});
      links.push_back(Link{acq.loc, acq.event, gates++});
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
    std::vector<std::uint32_t> gate_part(gates, UINT32_MAX);
    for (Link& k : links)
      if (k.gate & kWrites) {
        const std::uint32_t g = k.gate & ~kWrites;
        if (gate_part[g] == UINT32_MAX) gate_part[g] = part_of(k.loc, k.event);
      }
    std::stable_sort(links.begin(), links.end(), [](const Link& a, const Link& b) {
      return a.loc != b.loc ? a.loc < b.loc : a.event < b.event;
    });
    gates_.assign(gates, Gate{});
    std::size_t n_kept = 0;  // compacted in place
    for (std::size_t i = 0; i < links.size(); ++i) {
      const Link k = links[i];
      const std::uint32_t g = k.gate & ~kWrites;
      if (i > 0 && links[i - 1].loc == k.loc && links[i - 1].event == k.event) continue;
      if (gate_part[g] == UINT32_MAX || part_of(k.loc, k.event) != gate_part[g]) continue;
      if (k.gate & kWrites)
        ++gates_[g].writers;
      else
        ++gates_[g].readers;
      links[n_kept++] = k;
    }
    links.resize(n_kept);
    const std::vector<Link>& kept = links;
    std::vector<Ticks> ready(gates, 0);  // the gate's writers' latest original time
    for (const Link& k : kept)
      if (k.gate & kWrites) ready[k.gate & ~kWrites] =
          std::max(ready[k.gate & ~kWrites], at(k.loc).trace_.time[k.event]);
    std::size_t next = 0;  // kept is in location order
    for (std::size_t l = 0; l < locs; ++l) {
      RankRetimer& r = at(l);
      r.omp_.resize(r.trace_.size());
      r.link_.clear();
      for (; next < kept.size() && kept[next].loc == l; ++next) {
        const Link& k = kept[next];
        const std::uint32_t g = k.gate & ~kWrites;
        if (gates_[g].writers == 0 || gates_[g].readers == 0) continue;
        r.omp_.set(k.event);
        r.link_.push_back(k.gate);
        if (k.gate & kWrites) continue;
        if (l == 0) {
          ready_.push_back(Ready{k.event, ready[g]});
          continue;
        }
        // A thread's bound event ends at the gate's new time plus its completion: from the
        // later of the gate's writers and its own previous event (not at its part's start,
        // which no event of an earlier part binds).
        Ticks from = ready[g];
        if (k.event > r.wstart_[part_of(l, k.event)])
          from = std::max(from, r.trace_.time[k.event - 1]);
        r.sync_.set(k.event);
        r.gap_.push_back(r.T(k.event) - static_cast<Clk>(from));
      }
      r.omp_.finish();
      if (l > 0) r.sync_.finish();
    }
    for (Gate& g : gates_)
      if (g.writers == 0 || g.readers == 0) g = Gate{};
  }

  // Forward: a gate's clocks live in gate_pool_ (S clocks, then the thread and the event of
  // its latest writer in the profiled clock) from its first write to its last read.
  void gates_forward_begin() {
    for (Gate& g : gates_) g.got = g.read = 0, g.slot = UINT32_MAX;
    gate_pool_.clear();
    gate_free_.clear();
  }

  void gate_write(std::uint32_t id, const Clk* a, int thread, EventIdx e) {
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

  /// The gate's clocks once every writer wrote, else nullptr.
  const Clk* gate_ready(std::uint32_t id) const {
    const Gate& g = gates_[id];
    return g.got >= g.writers && g.slot != UINT32_MAX ? &gate_pool_[g.slot * (S_ + 2)]
                                                      : nullptr;
  }

  void gate_read(std::uint32_t id) {
    Gate& g = gates_[id];
    if (++g.read >= g.readers && g.slot != UINT32_MAX) {
      gate_free_.push_back(g.slot);
      g.slot = UINT32_MAX;
    }
  }

  // Backward: a gate collects its readers' latest times less their completion times (the
  // minimum); its writers wait for all of them.
  void gates_backward_begin() {
    for (Gate& g : gates_) g.got = 0;
    gate_min_.assign(gates_.size(), kPos);
    std::vector<Clk>().swap(gate_pool_);
    std::vector<std::uint32_t>().swap(gate_free_);
  }

  void gate_give(std::uint32_t id, Clk value) {
    gate_min_[id] = std::min(gate_min_[id], value);
    ++gates_[id].got;
  }

  bool gate_given(std::uint32_t id, Clk& value) const {
    if (gates_[id].got < gates_[id].readers) return false;
    value = gate_min_[id];
    return true;
  }

  // ---- Transport --------------------------------------------------------------------------
  template <class V>
  static void put(ByteBuffer& out, const V& v) {
    out.append(&v, sizeof(V));
  }
  template <class V>
  static V get(const char*& p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    p += sizeof(V);
    return v;
  }
  /// Clock 0, then the other clocks as differences from it: 4 bytes each when all fit (the
  /// usual case: scenarios differ by less than 2 s within a part), else 8.
  void put_clocks(ByteBuffer& out, const Clk* c) {
    bool small = true;
    for (std::uint32_t s = 1; s < S_; ++s) {
      const Clk d = c[s] - c[0];
      small = small && d >= std::numeric_limits<std::int32_t>::min() &&
              d <= std::numeric_limits<std::int32_t>::max();
    }
    // Built aside and appended in one piece (a resize would zero-fill first).
    tx_.resize(sizeof(Clk) + 1 + 8 * static_cast<std::size_t>(S_));
    char* buf = tx_.data();
    char* p = buf;
    std::memcpy(p, c, sizeof(Clk));
    p[sizeof(Clk)] = small ? 1 : 0;
    p += sizeof(Clk) + 1;
    for (std::uint32_t s = 1; s < S_; ++s) {
      const Clk d = c[s] - c[0];
      if (small) {
        const auto d32 = static_cast<std::int32_t>(d);
        std::memcpy(p, &d32, 4);
        p += 4;
      } else {
        std::memcpy(p, &d, 8);
        p += 8;
      }
    }
    out.append(buf, static_cast<std::size_t>(p - buf));
  }
  void get_clocks(const char*& p, Clk* c) const {
    std::memcpy(c, p, sizeof(Clk));
    const bool small = p[sizeof(Clk)] != 0;
    p += sizeof(Clk) + 1;
    for (std::uint32_t s = 1; s < S_; ++s) {
      if (small) {
        std::int32_t d32;
        std::memcpy(&d32, p, 4);
        p += 4;
        c[s] = c[0] + d32;
      } else {
        Clk d;
        std::memcpy(&d, p, 8);
        p += 8;
        c[s] = c[0] + d;
      }
    }
  }

  /// Stores a record's clocks until their event consumes them; returns the slot.
  /// Stores a record's clocks (and, after them, the partner whose time the profiled clock
  /// took) until their event consumes them; returns the slot.
  Clk pool_store(const char*& p, Rank partner = -1) {
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(pool_.size() / (S_ + 1));
      pool_.resize(pool_.size() + S_ + 1);
    }
    Clk* to = &pool_[static_cast<std::size_t>(slot) * (S_ + 1)];
    get_clocks(p, to);
    to[S_] = partner;
    return slot;
  }
  const Clk* pool_at(Clk slot) const {
    return &pool_[static_cast<std::size_t>(slot) * (S_ + 1)];
  }
  void pool_free(Clk slot) { free_.push_back(static_cast<std::uint32_t>(slot)); }

  Rank host_of(std::uint32_t comm, std::uint32_t k) const {
    return world_of(comm, k % comm_size(comm));
  }

  /// Reads one round's records. Returns whether any arrived.
  bool receive(RecordExchange& ex) {
    bool any = false;
    rx_.resize(S_);
    ex.for_each_from(me_, [&](Rank source, const char* data, std::size_t size) {
      const char* p = data;
      const char* end = p + size;
      while (p < end) {
        any = true;
        const Rec type = static_cast<Rec>(get<std::uint8_t>(p));
        switch (type) {
          case kLsF: {
            const EventIdx send = get<EventIdx>(p);
            const EventIdx request = get<EventIdx>(p);
            const std::uint8_t lr = get<std::uint8_t>(p);
            inbox_.insert(key_of(kLsF, static_cast<std::uint32_t>(source), send), pool_store(p));
            if (lr && request < trace_.size())
              lr_req_.set(request);  // the backward replay hears from the sender here
            break;
          }
          case kLrF: {
            const EventIdx key = get<EventIdx>(p);
            // Only a completion that binds waits for it (its send knows).
            if (key < trace_.size() && lr_.test(key))
              inbox_.insert(key_of(kLrF, 0, key), pool_store(p));
            else
              get_clocks(p, rx_.data());
            break;
          }
          case kUpF: {
            const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
            const std::uint32_t local = get<std::uint32_t>(p);
            const std::uint8_t source = get<std::uint8_t>(p);
            if (source) get_clocks(p, rx_.data());
            host_up(comm, k, local, source ? rx_.data() : nullptr);
            break;
          }
          case kReqF: {
            const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
            const std::uint32_t local = get<std::uint32_t>(p);
            host_request(comm, k, Rank{source}, local);
            break;
          }
          case kDownF: {
            const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
            const std::int32_t argmax = get<std::int32_t>(p);
            inbox_.insert(key_of(kDownF, comm, k), pool_store(p, argmax));
            break;
          }
          case kLsB: case kLrB: {
            const EventIdx key = get<EventIdx>(p);
            inbox_.insert(key_of(type, 0, key), get<Clk>(p));
            break;
          }
          case kUpB: {
            const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
            const std::uint32_t local = get<std::uint32_t>(p);
            host_up_backward(comm, k, local, get<Clk>(p));
            break;
          }
          case kDownB: {
            const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
            inbox_.insert(key_of(kDownB, comm, k), get<Clk>(p));
            break;
          }
          default:
            // Only this code writes these records: a wrong kind is a bug, not a bad trace.
            if (error_.empty())
              error_ = "what-if replay: rank " + std::to_string(me_) +
                       ": a record of unknown kind from rank " + std::to_string(source);
            p = end;
        }
      }
    });
    return any;
  }

  // ---- Collective hosts -----------------------------------------------------------------------
  HostInstance& host_instance(std::uint32_t comm, std::uint32_t k) {
    HostInstance& h = hosted_[(std::uint64_t{comm} << 32) | k];
    if (h.size == 0) {
      h.comm = comm;
      h.size = comm_size(comm);
      // The host is a member: its own rule for the instance says which kind it is.
      const EventIdx end = table_.on(comm)[k];
      auto it = std::lower_bound(colls_.begin(), colls_.end(), end,
                                 [](const CollEntry& c, EventIdx e) { return c.end < e; });
      h.type = it != colls_.end() && it->end == end ? it->type : Bind::None;
      h.expected = h.type == Bind::Root ? 1 : h.size;
      if (h.type == Bind::Scan) {
        h.clocks.assign(static_cast<std::size_t>(h.size) * S_, kNeg);
        h.arrived.assign(h.size, 0);
      } else {
        h.clocks.assign(S_, kNeg);
      }
    }
    return h;
  }

  void host_up(std::uint32_t comm, std::uint32_t k, std::uint32_t local, const Clk* clocks) {
    HostInstance& h = host_instance(comm, k);
    ++h.got;
    if (h.type == Bind::Scan && local < h.size) h.arrived[local] = 1;
    if (clocks != nullptr) {
      if (h.type != Bind::All) h.source_locals.push_back(local);
      Clk* to = h.type == Bind::Scan ? &h.clocks[static_cast<std::size_t>(local) * S_]
                                     : h.clocks.data();
      if (path_ >= 0 && h.type != Bind::Scan) {
        // Ties go to the lower rank, so the path does not depend on arrival order.
        const Rank who = world_of(comm, local);
        if (h.argmax < 0 || clocks[path_] > to[path_] ||
            (clocks[path_] == to[path_] && who < h.argmax))
          h.argmax = who;
      }
      for (std::uint32_t s = 0; s < S_; ++s) to[s] = std::max(to[s], clocks[s]);
    }
    host_answer(h, comm, k);
  }

  void host_request(std::uint32_t comm, std::uint32_t k, Rank from, std::uint32_t local) {
    HostInstance& h = host_instance(comm, k);
    ++h.binders;
    if (h.type == Bind::Scan) h.binder_locals.push_back(local);
    h.waiting.push_back({from, local});
    host_answer(h, comm, k);
  }

  /// Answers the waiting binders whose sources are all in.
  void host_answer(HostInstance& h, std::uint32_t comm, std::uint32_t k) {
    if (h.waiting.empty()) return;
    std::vector<Clk>& value = scratch_;
    for (std::size_t i = 0; i < h.waiting.size();) {
      const auto [rank, local] = h.waiting[i];
      if (h.type == Bind::Scan) {
        bool ready = true;
        for (std::uint32_t j = 0; j <= local && ready; ++j) ready = h.arrived[j] != 0;
        if (!ready) {
          ++i;
          continue;
        }
        value.assign(S_, kNeg);
        Rank argmax = -1;
        for (std::uint32_t j = 0; j <= local; ++j) {
          const Clk* c = &h.clocks[static_cast<std::size_t>(j) * S_];
          if (path_ >= 0 && c[path_] > kNeg && (argmax < 0 || c[path_] > value[path_]))
            argmax = world_of(comm, j);
          for (std::uint32_t s = 0; s < S_; ++s) value[s] = std::max(value[s], c[s]);
        }
        value.push_back(argmax);
      } else {
        if (h.got < h.expected) return;
        value.assign(h.clocks.begin(), h.clocks.begin() + S_);
        value.push_back(h.argmax);
      }
      ByteBuffer& out = fwd_ex_->to(me_, rank);
      put(out, static_cast<std::uint8_t>(kDownF));
      put(out, comm);
      put(out, k);
      put(out, static_cast<std::int32_t>(value[S_]));
      put_clocks(out, value.data());
      h.waiting[i] = h.waiting.back();
      h.waiting.pop_back();
    }
  }

  /// Backward: a binder's latest time for its begin sources.
  void host_up_backward(std::uint32_t comm, std::uint32_t k, std::uint32_t local, Clk value) {
    auto it = hosted_.find((std::uint64_t{comm} << 32) | k);
    if (it == hosted_.end()) return;
    HostInstance& h = it->second;
    ++h.binders_in;
    h.min_value = std::min(h.min_value, value);
    if (h.type == Bind::Scan) {
      if (h.binder_values.empty()) {
        h.binder_values.assign(h.binder_locals.size(), kPos);
        h.binder_in.assign(h.binder_locals.size(), 0);
      }
      for (std::size_t i = 0; i < h.binder_locals.size(); ++i)
        if (h.binder_locals[i] == local && !h.binder_in[i]) {
          h.binder_values[i] = value;
          h.binder_in[i] = 1;
          break;
        }
    }
    host_reply_backward(h, comm, k);
  }

  /// Backward: replies to every source whose covering binders are all in.
  void host_reply_backward(HostInstance& h, std::uint32_t comm, std::uint32_t k) {
    if (h.all_replied) return;
    auto send = [&](std::uint32_t local, Clk value) {
      ByteBuffer& out = bwd_ex_->to(me_, world_of(comm, local));
      put(out, static_cast<std::uint8_t>(kDownB));
      put(out, comm);
      put(out, k);
      put(out, value);
    };
    if (h.type != Bind::Scan) {
      if (h.binders_in < h.binders) return;
      if (h.type == Bind::All) {
        for (std::uint32_t l = 0; l < h.size; ++l) send(l, h.min_value);
      } else {
        for (std::uint32_t l : h.source_locals) send(l, h.min_value);
      }
      h.all_replied = true;
      return;
    }
    if (h.replied.empty()) h.replied.assign(h.source_locals.size(), 0);
    if (h.binder_in.empty()) h.binder_in.assign(h.binder_locals.size(), 0);
    if (h.binder_values.empty()) h.binder_values.assign(h.binder_locals.size(), kPos);
    bool all = true;
    for (std::size_t i = 0; i < h.source_locals.size(); ++i) {
      if (h.replied[i]) continue;
      const std::uint32_t src = h.source_locals[i];
      bool ready = true;
      Clk value = kPos;
      for (std::size_t j = 0; j < h.binder_locals.size(); ++j)
        if (h.binder_locals[j] >= src) {
          if (!h.binder_in[j]) ready = false;
          value = std::min(value, h.binder_values[j]);
        }
      if (!ready) {
        all = false;
        continue;
      }
      send(src, value);
      h.replied[i] = 1;
    }
    h.all_replied = all;
  }

  // ---- Forward ------------------------------------------------------------------------------
  struct Part {
    std::uint32_t index = 0;
    EventIdx start = 0, stop = 0;
    EventIdx e = 0;
    std::uint32_t cc = 0;  ///< forward: next collective entry (by end); backward: last <= e, +1
    std::uint32_t cp = UINT32_MAX;
    Clk base = 0;  ///< the original latest begin of the cut that starts the part (0: the first)
    Clk prev = 0;  ///< original time of event e - 1
    bool done = false;
    EventIdx shipped = kNoEvent;   ///< event whose pre-wait records went out
    EventIdx requested = kNoEvent; ///< collective end whose request went to the host
    EventIdx released = kNoEvent;  ///< event replayed without its constraints (a stall)
    std::vector<std::pair<EventIdx, EventIdx>> pending;  ///< forward: (Leave, blocking send)
    struct Wait {
      EventIdx at;
      std::uint64_t key;
    };
    std::vector<Wait> waits;  ///< backward: records an earlier event needs
    Clk L = 0;                ///< backward: latest time of event e
  };

  /// A master's parts run from cut to cut; a worker thread's are the stretches of its events
  /// whose thread teams were forked in that part (wstart_).
  EventIdx part_start(std::size_t s) const {
    if (thread_ != 0) return wstart_[s];
    return s == 0 ? 0 : resets_[s - 1];
  }
  EventIdx part_stop(std::size_t s) const {
    if (thread_ != 0) return wstart_[s + 1];
    return s < resets_.size() ? resets_[s] : static_cast<EventIdx>(trace_.size());
  }
  /// A part's clocks: its current event's, then (masters) its MPI call's Enter.
  std::size_t stride() const { return thread_ != 0 ? S_ : 2 * S_; }
  std::size_t part_count() const {
    return thread_ != 0 ? wstart_.size() - 1 : resets_.size() + 1;
  }
  std::uint32_t first_coll_ending_after(EventIdx e) const {
    return static_cast<std::uint32_t>(
        std::upper_bound(colls_.begin(), colls_.end(), e,
                         [](EventIdx x, const CollEntry& c) { return x < c.end; }) -
        colls_.begin());
  }

  // The forward replay, in phases the driver runs for every held rank (Retimer::forward).
  void forward_begin() {
    prefix_.assign(S_, 0);  // per clock: the latest begin of the last cut (M)
    last_.assign(S_, kNeg);
    tmp_.assign(S_, 0);
    if (thread_ != 0) first_.assign(S_, kPos);
    if (!team_.empty()) gates_forward_begin();
  }

  /// Parts w0 .. w1 - 1 of the run.
  void forward_window(std::size_t w0, std::size_t w1) {
    const std::size_t n = w1 - w0;
    parts_.assign(n, Part{});
    clk_.assign(n * stride(), 0);
    vis_.assign(n * std::max<std::size_t>(B_, 1), std::numeric_limits<double>::quiet_NaN());
    if (thread_ == 0) cut_clk_.assign(n * S_, kNeg);
    for (std::size_t i = 0; i < n; ++i) start_forward(parts_[i], w0 + i, i);
  }

  /// One round's steps of every part; `unfinished` is set if a part is not done. A master
  /// steps its worker threads too (the same parts): they meet in memory, so each part is
  /// stepped on all of the rank's threads in turn until none moves.
  bool forward_round(bool& unfinished) {
    bool moved = false;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
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

  /// The window's cuts joined: `global` holds each cut's latest begin per clock (relative to
  /// the previous cut) over all ranks, `who` the lowest rank whose begin is the profiled
  /// clock's latest there (ranks(): none).
  void forward_join(std::size_t w0, std::size_t w1, const std::vector<Clk>& global,
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

  /// After the last window, with the runtime and the profiled clock's last rank agreed.
  void forward_end(const std::vector<Clk>& runtime, Clk t_max, Rank sink, int sink_thread) {
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
  }

  void start_forward(Part& g, std::size_t s, std::size_t slot) {
    g.index = static_cast<std::uint32_t>(s);
    g.start = part_start(s);
    g.stop = part_stop(s);
    g.e = g.start;
    g.base = s == 0 ? 0 : reset_m_[s - 1];
    g.cc = s == 0 ? 0 : first_coll_ending_after(g.start);
    Clk* a = &clk_[slot * stride()];
    double* vis = &vis_[slot * std::max<std::size_t>(B_, 1)];
    for (std::size_t b = 0; b < B_; ++b)
      vis[b] = part_visits_.empty() ? std::numeric_limits<double>::quiet_NaN()
                                    : part_visits_[s * B_ + b];
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
    if (changed(cp)) apply_changes(a, cp, gap, vis, x);
    const bool leave = trace_.kind[x] == EventKind::Leave;
    g.cp = leave ? parent(trace_.ref[x]) : cp;
    if (leave && slot_of_[trace_.ref[x]] >= 0)
      vis[slot_of_[trace_.ref[x]]] = std::numeric_limits<double>::quiet_NaN();
    g.prev = T(x);
    g.e = x + 1;
    if (g.e >= g.stop) finish_part(g, slot);
  }

  void finish_part(Part& g, std::size_t slot) {
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

  /// Replays part g until it needs a record that has not come, or to its end.
  bool forward_step(Part& g, std::size_t slot) {
    Clk* a = &clk_[slot * stride()];
    Clk* enter = a + S_;  // a master's only (MPI calls)
    double* vis = &vis_[slot * std::max<std::size_t>(B_, 1)];
    const std::uint32_t S = S_;
    bool moved = false;
    constexpr std::size_t kMaxPartners = 8;
    const Clk* partners[kMaxPartners];
    std::uint64_t keys[kMaxPartners];
    std::uint32_t gate_of[kMaxPartners];  // a thread's gate, or kNoLink: a record in inbox_
    Hop hops[kMaxPartners];  // where each partner's time comes from (for the profiled clock)
    while (g.e < g.stop) {
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
        if (k == EventKind::Recv && recv) {
          const std::uint32_t i = recvd_.rank(e);
          ship_lr_forward(recv_source_[i], recv_sender_[i], enter);
        }
      }
      const bool sync = sync_.test(e) && g.released != e;
      std::size_t np = 0;
      if (sync) {
        bool missing = false;
        auto need = [&](std::uint64_t key, Hop hop) {
          Clk value = 0;
          if (!inbox_.find(key, value)) {
            missing = true;
          } else if (np < kMaxPartners) {
            keys[np] = key;
            gate_of[np] = kNoLink;
            hops[np] = hop;
            partners[np++] = pool_at(value);
          }
        };
        auto late_receiver = [&](EventIdx send) {
          const std::uint32_t i = sent_.rank(send);
          need(key_of(kLrF, 0, send), Hop{e, send_dest_[i], Hop::kCallOf, send_request_[i], 0});
        };
        if (completion(k))
          completions_from(e, [&](Rec kind, EventIdx x) {
            if (kind == kLrF) return late_receiver(x);
            const std::uint32_t i = recvd_.rank(x);
            need(key_of(kLsF, static_cast<std::uint32_t>(recv_source_[i]), recv_sender_[i]),
                 Hop{e, recv_source_[i], Hop::kCallOf, recv_sender_[i], 0});
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
          need(key_of(kDownF, c.comm, c.k), Hop{e, -1, Hop::kBegin, c.comm, c.k});
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
        if (missing) return moved;
      }
      // The new times.
      const Clk t = T(e);
      if (np == 0 && thread_ != 0 && e == g.start) {
        // A worker thread's part start replayed without its fork (a stall): its distance to
        // the part's start.
        for (std::uint32_t c = 0; c < S; ++c) a[c] = t - g.base;
      } else if (np == 0) {
        const Clk d = t - g.prev;
        for (std::uint32_t c = 0; c < S; ++c) a[c] += d;
        if (changed(g.cp)) apply_changes(a, g.cp, d, vis, e);
      } else {
        const Clk gap = gap_[sync_.rank(e)];
        Clk* next = tmp_.data();
        for (std::uint32_t c = 0; c < S; ++c) {
          Clk r = a[c];
          for (std::size_t i = 0; i < np; ++i) r = std::max(r, partners[i][c]);
          next[c] = r + gap;
        }
        if (changed(g.cp)) apply_changes(next, g.cp, gap, vis, e);
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
            if (h.kind == Hop::kThread)
              thread_hops_.push_back(h);
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
          Clk value = 0;
          inbox_.find(keys[i], value);
          pool_free(value);
          inbox_.erase(keys[i]);
        }
      }
      if (e == nudge_) ++a[0];
      if (a[0] != t - g.base && error_.empty()) {
        error_ = defs_.anchor_path + ": " + where() + ", event " + std::to_string(e) +
                 ": the re-timing replay with nothing changed moved it by " +
                 std::to_string(a[0] - (t - g.base)) + " ticks";
        error_time_ = trace_.time[e];
      }
      if (link != kNoLink && (link & kWrites))
        master_->gate_write(link & ~kWrites, a, thread_, e);
      if (e == 0 && thread_ != 0) {
        first_clk_.assign(a, a + S);
        first_part_ = g.index;
      }
      // What the event opens, closes or ships.
      switch (k) {
        case EventKind::Enter: {
          g.cp = trace_.ref[e];
          if (mpi_path_[g.cp] && thread_ == 0) std::copy(a, a + S, enter);
          const int b = slot_of_[g.cp];
          if (b >= 0) vis[b] = visit_factor(e, b);
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
          if (sent_.test(e)) {
            const bool lr = lr_.test(e);
            const std::uint32_t i = sent_.rank(e);
            ByteBuffer& out = fwd_ex_->to(me_, send_dest_[i]);
            put(out, static_cast<std::uint8_t>(kLsF));
            put(out, e);
            put(out, send_request_[i]);
            put(out, static_cast<std::uint8_t>(lr ? 1 : 0));
            put_clocks(out, enter);
            if (lr && k == EventKind::Send) {
              const EventIdx leave = trace_.leave_of(trace_.call_of(e));
              if (leave != kNoEvent) g.pending.push_back({leave, e});
            }
          }
          break;
        case EventKind::IrecvRequest: {
          const EventIdx completion = trace_.ref[e];
          if (completion != kNoEvent && completion > e && completion < trace_.size() &&
              trace_.kind[completion] == EventKind::Irecv && recvd_.test(completion)) {
            const std::uint32_t i = recvd_.rank(completion);
            ship_lr_forward(recv_source_[i], recv_sender_[i], enter);
          }
          break;
        }
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
        if (c.source) put_clocks(out, a);
      }
      if (g.cc < colls_.size() && colls_[g.cc].end == e) ++g.cc;
      g.prev = t;
      ++g.e;
      moved = true;
    }
    finish_part(g, slot);
    return moved;
  }

  void ship_lr_forward(Rank to, EventIdx sender_event, const Clk* enter) {
    ByteBuffer& out = fwd_ex_->to(me_, to);
    put(out, static_cast<std::uint8_t>(kLrF));
    put(out, sender_event);
    put_clocks(out, enter);
  }

  /// Nothing moved anywhere: every waiting event is replayed without its constraints.
  void release_forward() {
    for (Part& g : parts_)
      if (!g.done && g.released != g.e) {
        g.released = g.e;
        released_events_.push_back(g.e);
        ++released_;
      }
  }

  // ---- The profiled clock's critical path -------------------------------------------------
  /// The event of this rank a hop reaches.
  EventIdx hop_target(const HopTarget& t, Rank source) const {
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

  RankRetimer& thread_location(std::uint32_t thread) {
    return thread >= 1 && thread <= team_.size() ? *team_[thread - 1] : *this;
  }

  /// Index of the latest hop strictly before event y, or UINT32_MAX.
  static std::uint32_t latest_before(const std::vector<Hop>& hops, EventIdx y) {
    auto it = std::lower_bound(hops.begin(), hops.end(), y,
                               [](const Hop& h, EventIdx e) { return h.event < e; });
    return it == hops.begin() ? UINT32_MAX : static_cast<std::uint32_t>(it - hops.begin() - 1);
  }
  std::uint32_t hop_before(EventIdx y) const { return latest_before(hops_, y); }

  // Hops between threads stay on their rank: the list ranking has the MPI hops only, and the
  // stretch from an MPI hop's target back to the rank's previous MPI hop follows the thread
  // hops on the way, in memory.
  static constexpr std::uint32_t kUnknown = UINT32_MAX, kVisiting = UINT32_MAX - 1,
                                  kNowhere = UINT32_MAX - 2;

  /// On a master: from event y of location `at` of its rank backwards (hops strictly before
  /// y), through the hops between threads, to the master's MPI hop where the path leaves the
  /// rank (its index in hops_), or UINT32_MAX. Remembered per hop between threads, so every
  /// stretch is walked once; a cycle is an error.
  std::uint32_t resolve(RankRetimer* at, EventIdx y) {
    std::vector<std::pair<RankRetimer*, std::uint32_t>>& trail = trail_;
    trail.clear();
    std::uint32_t result = UINT32_MAX;
    for (;;) {
      const std::uint32_t m = at->hop_before(y);
      const std::uint32_t t = latest_before(at->thread_hops_, y);
      if (t == UINT32_MAX || (m != UINT32_MAX && at->hops_[m].event > at->thread_hops_[t].event)) {
        result = m;
        break;
      }
      std::uint32_t& memo = at->thread_memo_[t];
      if (memo == kVisiting)
        throw ReplayError(defs_.anchor_path + ": " + at->where() + ", event " +
                          std::to_string(at->thread_hops_[t].event) +
                          ": the re-timed run's critical path comes back here (a cycle)");
      if (memo != kUnknown) {
        result = memo == kNowhere ? UINT32_MAX : memo;
        break;
      }
      memo = kVisiting;
      trail.emplace_back(at, t);
      const Hop& h = at->thread_hops_[t];
      at = &thread_location(h.a);
      y = h.b;
    }
    for (const auto& [loc, t] : trail) loc->thread_memo_[t] = result == UINT32_MAX ? kNowhere : result;
    return result;
  }

  /// On a master: credits the path from event y of location `at` back to where resolve ends,
  /// each stretch on the thread that owns it. Inclusive of y; y = n: the location's end.
  void credit_from(RankRetimer* at, EventIdx y) {
    for (;;) {
      const std::uint32_t m = at->hop_before(y);
      const std::uint32_t t = latest_before(at->thread_hops_, y);
      if (t == UINT32_MAX || (m != UINT32_MAX && at->hops_[m].event > at->thread_hops_[t].event)) {
        at->credit(m == UINT32_MAX ? kNoEvent : at->hops_[m].event, y);
        return;
      }
      const Hop& h = at->thread_hops_[t];
      at->credit(h.event, y);
      at = &thread_location(h.a);
      y = h.b;
    }
  }

  // The profiled clock's critical path, per call path on each rank (the driver's
  // path_profile): from the rank whose run ends last, backwards along the hops (ranked by
  // pointer jumping, as the critical path of the trace is), each stretch credited by the rank
  // (the thread) that owns it with the scenario's durations (its Factor changes; the waiting is
  // never on the path).
  void path_begin() {
    auto by_event = [](const Hop& a, const Hop& b) { return a.event < b.event; };
    std::sort(hops_.begin(), hops_.end(), by_event);
    std::sort(thread_hops_.begin(), thread_hops_.end(), by_event);
    thread_memo_.assign(thread_hops_.size(), kUnknown);
    factor_.assign(tree_.size(), 1.0);
    for (std::size_t c = 0; c < tree_.size(); ++c)
      for (std::uint32_t i = change_begin_[c]; i < change_begin_[c + 1]; ++i)
        if (mods_[i].clock == static_cast<std::uint32_t>(path_) && mods_[i].slot < 0)
          factor_[c] = mods_[i].factor;
    profile_.assign(tree_.size(), 0);
  }

  /// The stretch (x, y]: each activity at its scenario duration; at the hop x it starts from
  /// (kNoEvent: from the start), only the completion after the partner came. Ticks: exact in
  /// any order.
  void credit(EventIdx x, EventIdx y) {
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

  /// This rank's row of the path profile (seconds per call path; all its threads, summed in
  /// ticks), appended to `out`. Called on masters, after which the threads' path_end.
  void path_end(std::vector<double>& out) {
    release_hops();
    for (const RankRetimer* w : team_)
      for (std::size_t c = 0; c < profile_.size(); ++c) profile_[c] += w->profile_[c];
    for (std::size_t c = 0; c < profile_.size(); ++c) out.push_back(seconds(profile_[c]));
    std::vector<Clk>().swap(profile_);
  }
  void thread_path_end() {
    release_hops();
    std::vector<Clk>().swap(profile_);
  }
  void release_hops() {
    std::vector<Hop>().swap(hops_);
    std::vector<Hop>().swap(thread_hops_);
    std::vector<std::uint32_t>().swap(thread_memo_);
  }

  // ---- Backward (slack of the unchanged run) ------------------------------------------------
  // The backward replay, in phases the driver runs for every held rank (Retimer::backward).
  void backward_begin() {
    near_critical_.assign(tree_.size(), 0);
    if (!team_.empty()) gates_backward_begin();
    // Hosts answer at once where no binding member covers a source.
    for (auto& [key, h] : hosted_)
      host_reply_backward(h, static_cast<std::uint32_t>(key >> 32),
                          static_cast<std::uint32_t>(key));
  }

  void backward_window(std::size_t w0, std::size_t w1) {
    parts_.assign(w1 - w0, Part{});
    for (std::size_t i = 0; i < parts_.size(); ++i) start_backward(parts_[i], w0 + i);
  }

  bool backward_round(bool& unfinished) {
    bool moved = false;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      Part& g = parts_[i];
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

  /// Nothing moved anywhere: every waiting event is walked past without its records.
  void release_backward() {
    for (Part& g : parts_)
      if (!g.done && g.released != g.e) {
        g.released = g.e;
        ++released_;
      }
  }

  void backward_end() { std::vector<Part>().swap(parts_); }

  void start_backward(Part& g, std::size_t s) {
    g.index = static_cast<std::uint32_t>(s);
    g.start = part_start(s);
    g.stop = part_stop(s);
    if (g.start >= g.stop) {
      g.done = true;
      return;
    }
    g.e = g.stop - 1;
    // The cut that ends the part: every rank's begin may come as late as the latest one did
    // (that begin is on the critical path). The last part ends with the run. A worker
    // thread's events of the part come before its master's part of the cut.
    g.L = s < reset_m_.size() ? reset_m_[s] : t_max_;
    g.cc = first_coll_ending_after(g.e);  // entries before it end at or before e
  }

  bool released_forward(EventIdx e) const {
    return !released_events_.empty() &&
           std::binary_search(released_events_.begin(), released_events_.end(), e);
  }

  /// Walks part g backwards until an event needs a record that has not come, or to its start.
  bool backward_step(Part& g) {
    bool moved = false;
    for (;;) {
      const EventIdx e = g.e;
      const EventKind k = trace_.kind[e];
      const std::uint32_t link = link_of(e);
      // The collective whose begin e may be: the first entry ending after e.
      const CollEntry* begin_of = g.cc < colls_.size() && colls_[g.cc].begin == e &&
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
      // (A worker thread's first event can be a synchronization: a team begin.)
      if (e > 0 || sync) {
        const Clk d = e > 0 ? T(e) - T(e - 1) : 0;
        const Clk gap = sync ? gap_[sync_.rank(e)] : 0;
        const Clk own = sync ? std::max<Clk>(gap, 0) : d;  // non-waiting, and the local edge
        const std::uint32_t cp = activity_path(e);
        if (cp != UINT32_MAX && static_cast<double>(g.L - T(e)) <= req_.slack_limit)
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
      --g.e;
    }
  }

  /// The latest time of a synchronization minus its completion time goes to the partners it
  /// waited for: none of them may be later than that.
  void ship_backward(Part& g, EventIdx e, EventKind k, Clk value) {
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

  /// Records that an earlier event of this call will need: from the receivers of its sends,
  /// and from the senders whose completion waited for its receive requests.
  void register_waits(Part& g, EventIdx e, EventKind k) {
    if ((k == EventKind::Send || k == EventKind::Isend) && sent_.test(e)) {
      const EventIdx call = trace_.call_of(e);
      if (call != kNoEvent && call >= g.start) g.waits.push_back({call, key_of(kLsB, 0, e)});
    }
    const bool request =
        (k == EventKind::Recv && recvd_.test(e)) || k == EventKind::IrecvRequest;
    if (request && lr_req_.test(e)) {
      const EventIdx call = trace_.call_of(e);
      if (call != kNoEvent && call >= g.start) g.waits.push_back({call, key_of(kLrB, 0, e)});
    }
  }

  const Definitions& defs_;
  const CallTree& tree_;
  const LocalTrace& trace_;
  const RetimeRequest& req_;
  const Rank me_;
  const int thread_;  ///< 0: a master thread (all MPI events); else a worker thread
  const std::uint32_t S_;
  const std::size_t window_;
  const int path_;  ///< the clock whose critical path is profiled, or -1
  RankRetimer* const master_;  ///< the rank's master thread's replay (a master's: itself)
  EventIdx nudge_ = kNoEvent;  ///< test hook: the event moved by one tick
  std::vector<Hop> hops_;  ///< that clock's hops to other ranks, by event after the forward
  std::vector<Hop> thread_hops_;  ///< ...and to other threads of the rank
  std::vector<std::uint32_t> thread_memo_;  ///< per thread hop: resolve's answer
  std::vector<std::pair<RankRetimer*, std::uint32_t>> trail_;  ///< resolve's walk
  Rank sink_ = 0;          ///< the rank whose last event ends that clock's run...
  int sink_thread_ = 0;    ///< ...and its thread

  // OpenMP (hybrid traces).
  std::vector<RankRetimer*> team_;  ///< a master's worker threads, in thread order
  std::size_t loc_index_ = 0;  ///< this location in the driver's list (path profile nodes)
  bool threads_ = false;       ///< a location of a rank with threads: it has gate links
  EventBits omp_;              ///< events linked to a gate
  std::vector<std::uint32_t> link_;  ///< per linked event: the gate, | kWrites for a writer
  /// OpenMP events (ThreadFork/Join/Team/Lock) and a worker thread's outermost Enters...
  EventBits omp_events_;
  std::vector<std::uint32_t> omp_path_;  ///< ...and the call path of the activity ending there
  std::vector<EventIdx> wstart_;  ///< a worker thread: its first event of each part, then n
  std::vector<Gate> gates_;       ///< a master: its rank's gates
  std::vector<Clk> gate_pool_;    ///< forward: clocks of the gates in use
  std::vector<std::uint32_t> gate_free_;
  std::vector<Clk> gate_min_;     ///< backward: per gate, the readers' latest allowed time
  std::vector<Clk> first_clk_;    ///< a worker thread: its first event, relative to its part
  std::vector<Clk> first_;        ///< ...and absolute, per clock, once its part is joined
  std::size_t first_part_ = SIZE_MAX;
  std::size_t last_part_ = SIZE_MAX;  ///< a worker thread: the part of its last event

  // Scenarios.
  std::vector<Mod> mods_;
  std::vector<std::uint32_t> change_begin_;  ///< per call path: its changes in mods_
  std::vector<int> slot_of_;                 ///< per call path: its balance slot, or -1
  std::vector<std::uint8_t> mpi_path_;       ///< per call path: an MPI region's
  std::vector<double> visit_mean_;           ///< per balance slot: ticks of a visit
  std::size_t B_ = 0;
  std::vector<TimeChange> sorted_changes_;   ///< planning: by call path, then clock
  std::vector<std::uint32_t> stat_of_;       ///< planning: per call path, its balance statistic
  std::vector<std::int64_t> stats_;          ///< planning: ticks, visits, 1 if run, per statistic

  // What the replay knows about events (bit per event, entries indexed by rank()).
  EventBits sent_;   ///< matched sends
  std::vector<EventIdx> send_request_;  ///< per matched send: the receiver's request event
  std::vector<Rank> send_dest_;         ///< per matched send: the receiver
  EventBits lr_;     ///< matched sends whose completion waits for the receiver (Late Receiver)
  EventBits recvd_;  ///< matched receive completions
  std::vector<EventIdx> recv_sender_;  ///< per matched receive: the sender's send event
  std::vector<Rank> recv_source_;      ///< per matched receive: the sender
  EventBits sync_;   ///< events that complete a synchronization
  std::vector<Clk> gap_;  ///< per synchronization: end minus the latest original ready time
  EventBits lr_req_;  ///< receive requests whose sender's completion waited for them
  std::vector<EventIdx> released_events_;  ///< forward: synchronizations replayed as plain

  CollectiveTable table_;
  std::vector<CollEntry> colls_;  ///< collectives that bind, and the cuts; by end event
  std::vector<Ready> ready_;      ///< preparation: what each synchronization waits for
  std::vector<InstanceInfo> infos_;  ///< preparation: every instance's rule on this rank
  std::uint32_t best_ = UINT32_MAX;  ///< the communicator of the cut candidates
  std::vector<const InstanceInfo*> cands_;  ///< preparation: the candidates, by instance
  std::vector<EventIdx> cand_end_;
  std::vector<Ticks> cand_m_;  ///< per candidate: its original latest begin
  /// Preparation, as a host: the first and last candidate segment of each instance's begins.
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> span_;
  std::vector<EventIdx> send_event_;   ///< preparation: per matched send, its event
  std::vector<EventIdx> send_attach_;  ///< preparation: its binding completion, or kNoEvent
  std::vector<std::uint8_t> disq_;
  std::vector<EventIdx> resets_;  ///< end events of the cuts, in order
  std::vector<Clk> reset_m_;      ///< their original latest begins
  std::vector<double> part_visits_;

  FlatMap inbox_;
  std::vector<Clk> pool_;
  std::vector<std::uint32_t> free_;
  std::unordered_map<std::uint64_t, HostInstance> hosted_;
  std::vector<Clk> scratch_;
  std::vector<Clk> rx_;
  std::vector<char> tx_;
  RecordExchange* fwd_ex_ = nullptr;
  RecordExchange* bwd_ex_ = nullptr;

  std::vector<Part> parts_;
  std::vector<Clk> clk_;
  std::vector<double> vis_;
  std::vector<Clk> cut_clk_;
  std::vector<Clk> last_clk_;
  std::vector<Clk> prefix_;  ///< per clock: the latest begin of the last cut joined
  std::vector<Clk> last_;    ///< per clock: this rank's last event, once its part is joined
  std::vector<Clk> tmp_;
  std::vector<double> factor_;  ///< path profile: per call path, the profiled clock's factor
  std::vector<Clk> profile_;    ///< path profile: per call path, ticks
  std::vector<Clk> runtime_;
  Clk t_max_ = 0;
  std::vector<Clk> near_critical_;  ///< per call path: ticks
  std::uint64_t released_ = 0;
  std::string error_;
  /// The original time of the event error_ names (a moved event moves the other threads'
  /// events after it: the rank reports its earliest).
  Ticks error_time_ = 0;
};

/// The per-process driver: every phase for all held ranks in rank order, one exchange per
/// round, and each reduction once per process over the held ranks' values combined first (all
/// integer sums, maxima and minima: exact in any order, so every value is the same for every M).
class Retimer {
 public:
  Retimer(const World& world, const Definitions& defs, const CallTree& tree, const Shard& shard,
          const RetimeRequest& request)
      : world_(world), defs_(defs), shard_(shard), req_(request),
        S_(std::max<std::uint32_t>(request.clocks, 1)),
        // A part ships a few records per round, each with a value per clock: parts per window
        // are a quarter of --window, so a round ships about --window records per rank.
        ctx_{defs, tree, request, S_,
             std::max<std::size_t>(request.window / 4, 1),
             request.path_clock >= 0 && request.path_clock < static_cast<int>(S_)
                 ? request.path_clock
                 : -1} {
    for (const LocalTrace& trace : shard.traces) ranks_.emplace_back(ctx_, trace);
    // Hybrid traces: each held rank's worker threads, replayed beside their master.
    for (std::size_t i = 0; i < shard.workers.size() && i < ranks_.size(); ++i)
      for (const LocalTrace& thread : shard.workers[i]) {
        workers_.emplace_back(ctx_, thread, &ranks_[i]);
        ranks_[i].team_.push_back(&workers_.back());
      }
    for (RankRetimer& r : ranks_) {
      locs_.push_back(&r);
      for (RankRetimer* w : r.team_) locs_.push_back(w);
    }
    for (std::size_t l = 0; l < locs_.size(); ++l) locs_[l]->loc_index_ = l;
  }

  RetimeResult run() {
    RetimeResult result;
    const double t0 = MPI_Wtime();
    prepare();
    plan_changes();
    for (RankRetimer* r : locs_) r->part_visits();
    const double t2 = MPI_Wtime();
    result.parts = ranks_.front().resets_.size() + 1;
    forward(result);
    if (ctx_.path >= 0) result.path_profile = path_profile();
    const double t3 = MPI_Wtime();
    if (req_.slack_limit >= 0.0) backward(result);
    const double t4 = MPI_Wtime();
    result.prepare_seconds = t2 - t0;
    result.forward_seconds = t3 - t2;
    result.backward_seconds = t4 - t3;
    std::uint64_t released = 0;
    for (const RankRetimer* r : locs_) released += r->released();
    MPI_Allreduce(&released, &result.released, 1, MPI_UINT64_T, MPI_SUM, world_.comm());
    // The lowest rank's error, as at one process per rank; of a rank's threads, the one at
    // the earliest event (the master's on a tie).
    world_.agree([&] {
      for (const RankRetimer& r : ranks_) {
        const RankRetimer* first = r.error().empty() ? nullptr : &r;
        for (const RankRetimer* w : r.team_)
          if (!w->error().empty() && (first == nullptr || w->error_time_ < first->error_time_))
            first = w;
        if (first != nullptr) throw ReplayError(first->error());
      }
    });
    result.runtime = ranks_.front().runtime_;
    // Sums in ticks: exact, so they do not depend on the order parts and rounds add them.
    for (const RankRetimer& r : ranks_)
      for (const Clk ticks : r.near_critical_) result.near_critical.push_back(r.seconds(ticks));
    if (!workers_.empty() && req_.slack_limit >= 0.0) {
      for (const RankRetimer& w : workers_)
        for (const Clk ticks : w.near_critical_)
          result.thread_near_critical.push_back(w.seconds(ticks));
      for (const RankRetimer& r : ranks_)
        for (std::size_t c = 0; c < r.near_critical_.size(); ++c) {
          Clk ticks = r.near_critical_[c];
          for (const RankRetimer* w : r.team_) ticks += w->near_critical_[c];
          result.rank_near_critical.push_back(r.seconds(ticks));
        }
    }
    return result;
  }

 private:
  // ---- Preparation -----------------------------------------------------------------------
  void prepare() {
    const std::uint32_t ncomms = static_cast<std::uint32_t>(defs_.comms.size());
    if (ncomms + 1 >= (1u << 24))
      throw ReplayError(defs_.anchor_path + ": more communicators than the what-if replay "
                                            "handles (2^24)");
    for (RankRetimer* r : locs_) r->prepare_begin();
    if (defs_.hybrid())
      for (RankRetimer& r : ranks_)
        if (r.team_.empty()) r.index_openmp_events();
    // (1) Collective rules and the cut candidates.
    const TimingSink sink = [&](std::size_t i, const CollInstance* inst, const CollTiming* timing,
                                std::size_t count) {
      RankRetimer& r = ranks_[i];
      for (std::size_t j = 0; j < count; ++j) r.infos_.push_back(r.classify(inst[j], timing[j]));
    };
    std::vector<CollectiveTable> tables =
        reduce_collectives(world_, defs_, shard_, req_.window, req_.tolerate_unmatched, sink);
    int complete = 1;
    for (std::size_t i = 0; i < ranks_.size(); ++i)
      if (!ranks_[i].prepare_candidates(std::move(tables[i]))) complete = 0;
    std::vector<CollectiveTable>().swap(tables);
    MPI_Allreduce(MPI_IN_PLACE, &complete, 1, MPI_INT, MPI_MIN, world_.comm());
    for (RankRetimer& r : ranks_) r.prepare_messages(complete != 0);
    // (2) Messages.
    {
      std::deque<RankRetimer::MatchSink> msinks;
      std::vector<MessageSink*> sinks;
      for (RankRetimer& r : ranks_) {
        msinks.emplace_back(r);
        sinks.push_back(&msinks.back());
      }
      match_messages(world_, defs_, shard_, sinks, req_.tolerate_unmatched, req_.window);
    }
    // (3) The candidates a constraint crosses.
    for (RankRetimer& r : ranks_) r.prepare_separate();
    separate_partners();
    for (RankRetimer& r : ranks_) r.separate_members();
    for (RankRetimer& r : ranks_)
      if (!r.team_.empty()) r.openmp_disqualify();
    // (4) The cuts every rank allows. Test hook (tests/e2e/what_if_test.cpp):
    // CPREPLAY_TEST_RETIME_NO_CUTS replays the run as one part, which must give the same values.
    std::vector<std::uint8_t> disq(ranks_.front().disq_.size(), 0);
    if (std::getenv("CPREPLAY_TEST_RETIME_NO_CUTS") != nullptr)
      std::fill(disq.begin(), disq.end(), std::uint8_t{1});
    for (const RankRetimer& r : ranks_)
      for (std::size_t j = 0; j < disq.size() && j < r.disq_.size(); ++j) disq[j] |= r.disq_[j];
    if (!disq.empty())
      MPI_Allreduce(MPI_IN_PLACE, disq.data(), static_cast<int>(disq.size()), MPI_UINT8_T,
                    MPI_MAX, world_.comm());
    for (RankRetimer& r : ranks_) r.prepare_finish(disq);
  }

  /// Calls f(r, j) for the j-th of count(r) items of each held rank r, as one flat index.
  template <class Count>
  std::vector<std::size_t> offsets(Count&& count) const {
    std::vector<std::size_t> first(ranks_.size() + 1, 0);
    for (std::size_t i = 0; i < ranks_.size(); ++i) first[i + 1] = first[i] + count(ranks_[i]);
    return first;
  }
  static std::size_t holder(const std::vector<std::size_t>& first, std::size_t k) {
    return static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), k) -
                                    first.begin() - 1);
  }

  /// Senders tell receivers, members tell hosts, in which candidate segment they are: one
  /// batched exchange per kind for the process, records to co-located ranks in memory.
  void separate_partners() {
    const RankBlocks& blocks = shard_.blocks;
    {
      const std::vector<std::size_t> first =
          offsets([](const RankRetimer& r) { return r.send_event_.size(); });
      auto note = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return ranks_[i].send_note(k - first[i]);
      };
      auto dest = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return blocks.owner(ranks_[i].send_dest_[k - first[i]]);
      };
      if (blocks.processes() < blocks.ranks()) {
        send_each<SendNote>(world_, first.back(), dest, note, [&](Rank, const SendNote& n) {
          ranks_[shard_.index(n.dest)].take_send_note(n);
        });
      } else {
        // One rank per process: the receiver is that rank, so the note travels without it
        // (12 B instead of 16 per matched send, in both buffers of the exchange).
        struct Unaddressed {
          EventIdx request;
          std::uint32_t send, attach;
        };
        send_each<Unaddressed>(
            world_, first.back(), dest,
            [&](std::size_t k) {
              const SendNote n = note(k);
              return Unaddressed{n.request, n.send, n.attach};
            },
            [&](Rank, const Unaddressed& u) {
              ranks_.front().take_send_note(
                  SendNote{ranks_.front().me_, u.request, u.send, u.attach});
            });
      }
    }
    for (RankRetimer& r : ranks_) r.drop_send_notes();
    {
      const std::vector<std::size_t> first =
          offsets([](const RankRetimer& r) { return r.colls_.size(); });
      auto note = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return ranks_[i].member_note(k - first[i]);
      };
      send_each<MemberNote>(
          world_, first.back(), [&](std::size_t k) { return blocks.owner(note(k).dest); }, note,
          [&](Rank, const MemberNote& m) { ranks_[shard_.index(m.dest)].take_member_note(m); });
    }
  }

  /// Balance and rebalance need every rank's ticks and visits of their call paths.
  /// Every thread location counts as one (docs/what-if.md, "Threads").
  void plan_changes() {
    for (RankRetimer* r : locs_) r->plan_stats();
    std::vector<std::int64_t> global(ranks_.front().stats_.size(), 0);
    for (const RankRetimer* r : locs_)
      for (std::size_t i = 0; i < global.size(); ++i) global[i] += r->stats_[i];
    if (!global.empty())
      MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()), MPI_INT64_T,
                    MPI_SUM, world_.comm());
    for (RankRetimer* r : locs_) r->plan_finish(global);
  }

  // ---- Forward -------------------------------------------------------------------------------
  void forward(RetimeResult& result) {
    RecordExchange ex(world_, shard_.blocks);
    const std::uint32_t S = S_;
    const int path = ctx_.path;
    const int none = defs_.ranks();
    for (RankRetimer* r : locs_) {
      r->fwd_ex_ = &ex;
      r->forward_begin();
    }
    const std::vector<EventIdx>& resets = ranks_.front().resets_;
    const std::size_t nparts = resets.size() + 1;
    for (std::size_t w0 = 0; w0 < nparts; w0 += ctx_.window) {
      const std::size_t w1 = std::min(nparts, w0 + ctx_.window);
      for (RankRetimer* r : locs_) r->forward_window(w0, w1);
      for (;;) {
        // Masters step their threads too (forward_round); records come to masters only.
        bool moved = false, unfinished = false;
        for (RankRetimer& r : ranks_) moved = r.forward_round(unfinished) || moved;
        ex.exchange();
        for (RankRetimer& r : ranks_) moved = r.receive(ex) || moved;
        ++result.forward_rounds;
        int flags[2] = {unfinished ? 1 : 0, moved ? 1 : 0};
        MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, world_.comm());
        if (flags[0] == 0) break;
        if (flags[1] == 0)
          for (RankRetimer* r : locs_) r->release_forward();
      }
      // Join the parts: each cut's latest begin, per clock, relative to the previous cut.
      const std::size_t cuts = w0 < resets.size() ? std::min(w1, resets.size()) - w0 : 0;
      // Reduced in place into the first held rank's cut clocks (the profiled clock's own
      // values are kept aside for the question below).
      std::vector<Clk>& global = ranks_.front().cut_clk_;
      std::vector<Clk> mine;
      if (path >= 0)
        for (const RankRetimer& r : ranks_)
          for (std::size_t i = 0; i < cuts; ++i) mine.push_back(r.cut_clk_[i * S + path]);
      for (std::size_t h = 1; h < ranks_.size(); ++h)
        for (std::size_t j = 0; j < cuts * S; ++j)
          global[j] = std::max(global[j], ranks_[h].cut_clk_[j]);
      if (cuts > 0)
        MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(cuts * S), MPI_INT64_T,
                      MPI_MAX, world_.comm());
      // Whose begin is latest at each cut (ties: the lower rank): every other rank's part
      // starts from it.
      std::vector<int> who;
      if (path >= 0 && cuts > 0) {
        who.assign(cuts, none);
        for (std::size_t h = 0; h < ranks_.size(); ++h)
          for (std::size_t i = 0; i < cuts; ++i)
            if (mine[h * cuts + i] == global[i * S + path])
              who[i] = std::min(who[i], ranks_[h].me_);
        MPI_Allreduce(MPI_IN_PLACE, who.data(), static_cast<int>(cuts), MPI_INT, MPI_MIN,
                      world_.comm());
      }
      for (RankRetimer* r : locs_) r->forward_join(w0, w1, global, who);
    }
    // Runtime: latest end minus earliest start over all locations, per clock (a master's
    // first event keeps its time; a worker thread's first one follows its fork).
    std::vector<Clk> global(2 * S, kNeg);
    for (const RankRetimer* r : locs_) {
      for (std::uint32_t c = 0; c < S; ++c) global[c] = std::max(global[c], r->last_[c]);
      if (r->trace_.size() == 0) continue;
      for (std::uint32_t c = 0; c < S; ++c)
        global[S + c] = std::max(global[S + c], r->thread_ == 0 ? -r->T(0) : -r->first_[c]);
    }
    MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(2 * S), MPI_INT64_T, MPI_MAX,
                  world_.comm());
    std::vector<Clk> runtime(S, 0);
    for (std::uint32_t c = 0; c < S; ++c) runtime[c] = global[c] + global[S + c];
    // The profiled clock's run ends on the lowest (rank, thread) whose last event is latest.
    Rank sink = 0;
    int sink_thread = 0;
    if (path >= 0) {
      const std::int64_t nobody = std::numeric_limits<std::int64_t>::max();
      std::int64_t who = nobody;
      for (const RankRetimer* r : locs_)
        if (r->trace_.size() > 0 && r->last_[path] == global[path])
          who = std::min(who, (std::int64_t{r->me_} << 32) | r->thread_);
      MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT64_T, MPI_MIN, world_.comm());
      if (who != nobody) {
        sink = static_cast<Rank>(who >> 32);
        sink_thread = static_cast<int>(who & 0xFFFFFFFF);
      }
    }
    for (RankRetimer* r : locs_) {
      r->forward_end(runtime, global[0], sink, sink_thread);
      r->fwd_ex_ = nullptr;
    }
  }

  // ---- The profiled clock's critical path ---------------------------------------------------
  /// A hop on its way to its target rank.
  struct AddressedTarget {
    Rank to;    ///< the rank the path continues on
    Rank from;  ///< the rank of the hop
    HopTarget target;
  };

  /// Per held rank, per call path (rank-major): seconds of the profiled clock's critical path.
  std::vector<double> path_profile() {
    const RankBlocks& blocks = shard_.blocks;
    for (RankRetimer* r : locs_) r->path_begin();
    // The list spans processes: a process's nodes are the hops of its ranks to other ranks,
    // one rank after another (node = first[i] + hop index); hops between the threads of a rank
    // are followed in memory (resolve, credit_from).
    const std::vector<std::size_t> first =
        offsets([](const RankRetimer& r) { return r.hops_.size(); });
    const std::size_t n = first.back();
    std::uint64_t total = n;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, world_.comm());
    if (total >= (std::uint64_t{1} << 31))
      world_.agree([&] {
        if (world_.rank() == 0)
          throw ReplayError(defs_.anchor_path + ": the scenario's critical path has " +
                            std::to_string(total) + " hops, more than it can rank (2^31)");
      });
    auto hop = [&](std::size_t k) -> const Hop& {
      const std::size_t i = holder(first, k);
      return ranks_[i].hops_[k - first[i]];
    };
    auto addressed = [&](std::size_t k) {
      const std::size_t i = holder(first, k);
      const Hop& h = ranks_[i].hops_[k - first[i]];
      return AddressedTarget{h.rank, ranks_[i].me_, HopTarget{h.kind, h.a, h.b}};
    };
    std::vector<NodeRef> next(n);
    world_.agree([&] {
      ask_each<AddressedTarget, std::uint32_t>(
          world_, n, [&](std::size_t k) { return blocks.owner(hop(k).rank); }, addressed,
          [&](Rank, const AddressedTarget& t) {
            const std::size_t i = shard_.index(t.to);
            RankRetimer& r = ranks_[i];
            const std::uint32_t succ = r.resolve(&r, r.hop_target(t.target, t.from));
            return succ == UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(first[i] + succ);
          },
          [&](std::size_t k, std::uint32_t succ) {
            if (succ != UINT32_MAX) next[k] = NodeRef{blocks.owner(hop(k).rank), succ};
          });
    });
    // The path ends where the run does: the last event of the lowest (rank, thread) whose
    // run ends last.
    const Rank sink = ranks_.front().sink_;
    const auto sink_thread = static_cast<std::uint32_t>(ranks_.front().sink_thread_);
    NodeRef head;
    world_.agree([&] {
      if (!shard_.holds(sink)) return;
      const std::size_t i = shard_.index(sink);
      RankRetimer& end = ranks_[i].thread_location(sink_thread);
      const std::uint32_t last =
          ranks_[i].resolve(&end, static_cast<EventIdx>(end.trace_.size()));
      if (last != UINT32_MAX)
        head = NodeRef{world_.rank(), static_cast<std::uint32_t>(first[i] + last)};
    });
    MPI_Bcast(&head, sizeof head, MPI_BYTE, blocks.owner(sink), world_.comm());
    const ListRanking ranked = rank_list(world_, std::move(next), head, [&](std::uint32_t k) {
      const std::size_t i = holder(first, k);
      return defs_.anchor_path + ": rank " + std::to_string(ranks_[i].me_) + ", event " +
             std::to_string(ranks_[i].hops_[k - first[i]].event) +
             ": the re-timed run's critical path comes back here (a cycle)";
    });
    if (shard_.holds(sink)) {
      RankRetimer& r = ranks_[shard_.index(sink)];
      RankRetimer& end = r.thread_location(sink_thread);
      r.credit_from(&end, static_cast<EventIdx>(end.trace_.size()));
    }
    send_each<AddressedTarget>(
        world_, n,
        [&](std::size_t k) {
          return ranked.position[k] == kOffList ? Rank{-1} : blocks.owner(hop(k).rank);
        },
        addressed,
        [&](Rank, const AddressedTarget& t) {
          RankRetimer& r = ranks_[shard_.index(t.to)];
          r.credit_from(&r, r.hop_target(t.target, t.from));
        });
    std::vector<double> out;
    for (RankRetimer& r : ranks_) r.path_end(out);
    for (RankRetimer& w : workers_) w.thread_path_end();
    return out;
  }

  // ---- Backward (slack of the unchanged run) --------------------------------------------------
  void backward(RetimeResult& result) {
    RecordExchange ex(world_, shard_.blocks);
    for (RankRetimer* r : locs_) {
      r->bwd_ex_ = &ex;
      r->backward_begin();
    }
    const std::size_t nparts = ranks_.front().resets_.size() + 1;
    const std::size_t window = ctx_.window;
    const std::size_t windows = (nparts + window - 1) / window;
    for (std::size_t w = windows; w-- > 0;) {
      const std::size_t w0 = w * window;
      const std::size_t w1 = std::min(nparts, w0 + window);
      for (RankRetimer* r : locs_) r->backward_window(w0, w1);
      for (;;) {
        bool moved = false, unfinished = false;
        for (RankRetimer& r : ranks_) moved = r.backward_round(unfinished) || moved;
        ex.exchange();
        for (RankRetimer& r : ranks_) moved = r.receive(ex) || moved;
        ++result.backward_rounds;
        int flags[2] = {unfinished ? 1 : 0, moved ? 1 : 0};
        MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, world_.comm());
        if (flags[0] == 0) break;
        if (flags[1] == 0)
          for (RankRetimer* r : locs_) r->release_backward();
      }
    }
    for (RankRetimer* r : locs_) {
      r->backward_end();
      r->bwd_ex_ = nullptr;
    }
  }

  const World& world_;
  const Definitions& defs_;
  const Shard& shard_;
  const RetimeRequest& req_;
  const std::uint32_t S_;
  Context ctx_;
  std::deque<RankRetimer> ranks_;  ///< one per held rank (its master thread), in rank order
  std::deque<RankRetimer> workers_;  ///< hybrid traces: the held ranks' worker threads
  std::vector<RankRetimer*> locs_;   ///< every location: a rank's master, then its threads
};

}  // namespace

RetimeResult retime(const World& world, const Definitions& defs, const CallTree& tree,
                    const Shard& shard, const RetimeRequest& request) {
  Retimer r(world, defs, tree, shard, request);
  return r.run();
}

}  // namespace cpreplay::replay
