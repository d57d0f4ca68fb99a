// SPDX-License-Identifier: BSD-3-Clause
// Batched point-to-point matching: per peer one block of send records, one block of replies.
#include "replay/messages.hpp"

#include <algorithm>
#include <deque>
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
  std::uint32_t pad;
};

/// Wire format of a reply (receiver -> sender), in the order the sender's records came.
struct ReplyWire {
  Ticks request_enter;
  Ticks request_leave;
  EventIdx request_event;
  EventIdx send_event;  ///< which of the sender's events it answers
};

/// The ranks this rank exchanges records with: an edge to every rank it sends to (send records)
/// and every rank it receives from (replies). Each rank names only its own out-edges; a
/// reduce-scatter tells every rank how many name it, and a hello from each tells who, so a send
/// nobody receives still has its edge. Per round a rank then talks to its neighbours only, one
/// message per edge: O(degree), not O(ranks), which is what keeps the rounds cheap at thousands
/// of ranks. Plain messages on world with their own tags, not a graph communicator:
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
/// side (sends, receives, or both), keeping the stack of open regions that decides it.
class SideScan {
 public:
  enum Side { kSends, kReceives, kBoth };
  SideScan(const Definitions& defs, const LocalTrace& trace, Side side)
      : defs_(defs), trace_(trace), side_(side) {
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
  void advance() {
    for (; at_ < trace_.size(); ++at_) {
      const EventKind k = trace_.kind[at_];
      if (k == EventKind::Enter) {
        open_.push_back(at_);
        continue;
      }
      if (k == EventKind::Leave) {
        if (!open_.empty()) open_.pop_back();
        continue;
      }
      if (k != EventKind::Send && k != EventKind::Isend && k != EventKind::Recv &&
          k != EventKind::Irecv)
        continue;
      const bool send = k == EventKind::Send || k == EventKind::Isend;
      if (open_.empty() || (side_ == kSends && !send) || (side_ == kReceives && send)) continue;
      if (takes_part_in_matching(defs_, trace_, at_, open_.back())) return;
    }
  }

  const Definitions& defs_;
  const LocalTrace& trace_;
  const Side side_;
  EventIdx at_ = 0;
  std::vector<EventIdx> open_;  ///< Enter events of the open regions
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

MatchCounts match_messages(const World& world, const Definitions& defs, const LocalTrace& trace,
                           MessageSink& sink, bool tolerate_unmatched, std::size_t window) {
  const int n = world.size();
  const Rank me = world.rank();
  // MPI counts are ints of bytes: a round's records must stay below 2 GiB per peer.
  window = std::clamp<std::size_t>(window, 1, kMaxWindow);
  MatchCounts counts;

  // The neighbourhood, and how many records each sender will ship to me in all: lets a receive
  // whose queue is empty tell "not yet here" from "never sent". Walks counting; nothing is
  // stored per event.
  std::vector<long long> total_from(n, 0), sends_to(n, 0);
  std::vector<char> source(n, 0);
  for (SideScan scan(defs, trace, SideScan::kBoth); !scan.done(); scan.next()) {
    const EventIdx e = scan.current();
    const Rank peer = peer_rank(defs, trace, e);
    const EventKind k = trace.kind[e];
    if (k == EventKind::Send || k == EventKind::Isend)
      ++sends_to[peer];
    else
      source[peer] = 1;
  }
  std::vector<int> peers;
  for (int p = 0; p < n; ++p)
    if (sends_to[p] > 0 || source[p]) peers.push_back(p);
  std::vector<char>().swap(source);
  const Neighbourhood hood(world, std::move(peers));
  {
    std::vector<std::vector<long long>> out(hood.out_degree(), std::vector<long long>(1, 0));
    for (int p = 0; p < n; ++p)
      if (sends_to[p] > 0) out[hood.out_index(p)][0] = sends_to[p];
    std::vector<int> in_counts;
    const std::vector<long long> in = hood.exchange(out, in_counts);
    for (std::size_t i = 0; i < in.size(); ++i) total_from[hood.sources()[i]] = in[i];
  }

  // Sender state: shipped sends awaiting their reply, in event order.
  SideScan send_scan(defs, trace, SideScan::kSends);
  // Shipped sends awaiting their reply, in event order, from in_flight[head] on (a vector
  // compacted now and then, so a reply finds its send by binary search on contiguous memory).
  std::vector<MatchedSend> in_flight;  // recv.request_event == kNoEvent: no reply yet
  std::size_t head = 0;
  std::vector<MatchedSend> answered;
  // Receiver state: records that arrived but are not matched yet, per (source, comm, tag).
  struct Pending {
    SendWire wire;
    Rank source;
  };
  std::unordered_map<std::uint64_t, std::deque<Pending>> queues;
  std::vector<long long> arrived_from(n, 0);
  SideScan recv_scan(defs, trace, SideScan::kReceives);
  std::vector<MatchedRecv> matched;

  std::string error;
  auto no_send_error = [&](EventIdx e, Rank source, const P2pRecord& rec) {
    ++counts.unmatched;
    if (error.empty())
      error = defs.anchor_path + ": rank " + std::to_string(me) + ", event " + std::to_string(e) +
              ": receive has no matching send from rank " + std::to_string(source) + " (tag " +
              std::to_string(rec.tag) + ", communicator " + defs.comms[rec.comm].name + ")";
  };
  // Hands the answered prefix of the sends in flight to the sink.
  auto settle_sends = [&](bool last) {
    answered.clear();
    for (; head < in_flight.size() && (last || in_flight[head].recv.request_event != kNoEvent);
         ++head)
      if (in_flight[head].recv.request_event != kNoEvent) answered.push_back(in_flight[head]);
    const EventIdx done = last ? static_cast<EventIdx>(trace.size())
                          : head == in_flight.size() ? send_scan.current()
                                                     : in_flight[head].event;
    if (head > in_flight.size() / 2) {
      in_flight.erase(in_flight.begin(), in_flight.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    sink.sends(answered.data(), answered.size(), done);
  };

  // Rounds: every rank ships its next `window` send records in event order, receivers match as
  // far as the arrived records allow, and replies go back at once. Memory for records in flight
  // is bounded by the window, not by the trace.
  for (;;) {
    std::vector<std::vector<SendWire>> out_to(hood.out_degree());
    for (std::size_t k = 0; k < window && !send_scan.done(); ++k, send_scan.next()) {
      const EventIdx e = send_scan.current();
      const P2pRecord& rec = trace.p2p[trace.ref[e]];
      out_to[hood.out_index(peer_rank(defs, trace, e))].push_back(SendWire{trace.time[trace.call_of(e)],
                                                           leave_time(trace, trace.call_of(e)),
                                                           trace.time[e], trace.bytes_of(e),
                                                           rec.comm, rec.tag, e, 0});
      in_flight.push_back(MatchedSend{e, RemoteRecv{}});
    }
    std::vector<int> in_counts;
    const std::vector<SendWire> in = hood.exchange(out_to, in_counts);
    std::vector<std::vector<SendWire>>().swap(out_to);
    std::size_t at = 0;
    for (std::size_t i = 0; i < in_counts.size(); ++i) {
      const Rank p = hood.sources()[i];
      for (int k = 0; k < in_counts[i]; ++k, ++at) {
        queues[key_of(p, in[at].comm, in[at].tag)].push_back(Pending{in[at], p});
        ++arrived_from[p];
      }
    }

    // Replies go to the senders, which are out-neighbours as sources of my receives.
    std::vector<std::vector<ReplyWire>> replies_to(hood.out_degree());
    matched.clear();
    for (; !recv_scan.done(); recv_scan.next()) {
      const EventIdx e = recv_scan.current();
      const P2pRecord& rec = trace.p2p[trace.ref[e]];
      const Rank source = peer_rank(defs, trace, e);
      auto it = queues.find(key_of(source, rec.comm, rec.tag));
      if (it == queues.end() || it->second.empty()) {
        if (arrived_from[source] < total_from[source]) break;  // more is on its way
        no_send_error(e, source, rec);
        continue;
      }
      const Pending m = it->second.front();
      it->second.pop_front();
      // Tags that change from message to message would leave a trail of empty queues.
      if (it->second.empty() && queues.size() > kKeptEmptyQueues) queues.erase(it);
      matched.push_back(
          MatchedRecv{e, RemoteSend{m.wire.call_enter, m.wire.call_leave, m.wire.time, m.wire.bytes,
                                           m.wire.event}});
      ++counts.matched;
      // The receive request: MpiRecv itself, or the MpiIrecvRequest that started an MpiIrecv.
      EventIdx request = e;
      if (trace.kind[e] == EventKind::Irecv && rec.partner != kNoEvent) request = rec.partner;
      replies_to[hood.out_index(source)].push_back(
          ReplyWire{trace.time[trace.call_of(request)],
                    leave_time(trace, trace.call_of(request)), request, m.wire.event});
    }
    sink.receives(matched.data(), matched.size(), recv_scan.current());

    std::vector<int> back_counts;
    const std::vector<ReplyWire> back = hood.exchange(replies_to, back_counts);
    std::vector<std::vector<ReplyWire>>().swap(replies_to);
    for (const ReplyWire& r : back) {
      // The sends in flight are in event order: the reply names its send's event.
      auto it = std::lower_bound(
          in_flight.begin() + static_cast<std::ptrdiff_t>(head), in_flight.end(), r.send_event,
          [](const MatchedSend& s, EventIdx e) { return s.event < e; });
      if (it != in_flight.end() && it->event == r.send_event)
        it->recv = RemoteRecv{r.request_enter, r.request_leave, r.request_event};
    }
    settle_sends(false);
    if (!world.any(!send_scan.done())) break;
  }
  // Everything has arrived: receives still waiting have no send.
  for (; !recv_scan.done(); recv_scan.next()) {
    const EventIdx e = recv_scan.current();
    const P2pRecord& rec = trace.p2p[trace.ref[e]];
    no_send_error(e, peer_rank(defs, trace, e), rec);
  }
  sink.receives(nullptr, 0, static_cast<EventIdx>(trace.size()));
  settle_sends(true);  // sends without a reply have no receive (the receiver reports them)
  for (const auto& [key, q] : queues) {
    counts.unmatched += q.size();
    if (error.empty() && !q.empty()) {
      const SendWire& s = q.front().wire;
      error = defs.anchor_path + ": rank " + std::to_string(q.front().source) + ", event " +
              std::to_string(s.event) + ": send to rank " + std::to_string(me) + " (tag " +
              std::to_string(s.tag) + ", communicator " + defs.comms[s.comm].name +
              ") has no matching receive";
    }
  }
  if (!error.empty() && !tolerate_unmatched) throw ReplayError(error);
  return counts;
}

MessageTable match_messages(const World& world, const Definitions& defs,
                            const LocalTrace& trace, bool tolerate_unmatched,
                            std::size_t window) {
  MessageTable table;
  TableSink sink(table);
  table.unmatched = match_messages(world, defs, trace, sink, tolerate_unmatched, window).unmatched;
  return table;
}

}  // namespace cpreplay::replay
