// SPDX-License-Identifier: BSD-3-Clause
// Collective re-enactment: the global timing facts of every collective instance, reduced in
// windows of instances per communicator (one array reduction per window, not per instance).
#pragma once

#include <functional>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// How a collective synchronizes (from the OTF2 collective op, scalasca-metrics.md §4).
enum class CollKind : std::uint8_t {
  Barrier, NxN, OneToN, NToOne, Scan, Init, Finalize,
  Unanalyzed  ///< Alltoallv/w, handle/allocation ops: counted but never analyzed
};

CollKind kind_of(CollOp op);

/// One collective instance as this rank saw it. MPI_Init and MPI_Finalize are instances on
/// the pseudo communicator `init_finalize_comm` (all ranks), with begin/end = Enter/Leave.
struct CollInstance {
  EventIdx begin = kNoEvent;  ///< CollBegin, or Enter of MPI_Init/MPI_Finalize
  EventIdx end = kNoEvent;    ///< CollEnd, or Leave of MPI_Init/MPI_Finalize
  std::uint32_t comm = 0;     ///< CommId value or the pseudo communicator
  std::uint32_t index = 0;    ///< k: this is the k-th instance on that communicator
  CollKind kind = CollKind::Barrier;
};

/// Global facts about one instance. Ranks are world ranks; ties go to the lower rank.
struct CollTiming {
  std::uint32_t comm_size = 1;
  Ticks latest_begin = 0;  ///< max begin over all members
  Rank latest_rank = 0;
  Ticks earliest_end = 0;  ///< min end over all members
  bool has_sender = false;        ///< some member sent bytes
  Ticks latest_sender_begin = 0;  ///< max begin over members with bytes sent > 0
  Rank latest_sender = 0;
  Ticks root_begin = 0;  ///< begin of the root (rooted operations)
  Rank root = 0;
  std::uint64_t root_sent = 0;
  std::uint64_t root_received = 0;
  /// min end over members with (bytes received > 0 and begin < latest_sender_begin), plus the
  /// latest sender: the earliest end among N x N partial-overlap synchronization points. For
  /// 1-to-N: min end over the waiters (non-root members that received and began before the
  /// root); `has_syncpoints` says whether there is any.
  Ticks syncpoint_earliest_end = 0;
  bool has_syncpoints = false;
  bool scan_has_sender = false;  ///< some member 0..me (me included) sent bytes
  Ticks scan_latest_begin = 0;   ///< max begin over those
};

/// This rank's collective instances, kept as 4 B per instance: the end event, per communicator
/// in order. Everything else of an instance follows from the end event (instance()).
struct CollectiveTable {
  std::uint32_t init_finalize_comm = 0;  ///< id of the pseudo communicator
  /// The communicators this rank has instances on, ascending (the pseudo one last): sparse, so
  /// a process holding many ranks of a trace with many communicators keeps no rank x
  /// communicator table.
  std::vector<std::uint32_t> comms;
  /// Parallel to `comms`: the end events of the communicator's instances in order, k -> end.
  std::vector<std::vector<EventIdx>> ends;
  /// Parallel to `ends`, only without a sink (--time-correct, which reuses them).
  std::vector<std::vector<CollTiming>> timing;
  std::uint64_t dropped = 0;  ///< instances left out because not every member reached them

  /// The position of communicator `comm` in `comms`, or -1 (no instance on it).
  std::ptrdiff_t slot(std::uint32_t comm) const;
  /// The end events of the instances on communicator `comm` (empty: none).
  const std::vector<EventIdx>& on(std::uint32_t comm) const;
  /// The k-th instance of the communicator at position s of `comms`.
  CollInstance instance(const Definitions& defs, const LocalTrace& trace, std::size_t s,
                        std::uint32_t k) const;
  std::size_t size() const;
};

/// False for non-blocking collectives (MPI_I...): Scalasca analyzes neither their waits nor
/// their clock condition.
bool analyzed(const Definitions& defs, const LocalTrace& trace, const CollInstance& inst);

/// The clock condition of an analyzed instance on this rank (scalasca-metrics.md §4): its end
/// must not precede `latest`, the begin of world rank `src`. Barrier, N x N with full overlap,
/// MPI_Init/Finalize: the latest member. N x N with partial overlap: the latest sender, at this
/// rank's synchronization points only. 1-to-N: the root, if it sent. N-to-1: the latest sender,
/// on a root that received. Zero-payload N x N and scans order nothing: false.
/// The wait-state pass counts a violation where latest > end; the clock correction makes it hold.
bool clock_condition(const LocalTrace& trace, const CollInstance& inst, const CollTiming& t,
                     Rank me, Rank& src, Ticks& latest);

/// Receives the timings of a window of instances of the i-th held rank as soon as they are
/// reduced.
using TimingSink = std::function<void(std::size_t i, const CollInstance* instances,
                                      const CollTiming* timings, std::size_t n)>;

/// Reduces every instance's timing with its communicator's members, `window` instances per
/// reduction, for every rank of the shard (result i: shard.traces[i]). Members held by one
/// process are reduced in memory, then the processes holding members reduce over a
/// communicator of their own (MPI_Comm_create_group); every reduction is exact, so the timings
/// do not depend on the number of processes. With a `sink`, each window's timings go there
/// (communicator by communicator, each in instance order) instead of into the tables, so memory
/// for them is bounded by the window; the tables then keep only the end events (4 B per
/// instance) for the critical path's hops. Throws ReplayError on every process when members
/// disagree on the number or kind of instances (after all processes finished their reductions).
/// With `tolerate_missing` (--partial), instances that not every member reached are left out.
/// MPI: collective on world.
std::vector<CollectiveTable> reduce_collectives(const World& world, const Definitions& defs,
                                                const Shard& shard, std::size_t window,
                                                bool tolerate_missing = false,
                                                const TimingSink& sink = nullptr);

}  // namespace cpreplay::replay
