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
  std::uint32_t position;  ///< which of the sender's sends to this receiver it answers
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

MessageTable match_messages(const World& world, const Definitions& defs,
                            const LocalTrace& trace, bool tolerate_unmatched,
                            std::size_t window) {
  const int n = world.size();
  const Rank me = world.rank();
  window = std::max<std::size_t>(window, 1);

  // The result tables double as work lists, sized exactly: sends and receives in event order,
  // their remote halves filled in as matches are found (unmatched ones are compacted away).
  MessageTable table;
  std::vector<std::vector<std::uint32_t>> sends_to(n);  // per destination: positions in table
  std::vector<EventIdx> open;  // Enter events of the open regions
  for (int pass = 0; pass < 2; ++pass) {
    std::size_t sends = 0, recvs = 0;
    open.clear();
    for (EventIdx e = 0; e < trace.size(); ++e) {
      const EventKind k = trace.kind[e];
      if (k == EventKind::Enter) open.push_back(e);
      if (k == EventKind::Leave && !open.empty()) open.pop_back();
      if (open.empty() || !takes_part_in_matching(defs, trace, e, open.back())) continue;
      const bool send = trace.kind[e] == EventKind::Send || trace.kind[e] == EventKind::Isend;
      if (pass == 0) {
        ++(send ? sends : recvs);
        continue;
      }
      if (!send) {
        table.recv_events.push_back(e);
        continue;
      }
      const Rank peer = peer_rank(defs, trace, e);
      sends_to[peer].push_back(static_cast<std::uint32_t>(table.send_events.size()));
      table.send_events.push_back(e);
    }
    if (pass == 0) {
      table.send_events.reserve(sends);
      table.recv_events.reserve(recvs);
    }
  }
  const std::vector<EventIdx>& recv_list = table.recv_events;
  table.sends.resize(recv_list.size());
  table.recvs.resize(table.send_events.size());  // request_event == kNoEvent: not matched
  // How many records each sender will ship to me in all: lets a receive whose queue is empty
  // tell "not yet here" from "never sent".
  std::vector<long long> total_to(n), total_from(n);
  for (int p = 0; p < n; ++p) total_to[p] = static_cast<long long>(sends_to[p].size());
  MPI_Alltoall(total_to.data(), 1, MPI_LONG_LONG, total_from.data(), 1, MPI_LONG_LONG,
               world.comm());

  // Receiver state: records that arrived but are not matched yet, per (source, comm, tag).
  struct Pending {
    SendWire wire;
    std::uint32_t index;  ///< position in the sender's list of sends to me
  };
  struct Queue {
    std::deque<Pending> items;
  };
  std::unordered_map<std::uint64_t, Queue> queues;
  std::vector<long long> arrived_from(n, 0);
  std::size_t cursor = 0;  // next receive to match, in event order
  std::vector<std::size_t> shipped(n, 0);
  std::vector<char> recv_matched(recv_list.size(), 0);

  std::string error;
  auto no_send_error = [&](EventIdx e, Rank source, const P2pRecord& rec) {
    ++table.unmatched;
    if (error.empty())
      error = defs.anchor_path + ": rank " + std::to_string(me) + ", event " + std::to_string(e) +
              ": receive has no matching send from rank " + std::to_string(source) + " (tag " +
              std::to_string(rec.tag) + ", communicator " + defs.comms[rec.comm].name + ")";
  };

  // Rounds: every rank ships at most `window` send records (shared by the peers it still has
  // records for, at least one each), receivers match as far as the arrived records allow, and
  // replies (with the send's position) go back at once. Memory for records in flight is bounded
  // by the window, not by the trace.
  for (;;) {
    std::vector<SendWire> out;
    std::vector<int> counts(n, 0);
    std::size_t active = 0;
    for (int p = 0; p < n; ++p) active += shipped[p] < sends_to[p].size() ? 1 : 0;
    const std::size_t per_peer = std::max<std::size_t>(1, window / std::max<std::size_t>(active, 1));
    for (int p = 0; p < n; ++p) {
      const std::size_t take = std::min(per_peer, sends_to[p].size() - shipped[p]);
      counts[p] = static_cast<int>(take);
      for (std::size_t k = shipped[p]; k < shipped[p] + take; ++k) {
        const EventIdx e = table.send_events[sends_to[p][k]];
        const P2pRecord& rec = trace.p2p[trace.ref[e]];
        out.push_back(SendWire{trace.time[trace.call_of(e)], trace.time[e], trace.bytes_of(e), rec.comm,
                               rec.tag, e, 0});
      }
      shipped[p] += take;
    }
    std::vector<int> in_counts;
    const std::vector<SendWire> in = alltoallv(world, out, counts, in_counts);
    std::vector<SendWire>().swap(out);
    std::size_t at = 0;
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < in_counts[p]; ++i, ++at)
        queues[key_of(p, in[at].comm, in[at].tag)].items.push_back(
            Pending{in[at], static_cast<std::uint32_t>(arrived_from[p]++)});

    std::vector<std::vector<ReplyWire>> replies_to(n);
    while (cursor < recv_list.size()) {
      const EventIdx e = recv_list[cursor];
      const P2pRecord& rec = trace.p2p[trace.ref[e]];
      const Rank source = peer_rank(defs, trace, e);
      auto it = queues.find(key_of(source, rec.comm, rec.tag));
      if (it == queues.end() || it->second.items.empty()) {
        if (arrived_from[source] < total_from[source]) break;  // more is on its way
        no_send_error(e, source, rec);
        ++cursor;
        continue;
      }
      const Pending m = it->second.items.front();
      it->second.items.pop_front();
      table.sends[cursor] =
          RemoteSend{m.wire.call_enter, m.wire.time, m.wire.bytes, m.wire.event};
      recv_matched[cursor] = 1;
      // The receive request: MpiRecv itself, or the MpiIrecvRequest that started an MpiIrecv.
      EventIdx request = e;
      if (trace.kind[e] == EventKind::Irecv && rec.partner != kNoEvent) request = rec.partner;
      replies_to[source].push_back(
          ReplyWire{trace.time[trace.call_of(request)], request, m.index});
      ++cursor;
    }

    std::vector<ReplyWire> flat;
    std::vector<int> reply_counts(n);
    for (int p = 0; p < n; ++p) {
      reply_counts[p] = static_cast<int>(replies_to[p].size());
      flat.insert(flat.end(), replies_to[p].begin(), replies_to[p].end());
    }
    std::vector<int> back_counts;
    const std::vector<ReplyWire> back = alltoallv(world, flat, reply_counts, back_counts);
    at = 0;
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < back_counts[p]; ++i, ++at) {
        const ReplyWire& r = back[at];
        table.recvs[sends_to[p][r.position]] = RemoteRecv{r.request_enter, r.request_event};
      }

    bool more = false;
    for (int p = 0; p < n && !more; ++p) more = shipped[p] < sends_to[p].size();
    if (!world.any(more)) break;
  }
  // Everything has arrived: receives still waiting have no send.
  for (; cursor < recv_list.size(); ++cursor) {
    const EventIdx e = recv_list[cursor];
    const P2pRecord& rec = trace.p2p[trace.ref[e]];
    const Rank source = peer_rank(defs, trace, e);
    auto it = queues.find(key_of(source, rec.comm, rec.tag));
    if (it != queues.end() && !it->second.items.empty()) {
      // Cannot happen: the loop above matched while records were queued.
      continue;
    }
    no_send_error(e, source, rec);
  }
  for (const auto& [key, q] : queues) {
    table.unmatched += q.items.size();
    if (error.empty() && !q.items.empty()) {
      const SendWire& s = q.items.front().wire;
      const Rank source = static_cast<Rank>(key >> 40);
      error = defs.anchor_path + ": rank " + std::to_string(source) + ", event " +
              std::to_string(s.event) + ": send to rank " + std::to_string(me) + " (tag " +
              std::to_string(s.tag) + ", communicator " + defs.comms[s.comm].name +
              ") has no matching receive";
    }
  }

  // Only matched messages stay (anything else is an error, or left out with --partial).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < table.recv_events.size(); ++i)
    if (recv_matched[i]) {
      table.recv_events[kept] = table.recv_events[i];
      table.sends[kept++] = table.sends[i];
    }
  table.recv_events.resize(kept);
  table.sends.resize(kept);
  kept = 0;
  for (std::size_t i = 0; i < table.send_events.size(); ++i)
    if (table.recvs[i].request_event != kNoEvent) {
      table.send_events[kept] = table.send_events[i];
      table.recvs[kept++] = table.recvs[i];
    }
  table.send_events.resize(kept);
  table.recvs.resize(kept);
  if (!error.empty() && !tolerate_unmatched) throw ReplayError(error);
  return table;
}

}  // namespace cpreplay::replay
