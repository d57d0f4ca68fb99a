// SPDX-License-Identifier: BSD-3-Clause
// Wait states as Scalasca 2.6 attributes them (scalasca-metrics.md §4-§6).
#include "analysis/wait_states.hpp"

#include "cpreplay/error.hpp"

#include <algorithm>
#include <cassert>
#include <deque>
#include <utility>

namespace cpreplay::analysis {
namespace {

double pos(double x) { return x > 0.0 ? x : 0.0; }

/// One Late Sender instance kept for the wrong-order check (§5.2).
struct LsEntry {
  Ticks send_time;
  std::uint32_t callpath;
  std::uint32_t source_local;
  std::uint64_t bytes;
  double idle;
};
constexpr std::size_t kWrongOrderWindow = 100;

struct PendingMulti {  // Late Sender candidate of an MPI_Waitall/Waitsome call
  EventIdx call = kNoEvent;
  double idle = 0.0;
  replay::MatchedRecv message;
  bool have = false;
};

struct PendingMultiLr {  // Late Receiver candidate of an MPI_Waitall/Waitsome call
  double idle = 0.0;
  replay::MatchedSend message;
  EventIdx completion = kNoEvent;
  bool have = false;
};

}  // namespace

class WaitStatePass::Impl {
 public:
  Impl(const Definitions& defs, const LocalTrace& trace, Severity& sev)
      : defs_(defs), trace_(trace), sev_(sev), clock_(defs.clock) {}

  void messages(replay::MessageTable& table) {
    for (std::size_t m = 0; m < table.recv_events.size(); ++m)
      receive(replay::MatchedRecv{table.recv_events[m], table.sends[m]});
    std::vector<EventIdx>().swap(table.recv_events);
    std::vector<replay::RemoteSend>().swap(table.sends);
    receives_done(static_cast<EventIdx>(trace_.size()));
    for (std::size_t m = 0; m < table.send_events.size(); ++m)
      send(replay::MatchedSend{table.send_events[m], table.recvs[m]});
    std::vector<EventIdx>().swap(table.send_events);
    std::vector<replay::RemoteRecv>().swap(table.recvs);
    sends_done(static_cast<EventIdx>(trace_.size()));
  }

  void receives(const replay::MatchedRecv* m, std::size_t n, EventIdx done) {
    for (std::size_t i = 0; i < n; ++i) receive(m[i]);
    receives_done(done);
  }

  void sends(const replay::MatchedSend* m, std::size_t n, EventIdx done) {
    for (std::size_t i = 0; i < n; ++i) send(m[i]);
    sends_done(done);
  }

  void collectives(const replay::CollInstance* instances, const replay::CollTiming* timings,
                   std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) collective_wait(instances[i], timings[i]);
  }

  WaitStateResult finish() {
    receives_done(kNoEvent);
    sends_done(kNoEvent);
    std::sort(result_.waits.begin(), result_.waits.end(),
              [](const WaitState& a, const WaitState& b) { return a.event < b.event; });
    return std::move(result_);
  }

 private:
  double span(Ticks a, Ticks b) const {
    return b >= a ? clock_.span(a, b) : -clock_.span(b, a);
  }
  const Region& region_of_call(EventIdx call) const {
    return defs_.region(trace_.region_of(call));
  }

  // ---- Late Sender, wrong order, receive counters ---------------------------------------
  // Receives come in event order, so a multi-wait call's receives are consecutive.
  void receive(const replay::MatchedRecv& message) {
    const EventIdx r = message.event;
    const replay::RemoteSend& s = message.send;
    const P2pRecord& rec = trace_.message(r);
    const EventIdx call = trace_.call_of(r);
    const std::uint32_t cp = trace_.ref[call];
    const MpiClass cls = region_of_call(call).mpi_class;

    // A multi-wait call's Late Sender instance is complete when a receive of another call
    // comes (or the end): only its maximum counts, once.
    if (multi_.have && multi_.call != call) flush_multi(multi_);

    sev_.add(s.bytes == 0 ? Metric::SyncsRecv : Metric::CommsRecv, cp, 1.0);
    sev_.add(Metric::BytesRcvd, cp, static_cast<double>(s.bytes));
    if (s.time > trace_.time[r]) ++result_.p2p_clock_violations;

    if (cls != MpiClass::Test) {
      const Ticks er = trace_.time[call];
      const Ticks lr = trace_.time[trace_.leave_of(call)];
      // RemoteSend is packed: its fields are copied, never bound to std::min's references.
      const Ticks send_enter = s.call_enter;
      const double idle = span(er, std::min(send_enter, lr));
      if (cls == MpiClass::WaitMulti) {
        if (idle > 0.0 && (!multi_.have || idle > multi_.idle)) {
          multi_ = PendingMulti{call, idle, message, true};
          if (multi_ls_calls_.empty() || multi_ls_calls_.back() != call)
            multi_ls_calls_.push_back(call);
        }
      } else if (idle > 0.0) {
        add_late_sender(message, idle);
      }
    }
    wrong_order_check(s.time, rec.peer);
  }

  /// Every receive before event `done` has been seen.
  void receives_done(EventIdx done) {
    recv_done_ = done;
    if (done >= trace_.size() && multi_.have) flush_multi(multi_);
    settle_multi_receivers();
  }

  void flush_multi(PendingMulti& multi) {
    add_late_sender(multi.message, multi.idle);
    multi.have = false;
  }

  void add_late_sender(const replay::MatchedRecv& message, double idle) {
    const EventIdx r = message.event;
    const replay::RemoteSend& s = message.send;
    const EventIdx call = trace_.call_of(r);
    const std::uint32_t cp = trace_.ref[call];
    sev_.add(Metric::MpiLatesender, cp, idle);
    sev_.add(s.bytes == 0 ? Metric::MpiSlsCount : Metric::MpiClsCount, cp, 1.0);
    record_wait(r, cp, idle, Metric::MpiLatesender,
                HopKind::Event, replay::peer_rank(defs_, trace_, r), 0, s.event);
    {
      const Ticks er = trace_.time[call];
      const Ticks lr = trace_.time[trace_.leave_of(call)];
      SyncPoint sp;
      sp.kind = SyncKind::LateSender;
      sp.wait = idle;
      sp.cut_length = span(er, lr) - pos(span(s.call_leave, lr));
      sp.event = r;
      sp.callpath = cp;
      sp.target = s.event;
      sp.peer = replay::peer_rank(defs_, trace_, r);
      result_.syncpoints.push_back(sp);
    }
    if (ls_buffer_.size() == kWrongOrderWindow) {
      const bool was_latest = ls_buffer_.front().send_time == ls_latest_send_;
      ls_buffer_.pop_front();
      if (was_latest) refresh_latest_send();
    }
    ls_buffer_.push_back(LsEntry{s.time, cp, trace_.message(r).peer, s.bytes, idle});
    ls_latest_send_ = std::max(ls_latest_send_, Ticks{s.time});  // s is packed: a copy
  }

  /// §5.2: an earlier Late Sender whose message was sent after this one was received out of
  /// order.
  void wrong_order_check(Ticks send_time, std::uint32_t source_local) {
    // Fast path: no buffered message was sent after this one (the common, in-order case).
    if (ls_buffer_.empty() || ls_latest_send_ <= send_time) return;
    for (auto it = ls_buffer_.begin(); it != ls_buffer_.end();) {
      if (it->send_time > send_time) {
        sev_.add(Metric::MpiLatesenderWo, it->callpath, it->idle);
        sev_.add(it->source_local == source_local ? Metric::MpiLswoSame
                                                  : Metric::MpiLswoDifferent,
                 it->callpath, it->idle);
        sev_.add(it->bytes == 0 ? Metric::MpiSlswoCount : Metric::MpiClswoCount, it->callpath,
                 1.0);
        it = ls_buffer_.erase(it);
      } else {
        ++it;
      }
    }
    refresh_latest_send();
  }

  void refresh_latest_send() {
    ls_latest_send_ = 0;
    for (const LsEntry& e : ls_buffer_) ls_latest_send_ = std::max(ls_latest_send_, e.send_time);
  }

  // ---- Late Receiver (§5.3), on the sender --------------------------------------------
  // Sends come in event order; a multi-wait completion call collects the maximum of its sends
  // and is decided once both sides are settled past it (a Late Sender in the same call rules
  // out its Late Receiver).
  void send(const replay::MatchedSend& message) {
    const EventIdx s = message.event;
    EventIdx c = s;
    if (trace_.kind[s] == EventKind::Isend) {
      c = trace_.message(s).partner;
      if (c == kNoEvent || trace_.kind[c] != EventKind::IsendComplete) return;
    }
    const EventIdx call = trace_.call_of(c);
    const MpiClass cls = region_of_call(call).mpi_class;
    if (cls != MpiClass::Send && cls != MpiClass::WaitSingle && cls != MpiClass::WaitMulti)
      return;
    const Ticks ec = trace_.time[call];
    const Ticks lc = trace_.time[trace_.leave_of(call)];
    const Ticks eq = message.recv.request_enter;
    const double idle = lc <= eq ? 0.0 : span(ec, eq);
    if (cls == MpiClass::WaitMulti) {
      // Ties go to the latest send of the call: scout visits them backwards and replaces its
      // maximum only when strictly larger. The critical path and the delay analysis leave the
      // call through that message (conformance-next/late-receiver-waitall).
      PendingMultiLr& best = multi_lr_at(call);
      if (idle > 0.0 && (!best.have || idle >= best.idle))
        best = PendingMultiLr{idle, message, c, true};
    } else if (idle > 0.0) {
      add_late_receiver(message, c, idle);
    }
  }

  /// Every send before event `done` has been seen.
  void sends_done(EventIdx done) {
    send_done_ = done;
    settle_multi_receivers();
  }

  /// Decides the multi-wait Late Receiver candidates whose call both sides have passed, in call
  /// order (so the sums do not depend on how the rounds cut the messages).
  void settle_multi_receivers() {
    const EventIdx frontier = std::min(recv_done_, send_done_);
    while (!multi_lr_.empty()) {
      const auto it = multi_lr_.begin();  // the earliest call
      const EventIdx call = it->first;
      if (frontier != kNoEvent && trace_.leave_of(call) >= frontier) break;
      const PendingMultiLr& best = it->second;
      if (best.have &&
          !std::binary_search(multi_ls_calls_.begin(), multi_ls_calls_.end(), call))
        add_late_receiver(best.message, best.completion, best.idle);
      multi_lr_.pop_front();
    }
    // A send not seen yet lies after send_done_, and so does its completion call: calls that
    // ended before it and have no candidate left are not looked up again.
    const EventIdx keep_from = multi_lr_.empty() ? kNoEvent : multi_lr_.begin()->first;
    while (!multi_ls_calls_.empty() && multi_ls_calls_.front() < keep_from &&
           (send_done_ == kNoEvent || trace_.leave_of(multi_ls_calls_.front()) < send_done_))
      multi_ls_calls_.pop_front();
  }

  void add_late_receiver(const replay::MatchedSend& message, EventIdx completion, double idle) {
    const EventIdx call = trace_.call_of(completion);
    const std::uint32_t cp = trace_.ref[call];
    const EventIdx s = message.event;
    const std::uint64_t bytes = trace_.bytes_of(s);
    sev_.add(Metric::MpiLatereceiver, cp, idle);
    sev_.add(bytes == 0 ? Metric::MpiSlrCount : Metric::MpiClrCount, cp, 1.0);
    record_wait(completion, cp, idle, Metric::MpiLatereceiver, HopKind::Event,
                replay::peer_rank(defs_, trace_, s), 0, message.recv.request_event);
    const Ticks ec = trace_.time[call];
    const Ticks lc = trace_.time[trace_.leave_of(call)];
    SyncPoint sp;
    sp.kind = SyncKind::LateReceiver;
    sp.wait = idle;
    const double total = span(ec, lc);
    // As scout: <= 0, the receive's call ending after the send's is no completion of the send.
    sp.cut_length =
        total - (lc > message.recv.request_leave ? 0.0 : span(message.recv.request_leave, lc));
    sp.event = completion;
    sp.callpath = cp;
    sp.target = message.recv.request_event;
    sp.peer = replay::peer_rank(defs_, trace_, s);
    result_.syncpoints.push_back(sp);
  }

  // ---- Collectives (§4) --------------------------------------------------------------
  void collective_wait(const replay::CollInstance& inst, const replay::CollTiming& t) {
    {
      const Ticks b = trace_.time[inst.begin];
      const Ticks x = trace_.time[inst.end];
      const std::uint32_t cp = trace_.callpath_of(inst.end);
      if (!replay::analyzed(defs_, trace_, inst)) return;  // non-blocking (MPI_I...)
      std::uint64_t sent = 0, received = 0;
      if (trace_.kind[inst.end] == EventKind::CollEnd) {
        sent = trace_.coll_sent(inst.end);
        received = trace_.coll_received(inst.end);
      }
      // The critical path starts and ends at these even when there is nobody to wait for.
      if (inst.kind == replay::CollKind::Init) result_.init_leave = inst.end;
      if (inst.kind == replay::CollKind::Finalize) {
        result_.finalize_leave = inst.end;
        result_.finalize_enter = b;
        result_.finalize_latest_rank = t.latest_rank;
        result_.finalize_comm = inst.comm;
      }
      if (t.comm_size <= 1) return;
      // The clock condition is the one the clock correction enforces (one rule for both).
      Rank src = 0;
      Ticks must = 0;
      if (replay::clock_condition(trace_, inst, t, trace_.rank, src, must) && must > x)
        ++result_.coll_clock_violations;

      switch (inst.kind) {
        case replay::CollKind::Init: {
          result_.init_leave = inst.end;
          const Ticks cap = std::min(t.latest_begin, x);
          const Ticks e2 = std::max(t.earliest_end, cap);
          sev_.add(Metric::MpiInitCompletion, cp, pos(span(e2, x)));
          // No wait at MPI_Init, so no delay cost can stop there (scout's comment).
          add_syncpoint(inst, cp, SyncKind::Init, 0.0, pos(span(e2, x)), t.latest_rank);
          break;
        }
        case replay::CollKind::Finalize: {
          result_.finalize_leave = inst.end;
          result_.finalize_enter = b;
          result_.finalize_latest_rank = t.latest_rank;
          result_.finalize_comm = inst.comm;
          const Ticks cap = std::min(t.latest_begin, x);
          const double wait = pos(span(b, cap));
          sev_.add(Metric::MpiFinalizeWait, cp, wait);
          add_collective_wait(inst, cp, wait, t.latest_rank, Metric::MpiFinalizeWait);
          add_syncpoint(inst, cp, SyncKind::Finalize, wait,
                        pos(span(std::max(t.earliest_end, cap), x)), t.latest_rank);
          break;
        }
        case replay::CollKind::Barrier:
        case replay::CollKind::NxN: {
          const bool barrier = inst.kind == replay::CollKind::Barrier;
          if (!barrier && sent == 0 && received == 0) break;  // zero payload
          const bool full = barrier || t.earliest_end > t.latest_begin;
          Ticks latest = t.latest_begin, earliest = t.earliest_end;
          Rank latest_rank = t.latest_rank;
          if (!full) {
            if (!t.has_sender) break;
            latest = t.latest_sender_begin;
            latest_rank = t.latest_sender;
            earliest = t.syncpoint_earliest_end;
            const bool syncpoint = latest_rank == trace_.rank || (received > 0 && b < latest);
            if (!syncpoint) break;
          }
          const Ticks cap = std::min(latest, x);
          const Ticks e2 = std::max(earliest, cap);
          const double wait = pos(span(b, cap));
          sev_.add(barrier ? Metric::MpiBarrierWait : Metric::MpiWaitNxn, cp, wait);
          sev_.add(barrier ? Metric::MpiBarrierCompletion : Metric::MpiNxnCompletion, cp,
                   pos(span(e2, x)));
          add_collective_wait(inst, cp, wait, latest_rank,
                              barrier ? Metric::MpiBarrierWait : Metric::MpiWaitNxn);
          add_syncpoint(inst, cp, barrier ? SyncKind::Barrier : SyncKind::NxN, wait,
                        pos(span(e2, x)), latest_rank);
          break;
        }
        case replay::CollKind::OneToN: {
          if (t.root_sent == 0) break;  // zero payload: nothing is broadcast
          const Ticks r = t.root_begin;
          const Ticks cap = std::min(r, x);
          const double completion = pos(span(std::max(t.syncpoint_earliest_end, cap), x));
          if (trace_.rank == t.root) {
            // The root synchronizes with its waiters, if it has any.
            if (t.has_syncpoints)
              add_syncpoint(inst, cp, SyncKind::OneToN, 0.0, completion, t.root);
            break;
          }
          const bool waiter = received > 0 && b < r;
          if (!waiter) break;
          const double wait = pos(span(b, cap));
          sev_.add(Metric::MpiLatebroadcast, cp, wait);
          add_collective_wait(inst, cp, wait, t.root, Metric::MpiLatebroadcast);
          add_syncpoint(inst, cp, SyncKind::OneToN, wait, completion, t.root);
          break;
        }
        case replay::CollKind::NToOne: {
          if (t.root_received == 0 || !t.has_sender) break;
          const Ticks l = t.latest_sender_begin;
          if (!(t.root_begin < l)) break;
          const Ticks cap = std::min(l, x);
          const double completion = pos(span(std::max(t.syncpoint_earliest_end, cap), x));
          if (trace_.rank == t.latest_sender && trace_.rank != t.root) {
            // The latest sender synchronizes with the root that waited for it.
            add_syncpoint(inst, cp, SyncKind::NToOne, 0.0, completion, t.root, trace_.rank);
            break;
          }
          if (trace_.rank != t.root) break;
          const double wait = pos(span(b, cap));
          sev_.add(Metric::MpiEarlyreduce, cp, wait);
          add_collective_wait(inst, cp, wait, t.latest_sender, Metric::MpiEarlyreduce);
          add_syncpoint(inst, cp, SyncKind::NToOne, wait, completion, t.latest_sender);
          break;
        }
        case replay::CollKind::Scan: {
          if (sent == 0 && received == 0) break;
          if (!t.scan_has_sender || !(b < t.scan_latest_begin)) break;
          sev_.add(Metric::MpiEarlyscan, cp, pos(span(b, std::min(t.scan_latest_begin, x))));
          break;
        }
        case replay::CollKind::Unanalyzed:
          break;
      }
    }
  }

  void add_collective_wait(const replay::CollInstance& inst, std::uint32_t cp, double wait,
                           Rank target, Metric metric) {
    if (wait <= 0.0) return;
    record_wait(inst.end, cp, wait, metric, HopKind::Collective, target,
                inst.comm, inst.index);
  }

  /// Records a collective synchronization point: total is the duration of the MPI call.
  void add_syncpoint(const replay::CollInstance& inst, std::uint32_t cp, SyncKind kind,
                     double wait, double completion, Rank peer, Rank causer = -1) {
    assert(causer < 0 || causer == peer || causer == trace_.rank);
    const EventIdx call = trace_.kind[inst.end] == EventKind::CollEnd
                              ? trace_.call_of(inst.end)
                              : trace_.enter_of(inst.end);
    SyncPoint sp;
    sp.kind = kind;
    sp.wait = wait;
    const double total = kind == SyncKind::Init || kind == SyncKind::Finalize
                             ? span(trace_.time[call], trace_.time[inst.end])
                             : span(trace_.time[call], trace_.time[trace_.leave_of(call)]);
    sp.cut_length = total - completion;
    sp.event = inst.end;
    sp.callpath = cp;
    sp.target = inst.index;
    if (inst.comm > SyncPoint::kMaxComm)
      throw ReplayError(defs_.anchor_path + ": rank " + std::to_string(trace_.rank) +
                        ": more than " + std::to_string(SyncPoint::kMaxComm) +
                        " communicators; the root-cause analysis handles at most that many");
    sp.comm = inst.comm;
    sp.peer = peer;
    // Who caused it is the peer or (the latest sender's N-to-1 point, the one caller that names
    // a causer) this rank: one bit.
    sp.self_causer = causer >= 0 && causer != peer ? 1 : 0;
    result_.syncpoints.push_back(sp);
  }

  /// Publishes a wait state for the critical path (and the summary's worst instances).
  void record_wait(EventIdx event, std::uint32_t cp, double wait, Metric metric,
                   HopKind hop, Rank target_rank, std::uint32_t comm, std::uint64_t target) {
    WaitState w;
    w.event = event;
    w.callpath = cp;
    w.wait = wait;
    w.metric = metric;
    w.hop = hop;
    w.target_rank = target_rank;
    w.comm = comm;
    w.target = static_cast<std::uint32_t>(target);
    result_.waits.push_back(w);
  }

  const Definitions& defs_;
  const LocalTrace& trace_;
  Severity& sev_;
  const Clock& clock_;
  std::deque<LsEntry> ls_buffer_;
  Ticks ls_latest_send_ = 0;  ///< latest send time in ls_buffer_
  PendingMulti multi_;                     ///< open multi-wait Late Sender candidate
  std::deque<EventIdx> multi_ls_calls_;    ///< multi-wait calls with a Late Sender, ascending
  /// By completion call, ascending. Sends come in event order and their completion calls mostly
  /// in the same order, so an entry is nearly always appended (a std::map allocated a node for
  /// each multi-wait call).
  std::deque<std::pair<EventIdx, PendingMultiLr>> multi_lr_;
  PendingMultiLr& multi_lr_at(EventIdx call) {
    if (multi_lr_.empty() || multi_lr_.back().first < call)
      return multi_lr_.emplace_back(call, PendingMultiLr{}).second;
    auto it = std::lower_bound(multi_lr_.begin(), multi_lr_.end(), call,
                               [](const auto& e, EventIdx c) { return e.first < c; });
    if (it == multi_lr_.end() || it->first != call)
      it = multi_lr_.emplace(it, call, PendingMultiLr{});
    return it->second;
  }
  EventIdx recv_done_ = 0;  ///< receives before this event have been seen
  EventIdx send_done_ = 0;  ///< sends before this event have been seen
  WaitStateResult result_;
};

Ticks wait_start(const LocalTrace& trace, const WaitState& w) {
  if (w.hop == HopKind::Event) return trace.time[trace.call_of(w.event)];
  if (trace.kind[w.event] == EventKind::CollEnd)
    return trace.time[trace.coll[trace.ref[w.event]].begin];
  return trace.time[trace.enter_of(w.event)];  // MPI_Init/MPI_Finalize: their Leave
}

WaitStatePass::WaitStatePass(const Definitions& defs, const LocalTrace& trace, Severity& sev)
    : impl_(std::make_unique<Impl>(defs, trace, sev)) {}
WaitStatePass::~WaitStatePass() = default;

void WaitStatePass::collectives(const replay::CollInstance* instances,
                                const replay::CollTiming* timings, std::size_t n) {
  impl_->collectives(instances, timings, n);
}

void WaitStatePass::messages(replay::MessageTable&& table) { impl_->messages(table); }

void WaitStatePass::receives(const replay::MatchedRecv* m, std::size_t n, EventIdx done) {
  impl_->receives(m, n, done);
}

void WaitStatePass::sends(const replay::MatchedSend* m, std::size_t n, EventIdx done) {
  impl_->sends(m, n, done);
}

WaitStateResult WaitStatePass::finish() { return impl_->finish(); }

WaitStateResult wait_state_pass(const Definitions& defs, const LocalTrace& trace,
                                replay::MessageTable&& messages,
                                const replay::CollectiveTable& collectives, Severity& sev) {
  WaitStatePass pass(defs, trace, sev);
  // Communicator by communicator, as the streamed timings come.
  std::vector<replay::CollInstance> instances;
  for (std::size_t c = 0; c < collectives.ends.size(); ++c) {
    instances.resize(collectives.ends[c].size());
    for (std::uint32_t k = 0; k < instances.size(); ++k)
      instances[k] = collectives.instance(defs, trace, c, k);
    pass.collectives(instances.data(), collectives.timing[c].data(), instances.size());
  }
  pass.messages(std::move(messages));
  return pass.finish();
}

}  // namespace cpreplay::analysis
