// SPDX-License-Identifier: BSD-3-Clause
// Batched point-to-point matching: per peer one block of send records, one block of replies.
#include "replay/messages.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {
namespace {

/// Wire format of a send record (sender -> receiver), in the sender's event order.
struct SendWire {
  Ticks call_enter;
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
  EventIdx request_event;
  std::uint32_t matched;
};

/// Exchanges per-peer blocks of PODs. counts[p] = number of T for peer p.
template <class T>
std::vector<T> alltoallv(const World& world, const std::vector<T>& out,
                         const std::vector<int>& counts, std::vector<int>& in_counts) {
  const int n = world.size();
  std::vector<int> send_bytes(n), recv_bytes(n), sdispl(n), rdispl(n);
  for (int p = 0; p < n; ++p) send_bytes[p] = counts[p] * static_cast<int>(sizeof(T));
  MPI_Alltoall(send_bytes.data(), 1, MPI_INT, recv_bytes.data(), 1, MPI_INT, world.comm());
  int s = 0, r = 0;
  for (int p = 0; p < n; ++p) {
    sdispl[p] = s;
    rdispl[p] = r;
    s += send_bytes[p];
    r += recv_bytes[p];
  }
  std::vector<T> in(static_cast<std::size_t>(r) / sizeof(T));
  MPI_Alltoallv(out.data(), send_bytes.data(), sdispl.data(), MPI_BYTE, in.data(),
                recv_bytes.data(), rdispl.data(), MPI_BYTE, world.comm());
  in_counts.resize(n);
  for (int p = 0; p < n; ++p) in_counts[p] = recv_bytes[p] / static_cast<int>(sizeof(T));
  return in;
}

std::uint64_t key_of(Rank source, std::uint32_t comm, std::uint32_t tag) {
  return (static_cast<std::uint64_t>(source) << 40) ^ (static_cast<std::uint64_t>(comm) << 32) ^
         tag;
}

}  // namespace

bool takes_part_in_matching(const Definitions& defs, const LocalTrace& trace, EventIdx e) {
  const EventKind k = trace.kind[e];
  if (k != EventKind::Send && k != EventKind::Isend && k != EventKind::Recv &&
      k != EventKind::Irecv)
    return false;
  const EventIdx call = trace.call_of(e);
  if (!defs.regions[trace.ref[call]].is_mpi()) return false;
  if (k == EventKind::Isend && trace.link[e] != kNoEvent &&
      trace.kind[trace.link[e]] == EventKind::RequestCancelled)
    return false;
  return true;
}

MessageTable match_messages(const World& world, const Definitions& defs,
                            const LocalTrace& trace, bool tolerate_unmatched) {
  const int n = world.size();
  const Rank me = world.rank();

  // 1. Send records, grouped by destination, each group in event order.
  std::vector<std::vector<EventIdx>> sends_to(n);
  std::vector<EventIdx> recv_list;
  for (EventIdx e = 0; e < trace.size(); ++e) {
    if (!takes_part_in_matching(defs, trace, e)) continue;
    const P2pRecord& rec = trace.p2p[trace.ref[e]];
    const Rank peer = defs.comms[rec.comm].world_rank(rec.peer, me);
    if (trace.kind[e] == EventKind::Send || trace.kind[e] == EventKind::Isend)
      sends_to[peer].push_back(e);
    else
      recv_list.push_back(e);
  }
  std::vector<SendWire> out;
  std::vector<int> counts(n);
  for (int p = 0; p < n; ++p) {
    counts[p] = static_cast<int>(sends_to[p].size());
    for (EventIdx e : sends_to[p]) {
      const P2pRecord& rec = trace.p2p[trace.ref[e]];
      const EventIdx call = rec.call;
      out.push_back(SendWire{trace.time[call], trace.time[e], rec.bytes, rec.comm, rec.tag, e, 0});
    }
  }
  std::vector<int> in_counts;
  const std::vector<SendWire> in = alltoallv(world, out, counts, in_counts);
  std::vector<SendWire>().swap(out);  // only the received records are needed from here on

  // 2. Match: FIFO queues per (source, communicator, tag).
  std::vector<int> in_first(n + 1, 0);
  for (int p = 0; p < n; ++p) in_first[p + 1] = in_first[p] + in_counts[p];
  struct Queue {
    std::vector<std::uint32_t> items;
    std::size_t head = 0;
  };
  std::unordered_map<std::uint64_t, Queue> queues;
  for (int p = 0; p < n; ++p)
    for (int i = in_first[p]; i < in_first[p + 1]; ++i)
      queues[key_of(p, in[i].comm, in[i].tag)].items.push_back(static_cast<std::uint32_t>(i));

  MessageTable table;
  std::vector<ReplyWire> replies(in.size(), ReplyWire{0, kNoEvent, 0});
  std::string error;
  for (EventIdx e : recv_list) {
    const P2pRecord& rec = trace.p2p[trace.ref[e]];
    const Rank source = defs.comms[rec.comm].world_rank(rec.peer, me);
    auto it = queues.find(key_of(source, rec.comm, rec.tag));
    if (it == queues.end() || it->second.head == it->second.items.size()) {
      ++table.unmatched;
      if (error.empty())
        error = defs.anchor_path + ": rank " + std::to_string(me) + ", event " +
                std::to_string(e) + ": receive has no matching send from rank " +
                std::to_string(source) + " (tag " + std::to_string(rec.tag) + ", communicator " +
                defs.comms[rec.comm].name + ")";
      continue;
    }
    const std::uint32_t i = it->second.items[it->second.head++];
    const SendWire& s = in[i];
    table.recv_events.push_back(e);
    table.sends.push_back(RemoteSend{s.call_enter, s.time, s.bytes, s.event, source});
    // The receive request: MpiRecv itself, or the MpiIrecvRequest that started an MpiIrecv.
    EventIdx request = e;
    if (trace.kind[e] == EventKind::Irecv && trace.link[e] != kNoEvent) request = trace.link[e];
    const EventIdx call = trace.call_of(request);
    replies[i] = ReplyWire{trace.time[call], request, 1};
  }
  for (const auto& [key, q] : queues) table.unmatched += q.items.size() - q.head;
  if (error.empty())
    for (const auto& [key, q] : queues)
      if (q.head < q.items.size()) {
        const SendWire& s = in[q.items[q.head]];
        const Rank source = static_cast<Rank>(key >> 40);
        error = defs.anchor_path + ": rank " + std::to_string(source) + ", event " +
                std::to_string(s.event) + ": send to rank " + std::to_string(me) + " (tag " +
                std::to_string(s.tag) + ", communicator " + defs.comms[s.comm].name +
                ") has no matching receive";
        break;
      }

  // 3. Replies go back in the order the records came; senders pair them with their sends.
  //    Peer p's k-th send owns reply first[p] + k, so one walk in event order restores it.
  std::vector<int> back_counts;
  const std::vector<ReplyWire> back = alltoallv(world, replies, in_counts, back_counts);
  std::vector<std::size_t> next(n, 0);
  for (int p = 1; p < n; ++p) next[p] = next[p - 1] + sends_to[p - 1].size();
  for (EventIdx e = 0; e < trace.size(); ++e) {
    const EventKind k = trace.kind[e];
    if ((k != EventKind::Send && k != EventKind::Isend) || !takes_part_in_matching(defs, trace, e))
      continue;
    const P2pRecord& rec = trace.p2p[trace.ref[e]];
    const Rank peer = defs.comms[rec.comm].world_rank(rec.peer, me);
    const ReplyWire& r = back[next[peer]++];
    if (!r.matched) continue;
    table.send_events.push_back(e);
    table.recvs.push_back(RemoteRecv{r.request_enter, r.request_event, peer});
  }
  if (!error.empty() && !tolerate_unmatched) throw ReplayError(error);
  return table;
}

}  // namespace cpreplay::replay
