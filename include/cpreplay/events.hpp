// SPDX-License-Identifier: BSD-3-Clause
// Compact per-rank event storage (struct of arrays, 8.5 B per event) and the links derived from it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpreplay/large_vector.hpp"
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
  // OpenMP (hybrid traces). Four kinds for six OTF2 records: the kind column has 4 bits.
  ThreadFork,       ///< ThreadFork (master thread): ref = requested team size
  ThreadJoin,       ///< ThreadJoin (master thread): ref = 0
  ThreadTeam,       ///< ThreadTeamBegin (ref = 0) or ThreadTeamEnd (ref = 1)
  ThreadLock,       ///< ThreadAcquireLock or ThreadReleaseLock: ref = index into locks
};

/// Side record of a ThreadLock event. 12 B, one per lock acquisition or release.
struct LockRecord {
  std::uint32_t lock = 0;   ///< lock id (per process)
  std::uint32_t order = 0;  ///< acquisition order, from 1 per lock and process
  bool acquire = false;     ///< acquire (true) or release
  bool openmp = false;      ///< the lock's paradigm is OpenMP (others are kept, not analyzed)
};

/// OTF2 collective operation types (same numbering as OTF2_CollectiveOp).
enum class CollOp : std::uint8_t {
  Barrier = 0, Bcast = 1, Gather = 2, Gatherv = 3, Scatter = 4, Scatterv = 5, Allgather = 6,
  Allgatherv = 7, Alltoall = 8, Alltoallv = 9, Alltoallw = 10, Allreduce = 11, Reduce = 12,
  ReduceScatter = 13, Scan = 14, Exscan = 15, ReduceScatterBlock = 16, CreateHandle = 17,
  DestroyHandle = 18, Allocate = 19, Deallocate = 20, CreateHandleAndAllocate = 21,
  DestroyHandleAndDeallocate = 22
};

/// Side record of a message event (Send/Isend/Recv/Irecv), as MessageRecords hands it out.
struct P2pRecord {
  static constexpr std::uint32_t kLongMessage = UINT32_MAX;
  std::uint32_t comm = 0;      ///< CommId value
  std::uint32_t peer = 0;      ///< communicator-local rank of the partner, as recorded
  std::uint32_t tag = 0;
  /// Isend: its IsendComplete or RequestCancelled. Irecv: its IrecvRequest. Else kNoEvent.
  EventIdx partner = kNoEvent;
  /// Message bytes; kLongMessage: 4 GiB or more, kept in LocalTrace::long_messages.
  std::uint32_t length = 0;
};

/// A rank's message side records, 12 B each. A rank sends to and receives from a few
/// (communicator, peer, tag) channels over and over (its neighbours, a tag or two per kind of
/// message), so each record keeps the index of its channel in a table of the distinct ones,
/// beside its own partner and length. Lookups go through a map of at most kIndexedChannels
/// entries; a rank with more distinct channels than that (a tag per iteration, say) appends
/// the further ones without looking them up: 24 B per such record, never unbounded lookups.
/// Blocks of records, as a deque: no copy-and-double peak (their number is not known before
/// reading).
class MessageRecords {
 public:
  static constexpr std::size_t kIndexedChannels = std::size_t{1} << 14;

  std::size_t size() const { return recs_.size(); }
  bool empty() const { return recs_.empty(); }
  P2pRecord operator[](std::size_t i) const {
    const Packed& p = recs_[i];
    const Channel& c = channels_[p.channel];
    P2pRecord r;
    r.comm = c.comm;
    r.peer = c.peer;
    r.tag = c.tag;
    r.partner = p.partner;
    r.length = p.length;
    return r;
  }
  /// Appends a record; returns its index.
  std::uint32_t push_back(const P2pRecord& r);
  void set_partner(std::size_t i, EventIdx partner) { recs_[i].partner = partner; }
  /// Keeps the first n records (the channel table stays).
  void resize(std::size_t n) { recs_.resize(n); }
  std::size_t channels() const { return channels_.size(); }
  std::size_t bytes_used() const;
  /// After the location's last record is read: the channel lookup goes (records and channels
  /// stay). A trace whose tags change from message to message has about a channel per
  /// message, and the lookup indexes up to 16,384 of them: 0.3-0.5 MB per process held
  /// through the replays for nothing. Records appended later are still right (their channels
  /// are indexed anew, without the earlier ones).
  void finish_reading() {
    std::unordered_map<Channel, std::uint32_t, ChannelHash>().swap(index_);
    last_ = UINT32_MAX;
    channels_.shrink_to_fit();
  }
  /// Frees every record and channel (LocalTrace::release_messages).
  void release() {
    std::deque<Packed>().swap(recs_);
    std::vector<Channel>().swap(channels_);
    std::unordered_map<Channel, std::uint32_t, ChannelHash>().swap(index_);
    last_ = UINT32_MAX;
  }

 private:
  struct Channel {
    std::uint32_t comm, peer, tag;
    bool operator==(const Channel& o) const {
      return comm == o.comm && peer == o.peer && tag == o.tag;
    }
  };
  struct ChannelHash {
    std::size_t operator()(const Channel& c) const {
      const std::uint64_t a = (std::uint64_t{c.comm} << 32) | c.peer;
      return static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ull) ^ (c.tag * 0xC2B2AE3D27D4EB4Full));
    }
  };
  struct Packed {
    std::uint32_t channel, partner, length;
  };
  std::deque<Packed> recs_;
  std::vector<Channel> channels_;
  std::unordered_map<Channel, std::uint32_t, ChannelHash> index_;
  std::uint32_t last_ = UINT32_MAX;  ///< the channel of the latest record: the usual next one
};

/// Side record of a CollEnd and of its CollBegin, which share it. 24 B. The MPI call is the
/// CollEnd's (call_of); byte counts of 4 GiB and more are kept in LocalTrace::long_coll_bytes.
struct CollRecord {
  static constexpr std::uint32_t kLong = UINT32_MAX;
  std::uint32_t sent = 0;      ///< bytes sent by this rank (kLong: see long_coll_bytes)
  std::uint32_t received = 0;  ///< bytes received by this rank (kLong: see long_coll_bytes)
  std::uint32_t comm = 0;
  std::uint32_t root = UINT32_MAX;  ///< communicator-local root, or none
  EventIdx begin = kNoEvent;        ///< the CollBegin
  CollOp op = CollOp::Barrier;
};
static_assert(sizeof(CollRecord) == 24, "one per collective instance");

/// Timestamps as 32-bit offsets from the first timestamp of their block of 256 events: 4.03 B
/// per event instead of 8. An offset that does not fit (a block spanning more than 2^32 - 2
/// ticks, about 1.4 s at 3 GHz: only in stretches with fewer than ~200 events per second, or a
/// corrected time before its block's base) is kept exactly in a side map.
class TimeColumn {
 public:
  static constexpr unsigned kBlockBits = 8;

  Ticks operator[](EventIdx e) const {
    const std::uint32_t off = off_[e];
    return off != kFar ? base_[e >> kBlockBits] + off : far_.at(e);
  }
  std::size_t size() const { return off_.size(); }
  bool empty() const { return off_.empty(); }
  const std::uint32_t* offsets() const { return off_.data(); }
  Ticks front() const { return (*this)[0]; }
  Ticks back() const { return (*this)[static_cast<EventIdx>(size() - 1)]; }
  void reserve(std::size_t n) {
    off_.reserve(n);
    base_.reserve((n >> kBlockBits) + 1);
  }
  void push_back(Ticks t) {
    const auto e = static_cast<EventIdx>(size());
    if ((e & kBlockMask) == 0) base_.push_back(t);
    const Ticks b = base_.back();  // e's block's (store() for the newest event, in one append)
    if (t >= b && t - b < kFar) {
      off_.push_back(static_cast<std::uint32_t>(t - b));
    } else {
      off_.push_back(kFar);
      far_[e] = t;
    }
  }
  void set(EventIdx e, Ticks t) {
    if (off_[e] == kFar) far_.erase(e);
    store(e, t);
  }
  /// Adds `delta` ticks to every timestamp (a constant clock offset).
  void shift_all(std::int64_t delta) {
    for (Ticks& b : base_) b = static_cast<Ticks>(static_cast<std::int64_t>(b) + delta);
    for (auto& [e, t] : far_) t = static_cast<Ticks>(static_cast<std::int64_t>(t) + delta);
  }
  /// Keeps the first n events (n <= size()).
  void truncate(std::size_t n);
  /// First event with a timestamp > t (timestamps are non-decreasing).
  std::size_t upper_bound(Ticks t) const;
  std::size_t bytes_used() const {
    return off_.capacity() * sizeof(std::uint32_t) + base_.capacity() * sizeof(Ticks) +
           far_.size() * 32;
  }

 private:
  static constexpr std::uint32_t kFar = UINT32_MAX;
  static constexpr EventIdx kBlockMask = (EventIdx{1} << kBlockBits) - 1;
  void store(EventIdx e, Ticks t) {
    const Ticks b = base_[e >> kBlockBits];
    if (t >= b && t - b < kFar) {
      off_[e] = static_cast<std::uint32_t>(t - b);
    } else {
      off_[e] = kFar;
      far_[e] = t;
    }
  }
  LargeVector<std::uint32_t> off_;
  std::vector<Ticks> base_;
  std::unordered_map<EventIdx, Ticks> far_;
};

/// Event kinds packed two per byte.
class KindColumn {
 public:
  EventKind operator[](EventIdx e) const {
    return static_cast<EventKind>((packed_[e >> 1] >> ((e & 1) * 4)) & 0xF);
  }
  std::size_t size() const { return size_; }
  /// Events whose kind is one of `a` or `b`, counted a byte (two events) at a time through a
  /// table: a pass that sizes a table by them reads a byte where decoding reads each event.
  std::size_t count(EventKind a, EventKind b) const {
    const std::uint32_t in = (1u << static_cast<unsigned>(a)) | (1u << static_cast<unsigned>(b));
    std::uint8_t per_byte[256];
    for (unsigned v = 0; v < 256; ++v)
      per_byte[v] = static_cast<std::uint8_t>(((in >> (v & 0xF)) & 1u) + ((in >> (v >> 4)) & 1u));
    std::size_t n = 0;
    for (const std::uint8_t v : packed_) n += per_byte[v];
    // An odd count leaves the last byte's upper half 0, which is no event (though kind 0).
    if (size_ % 2 == 1 && (in & 1u)) --n;
    return n;
  }
  void reserve(std::size_t n) { packed_.reserve((n + 1) / 2); }
  const std::uint8_t* packed() const { return packed_.data(); }
  /// For next_of: per packed byte, bit 0 when its first event's kind is one of a set of kinds,
  /// bit 1 when its second's is.
  struct KindSet {
    std::uint8_t in_byte[256];
  };
  /// The set of the kinds whose bit is set in `kinds` (bit k for EventKind k).
  static KindSet kind_set(std::uint32_t kinds) {
    KindSet set{};
    for (unsigned v = 0; v < 256; ++v)
      set.in_byte[v] = static_cast<std::uint8_t>(((kinds >> (v & 0xF)) & 1u) |
                                                 (((kinds >> (v >> 4)) & 1u) << 1));
    return set;
  }
  /// The first event at or after e whose kind is in `set`, or size(): a byte (two events) at a
  /// time, for walks that stop at a few kinds only.
  std::size_t next_of(std::size_t e, const KindSet& set) const {
    std::size_t b = e >> 1;
    if (e & 1) {
      if (b < packed_.size() && (set.in_byte[packed_[b]] & 2)) return std::min(e, size_);
      ++b;
    }
    for (; b < packed_.size(); ++b)
      if (const std::uint8_t m = set.in_byte[packed_[b]])
        return std::min(2 * b + ((m & 1) ? 0 : 1), size_);  // an odd count's empty half: the end
    return size_;
  }
  void push_back(EventKind k) {
    const auto bits = static_cast<std::uint8_t>(k);
    if (size_ % 2 == 0)
      packed_.push_back(bits);
    else
      packed_.back() = static_cast<std::uint8_t>(packed_.back() | (bits << 4));
    ++size_;
  }
  /// Keeps the first n kinds (n <= size()).
  void truncate(std::size_t n) {
    size_ = n;
    packed_.resize((n + 1) / 2);
    if (n % 2 == 1) packed_.back() &= 0xF;
  }
  std::size_t bytes_used() const { return packed_.capacity(); }

 private:
  static_assert(static_cast<int>(EventKind::ThreadLock) < 16, "event kinds must fit in 4 bits");
  std::vector<std::uint8_t> packed_;
  std::size_t size_ = 0;
};

/// One rank's events, column-wise: time 4 B + kind 4 bits + ref 4 B = 8.5 B per event, plus a
/// message record (12 B, MessageRecords) per message event and a CollRecord (24 B) per collective. Everything else is
/// derived: the call path of an MPI event is that of its MPI call, and Enter<->Leave pairs are
/// found by scanning (cached, so a pass in event order scans each call once).
struct LocalTrace {
  Rank rank = 0;
  int thread = 0;  ///< thread number within the rank: 0 = master (MPI events only there)
  TimeColumn time;
  KindColumn kind;
  /// Enter/Leave: the call path of the region (local ids while reading, global ids after
  /// unification). Send/Isend/Recv/Irecv: index into p2p. CollBegin/CollEnd: index into coll.
  /// IsendComplete: the Isend. IrecvRequest: the Irecv that completes it, or the
  /// RequestCancelled that cancels it (kNoEvent: neither). RequestCancelled: the request's
  /// Isend or IrecvRequest (or kNoEvent). RequestTest: kNoEvent.
  LargeVector<std::uint32_t> ref;
  /// Region of every call path id that `ref` uses (indexed by call path).
  std::vector<std::uint32_t> region_of_path;
  MessageRecords p2p;
  std::unordered_map<std::uint32_t, std::uint64_t> long_messages;  ///< p2p index -> bytes
  /// Collective and lock side records in fixed-size blocks: they grow without the
  /// copy-and-double peak of a vector (their number is not known before reading).
  std::deque<CollRecord> coll;
  /// coll index * 2 (+ 1 for received) -> bytes, for counts of 4 GiB and more.
  std::unordered_map<std::uint64_t, std::uint64_t> long_coll_bytes;
  /// ThreadLock side records (hybrid traces only; empty otherwise).
  std::deque<LockRecord> locks;
  /// The rank's events stop mid-run (regions left open, or a damaged file read with
  /// --partial); such a trace is cut before analysis.
  bool incomplete = false;
  /// Event records read from the location's file, those the analysis does not keep included
  /// (metric samples and other records without a meaning here): what the summary counts as the
  /// trace's events, and what --count-events announces for a whole trace.
  std::uint64_t records = 0;

  std::size_t size() const { return kind.size(); }
  void push(EventKind k, Ticks t, std::uint32_t r) {
    time.push_back(t);
    kind.push_back(k);
    ref.push_back(r);
  }
  /// Keeps the first n events, dropping links and side records that pointed past them.
  void truncate(std::size_t n);

  bool is_enter_or_leave(EventIdx e) const {
    return kind[e] == EventKind::Enter || kind[e] == EventKind::Leave;
  }
  /// Region of an Enter or Leave event.
  RegionId region_of(EventIdx e) const { return RegionId{region_of_path[ref[e]]}; }
  /// Call path of any event: its own for Enter/Leave, that of the enclosing call otherwise.
  std::uint32_t callpath_of(EventIdx e) const {
    if (is_enter_or_leave(e)) return ref[e];
    const EventIdx call = call_of(e);
    return call == kNoEvent ? UINT32_MAX : ref[call];
  }
  /// Enter of the innermost region open at a non-Enter/Leave event (its MPI call).
  EventIdx call_of(EventIdx e) const;
  /// Leave of an Enter event (kNoEvent if the region never closes).
  EventIdx leave_of(EventIdx enter) const;
  /// Enter of a Leave event.
  EventIdx enter_of(EventIdx leave) const;
  /// Send/Isend/Recv/Irecv: the message's record.
  P2pRecord message(EventIdx e) const { return p2p[ref[e]]; }
  /// Send/Isend/Recv/Irecv: the message's bytes.
  std::uint64_t bytes_of(EventIdx e) const {
    const std::uint32_t length = p2p[ref[e]].length;
    return length != P2pRecord::kLongMessage ? length : long_messages.at(ref[e]);
  }
  /// CollBegin/CollEnd: bytes this rank sent and received in the collective.
  std::uint64_t coll_sent(EventIdx e) const { return coll_bytes(ref[e], false); }
  std::uint64_t coll_received(EventIdx e) const { return coll_bytes(ref[e], true); }
  std::uint64_t coll_bytes(std::uint32_t slot, bool received) const {
    const CollRecord& rec = coll[slot];
    const std::uint32_t n = received ? rec.received : rec.sent;
    return n != CollRecord::kLong ? n : long_coll_bytes.at(std::uint64_t{slot} * 2 + received);
  }
  /// Sets a collective record's byte counts.
  void set_coll_bytes(std::uint32_t slot, std::uint64_t sent, std::uint64_t received) {
    CollRecord& rec = coll[slot];
    rec.sent = sent < CollRecord::kLong ? static_cast<std::uint32_t>(sent) : CollRecord::kLong;
    rec.received =
        received < CollRecord::kLong ? static_cast<std::uint32_t>(received) : CollRecord::kLong;
    if (rec.sent == CollRecord::kLong) long_coll_bytes[std::uint64_t{slot} * 2] = sent;
    if (rec.received == CollRecord::kLong) long_coll_bytes[std::uint64_t{slot} * 2 + 1] = received;
  }
  /// Frees the message records once nothing reads them any more (after the message matching,
  /// when the later phases have what they need of it): message(), bytes_of() and peer_rank()
  /// must not be called after it. 12 B per message event.
  void release_messages() {
    p2p.release();
    std::unordered_map<std::uint32_t, std::uint64_t>().swap(long_messages);
  }
  /// Appends a message record; returns its index (for `ref`).
  std::uint32_t add_message(P2pRecord rec, std::uint64_t bytes) {
    const auto slot = static_cast<std::uint32_t>(p2p.size());
    rec.length = bytes < P2pRecord::kLongMessage ? static_cast<std::uint32_t>(bytes)
                                                 : P2pRecord::kLongMessage;
    if (rec.length == P2pRecord::kLongMessage) long_messages[slot] = bytes;
    p2p.push_back(rec);
    return slot;
  }
  std::size_t bytes_used() const;

 private:
  /// Recently looked-up calls, so lookups in event order cost O(1) amortized: the events in
  /// (enter, inside] are known to lie directly in the region entered at `enter`, and so is
  /// `point` (a later lookup's event, with closed regions between: the next lookup that scans
  /// back over further closed regions stops there), and `leave` is its Leave once known.
  struct CachedCall {
    EventIdx enter = kNoEvent;
    EventIdx inside = kNoEvent;
    EventIdx leave = kNoEvent;
    EventIdx point = kNoEvent;
  };
  static constexpr int kCachedCalls = 4;
  mutable CachedCall cached_[kCachedCalls];
  mutable int next_cached_ = 0;
  /// The innermost region open after every kMarkStride-th event (positions k * stride - 1;
  /// kNoEvent: none), built as far as the events go on the first lookup that needs it: a
  /// lookup scans back to the nearest mark at most, not to its region's Enter (lookups out of
  /// event order in a long region, the critical path's walk backwards over a main loop, cost
  /// O(distance to the Enter) each otherwise). 4 B per 256 events.
  static constexpr unsigned kMarkBits = 8;
  mutable std::vector<EventIdx> call_marks_;
  mutable std::vector<EventIdx> mark_stack_;  ///< the regions open after the last mark
  void extend_marks() const;
  CachedCall& cache_slot(EventIdx enter) const;
  void forget_calls() const;
};

/// The unified call tree: a call path is (region, parent call path).
class CallTree {
 public:
  struct Node {
    RegionId region;
    CallpathId parent;
  };
  /// Returns the existing or a new call path for region below parent. Reading calls it at
  /// every Enter: the last call path of each of kRecent slots answers before the map does.
  CallpathId find_or_add(CallpathId parent, RegionId region) {
    const std::uint64_t key = (static_cast<std::uint64_t>(parent.value) << 32) | region.value;
    Recent& r = recent_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kRecentBits)];
    if (r.key != key) r = Recent{key, lookup_or_add(key, parent, region)};
    return CallpathId{r.id};
  }
  const Node& node(CallpathId id) const { return nodes_[id.value]; }
  std::size_t size() const { return nodes_.size(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  /// Children in creation order, for every node (computed on demand).
  std::vector<std::vector<std::uint32_t>> children() const;

 private:
  std::uint32_t lookup_or_add(std::uint64_t key, CallpathId parent, RegionId region);
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;  // (parent<<32 | region) -> id
  /// Recently found call paths by key (no key is all ones: a region id is below UINT32_MAX).
  struct Recent {
    std::uint64_t key = ~std::uint64_t{0};
    std::uint32_t id = 0;
  };
  static constexpr unsigned kRecentBits = 6;
  Recent recent_[std::size_t{1} << kRecentBits];
};

}  // namespace cpreplay
