// SPDX-License-Identifier: BSD-3-Clause
// List ranking by pointer jumping (replay/pointer_jump) on constructed lists spread over the
// ranks of `mpirun -np 4`: the exact positions of every node, the number of rounds, cycles.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "replay/pointer_jump.hpp"

namespace cpreplay::replay {
namespace {

/// Deterministic pseudo-random numbers (xorshift64): every rank builds the same global list.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }

 private:
  std::uint64_t s_;
};

/// A list over all ranks: every rank's successor table and the expected positions, built the
/// same way on every rank.
struct GlobalList {
  std::vector<std::vector<NodeRef>> next;           ///< per rank, per node
  std::vector<std::vector<std::uint32_t>> position;  ///< expected, kOffList off the path
  NodeRef head;
  std::uint32_t crossings = 0;  ///< path links whose two ends are on different ranks
};

/// `hops` path nodes in pseudo-random rank order at pseudo-random free slots, plus as many
/// other nodes per rank pointing anywhere (into the path, at each other, nowhere; some in a
/// cycle of their own), which must stay unmarked.
GlobalList make_list(int ranks, std::uint32_t hops, std::uint32_t per_rank, std::uint64_t seed) {
  GlobalList g;
  Rng rng(seed);
  g.next.assign(ranks, std::vector<NodeRef>(per_rank));
  g.position.assign(ranks, std::vector<std::uint32_t>(per_rank, kOffList));
  std::vector<std::vector<bool>> used(ranks, std::vector<bool>(per_rank, false));
  std::vector<NodeRef> path;
  for (std::uint32_t k = 0; k < hops; ++k) {
    NodeRef node{static_cast<Rank>(rng.below(static_cast<std::uint32_t>(ranks))), 0};
    do node.index = rng.below(per_rank);
    while (used[node.rank][node.index]);
    used[node.rank][node.index] = true;
    g.position[node.rank][node.index] = k;
    path.push_back(node);
  }
  for (std::uint32_t k = 0; k < hops; ++k) {
    g.next[path[k].rank][path[k].index] = k + 1 < hops ? path[k + 1] : NodeRef{};
    if (k + 1 < hops && path[k].rank != path[k + 1].rank) ++g.crossings;
  }
  g.head = hops > 0 ? path[0] : NodeRef{};
  std::vector<NodeRef> others;
  for (Rank r = 0; r < ranks; ++r)
    for (std::uint32_t i = 0; i < per_rank; ++i)
      if (!used[r][i]) others.push_back(NodeRef{r, i});
  for (std::size_t k = 0; k < others.size(); ++k) {
    NodeRef& next = g.next[others[k].rank][others[k].index];
    switch (rng.below(4)) {
      case 0: break;  // the end
      case 1: next = path[rng.below(hops)]; break;
      case 2: next = others[rng.below(static_cast<std::uint32_t>(others.size()))]; break;
      default: next = others[(k + 1) % others.size()]; break;  // a long chain, closed in a cycle
    }
  }
  return g;
}

std::string name(std::uint32_t i) { return "cycle at node " + std::to_string(i); }

TEST(ListRanking, ThousandHopsAcrossRanks_MarksExactlyThePathWithPositions) {
  const World world;
  const GlobalList g = make_list(world.size(), 1000, 600, 20261122);
  ASSERT_GE(g.crossings, world.size() > 1 ? 600u : 0u);  // the path changes rank most hops
  const ListRanking got = rank_list(world, g.next[world.rank()], g.head, name);
  EXPECT_EQ(got.position, g.position[world.rank()]);
  EXPECT_EQ(got.rounds, 10u);  // ceil(log2 1000): positions 0..999 after 10 doublings
  std::uint64_t marked = 0, total = 0;
  for (std::uint32_t p : got.position) marked += p != kOffList;
  MPI_Allreduce(&marked, &total, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  EXPECT_EQ(total, 1000u);
}

TEST(ListRanking, LengthsAroundPowersOfTwo_RoundsAreCeilLog2) {
  const World world;
  const std::uint32_t lengths[] = {1, 2, 3, 4, 5, 1023, 1024, 1025};
  const std::uint32_t rounds[] = {0, 1, 2, 2, 3, 10, 10, 11};
  for (std::size_t t = 0; t < 8; ++t) {
    const GlobalList g = make_list(world.size(), lengths[t], 400, 7 + t);
    const ListRanking got = rank_list(world, g.next[world.rank()], g.head, name);
    EXPECT_EQ(got.position, g.position[world.rank()]) << "length " << lengths[t];
    EXPECT_EQ(got.rounds, rounds[t]) << "length " << lengths[t];
  }
}

TEST(ListRanking, NoHead_MarksNothing) {
  const World world;
  GlobalList g = make_list(world.size(), 50, 100, 3);
  const ListRanking got = rank_list(world, g.next[world.rank()], NodeRef{}, name);
  EXPECT_EQ(got.position, std::vector<std::uint32_t>(100, kOffList));
  EXPECT_EQ(got.rounds, 0u);
}

/// n0 -> n1 -> n2 -> n3 -> n4 -> n2 on ranks 0, 1, 2, 3, 1 (index 5 + k for n_k). Round 2
/// reaches n2 at position 5, n3 at 6 and n4 at 4 and 7: ranks 1, 2 and 3 see a node twice, the
/// lowest of them (1, with n4 = index 9) reports it, every other rank stops quietly.
TEST(ListRanking, CycleFromTheHead_ReportedByOneRankOthersStop) {
  const World world;
  if (world.size() != 4) GTEST_SKIP() << "built for 4 ranks";
  const Rank on[5] = {0, 1, 2, 3, 1};
  std::vector<std::vector<NodeRef>> next(4, std::vector<NodeRef>(10));
  for (int k = 0; k < 5; ++k) {
    const int to = k < 4 ? k + 1 : 2;
    next[on[k]][5 + k] = NodeRef{on[to], static_cast<std::uint32_t>(5 + to)};
  }
  std::string error;
  bool peer_failed = false;
  try {
    rank_list(world, next[world.rank()], NodeRef{0, 5}, name);
  } catch (const ReplayError& e) {
    error = e.what();
  } catch (const PeerFailed&) {
    peer_failed = true;
  }
  if (world.rank() == 1) {
    EXPECT_EQ(error, "cycle at node 9");
  } else {
    EXPECT_TRUE(peer_failed) << "rank " << world.rank() << ": " << error;
  }
}

TEST(AskEach, QueriesToPseudoRandomRanks_RepliesInQueryOrder) {
  const World world;
  Rng rng(99 + static_cast<std::uint64_t>(world.rank()));
  std::vector<Rank> dest(5000);
  std::vector<std::uint32_t> value(5000);
  for (std::size_t i = 0; i < dest.size(); ++i) {
    dest[i] = static_cast<Rank>(rng.below(static_cast<std::uint32_t>(world.size())));
    value[i] = static_cast<std::uint32_t>(rng.next());
  }
  std::vector<std::uint64_t> got(dest.size());
  ask_each<std::uint32_t, std::uint64_t>(
      world, dest.size(), [&](std::size_t i) { return dest[i]; },
      [&](std::size_t i) { return value[i]; },
      [&](Rank source, std::uint32_t v) {
        return (std::uint64_t{static_cast<std::uint32_t>(source)} << 40) |
               (std::uint64_t{static_cast<std::uint32_t>(world.rank())} << 32) | (v ^ 0x5a5a5a5au);
      },
      [&](std::size_t i, std::uint64_t r) { got[i] = r; });
  for (std::size_t i = 0; i < dest.size(); ++i)
    ASSERT_EQ(got[i], (std::uint64_t{static_cast<std::uint32_t>(world.rank())} << 40) |
                          (std::uint64_t{static_cast<std::uint32_t>(dest[i])} << 32) |
                          (value[i] ^ 0x5a5a5a5au))
        << "query " << i;
}

TEST(SendEachSliced, UnevenCountsInSmallSlices_EveryRecordOnceEachSourceInOrder) {
  // Process r sends 1000 * r + 7 records (process 0 the fewest: it runs empty slices while
  // the others still send), 16 B each, in slices of 100 B (6 records): many slices, the last
  // ones partly empty; record i of process r goes to (r + i) % P, some to itself, and one in
  // five to nobody (dest -1).
  const World world;
  struct Rec {
    std::uint32_t source, index;
    std::uint64_t check;
  };
  const std::size_t n = 1000 * static_cast<std::size_t>(world.rank()) + 7;
  auto dest = [&](std::size_t i) {
    return i % 5 == 4 ? Rank{-1} : static_cast<Rank>((world.rank() + static_cast<int>(i)) % world.size());
  };
  std::vector<std::vector<std::uint32_t>> got(static_cast<std::size_t>(world.size()));
  std::size_t wrong = 0;
  send_each_sliced<Rec>(
      world, n, 100, dest,
      [&](std::size_t i) {
        return Rec{static_cast<std::uint32_t>(world.rank()), static_cast<std::uint32_t>(i),
                   static_cast<std::uint64_t>(i) * 2654435761u + static_cast<std::uint64_t>(world.rank())};
      },
      [&](Rank source, const Rec& r) {
        if (r.source != static_cast<std::uint32_t>(source) ||
            r.check != static_cast<std::uint64_t>(r.index) * 2654435761u + r.source)
          ++wrong;
        got[static_cast<std::size_t>(source)].push_back(r.index);
      });
  EXPECT_EQ(wrong, 0u);
  for (int s = 0; s < world.size(); ++s) {
    // What source s sends here: its records i with (s + i) % P == me, not every fifth.
    std::vector<std::uint32_t> want;
    for (std::size_t i = 0; i < 1000 * static_cast<std::size_t>(s) + 7; ++i)
      if (i % 5 != 4 && (s + static_cast<int>(i)) % world.size() == world.rank())
        want.push_back(static_cast<std::uint32_t>(i));
    EXPECT_EQ(got[static_cast<std::size_t>(s)], want) << "from process " << s;
  }
}

}  // namespace
}  // namespace cpreplay::replay
