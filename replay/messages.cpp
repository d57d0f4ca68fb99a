// SPDX-License-Identifier: BSD-3-Clause
// Batched point-to-point matching: per peer one block of send records, one block of replies.
#include "replay/messages.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <unordered_map>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {
namespace {

/// Leave time of an MPI call (its Enter's, if a cut trace left it open).
Ticks leave_time(const LocalTrace& trace, EventIdx call) {
  const EventIdx leave = trace.leave_of(call);
  return trace.time[leave != kNoEvent ? leave : call];
}

/// Wire format of a send record (sender -> receiver), in the sender's event order.
struct SendWire {
  Ticks call_enter;
  Ticks call_leave;
  Ticks time;
  std::uint64_t bytes;
  std::uint32_t comm;
  std::uint32_t tag;
  EventIdx event;
  Rank source;  ///< sending trace rank
  Rank dest;    ///< receiving trace rank
  std::uint32_t pad;
};

/// Wire format of a reply (receiver -> sender), in the order the sender's records came.
struct ReplyWire {
  Ticks request_enter;
  Ticks request_leave;
  EventIdx request_event;
  EventIdx send_event;  ///< which of the sender's events it answers
  Rank dest;            ///< the sending trace rank, which the reply goes to
  std::uint32_t pad;
};

/// How many send records a trace rank will ship to another, for the receiver's bookkeeping.
struct TotalWire {
  Rank source;
  Rank dest;
  long long count;
};

/// The processes this process exchanges records with: an edge to every process holding a rank
/// that one of its ranks sends to (send records) or receives from (replies); co-located ranks
/// need no edge (their records are delivered in memory). Each process names only its own
/// out-edges; a reduce-scatter tells every process how many name it, and a hello from each
/// tells who, so a send nobody receives still has its edge. Per round a process then talks to
/// its neighbours only, one message per edge: O(degree), not O(processes), which is what keeps
/// the rounds cheap at thousands of processes. Plain messages on world with their own tags, not a graph communicator:
/// MPI_Dist_graph_create took 0.2-1.1 ms on 4 oversubscribed ranks, this 0.02-0.04 ms.
class Neighbourhood {
 public:
  Neighbourhood(const World& world, std::vector<int> peers) : comm_(world.comm()) {
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    out_ = std::move(peers);
    std::vector<int> named(static_cast<std::size_t>(world.size()), 0);
    for (int p : out_) named[p] = 1;
    int in = 0;
    MPI_Reduce_scatter_block(named.data(), &in, 1, MPI_INT, MPI_SUM, comm_);
    std::vector<int>().swap(named);
    const int me = world.rank();
    std::vector<MPI_Request> hellos(out_.size());
    for (std::size_t i = 0; i < out_.size(); ++i)
      MPI_Isend(&me, 1, MPI_INT, out_[i], kHelloTag, comm_, &hellos[i]);
    in_.resize(static_cast<std::size_t>(in));
    for (int& source : in_)
      MPI_Recv(&source, 1, MPI_INT, MPI_ANY_SOURCE, kHelloTag, comm_, MPI_STATUS_IGNORE);
    MPI_Waitall(static_cast<int>(hellos.size()), hellos.data(), MPI_STATUSES_IGNORE);
    std::sort(in_.begin(), in_.end());
    out_index_.assign(static_cast<std::size_t>(world.size()), -1);
    for (std::size_t i = 0; i < out_.size(); ++i) out_index_[out_[i]] = static_cast<int>(i);
  }
  Neighbourhood(const Neighbourhood&) = delete;
  Neighbourhood& operator=(const Neighbourhood&) = delete;

  /// In-neighbours (ranks that send records or replies to this one), in the order blocks arrive.
  const std::vector<int>& sources() const { return in_; }
  std::size_t out_degree() const { return out_.size(); }
  /// Position of `rank` among the out-neighbours (it must be one).
  int out_index(Rank rank) const { return out_index_[rank]; }

  /// Exchanges per-neighbour blocks of PODs: out[i] goes to the i-th out-neighbour; returns
  /// the blocks from the in-neighbours, in order, in_counts[i] records from the i-th.
  /// Every edge carries exactly one message per exchange (empty ones too), so successive
  /// exchanges cannot mix: MPI keeps the messages of one sender and tag in order.
  template <class T>
  std::vector<T> exchange(const std::vector<std::vector<T>>& out,
                          std::vector<int>& in_counts) const {
    constexpr int kSize = static_cast<int>(sizeof(T));
    std::vector<MPI_Request> sent(out_.size());
    for (std::size_t p = 0; p < out_.size(); ++p)
      MPI_Isend(out[p].data(), static_cast<int>(out[p].size()) * kSize, MPI_BYTE, out_[p],
                kBlockTag, comm_, &sent[p]);
    // Each block's size is probed first, so the blocks land contiguously, in order.
    std::vector<MPI_Message> blocks(in_.size());
    in_counts.resize(in_.size());
    std::size_t total = 0;
    for (std::size_t p = 0; p < in_.size(); ++p) {
      MPI_Status status;
      MPI_Mprobe(in_[p], kBlockTag, comm_, &blocks[p], &status);
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      in_counts[p] = bytes / kSize;
      total += static_cast<std::size_t>(in_counts[p]);
    }
    std::vector<T> in(total);
    std::size_t at = 0;
    for (std::size_t p = 0; p < in_.size(); ++p) {
      MPI_Mrecv(in.data() + at, in_counts[p] * kSize, MPI_BYTE, &blocks[p], MPI_STATUS_IGNORE);
      at += static_cast<std::size_t>(in_counts[p]);
    }
    MPI_Waitall(static_cast<int>(sent.size()), sent.data(), MPI_STATUSES_IGNORE);
    return in;
  }

 private:
  static constexpr int kHelloTag = 7501;
  static constexpr int kBlockTag = 7502;
  MPI_Comm comm_;
  std::vector<int> in_, out_;
  std::vector<int> out_index_;  ///< by world rank; -1: not an out-neighbour
};

/// Send records per round at most, whatever --window says (40 B each: 640 MiB).
constexpr std::size_t kMaxWindow = std::size_t{1} << 24;

/// Empty per-(source, comm, tag) queues kept for reuse before they are dropped.
constexpr std::size_t kKeptEmptyQueues = 1024;

std::uint64_t key_of(Rank source, std::uint32_t comm, std::uint32_t tag) {
  return (static_cast<std::uint64_t>(source) << 40) ^ (static_cast<std::uint64_t>(comm) << 32) ^
         tag;
}

}  // namespace

bool takes_part_in_matching(const Definitions& defs, const LocalTrace& trace, EventIdx e,
                            EventIdx call) {
  const EventKind k = trace.kind[e];
  if (k != EventKind::Send && k != EventKind::Isend && k != EventKind::Recv &&
      k != EventKind::Irecv)
    return false;
  if (!defs.region(trace.region_of(call)).is_mpi()) return false;
  const EventIdx completion = trace.message(e).partner;
  if (k == EventKind::Isend && completion != kNoEvent &&
      trace.kind[completion] == EventKind::RequestCancelled)
    return false;
  return true;
}

namespace {

/// Walks the events in order and stops at each one that takes part in matching on the chosen
/// side (sends, receives, or both). The MPI call a message event lies in is call_of(), which a
/// read trace has properly nested (the reader refuses a Leave of another region than the open
/// one, and an MPI event outside every region): Enters and Leaves are passed over, not stacked.
class SideScan {
 public:
  enum Side { kSends, kReceives, kBoth };
  SideScan(const Definitions& defs, const LocalTrace& trace, Side side)
      : defs_(defs), trace_(trace), wanted_(KindColumn::kind_set(wanted(side))) {
    advance();
  }
  /// The current event of this side, or trace size at the end.
  EventIdx current() const { return at_; }
  bool done() const { return at_ >= trace_.size(); }
  void next() {
    ++at_;
    advance();
  }

 private:
  static std::uint32_t bit(EventKind k) { return 1u << static_cast<unsigned>(k); }
  static std::uint32_t wanted(Side side) {
    const std::uint32_t sends = bit(EventKind::Send) | bit(EventKind::Isend);
    const std::uint32_t receives = bit(EventKind::Recv) | bit(EventKind::Irecv);
    return side == kSends ? sends : side == kReceives ? receives : sends | receives;
  }
  void advance() {
    const std::size_t n = trace_.size();
    for (at_ = static_cast<EventIdx>(trace_.kind.next_of(at_, wanted_)); at_ < n;
         at_ = static_cast<EventIdx>(trace_.kind.next_of(at_ + std::size_t{1}, wanted_))) {
      const EventIdx call = trace_.call_of(at_);
      if (call != kNoEvent && takes_part_in_matching(defs_, trace_, at_, call)) return;
    }
  }

  const Definitions& defs_;
  const LocalTrace& trace_;
  const KindColumn::KindSet wanted_;  ///< the kinds of this side
  EventIdx at_ = 0;
};

/// Collects everything into a MessageTable.
class TableSink final : public MessageSink {
 public:
  explicit TableSink(MessageTable& table) : table_(table) {}
  void receives(const MatchedRecv* m, std::size_t n, EventIdx) override {
    for (std::size_t i = 0; i < n; ++i) {
      table_.recv_events.push_back(m[i].event);
      table_.sends.push_back(m[i].send);
    }
  }
  void sends(const MatchedSend* m, std::size_t n, EventIdx) override {
    for (std::size_t i = 0; i < n; ++i) {
      table_.send_events.push_back(m[i].event);
      table_.recvs.push_back(m[i].recv);
    }
  }

 private:
  MessageTable& table_;
};

}  // namespace

namespace {

/// One held rank's state in the rounds of match_messages.
struct RankMatcher {
  /// Per partner rank (sorted by rank): sends to it, and records from it expected / arrived.
  struct Peer {
    Rank rank;
    long long sends_to = 0;
    long long total_from = 0;
    long long arrived_from = 0;
  };
  /// Records that arrived but are not matched yet: one FIFO per (source, comm, tag), linked
  /// through a pool. A deque per key cost a 512-byte block and its map even for one record,
  /// and a program whose tags change from message to message has a key per record in flight
  /// (bench/hybrid.sh: 2 MB per process for a window of sends).
  struct Pending {
    SendWire wire;
    std::int32_t next = -1;  ///< the key's next record, or the free list's
  };
  struct Queue {
    std::int32_t head = -1, tail = -1;
    bool empty() const { return head < 0; }
  };
  void push(std::uint64_t key, const SendWire& w) {
    std::int32_t at = free_pending;
    if (at >= 0) {
      free_pending = pending[static_cast<std::size_t>(at)].next;
      pending[static_cast<std::size_t>(at)] = Pending{w, -1};
    } else {
      if (pending.size() >= static_cast<std::size_t>(INT32_MAX))
        throw ReplayError("message matching: more than 2^31 sends waiting for their receive");
      at = static_cast<std::int32_t>(pending.size());
      pending.push_back(Pending{w, -1});
    }
    Queue& q = queues[key];
    if (q.tail >= 0)
      pending[static_cast<std::size_t>(q.tail)].next = at;
    else
      q.head = at;
    q.tail = at;
  }
  /// Takes the queue's first record (the queue is not empty).
  SendWire pop(Queue& q) {
    const auto at = static_cast<std::size_t>(q.head);
    const SendWire w = pending[at].wire;
    q.head = pending[at].next;
    if (q.head < 0) q.tail = -1;
    pending[at].next = free_pending;
    free_pending = static_cast<std::int32_t>(at);
    return w;
  }
  std::size_t size(const Queue& q) const {
    std::size_t n = 0;
    for (std::int32_t at = q.head; at >= 0; at = pending[static_cast<std::size_t>(at)].next) ++n;
    return n;
  }
  RankMatcher(const Definitions& defs, const LocalTrace& trace)
      : send_scan(defs, trace, SideScan::kSends), recv_scan(defs, trace, SideScan::kReceives) {}

  Peer& peer(Rank r) {
    auto it = std::lower_bound(peers.begin(), peers.end(), r,
                               [](const Peer& p, Rank k) { return p.rank < k; });
    if (it == peers.end() || it->rank != r) it = peers.insert(it, Peer{r});
    return *it;
  }

  std::vector<Peer> peers;
  SideScan send_scan;
  // Shipped sends awaiting their reply, in event order, from in_flight[head] on (a vector
  // compacted now and then, so a reply finds its send by binary search on contiguous memory).
  std::vector<MatchedSend> in_flight;  // recv.request_event == kNoEvent: no reply yet
  std::size_t head = 0;
  // Records that arrived but are not matched yet, per (source, comm, tag).
  std::unordered_map<std::uint64_t, Queue> queues;
  std::vector<Pending> pending;
  std::int32_t free_pending = -1;
  SideScan recv_scan;
  std::string error;  ///< the first problem of this rank, thrown after all rounds
  MatchCounts counts;
};

}  // namespace

MatchCounts match_messages(const World& world, const Definitions& defs, const Shard& shard,
                           const std::vector<MessageSink*>& sinks, bool tolerate_unmatched,
                           std::size_t window) {
  const int me = world.rank();
  const RankBlocks& blocks = shard.blocks;
  const std::size_t held = shard.size();
  // MPI counts are ints of bytes: a round's records must stay below 2 GiB per peer.
  window = std::clamp<std::size_t>(window, 1, kMaxWindow);

  // Each held rank's partners, and how many records it sends each: lets a receive whose queue
  // is empty tell "not yet here" from "never sent". Walks counting; nothing is stored per event
  // and nothing per pair of ranks that do not communicate.
  std::vector<RankMatcher> ranks;
  ranks.reserve(held);
  std::vector<char> neighbour(static_cast<std::size_t>(world.size()), 0);
  for (std::size_t i = 0; i < held; ++i) {
    const LocalTrace& trace = shard.traces[i];
    ranks.emplace_back(defs, trace);
    RankMatcher& m = ranks.back();
    for (SideScan scan(defs, trace, SideScan::kBoth); !scan.done(); scan.next()) {
      const EventIdx e = scan.current();
      const Rank peer = peer_rank(defs, trace, e);
      const EventKind k = trace.kind[e];
      RankMatcher::Peer& p = m.peer(peer);
      if (k == EventKind::Send || k == EventKind::Isend) ++p.sends_to;
      neighbour[static_cast<std::size_t>(blocks.owner(peer))] = 1;
    }
  }
  neighbour[static_cast<std::size_t>(me)] = 0;  // co-located partners: in memory
  std::vector<int> neighbours;
  for (int p = 0; p < world.size(); ++p)
    if (neighbour[static_cast<std::size_t>(p)]) neighbours.push_back(p);
  std::vector<char>().swap(neighbour);
  const Neighbourhood hood(world, std::move(neighbours));

  // Records to co-located ranks take the same path as records from elsewhere, only in memory.
  // `route(r)` names the block a record to trace rank r goes into: the local one, or the one of
  // the out-neighbour holding r.
  auto route = [&](Rank r) {
    const int p = blocks.owner(r);
    return p == me ? hood.out_degree() : static_cast<std::size_t>(hood.out_index(p));
  };
  // Exchanges one round's blocks (the last one is the local block) and hands every record that
  // arrived, the local ones first, to `take`.
  auto exchange = [&](auto& out, auto&& take) {
    auto local = std::move(out.back());
    out.pop_back();
    std::vector<int> in_counts;
    const auto in = hood.exchange(out, in_counts);
    for (const auto& rec : local) take(rec);
    for (const auto& rec : in) take(rec);
  };
  {
    std::vector<std::vector<TotalWire>> out(hood.out_degree() + 1);
    for (std::size_t i = 0; i < held; ++i)
      for (const RankMatcher::Peer& p : ranks[i].peers)
        if (p.sends_to > 0)
          out[route(p.rank)].push_back(TotalWire{shard.first() + static_cast<Rank>(i), p.rank,
                                                 p.sends_to});
    exchange(out, [&](const TotalWire& t) {
      ranks[shard.index(t.dest)].peer(t.source).total_from = t.count;
    });
  }

  std::vector<MatchedSend> answered;
  std::vector<MatchedRecv> matched;

  auto no_send_error = [&](RankMatcher& m, const LocalTrace& trace, EventIdx e, Rank source,
                           const P2pRecord& rec) {
    ++m.counts.unmatched;
    if (m.error.empty())
      m.error = defs.anchor_path + ": rank " + std::to_string(trace.rank) + ", event " +
                std::to_string(e) + ": receive has no matching send from rank " +
                std::to_string(source) + " (tag " + std::to_string(rec.tag) + ", communicator " +
                defs.comms[rec.comm].name + ")";
  };
  // Hands the answered prefix of a rank's sends in flight to its sink.
  auto settle_sends = [&](std::size_t i, bool last) {
    RankMatcher& m = ranks[i];
    answered.clear();
    for (; m.head < m.in_flight.size() &&
           (last || m.in_flight[m.head].recv.request_event != kNoEvent);
         ++m.head)
      if (m.in_flight[m.head].recv.request_event != kNoEvent) answered.push_back(m.in_flight[m.head]);
    const EventIdx done = last ? static_cast<EventIdx>(shard.traces[i].size())
                          : m.head == m.in_flight.size() ? m.send_scan.current()
                                                         : m.in_flight[m.head].event;
    if (m.head > m.in_flight.size() / 2) {
      m.in_flight.erase(m.in_flight.begin(),
                        m.in_flight.begin() + static_cast<std::ptrdiff_t>(m.head));
      m.head = 0;
    }
    sinks[i]->sends(answered.data(), answered.size(), done);
  };

  // Rounds: every rank ships its next `window` send records in event order, receivers match as
  // far as the arrived records allow, and replies go back at once. Memory for records in flight
  // is bounded by the window, not by the trace. The rounds are the same for every number of
  // processes: only where a record travels changes.
  for (;;) {
    std::vector<std::vector<SendWire>> out_to(hood.out_degree() + 1);
    for (std::size_t i = 0; i < held; ++i) {
      const LocalTrace& trace = shard.traces[i];
      RankMatcher& m = ranks[i];
      for (std::size_t k = 0; k < window && !m.send_scan.done(); ++k, m.send_scan.next()) {
        const EventIdx e = m.send_scan.current();
        const P2pRecord& rec = trace.p2p[trace.ref[e]];
        const Rank dest = peer_rank(defs, trace, e);
        out_to[route(dest)].push_back(SendWire{trace.time[trace.call_of(e)],
                                               leave_time(trace, trace.call_of(e)),
                                               trace.time[e], trace.bytes_of(e), rec.comm,
                                               rec.tag, e, trace.rank, dest, 0});
        RemoteRecv unanswered;
        unanswered.rank = dest;
        m.in_flight.push_back(MatchedSend{e, unanswered});
      }
    }
    exchange(out_to, [&](const SendWire& w) {
      RankMatcher& m = ranks[shard.index(w.dest)];
      m.push(key_of(w.source, w.comm, w.tag), w);
      ++m.peer(w.source).arrived_from;
    });
    std::vector<std::vector<SendWire>>().swap(out_to);

    // Replies go to the senders, which are out-neighbours as sources of my receives.
    std::vector<std::vector<ReplyWire>> replies_to(hood.out_degree() + 1);
    for (std::size_t i = 0; i < held; ++i) {
      const LocalTrace& trace = shard.traces[i];
      RankMatcher& m = ranks[i];
      matched.clear();
      for (; !m.recv_scan.done(); m.recv_scan.next()) {
        const EventIdx e = m.recv_scan.current();
        const P2pRecord& rec = trace.p2p[trace.ref[e]];
        const Rank source = peer_rank(defs, trace, e);
        auto it = m.queues.find(key_of(source, rec.comm, rec.tag));
        if (it == m.queues.end() || it->second.empty()) {
          const RankMatcher::Peer& p = m.peer(source);
          if (p.arrived_from < p.total_from) break;  // more is on its way
          no_send_error(m, trace, e, source, rec);
          continue;
        }
        const SendWire w = m.pop(it->second);
        // Tags that change from message to message would leave a trail of empty queues.
        if (it->second.empty() && m.queues.size() > kKeptEmptyQueues) m.queues.erase(it);
        matched.push_back(MatchedRecv{
            e, RemoteSend{w.call_enter, w.call_leave, w.time, w.bytes, w.event, w.source}});
        ++m.counts.matched;
        // The receive request: MpiRecv itself, or the MpiIrecvRequest that started an MpiIrecv.
        EventIdx request = e;
        if (trace.kind[e] == EventKind::Irecv && rec.partner != kNoEvent) request = rec.partner;
        replies_to[route(source)].push_back(ReplyWire{trace.time[trace.call_of(request)],
                                                      leave_time(trace, trace.call_of(request)),
                                                      request, w.event, source, 0});
      }
      sinks[i]->receives(matched.data(), matched.size(), m.recv_scan.current());
    }

    exchange(replies_to, [&](const ReplyWire& r) {
      RankMatcher& m = ranks[shard.index(r.dest)];
      // The sends in flight are in event order: the reply names its send's event.
      auto it = std::lower_bound(
          m.in_flight.begin() + static_cast<std::ptrdiff_t>(m.head), m.in_flight.end(),
          r.send_event, [](const MatchedSend& s, EventIdx e) { return s.event < e; });
      if (it != m.in_flight.end() && it->event == r.send_event)
        it->recv = RemoteRecv{r.request_enter, r.request_leave, r.request_event, it->recv.rank};
    });
    std::vector<std::vector<ReplyWire>>().swap(replies_to);
    bool more = false;
    for (std::size_t i = 0; i < held; ++i) {
      settle_sends(i, false);
      more = more || !ranks[i].send_scan.done();
    }
    if (!world.any(more)) break;
  }
  MatchCounts total;
  std::string error;
  for (std::size_t i = 0; i < held; ++i) {
    const LocalTrace& trace = shard.traces[i];
    RankMatcher& m = ranks[i];
    // Everything has arrived: receives still waiting have no send.
    for (; !m.recv_scan.done(); m.recv_scan.next()) {
      const EventIdx e = m.recv_scan.current();
      no_send_error(m, trace, e, peer_rank(defs, trace, e), trace.p2p[trace.ref[e]]);
    }
    sinks[i]->receives(nullptr, 0, static_cast<EventIdx>(trace.size()));
    settle_sends(i, true);  // sends without a reply have no receive (the receiver reports them)
    for (const auto& [key, q] : m.queues) {
      m.counts.unmatched += m.size(q);
      if (m.error.empty() && !q.empty()) {
        const SendWire& s = m.pending[static_cast<std::size_t>(q.head)].wire;
        m.error = defs.anchor_path + ": rank " + std::to_string(s.source) + ", event " +
                  std::to_string(s.event) + ": send to rank " + std::to_string(trace.rank) +
                  " (tag " + std::to_string(s.tag) + ", communicator " + defs.comms[s.comm].name +
                  ") has no matching receive";
      }
    }
    total.matched += m.counts.matched;
    total.unmatched += m.counts.unmatched;
    if (error.empty()) error = m.error;  // the lowest rank's, as one process per rank says it
  }
  if (!error.empty() && !tolerate_unmatched) throw ReplayError(error);
  return total;
}

std::vector<MessageTable> match_messages(const World& world, const Definitions& defs,
                                         const Shard& shard, bool tolerate_unmatched,
                                         std::size_t window) {
  std::vector<MessageTable> tables(shard.size());
  std::vector<TableSink> sinks;
  sinks.reserve(shard.size());
  std::vector<MessageSink*> to;
  for (MessageTable& t : tables) {
    sinks.emplace_back(t);
    to.push_back(&sinks.back());
  }
  // The unmatched count is kept once, on the first table (it is a sum for the summary).
  const MatchCounts counts = match_messages(world, defs, shard, to, tolerate_unmatched, window);
  if (!tables.empty()) tables[0].unmatched = counts.unmatched;
  return tables;
}

}  // namespace cpreplay::replay
