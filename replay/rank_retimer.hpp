// SPDX-License-Identifier: BSD-3-Clause
// One held location's side of the re-timing replay (RankRetimer): its state, its small helpers,
// and the phases' entry points, defined by phase in retime_prepare.cpp (scenarios, matching,
// collective rules, cuts), retime_openmp.cpp (gates between a rank's threads),
// retime_hosting.cpp (the records and the collective hosts), retime_forward.cpp (the clocks),
// retime_path.cpp (a clock's critical path) and retime_backward.cpp (the slack).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/record_exchange.hpp"
#include "replay/retime.hpp"
#include "replay/retime_state.hpp"

namespace cpreplay::replay::detail::retiming {

/// One held rank's side of the re-timing replay (its master thread's; in hybrid traces also
/// one per worker thread, which its master steps beside it). The driver (Retimer, retime.cpp)
/// runs each phase for all held ranks in rank order and does the reductions once per process;
/// the rounds are those of one process per rank: every rank steps, one exchange moves what
/// they produced (records to co-located ranks in memory), every rank takes in what came.
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
  std::uint32_t activity_path(EventIdx e) const { return activity_path(e, trace_.kind[e]); }
  /// The same, given e's kind k.
  std::uint32_t activity_path(EventIdx e, EventKind k) const {
    switch (k) {
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
  /// activity_path(x), given cp = activity_path(x + 1), for a walk backwards: the innermost
  /// region open before x + 1 is the one open before x unless x enters or leaves one.
  std::uint32_t path_before(EventIdx x, std::uint32_t cp) const {
    return path_before(x, trace_.kind[x], cp);
  }
  /// The same, given x's kind k.
  std::uint32_t path_before(EventIdx x, EventKind k, std::uint32_t cp) const {
    if (k == EventKind::Enter || k == EventKind::Leave || thread_ != 0 ||
        k == EventKind::ThreadFork || k == EventKind::ThreadJoin ||
        k == EventKind::ThreadTeam || k == EventKind::ThreadLock)
      return activity_path(x, k);
    return cp;
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

  /// Changes per call path (CSR); a balance slot per Balance change; rebalance factors from
  /// every rank's non-waiting time in the call path. First this rank's ticks and visits of the
  /// call paths to balance (integers: their sum over ranks does not depend on the order)...
  void plan_stats();
  /// A pure-MPI master's non-waiting ticks per call path (nonwaiting_), from the profile's ticks
  /// (RetimeRequest::profile_exclusive) less what its synchronizations wait, without walking
  /// every event: its balance statistics, and its near-critical time where every activity is
  /// near-critical (near_from_profile).
  void nonwaiting_from_profile();
  /// The balance statistics from nonwaiting_ and the profile's visits.
  void plan_stats_from_profile(std::size_t m);

  /// ...then, with `global` (stats_ summed over all ranks), the changes.
  void plan_finish(const std::vector<std::int64_t>& global_stats);

  /// Adds to each clock what the scenario makes of `d` ticks of non-waiting time in call path
  /// cp (the base value d is already added to every clock). `vis` holds the open visits'
  /// balance factors; k is event e's kind. (cp == UINT32_MAX: outside every region, nothing.)
  void apply_changes(Clk* a, std::uint32_t cp, Clk d, const double* vis, EventIdx e,
                     EventKind k) const;

  /// The factor that gives the visit entered at `enter` the balance slot's mean non-waiting
  /// time; -1 for a visit without non-waiting time.
  double visit_factor(EventIdx enter, int slot) const;
  /// The same for the forward replay of part g: one walk per outermost balanced visit, which
  /// also notes the factors of the balanced visits nested in it (Part::memo), so that those
  /// do not walk again (the same sums, the same values).
  double visit_factor(Part& g, EventIdx enter, int slot) const;
  /// The factor of a master's only visit of the slot's call path (only_visit_), unwalked.
  double only_visit_factor(int slot) const {
    const Clk x = only_visit_[slot];
    return x > 0 ? visit_mean_[slot] / static_cast<double>(x) : -1.0;
  }

  // ---- Preparation: matching, collective rules, the cut points -------------------------------
  /// (2) The matched messages' tables, from the matching's recorder (emptied).
  void take_matches(MatchRecorder& m);

  /// Segment of event e among the candidate cut points: how many candidate ends are <= e.
  std::size_t candidate_segment(EventIdx e) const {
    // The candidates ending at or before e (cand_bits_ marks their ends).
    return e + 1 < trace_.size() ? cand_bits_.rank(e + 1) : cand_end_.size();
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
  SendNote send_note(std::size_t i) const;

  void take_send_note(const SendNote& note);

  /// Where this rank begins the i-th collective, for the instance's host.
  MemberNote member_note(std::size_t i) const;

  void take_member_note(const MemberNote& m);

  /// Matched sends (the notes' count).
  std::size_t matched_sends() const { return send_request_.size(); }
  /// The receiver of the i-th matched send (its note's destination).
  Rank send_dest(std::size_t i) const { return send_dest_[i]; }

  /// After both exchanges: the candidates between an instance's members are no cuts.
  void separate_members();



  // ---- Preparation, in phases between which the driver reduces over all ranks ------------
  /// (0) Before the collective timings.
  void prepare_begin();

  /// (1) Collective rules, from the forward replay's timings (the driver's sink hands them
  /// here), then the cut candidates: the instances of one communicator holding every rank (the
  /// one with the most instances; MPI_Init/MPI_Finalize when there is none). Counts agree on all
  /// ranks. Returns whether this rank saw every candidate (--partial may have dropped some).
  bool prepare_candidates(CollectiveTable table);

  /// (1b) With `complete` agreed over all ranks (else no cuts): the candidates' facts; then
  /// the sink for the message matching.
  void prepare_messages(bool complete);

  /// (3) After the matching: no constraint may reach across a cut: messages, and collectives
  /// other than the candidates (whose members all lie between the same two candidates). The
  /// driver's exchanges mark the candidates they cross (separate_partners).
  void prepare_separate();

  /// (4) With `disq` (ORed over all ranks): the cuts every rank allows, and the rest.
  void prepare_finish(const std::vector<std::uint8_t>& disq);

  /// Where each part starts: the open balance visits there.
  void part_visits();

  bool world_like(std::uint32_t c) const;

  Rank world_of(std::uint32_t comm, std::uint32_t local) const {
    if (comm == defs_.comms.size()) return static_cast<Rank>(local);
    return defs_.comms[comm].world_rank(local, me_);
  }

  std::uint32_t comm_size(std::uint32_t comm) const {
    if (comm == defs_.comms.size()) return static_cast<std::uint32_t>(defs_.ranks());
    return defs_.comms[comm].size();
  }

  // ---- OpenMP (hybrid traces): a rank's threads synchronize in memory ------------------------
  // A master replays its rank's worker threads (team_) beside it, part by part. Their OpenMP
  // synchronizations meet at gates: one per fork, barrier instance, join and lock hand-over,
  // written by the events whose new times bind (the latest counts) and read by the events they
  // bind (docs/what-if.md, "Threads"). All threads of a rank are on this process, so a gate is
  // plain memory, filled and read within a round.

  /// A location's link to a gate: the gate's index, with kWrites when the event writes it.
  static constexpr std::uint32_t kWrites = 1u << 31;
  static constexpr std::uint32_t kNoLink = UINT32_MAX;

  // A round steps each of a window's parts a few dozen events on, then the next part: a few
  // hundred short stretches per round, more than the hardware's stream prefetchers follow, so
  // each part's first events missed the cache (a third of the backward steps' samples on the
  // bench reference trace). The round asks for the columns of the part kPrefetchAhead on
  // before it steps a part. Medians of 12 alternating runs at M = 4: slack 0.0455 -> 0.0360 s,
  // forward 0.0965 -> 0.0940 s, the phase 0.926 x (bench/RESULTS.md, session 22).
  static constexpr std::size_t kPrefetchAhead = 4;
  static constexpr EventIdx kPrefetchEvents = 64;
  /// Asks the cache for the time, kind and region columns of events [from, from + count).
  /// Always inlined: GCC 12 finds a function that only prefetches pure (it has no effect it
  /// knows of) and drops the call as unused, every prefetch with it (check the binary for
  /// prefetcht0 after changing it).
  __attribute__((always_inline)) void prefetch_events(EventIdx from, EventIdx count) const {
    constexpr EventIdx kPerLine = 16;  // 4-B entries in a 64-B line
    const std::uint32_t* time = trace_.time.offsets() + from;
    const std::uint32_t* ref = trace_.ref.data() + from;
    for (EventIdx n = 0; n < count; n += kPerLine) {
      __builtin_prefetch(time + n);
      __builtin_prefetch(ref + n);
    }
    __builtin_prefetch(trace_.kind.packed() + from / 2);
    __builtin_prefetch(trace_.kind.packed() + (from + count) / 2);
  }

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
  void index_openmp_events();

  /// Before the cuts are agreed (a master with threads): no cut inside a parallel region, so
  /// that every team's synchronizations lie in one part.
  void openmp_disqualify();

  /// (4b) A master with threads, once the cuts are known: the part each thread event is
  /// replayed in, the gates and their links, and each bound event's completion time (the
  /// master's go with its MPI ones into ready_; the threads' are set here).
  void prepare_openmp();

  // Forward: a gate's clocks live in gate_pool_ (S clocks, then the thread and the event of
  // its latest writer in the profiled clock) from its first write to its last read.
  void gates_forward_begin();

  void gate_write(std::uint32_t id, const Clk* a, int thread, EventIdx e);

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
  void gates_backward_begin();

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
  /// Clock 0, then the other clocks as differences from it: 4 bytes each (plus 2^31) when all
  /// fit (the usual case: scenarios differ by less than 2 s within a part), else 8. `lag`:
  /// ticks every clock of c is behind (added to clock 0; the differences stay).
  void put_clocks(ByteBuffer& out, const Clk* c, Clk lag = 0);
  void get_clocks(const char*& p, Clk* c) const;

  /// Stores a record's clocks until their event consumes them; returns the slot.
  /// Stores a record's clocks (and, after them, the partner whose time the profiled clock
  /// took) until their event consumes them; returns the slot.
  Clk pool_store(const char*& p, Rank partner = -1);
  const Clk* pool_at(Clk slot) const {
    return &pool_[static_cast<std::size_t>(slot) * (S_ + 1)];
  }
  void pool_free(Clk slot) { free_.push_back(static_cast<std::uint32_t>(slot)); }

  Rank host_of(std::uint32_t comm, std::uint32_t k) const {
    return world_of(comm, k % comm_size(comm));
  }

  /// Reads one round's records.
  void receive(RecordExchange& ex);

  // ---- Collective hosts -----------------------------------------------------------------------
  HostInstance& host_instance(std::uint32_t comm, std::uint32_t k);

  void host_up(std::uint32_t comm, std::uint32_t k, std::uint32_t local, const Clk* clocks);

  void host_request(std::uint32_t comm, std::uint32_t k, Rank from, std::uint32_t local);

  /// Answers the waiting binders whose sources are all in.
  void host_answer(HostInstance& h, std::uint32_t comm, std::uint32_t k);

  /// Backward: a binder's latest time for its begin sources.
  void host_up_backward(std::uint32_t comm, std::uint32_t k, std::uint32_t local, Clk value);

  /// Backward: replies to every source whose covering binders are all in.
  void host_reply_backward(HostInstance& h, std::uint32_t comm, std::uint32_t k);

  // ---- Forward ------------------------------------------------------------------------------

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
  void forward_begin();
  /// A master's stops_: where the plain loop of forward_step hands over to the full step.
  void plain_stops();

  /// Parts w0 .. w1 - 1 of the run.
  void forward_window(std::size_t w0, std::size_t w1);

  /// One round's steps of every part; `unfinished` is set if a part is not done. A master
  /// steps its worker threads too (the same parts): they meet in memory, so each part is
  /// stepped on all of the rank's threads in turn until none moves.
  bool forward_round(bool& unfinished);

  /// The window's cuts joined: `global` holds each cut's latest begin per clock (relative to
  /// the previous cut) over all ranks, `who` the lowest rank whose begin is the profiled
  /// clock's latest there (ranks(): none).
  void forward_join(std::size_t w0, std::size_t w1, const std::vector<Clk>& global,
                    const std::vector<int>& who);

  /// After the last window, with the runtime and the profiled clock's last rank agreed.
  void forward_end(const std::vector<Clk>& runtime, Clk t_max, Rank sink, int sink_thread);

  void start_forward(Part& g, std::size_t s, std::size_t slot);

  void finish_part(Part& g, std::size_t slot);

  /// Replays part g until it needs a record that has not come, or to its end.
  bool forward_step(Part& g, std::size_t slot);

  void ship_lr_forward(Rank to, EventIdx sender_event, const Clk* enter, Clk lag);
  /// A matched send's LS record (its call's Enter clocks, `lag` behind) to the receiver;
  /// returns whether its completion waits for the receiver (Late Receiver). Inlined into
  /// forward_step (its clock loop is built for AVX2 there).
  bool ship_send(EventIdx e, const Clk* enter, Clk lag);
  /// A receive request whose sender's completion waits for it: the LR record of its call's
  /// Enter clocks to the sender (nothing for the others).
  void ship_request(EventIdx e, const Clk* enter, Clk lag);

  /// Nothing moved anywhere: every waiting event is replayed without its constraints.
  void release_forward();

  // ---- The profiled clock's critical path -------------------------------------------------
  /// The event of this rank a hop reaches.
  EventIdx hop_target(const HopTarget& t, Rank source) const;

  RankRetimer& thread_location(std::uint32_t thread) {
    return thread >= 1 && thread <= team_.size() ? *team_[thread - 1] : *this;
  }

  /// Index of the latest hop strictly before event y, or UINT32_MAX.
  template <class H>
  static std::uint32_t latest_before(const std::vector<H>& hops, EventIdx y) {
    auto it = std::lower_bound(hops.begin(), hops.end(), y,
                               [](const H& h, EventIdx e) { return h.event < e; });
    return it == hops.begin() ? UINT32_MAX : static_cast<std::uint32_t>(it - hops.begin() - 1);
  }
  std::uint32_t hop_before(EventIdx y) const { return latest_before(hops_, y); }
  /// The hop between threads at this location's event x (a gate reader that hopped).
  GateFrom thread_hop_at(EventIdx x) const {
    return master_->gate_from_[link_of(x) & ~kWrites];
  }

  // Hops between threads stay on their rank: the list ranking has the MPI hops only, and the
  // stretch from an MPI hop's target back to the rank's previous MPI hop follows the thread
  // hops on the way, in memory.
  static constexpr std::uint32_t kUnknown = UINT32_MAX, kVisiting = UINT32_MAX - 1,
                                  kNowhere = UINT32_MAX - 2;

  /// On a master: from event y of location `at` of its rank backwards (hops strictly before
  /// y), through the hops between threads, to the master's MPI hop where the path leaves the
  /// rank (its index in hops_), or UINT32_MAX. Remembered per hop between threads, so every
  /// stretch is walked once; a cycle is an error.
  std::uint32_t resolve(RankRetimer* at, EventIdx y);

  /// On a master: credits the path from event y of location `at` back to where resolve ends,
  /// each stretch on the thread that owns it. Inclusive of y; y = n: the location's end.
  void credit_from(RankRetimer* at, EventIdx y);

  // The profiled clock's critical path, per call path on each rank (the driver's
  // path_profile): from the rank whose run ends last, backwards along the hops (ranked by
  // pointer jumping, as the critical path of the trace is), each stretch credited by the rank
  // (the thread) that owns it with the scenario's durations (its Factor changes; the waiting is
  // never on the path).
  void path_begin();

  /// The stretch (x, y]: each activity at its scenario duration; at the hop x it starts from
  /// (kNoEvent: from the start), only the completion after the partner came. Ticks: exact in
  /// any order.
  void credit(EventIdx x, EventIdx y);

  /// This rank's row of the path profile (seconds per call path; all its threads, summed in
  /// ticks), appended to `out`. Called on masters, after which the threads' path_end.
  void path_end(std::vector<double>& out);
  void thread_path_end();
  void release_hops();

  // ---- Backward (slack of the unchanged run) ------------------------------------------------
  // The backward replay, in phases the driver runs for every held rank (Retimer::backward).
  void backward_begin();

  void backward_window(std::size_t w0, std::size_t w1);

  bool backward_round(bool& unfinished);

  /// Nothing moved anywhere: every waiting event is walked past without its records.
  void release_backward();

  void backward_end() { std::vector<Part>().swap(parts_); }

  void start_backward(Part& g, std::size_t s);

  /// Marks in `replay` (per part) the parts this location needs the slack's dataflow for. From
  /// a part's end, L starts at M (the latest begin of the cut that ends it, or the run's end)
  /// and only goes down: by each activity's non-waiting time, and to the minimum of what the
  /// partners allow. So L(e) <= U(e) = M less the non-waiting time after e in the part, and
  /// U(e) - T(e) changes only at a synchronization (by its activity less its non-waiting time).
  /// Where the largest U(e) - T(e) is within the slack limit, every activity of the part is
  /// near-critical whatever the partners allow: no record is needed (a part of an iteration
  /// between two all-reduces is much shorter than the limit, 1 % of the run by default).
  void slack_bound(std::vector<std::uint8_t>& replay) const;

  /// A part no location replays backwards: every activity of events [start, stop) adds its
  /// non-waiting time to its call path's near-critical time, as backward_step would add it.
  void near_whole_part(EventIdx start, EventIdx stop);

  /// With no part replayed anywhere: a pure-MPI master's near-critical time is all its
  /// non-waiting time (nonwaiting_), with no walk over the events. Returns false where that
  /// does not apply (walk the parts).
  bool near_from_profile();

  bool released_forward(EventIdx e) const {
    return !released_events_.empty() &&
           std::binary_search(released_events_.begin(), released_events_.end(), e);
  }

  /// Walks part g backwards until an event needs a record that has not come, or to its start.
  bool backward_step(Part& g);

  /// The latest time of a synchronization minus its completion time goes to the partners it
  /// waited for: none of them may be later than that.
  void ship_backward(Part& g, EventIdx e, EventKind k, Clk value);

  /// Records that an earlier event of this call will need: from the receivers of its sends,
  /// and from the senders whose completion waited for its receive requests.
  void register_waits(Part& g, EventIdx e, EventKind k);

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
  /// ...and to other threads of the rank: the events whose gate's time came from another
  /// thread (the gate's gate_from_ on the master says where)
  EventBits thread_hop_;
  std::vector<GateFrom> gate_from_;  ///< a master: per gate, where its profiled clock came from
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
  PathColumn omp_path_;  ///< ...and the call path of the activity ending there
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
  /// per call path: its changes in chg_ by kind, [zero, factor) zeroing, [factor, slot) other
  /// factors, [slot, end) balance slots (apply_changes); and where there is at most one of each
  /// kind (the default scenarios: a call path's zeroing, rebalance and balance), the same
  /// changes as fields, which apply_changes takes without loops (-1: none of that kind).
  struct ChangeRange {
    std::uint32_t zero = 0, factor = 0, slot = 0, end = 0;
    bool one_each = false;
    std::int32_t zero_clock = -1, scale_clock = -1, balance_clock = -1, balance_slot = -1;
    double scale = 0.0;
  };
  std::vector<std::uint32_t> parent_of_;  ///< backward: per call path, parent() (a table)
  std::vector<ChangeRange> chg_first_;
  std::vector<Mod> chg_;
  std::vector<int> slot_of_;                 ///< per call path: its balance slot, or -1
  std::vector<std::uint8_t> mpi_path_;       ///< per call path: an MPI region's
  std::vector<double> visit_mean_;           ///< per balance slot: ticks of a visit
  /// per balance slot: a master's non-waiting ticks in its only visit of the call path (its
  /// statistic), or -1 (more visits, or a worker thread): that visit's factor needs no walk
  std::vector<Clk> only_visit_;
  bool walk_every_visit_ = false;  ///< test hook: no only_visit_ (CPREPLAY_TEST_RETIME_UNSHARED)
  std::size_t B_ = 0;
  std::vector<TimeChange> sorted_changes_;   ///< planning: by call path, then clock
  std::vector<std::uint32_t> stat_of_;       ///< planning: per call path, its balance statistic
  std::vector<std::int64_t> stats_;          ///< planning: ticks, visits, 1 if run, per statistic
  /// RetimeRequest::profile_exclusive's and profile_visits' row of this rank, or null.
  const std::int64_t* profile_exclusive_ = nullptr;
  const std::uint64_t* profile_visits_ = nullptr;

  // What the replay knows about events (bit per event, entries indexed by rank()).
  EventBits sent_;   ///< matched sends
  std::vector<EventIdx> send_request_;  ///< per matched send: the receiver's request event
  RankColumn send_dest_;                ///< per matched send: the receiver
  mutable std::size_t note_i_ = SIZE_MAX;  ///< send_note: the last note's send (notes go in order)
  mutable EventIdx note_e_ = kNoEvent;     ///< ...and its event
  EventBits lr_;     ///< matched sends whose completion waits for the receiver (Late Receiver)
  EventBits recvd_;  ///< matched receive completions
  std::vector<EventIdx> recv_sender_;  ///< per matched receive: the sender's send event
  RankColumn recv_source_;             ///< per matched receive: the sender
  std::vector<std::int32_t> recv_ready_;  ///< preparation: per matched receive (ready_times_)
  std::vector<LateEntry> late_;  ///< preparation: per Late Receiver send (in send order, then by event)
  NearTimes ready_times_;
  EventBits sync_;   ///< events that complete a synchronization
  Gaps gap_;  ///< per synchronization: end minus the latest original ready time
  EventBits lr_req_;  ///< receive requests whose sender's completion waited for them
  /// forward, a master's: the events its plain loop leaves to the full step (forward_begin)
  EventBits stops_;
  std::vector<EventIdx> released_events_;  ///< forward: synchronizations replayed as plain

  CollectiveTable table_;
  std::vector<CollEntry> colls_;  ///< collectives that bind, and the cuts; by end event
  /// preparation: what each synchronization but the messages' (recv_ready_, late_) waits for
  std::vector<Ready> ready_;
  std::vector<InstanceInfo> infos_;  ///< preparation: every instance's rule on this rank
  std::uint32_t best_ = UINT32_MAX;  ///< the communicator of the cut candidates
  std::vector<const InstanceInfo*> cands_;  ///< preparation: the candidates, by instance
  std::vector<EventIdx> cand_end_;
  EventBits cand_bits_;  ///< the candidates' ends, while preparing
  std::vector<Ticks> cand_m_;  ///< per candidate: its original latest begin
  /// Preparation, as a host: the first and last candidate segment of each instance's begins.
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> span_;
  std::vector<std::uint8_t> disq_;
  std::vector<EventIdx> resets_;  ///< end events of the cuts, in order
  std::vector<Clk> reset_m_;      ///< their original latest begins
  /// Per part, the balance visits open at its start: part_vis_[part_vis_first_[s] ..
  /// part_vis_first_[s + 1]) (empty table: none anywhere).
  struct OpenVisit {
    std::int32_t slot;
    double factor;
  };
  std::vector<std::uint32_t> part_vis_first_;
  std::vector<OpenVisit> part_vis_;
  /// planning: (part, Enter) of the regions open at each part's start whose call path has a
  /// balance statistic, in part order (plan_stats, for part_visits)
  std::vector<std::pair<std::uint32_t, EventIdx>> part_open_;

  FlatMap inbox_;
  std::vector<Clk> pool_;
  std::vector<std::uint32_t> free_;
  std::unordered_map<std::uint64_t, HostInstance> hosted_;
  std::vector<Clk> scratch_;
  std::vector<Clk> rx_;
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
  /// per call path: a pure-MPI master's non-waiting ticks (nonwaiting_from_profile), until the
  /// slack pass takes them; empty elsewhere
  std::vector<Clk> nonwaiting_;
  Clk slack_ticks_ = 0;  ///< backward: the slack limit in whole ticks (a slack <= it is within)
  /// backward: per part, 1 where some location replays the slack (slack_bound, agreed over all
  /// processes); 0: near_whole_part. Null: every part is replayed.
  const std::vector<std::uint8_t>* slack_replay_ = nullptr;
  bool near_done_ = false;  ///< backward: near_from_profile summed every part
  std::uint64_t released_ = 0;
  std::string error_;
  /// The original time of the event error_ names (a moved event moves the other threads'
  /// events after it: the rank reports its earliest).
  Ticks error_time_ = 0;
};

// The records' clocks, inline: copied into the steps that ship them and the receive that
// stores them (each built for AVX2 too, CPREPLAY_CLOCK_LOOPS).

namespace clock_bytes {

// The clock loops of put_clocks and get_clocks over pointers declared not to alias: a record's
// bytes (char) may alias anything, so without it GCC left the 4-byte widening loop scalar
// (30 loads, adds and stores per record received) where AVX2 widens four clocks at a time.

/// d[s] = c[s + 1] - c0 + 2^31 as 4 bytes each; returns the OR of their high halves (0: all fit).
__attribute__((always_inline)) inline std::uint64_t narrow(const Clk* __restrict c, Clk c0,
                                                          char* __restrict p, std::size_t n) {
  std::uint64_t high = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint64_t u = static_cast<std::uint64_t>(c[s + 1] - c0) + (std::uint64_t{1} << 31);
    high |= u >> 32;
    const auto u32 = static_cast<std::uint32_t>(u);
    std::memcpy(p + 4 * s, &u32, 4);
  }
  return high;
}

/// c[s] = base + the s-th 4-byte value at p (unsigned arithmetic, exact modulo 2^64).
__attribute__((always_inline)) inline void widen(const char* __restrict p, std::uint64_t base,
                                                Clk* __restrict c, std::size_t n) {
  for (std::size_t s = 0; s < n; ++s) {
    std::uint32_t u32;
    std::memcpy(&u32, p + 4 * s, 4);
    c[s] = static_cast<Clk>(base + u32);
  }
}

}  // namespace clock_bytes

inline void RankRetimer::put_clocks(ByteBuffer& out, const Clk* c, Clk lag) {
  const Clk c0 = c[0];
  const std::size_t n = S_ > 0 ? S_ - 1 : 0;
  // Written straight into the buffer's tail (one grow, no zero-fill of a scratch copy), in one
  // pass: the 4-byte differences, and whether they all fit; the rare record whose differences
  // do not is written again with 8 bytes each.
  const std::size_t at = out.size();
  char* p = out.extend(sizeof(Clk) + 1 + 8 * n);
  const Clk first = c0 + lag;
  std::memcpy(p, &first, sizeof(Clk));
  p += sizeof(Clk) + 1;
  // d fits 32 bits iff u = d + 2^31 (unsigned) is below 2^32: one add, shift and or per clock
  // (vectorizable; a signed range check is not, without 64-bit compares). The record holds u
  // (biased): get_clocks widens it without a sign, which SSE2 does in two instructions.
  const std::uint64_t high = clock_bytes::narrow(c, c0, p, n);
  if (high == 0) {
    p[-1] = 1;
    out.resize(at + sizeof(Clk) + 1 + 4 * n);
    return;
  }
  p[-1] = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const Clk d = c[s + 1] - c0;
    std::memcpy(p + 8 * s, &d, 8);
  }
}

inline void RankRetimer::get_clocks(const char*& p, Clk* c) const {
  Clk c0;
  std::memcpy(&c0, p, sizeof(Clk));
  c[0] = c0;
  const bool small = p[sizeof(Clk)] != 0;
  p += sizeof(Clk) + 1;
  const std::size_t n = S_ > 0 ? S_ - 1 : 0;
  if (small) {
    // Each difference plus 2^31 (put_clocks): c0 - 2^31 + u, in unsigned arithmetic (exact
    // modulo 2^64, and the true value fits).
    const std::uint64_t base = static_cast<std::uint64_t>(c0) - (std::uint64_t{1} << 31);
    clock_bytes::widen(p, base, c + 1, n);
    p += 4 * n;
  } else {
    for (std::size_t s = 0; s < n; ++s) {
      Clk d;
      std::memcpy(&d, p + 8 * s, 8);
      c[s + 1] = c0 + d;
    }
    p += 8 * n;
  }
}

}  // namespace cpreplay::replay::detail::retiming
