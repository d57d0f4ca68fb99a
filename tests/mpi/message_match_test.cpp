// SPDX-License-Identifier: BSD-3-Clause
// The message matching (replay/messages) on `mpirun -np 4`: 5 trace ranks on 1 to 4 processes,
// messages on the world communicator and on a sub-communicator whose local ranks are not the
// world ranks. Every matched message names its partner's world rank (the what-if replay takes
// the partners' ranks from here) and its partner's event, the same for every process count.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpreplay/shard.hpp"
#include "replay/messages.hpp"

namespace cpreplay::replay {
namespace {

constexpr int kRanks = 5;
const std::vector<Rank> kSub = {4, 2, 0};  // communicator 1: local rank i is world rank kSub[i]

int local_in_sub(Rank r) {
  for (std::size_t i = 0; i < kSub.size(); ++i)
    if (kSub[i] == r) return static_cast<int>(i);
  return -1;
}

Definitions definitions() {
  Definitions defs;
  defs.clock.ticks_per_second = 1;
  for (const char* name : {"main", "MPI_Send", "MPI_Recv"}) {
    Region r;
    r.name = name;
    r.file = name[0] == 'M' ? "MPI" : "a.c";
    r.mpi_class = classify_mpi_region(r.file, r.name);
    defs.regions.push_back(r);
  }
  defs.processes.resize(kRanks);
  Communicator world;
  world.name = "MPI_COMM_WORLD";
  for (Rank r = 0; r < kRanks; ++r) world.members.push_back(r);
  Communicator sub;
  sub.name = "sub";
  sub.members = kSub;
  defs.comms = {world, sub};
  return defs;
}

/// What rank r's trace holds, in event order: main { MPI_Send { send to r + 1 on the world },
/// MPI_Send { send to the next member of the sub-communicator }, MPI_Recv { from r - 1 },
/// MPI_Recv { from the previous member } } (the sub-communicator's calls only on its members).
/// Call paths 0 main, 1 MPI_Send, 2 MPI_Recv.
struct Expected {
  EventIdx event;
  Rank peer;           ///< the partner's world rank
  EventIdx peer_event;  ///< the partner's event: its send, or the receive that requests a send
};

LocalTrace trace_of(Rank r, std::vector<Expected>* sends, std::vector<Expected>* recvs) {
  LocalTrace t;
  t.rank = r;
  t.region_of_path = {0, 1, 2};
  Ticks now = 0;
  const int sub = local_in_sub(r);
  const int n = static_cast<int>(kSub.size());
  auto message = [&](std::uint32_t cp, EventKind k, std::uint32_t comm, std::uint32_t peer,
                     std::uint32_t tag) {
    t.push(EventKind::Enter, now++, cp);
    P2pRecord rec;
    rec.comm = comm;
    rec.peer = peer;
    rec.tag = tag;
    t.push(k, now++, t.add_message(rec, 8));
    const auto e = static_cast<EventIdx>(t.size() - 1);
    t.push(EventKind::Leave, now++, cp);
    return e;
  };
  t.push(EventKind::Enter, now++, 0);
  const Rank next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
  // Every rank's world send is its event 2, a member's sub-communicator send its event 5; a
  // member's world receive is its event 8, a non-member's 5; a member's sub-communicator
  // receive its event 11.
  sends->push_back({message(1, EventKind::Send, 0, static_cast<std::uint32_t>(next), 1), next,
                    local_in_sub(next) >= 0 ? EventIdx{8} : EventIdx{5}});
  if (sub >= 0)
    sends->push_back({message(1, EventKind::Send, 1, static_cast<std::uint32_t>((sub + 1) % n), 2),
                      kSub[static_cast<std::size_t>((sub + 1) % n)], 11});
  recvs->push_back({message(2, EventKind::Recv, 0, static_cast<std::uint32_t>(prev), 1), prev, 2});
  if (sub >= 0) {
    const int from = (sub + n - 1) % n;
    recvs->push_back({message(2, EventKind::Recv, 1, static_cast<std::uint32_t>(from), 2),
                      kSub[static_cast<std::size_t>(from)], 5});
  }
  t.push(EventKind::Leave, now++, 0);
  return t;
}

class Collect final : public MessageSink {
 public:
  void receives(const MatchedRecv* m, std::size_t n, EventIdx) override {
    got_recvs.insert(got_recvs.end(), m, m + n);
  }
  void sends(const MatchedSend* m, std::size_t n, EventIdx) override {
    got_sends.insert(got_sends.end(), m, m + n);
  }
  std::vector<MatchedRecv> got_recvs;
  std::vector<MatchedSend> got_sends;
};

TEST(MessageMatch, AnyProcessCount_PartnersWorldRanksOnEveryCommunicator) {
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const Definitions defs = definitions();
  for (int processes = 1; processes <= world_size; ++processes) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < processes ? 0 : MPI_UNDEFINED, world_rank, &comm);
    if (comm == MPI_COMM_NULL) continue;
    {
      const World world(comm);
      Shard shard(RankBlocks(kRanks, processes), world.rank());
      std::vector<std::vector<Expected>> want_sends, want_recvs;
      for (Rank r = shard.first(); r < shard.last(); ++r) {
        want_sends.emplace_back();
        want_recvs.emplace_back();
        shard.traces.push_back(trace_of(r, &want_sends.back(), &want_recvs.back()));
      }
      std::vector<Collect> collect(shard.size());
      std::vector<MessageSink*> sinks;
      for (Collect& c : collect) sinks.push_back(&c);
      const MatchCounts counts = match_messages(world, defs, shard, sinks);
      for (std::size_t i = 0; i < shard.size(); ++i) {
        const Rank r = shard.first() + static_cast<Rank>(i);
        const std::string where =
            "rank " + std::to_string(r) + ", " + std::to_string(processes) + " processes";
        ASSERT_EQ(collect[i].got_recvs.size(), want_recvs[i].size()) << where;
        for (std::size_t k = 0; k < want_recvs[i].size(); ++k) {
          const MatchedRecv& m = collect[i].got_recvs[k];
          EXPECT_EQ(m.event, want_recvs[i][k].event) << where;
          EXPECT_EQ(m.send.rank, want_recvs[i][k].peer) << where << ", receive " << k;
          EXPECT_EQ(m.send.event, want_recvs[i][k].peer_event) << where << ", receive " << k;
        }
        ASSERT_EQ(collect[i].got_sends.size(), want_sends[i].size()) << where;
        for (std::size_t k = 0; k < want_sends[i].size(); ++k) {
          const MatchedSend& m = collect[i].got_sends[k];
          EXPECT_EQ(m.event, want_sends[i][k].event) << where;
          EXPECT_EQ(m.recv.rank, want_sends[i][k].peer) << where << ", send " << k;
          // A blocking receive is its own request.
          EXPECT_EQ(m.recv.request_event, want_sends[i][k].peer_event) << where << ", send " << k;
        }
      }
      EXPECT_EQ(counts.unmatched, 0u);
    }
    MPI_Comm_free(&comm);
  }
}

}  // namespace
}  // namespace cpreplay::replay
