// SPDX-License-Identifier: BSD-3-Clause
// Wait-state pass: Late Sender (and wrong order), Late Receiver, collective waits and
// completions, receive-side counters; publishes the table of wait states the critical path needs.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "analysis/metric_table.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/memory.hpp"
#include "replay/messages.hpp"

namespace cpreplay::analysis {

/// Where critical-path ownership goes from a wait state.
enum class HopKind : std::uint8_t {
  Event,       ///< to `target_rank`'s event `target` (a send, or a receive request)
  Collective,  ///< to `target_rank`'s instance `target` on communicator `comm`
};

/// A synchronization point with waiting time > 0 (scalasca-metrics.md §7.1). 32 B; when the
/// waiting began follows from the event (wait_start).
struct WaitState {
  double wait = 0.0;           ///< seconds
  EventIdx event = kNoEvent;   ///< the synchpoint event X
  std::uint32_t callpath = 0;  ///< cnode(X)
  std::uint32_t target = 0;    ///< HopKind::Event: event index; Collective: instance index
  Rank target_rank = 0;
  std::uint32_t comm = 0;
  Metric metric = Metric::MpiLatesender;  ///< which wait-state metric it belongs to
  HopKind hop = HopKind::Event;
};

static_assert(sizeof(WaitState) == 32, "one per wait state, kept for the backward pass");

/// The kinds of synchronization points (scalasca-metrics.md §7.1).
enum class SyncKind : std::uint8_t {
  LateSender,           ///< receive of a Late Sender instance (the waiting side)
  LateSenderPartner,    ///< the send of such a message (filled in by the root-cause pass)
  LateReceiver,         ///< send completion of a Late Receiver instance (the waiting side)
  LateReceiverPartner,  ///< the receive request of such a message (root-cause pass)
  Barrier, NxN, OneToN, NToOne, Init, Finalize,
  // Hybrid traces, master thread, added by the root-cause pass (docs/root-cause.md, OpenMP):
  OmpFork,     ///< Enter of a parallel region (its fork); ends a serial section
  OmpBarrier,  ///< Leave of an OpenMP barrier; wait = this thread's barrier wait
  OmpEnd,      ///< after the last event: ends the last serial section
};

/// A synchronization point with what the delay analysis needs (scalasca-metrics.md §7.1,
/// §8.1), 36 B: one per wait state and partner, held through the root-cause phase, where it is
/// the largest table after the events. Collectives: every instance where this rank
/// synchronizes, wait or not. Packed to 4-byte boundaries (x86-64 reads the doubles there as
/// fast); who caused the waiting is the peer, or this rank itself (one bit).
#pragma pack(push, 4)
struct SyncPoint {
  static constexpr std::uint32_t kMaxComm = (1u << 24) - 1;  ///< `comm` has 24 bits
  double wait = 0.0;  ///< seconds waited here (>= 0)
  /// total - completion: the duration of the MPI call less its §4/§5 completion time (a Late
  /// Receiver's completion is <= 0, as in scout). prune() takes this off the call path of a
  /// synchpoint that begins an interval: only the completion part of it remains.
  double cut_length = 0.0;
  EventIdx event = kNoEvent;
  std::uint32_t callpath = 0;
  /// P2P: the partner's event (the send, or the receive request). Collectives: the instance.
  std::uint32_t target = 0;
  /// P2P and N-to-1: the partner's world rank. Barrier, N x N, 1-to-N: the causer (the latest
  /// member; the root for 1-to-N).
  Rank peer = 0;
  /// Collectives: communicator (or the Init/Finalize pseudo one); at most kMaxComm.
  std::uint32_t comm : 24;
  SyncKind kind : 7;
  /// The rank that holds this point caused the waiting (the latest sender's N-to-1 point, whose
  /// peer is the root that waited); otherwise the peer did.
  std::uint32_t self_causer : 1;
  SyncPoint() : comm(0), kind(SyncKind::Barrier), self_causer(0) {}
  /// Collectives: who caused the waiting (latest member, latest sender, root); `self` is the
  /// rank that holds the point.
  Rank causer(Rank self) const { return self_causer ? self : peer; }
};
#pragma pack(pop)
static_assert(sizeof(SyncPoint) == 36, "SyncPoint is held per synchronization point");

/// When the waiting began: the Enter of the waiting MPI call, or the begin of the collective
/// instance (its CollBegin, or the Enter of MPI_Init/MPI_Finalize).
Ticks wait_start(const LocalTrace& trace, const WaitState& w);

struct WaitStateResult {
  /// In event order. A deque: grows in blocks, without a vector's copy-and-double peak; its
  /// blocks off the heap (they live on to the summary while the matching's come and go).
  replay::SlabDeque<WaitState> waits;
  std::uint64_t p2p_clock_violations = 0;
  std::uint64_t coll_clock_violations = 0;
  EventIdx init_leave = kNoEvent;      ///< Leave of MPI_Init, if any
  EventIdx finalize_leave = kNoEvent;  ///< Leave of MPI_Finalize, if any
  Ticks finalize_enter = 0;
  Rank finalize_latest_rank = 0;  ///< rank that entered MPI_Finalize last (ties: lower rank)
  std::uint32_t finalize_comm = 0;
  /// Every synchronization point of this rank the forward replay finds, in no particular order
  /// (the root-cause pass sorts them and adds the partner-side points).
  replay::SlabDeque<SyncPoint> syncpoints;
};

/// Computes the wait-state metrics into `sev`, in parts as the replay produces its inputs: the
/// collective timings window by window and the matched messages round by round, so neither
/// needs to be kept.
/// MPI: local (the engine did the communication).
class WaitStatePass final : public replay::MessageSink {
 public:
  WaitStatePass(const Definitions& defs, const LocalTrace& trace, Severity& sev);
  ~WaitStatePass() override;
  WaitStatePass(const WaitStatePass&) = delete;
  WaitStatePass& operator=(const WaitStatePass&) = delete;
  /// Collective wait states of n instances with their reduced timings.
  void collectives(const replay::CollInstance* instances, const replay::CollTiming* timings,
                   std::size_t n);
  /// Point-to-point wait states of matched messages, each side in event order (MessageSink).
  void receives(const replay::MatchedRecv* m, std::size_t n, EventIdx done) override;
  void sends(const replay::MatchedSend* m, std::size_t n, EventIdx done) override;
  /// The same from a whole table. The table is consumed: each half is freed once used.
  void messages(replay::MessageTable&& table);
  /// The wait states in event order, and what the critical path needs to start and end.
  WaitStateResult finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Computes the wait-state metrics into `sev` from the matched messages and collective timings.
/// The message table is consumed: each half is freed as soon as it has been used, which keeps
/// the forward phase's peak memory down.
/// MPI: local (the engine did the communication).
WaitStateResult wait_state_pass(const Definitions& defs, const LocalTrace& trace,
                                replay::MessageTable&& messages,
                                const replay::CollectiveTable& collectives, Severity& sev);

}  // namespace cpreplay::analysis
