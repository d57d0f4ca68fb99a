// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the summary's compact rank lists ("ranks 2 and 5", "ranks 0-3").
#include <gtest/gtest.h>

#include "analysis/summary.hpp"

namespace cpreplay::analysis {
namespace {

TEST(RankList, OneRank_Singular) { EXPECT_EQ(rank_list({4}), "rank 4"); }

TEST(RankList, TwoRanks_JoinedWithAnd) {
  EXPECT_EQ(rank_list({5, 2}), "ranks 2 and 5");
  EXPECT_EQ(rank_list({1, 2}), "ranks 1 and 2");  // a run of two is not a range
}

TEST(RankList, RunOfThreeOrMore_Range) {
  EXPECT_EQ(rank_list({3, 0, 2, 1}), "ranks 0-3");
  EXPECT_EQ(rank_list({9, 0, 1, 2, 6}), "ranks 0-2, 6 and 9");
  EXPECT_EQ(rank_list({1, 3, 5, 6, 7}), "ranks 1, 3 and 5-7");
}

}  // namespace
}  // namespace cpreplay::analysis
