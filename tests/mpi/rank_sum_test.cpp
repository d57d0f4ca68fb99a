// SPDX-License-Identifier: BSD-3-Clause
// The fixed-order sum over trace ranks (replay/rank_sum) on `mpirun -np 4`: N trace ranks on
// 1, 2, 3 and 4 processes (sub-communicators of world) give bit-identical sums, equal to the
// tree sum written out by hand, for values whose sum depends on the order of the additions.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "cpreplay/shard.hpp"
#include "replay/rank_sum.hpp"

namespace cpreplay::replay {
namespace {

/// Rank r's row: magnitudes far apart, so that any other association rounds differently.
std::vector<double> row_of(Rank r, std::size_t n) {
  std::vector<double> v(n);
  const double big[] = {1e16, 1.0, -1e16, 3.0, 0.1, 2e-3, 7e15, -0.3, 1e-17};
  for (std::size_t i = 0; i < n; ++i) v[i] = big[(static_cast<std::size_t>(r) * 5 + i) % 9] * (1.0 + 0.01 * r);
  return v;
}

/// The tree sum by its definition: node (start, width) = left half + right half, a half beyond
/// N adding nothing.
double tree(int ranks, std::size_t i, Rank start, Rank width) {
  if (width == 1) return row_of(start, i + 1)[i];
  const Rank half = width / 2;
  if (start + half >= ranks) return tree(ranks, i, start, half);
  return tree(ranks, i, start, half) + tree(ranks, i, start + half, half);
}

double expected(int ranks, std::size_t i) {
  Rank width = 1;
  while (width < ranks) width *= 2;
  return tree(ranks, i, 0, width);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(RankSum, AnyProcessCount_BitIdenticalToTheTreeOverRanks) {
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  constexpr std::size_t kN = 9;
  for (int ranks : {1, 2, 3, 5, 7, 8, 13, 64, 100}) {
    std::vector<double> want(kN);
    for (std::size_t i = 0; i < kN; ++i) want[i] = expected(ranks, i);
    // A left-to-right sum differs for these rows: the check is not vacuous.
    if (ranks >= 5) {
      bool differs = false;
      for (std::size_t i = 0; i < kN; ++i) {
        double seq = 0.0;
        for (Rank r = 0; r < ranks; ++r) seq += row_of(r, kN)[i];
        differs = differs || !same_bits(seq, want[i]);
      }
      EXPECT_TRUE(differs) << ranks << " ranks";
    }
    for (int processes = 1; processes <= world_size && processes <= ranks; ++processes) {
      MPI_Comm comm;
      MPI_Comm_split(MPI_COMM_WORLD, world_rank < processes ? 0 : MPI_UNDEFINED, world_rank,
                     &comm);
      if (comm == MPI_COMM_NULL) continue;
      const World world(comm);
      const RankBlocks blocks(ranks, processes);
      const std::vector<double> got =
          sum_over_ranks(world, blocks, kN, [&](std::size_t k, double* out) {
            const std::vector<double> v = row_of(blocks.first(world.rank()) + static_cast<Rank>(k), kN);
            std::copy(v.begin(), v.end(), out);
          });
      ASSERT_EQ(got.size(), kN);
      for (std::size_t i = 0; i < kN; ++i)
        EXPECT_TRUE(same_bits(got[i], want[i]))
            << ranks << " ranks on " << processes << " processes, value " << i << ": " << got[i]
            << " vs " << want[i];
      MPI_Comm_free(&comm);
    }
  }
}

TEST(RankBlocks, ContiguousBlocksDifferingByAtMostOne) {
  for (int ranks : {1, 2, 5, 8, 128, 1000})
    for (int processes = 1; processes <= ranks && processes <= 70; ++processes) {
      const RankBlocks b(ranks, processes);
      int largest = 0, smallest = ranks;
      for (int p = 0; p < processes; ++p) {
        ASSERT_EQ(b.first(p + 1) - b.first(p), b.count(p));
        largest = std::max(largest, b.count(p));
        smallest = std::min(smallest, b.count(p));
        for (Rank r = b.first(p); r < b.first(p + 1); ++r) ASSERT_EQ(b.owner(r), p) << r;
      }
      EXPECT_EQ(b.first(0), 0);
      EXPECT_EQ(b.first(processes), ranks);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
  // 7 ranks on 3 processes: 3, 2, 2.
  const RankBlocks b(7, 3);
  EXPECT_EQ(b.count(0), 3);
  EXPECT_EQ(b.first(1), 3);
  EXPECT_EQ(b.first(2), 5);
  EXPECT_EQ(b.owner(6), 2);
}

}  // namespace
}  // namespace cpreplay::replay
