// SPDX-License-Identifier: BSD-3-Clause
// The backward replay's record exchange (replay/record_exchange) on `mpirun -np 4`: 7 trace
// ranks on 1 to 4 processes; what every rank receives (sources in rank order, each source's
// records in posting order, whatever the interleaving of posts) is the same for every process
// count, and the flags are ORed over all processes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpreplay/shard.hpp"
#include "replay/record_exchange.hpp"

namespace cpreplay::replay {
namespace {

constexpr int kRanks = 7;

/// The records rank `source` posts in round `round`, in posting order: (dest, value) pairs
/// that visit the destinations back and forth, so posts to one destination are interleaved
/// with posts to others, and some go to the source itself.
std::vector<std::pair<Rank, std::uint32_t>> posts(Rank source, int round) {
  std::vector<std::pair<Rank, std::uint32_t>> out;
  for (int k = 0; k < 12; ++k) {
    const Rank dest = static_cast<Rank>((source * 3 + k * (k % 2 ? 5 : 2) + round) % kRanks);
    out.emplace_back(dest, static_cast<std::uint32_t>(source * 10000 + round * 100 + k));
  }
  return out;
}

/// What rank `dest` must see in `round`: the values of every source in rank order, each
/// source's in posting order.
std::vector<std::uint32_t> expected(Rank dest, int round) {
  std::vector<std::uint32_t> out;
  for (Rank s = 0; s < kRanks; ++s)
    for (const auto& [d, v] : posts(s, round))
      if (d == dest) out.push_back(v);
  return out;
}

TEST(RecordExchange, AnyProcessCount_SameRecordsInRankThenPostingOrder) {
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (int processes = 1; processes <= world_size; ++processes) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < processes ? 0 : MPI_UNDEFINED, world_rank, &comm);
    if (comm == MPI_COMM_NULL) continue;
    {
      const World world(comm);
      const RankBlocks blocks(kRanks, processes);
      RecordExchange exchange(world, blocks);
      const Rank first = blocks.first(world.rank()), last = blocks.first(world.rank() + 1);
      for (int round = 0; round < 3; ++round) {
        // The held ranks post in turns, one record at a time: frames of one pair are split.
        for (int k = 0; k < 12; ++k)
          for (Rank s = first; s < last; ++s) {
            const auto [dest, value] = posts(s, round)[static_cast<std::size_t>(k)];
            RecordWriter w(exchange.to(s, dest));
            w.put(value);
          }
        EXPECT_FALSE(exchange.outbox_empty());
        // Flag 0 is set on process 0 only, flag 1 nowhere.
        const int flags[2] = {world.rank() == 0 ? 1 : 0, 0};
        int any[2] = {-1, -1};
        exchange.exchange(flags, any);
        EXPECT_EQ(any[0], 1) << processes << " processes";
        EXPECT_EQ(any[1], 0) << processes << " processes";
        EXPECT_TRUE(exchange.outbox_empty());
        for (Rank d = first; d < last; ++d) {
          std::vector<std::uint32_t> got;
          Rank previous = -1;
          exchange.for_each_from(d, [&](Rank source, const char* data, std::size_t bytes) {
            EXPECT_GE(source, previous) << "sources out of rank order";
            previous = source;
            RecordReader r(data, bytes);
            while (!r.done()) {
              const auto v = r.get<std::uint32_t>();
              EXPECT_EQ(static_cast<Rank>(v / 10000), source);
              got.push_back(v);
            }
          });
          EXPECT_EQ(got, expected(d, round))
              << "rank " << d << ", round " << round << ", " << processes << " processes";
        }
      }
    }
    MPI_Comm_free(&comm);
  }
}

TEST(RecordExchange, ReleasedBuffers_NextRoundsStillDeliver) {
  const World world;
  const RankBlocks blocks(kRanks, world.size());
  RecordExchange exchange(world, blocks);
  const Rank first = blocks.first(world.rank()), last = blocks.first(world.rank() + 1);
  for (int round = 0; round < 3; ++round) {
    for (Rank s = first; s < last; ++s) {
      RecordWriter w(exchange.to(s, (s + round + 1) % kRanks));
      w.put(static_cast<std::uint32_t>(s * 100 + round));
    }
    exchange.exchange();
    for (Rank d = first; d < last; ++d) {
      std::vector<std::uint32_t> got;
      exchange.for_each_from(d, [&](Rank source, const char* data, std::size_t bytes) {
        RecordReader r(data, bytes);
        while (!r.done()) got.push_back(r.get<std::uint32_t>());
        EXPECT_EQ(source, (d + 2 * kRanks - round - 1) % kRanks);
      });
      const Rank from = (d + 2 * kRanks - round - 1) % kRanks;
      EXPECT_EQ(got, std::vector<std::uint32_t>{static_cast<std::uint32_t>(from * 100 + round)})
          << "rank " << d << ", round " << round;
    }
    // Given back after every round but the last (the prephase's use: its blocks were read).
    if (round < 2) exchange.release_buffers();
  }
}

}  // namespace
}  // namespace cpreplay::replay
