// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point re-enactment: matches every receive with its send in two batched exchanges.
#pragma once

#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

// Packed to 4-byte alignment (36 and 20 B instead of 40 and 24): one of each per message is
// held through the forward phase. The partner's world rank is not stored: it follows from the
// local event's own record (peer_rank).
#pragma pack(push, 4)
/// What a receiver learns about the send that matches one of its receive events.
struct RemoteSend {
  Ticks call_enter = 0;  ///< Enter of the sender's MPI call containing the send event
  Ticks call_leave = 0;  ///< Leave of that call (root cause: a synchpoint's completion time)
  Ticks time = 0;        ///< the send event's own timestamp
  std::uint64_t bytes = 0;
  EventIdx event = kNoEvent;  ///< the send event's index on the sender
  Rank rank = -1;             ///< the sender's world rank (in the padding: 40 B either way)
};

/// What a sender learns about the receive that matches one of its sends.
struct RemoteRecv {
  Ticks request_enter = 0;  ///< Enter of the MPI call holding the receive request
  Ticks request_leave = 0;  ///< Leave of that call (root cause: a synchpoint's completion time)
  EventIdx request_event = kNoEvent;  ///< MpiRecv itself, or the MpiIrecvRequest
  Rank rank = -1;  ///< the receiver's world rank (in the padding: 24 B either way)
};
#pragma pack(pop)

/// A receive event with what its matching send told the receiver.
struct MatchedRecv {
  EventIdx event = kNoEvent;
  RemoteSend send;
};

/// A send event with what its matching receive told the sender.
struct MatchedSend {
  EventIdx event = kNoEvent;
  RemoteRecv recv;
};

/// Takes the matched messages of one rank as the rounds produce them, each side in local event
/// order. `done` says how far a side is settled: every matching event of that side before event
/// `done` has been handed over or is unmatched. Called once per round and side (not per
/// message), and a last time with done == trace size.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void receives(const MatchedRecv* m, std::size_t n, EventIdx done) = 0;
  virtual void sends(const MatchedSend* m, std::size_t n, EventIdx done) = 0;
};

/// The matched messages of one rank, in local event order on each side: what the clock
/// correction needs (it re-reads them on every round), kept whole.
struct MessageTable {
  std::vector<EventIdx> recv_events;  ///< receive-type events (MpiRecv/MpiIrecv) that matched
  std::vector<RemoteSend> sends;      ///< parallel to recv_events
  std::vector<EventIdx> send_events;  ///< send-type events (MpiSend/MpiIsend) that matched
  std::vector<RemoteRecv> recvs;      ///< parallel to send_events
  std::uint64_t unmatched = 0;        ///< messages left out (--partial), counted by receivers
};

struct MatchCounts {
  std::uint64_t matched = 0;    ///< receives of this rank that met their send
  std::uint64_t unmatched = 0;  ///< messages left out (--partial), counted by receivers
};

/// World rank of the partner of a message event (Send/Isend: destination; Recv/Irecv: source).
inline Rank peer_rank(const Definitions& defs, const LocalTrace& trace, EventIdx e) {
  const P2pRecord& rec = trace.message(e);
  return defs.comms[rec.comm].world_rank(rec.peer, trace.rank);
}

/// True if the event takes part in message matching (scalasca-metrics.md §2.2): a send or
/// receive inside an MPI region, not a cancelled send. `call` is the event's innermost open
/// Enter (a walk in event order knows it).
bool takes_part_in_matching(const Definitions& defs, const LocalTrace& trace, EventIdx e,
                            EventIdx call);

/// Matches messages per (communicator, source, destination, tag) in FIFO order: the k-th send
/// meets the k-th receive. In rounds, one neighbourhood exchange (a message along every edge of
/// the graph of processes whose ranks message each other) ships each held rank's next `window`
/// send records (in event order) to their receivers, which match as far as the arrived records
/// allow, and a second one returns the receive-request times to the senders. Records between
/// co-located ranks are delivered in memory, on the same path. Matched messages go to
/// `sinks[i]` (held rank i) round by round, so nothing proportional to the trace is kept here:
/// records in flight are bounded by the window (plus, at a receiver, records that arrived
/// before the receive they match). The result depends neither on the window nor on the number
/// of processes. Throws ReplayError (after all rounds, so all processes finish them) for
/// unmatched messages, naming the lowest rank that has one; with `tolerate_unmatched`
/// (--partial) they are counted and left out. Returns the counts of all held ranks.
/// MPI: collective on world.
MatchCounts match_messages(const World& world, const Definitions& defs, const Shard& shard,
                           const std::vector<MessageSink*>& sinks, bool tolerate_unmatched = false,
                           std::size_t window = 65536);

/// The same, collecting everything into a table per held rank (for the clock correction); the
/// unmatched messages of all held ranks are counted in the first table.
std::vector<MessageTable> match_messages(const World& world, const Definitions& defs,
                                         const Shard& shard, bool tolerate_unmatched = false,
                                         std::size_t window = 65536);

}  // namespace cpreplay::replay
