// SPDX-License-Identifier: BSD-3-Clause
// Compact per-rank event storage (struct of arrays) and the links computed over it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpreplay/types.hpp"

namespace cpreplay {

/// Event kinds after loading. ProgramBegin/End become Enter/Leave of the program region.
enum class EventKind : std::uint8_t {
  Enter,
  Leave,
  Send,             ///< MpiSend: blocking send; request and completion at once
  Isend,            ///< MpiIsend: send request
  IsendComplete,    ///< MpiIsendComplete
  IrecvRequest,     ///< MpiIrecvRequest
  Recv,             ///< MpiRecv: blocking receive; request and completion at once
  Irecv,            ///< MpiIrecv: receive completion
  RequestTest,      ///< MpiRequestTest
  RequestCancelled, ///< MpiRequestCancelled
  CollBegin,        ///< MpiCollectiveBegin
  CollEnd,          ///< MpiCollectiveEnd
};

/// OTF2 collective operation types (same numbering as OTF2_CollectiveOp).
enum class CollOp : std::uint8_t {
  Barrier = 0, Bcast = 1, Gather = 2, Gatherv = 3, Scatter = 4, Scatterv = 5, Allgather = 6,
  Allgatherv = 7, Alltoall = 8, Alltoallv = 9, Alltoallw = 10, Allreduce = 11, Reduce = 12,
  ReduceScatter = 13, Scan = 14, Exscan = 15, ReduceScatterBlock = 16, CreateHandle = 17,
  DestroyHandle = 18, Allocate = 19, Deallocate = 20, CreateHandleAndAllocate = 21,
  DestroyHandleAndDeallocate = 22
};

/// Side record of a point-to-point event (Send/Isend/Recv/Irecv and the request-only events).
struct P2pRecord {
  std::uint64_t bytes = 0;
  std::uint32_t comm = 0;      ///< CommId value
  std::uint32_t peer = 0;      ///< communicator-local rank of the partner, as recorded
  std::uint32_t tag = 0;
  EventIdx call = kNoEvent;    ///< Enter of the MPI call that contains the event
};

/// Side record of a CollEnd (and of its CollBegin, which shares the record).
struct CollRecord {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint32_t comm = 0;
  std::uint32_t root = UINT32_MAX;  ///< communicator-local root, or none
  CollOp op = CollOp::Barrier;
  EventIdx call = kNoEvent;  ///< Enter of the MPI call that contains the collective
};

/// One rank's events, column-wise. Per event: time 8 B + kind 1 B + ref 4 B + callpath 4 B +
/// link 4 B = 21 B, plus a P2pRecord (24 B) or CollRecord (32 B) only for MPI events. Request
/// ids are only needed while reading (to link requests) and are not stored.
struct LocalTrace {
  Rank rank = 0;
  std::vector<Ticks> time;
  std::vector<EventKind> kind;
  /// Enter/Leave: RegionId value. P2P kinds: index into p2p. Coll kinds: index into coll.
  std::vector<std::uint32_t> ref;
  /// Call path of the event (global ids after unification; see scalasca-metrics.md §2.4).
  std::vector<std::uint32_t> callpath;
  /// Enter<->Leave, CollBegin<->CollEnd, Isend<->IsendComplete, IrecvRequest<->Irecv.
  std::vector<EventIdx> link;
  /// Side records in fixed-size blocks: they grow without the copy-and-double peak of a vector
  /// (their number is not known before reading).
  std::deque<P2pRecord> p2p;
  std::deque<CollRecord> coll;
  /// The rank's events stop mid-run (regions left open, or a damaged file read with
  /// --partial); such a trace is cut before analysis.
  bool incomplete = false;

  std::size_t size() const { return time.size(); }
  void push(EventKind k, Ticks t, std::uint32_t r) {
    time.push_back(t);
    kind.push_back(k);
    ref.push_back(r);
  }
  /// Enter of the MPI call containing an MPI event.
  EventIdx call_of(EventIdx e) const {
    const EventKind k = kind[e];
    if (k == EventKind::CollBegin || k == EventKind::CollEnd) return coll[ref[e]].call;
    return p2p[ref[e]].call;
  }
  std::size_t bytes_used() const;
};

/// The unified call tree: a call path is (region, parent call path).
class CallTree {
 public:
  struct Node {
    RegionId region;
    CallpathId parent;
  };
  /// Returns the existing or a new call path for region below parent.
  CallpathId find_or_add(CallpathId parent, RegionId region);
  const Node& node(CallpathId id) const { return nodes_[id.value]; }
  std::size_t size() const { return nodes_.size(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  /// Children in creation order, for every node (computed on demand).
  std::vector<std::vector<std::uint32_t>> children() const;

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;  // (parent<<32 | region) -> id
};

}  // namespace cpreplay
