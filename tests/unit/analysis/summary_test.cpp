// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the summary's compact rank lists ("ranks 2 and 5", "ranks 0-3") and of its
// call-path names.
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

// callpath_names builds every name once from regions demangled once: each must read as
// callpath_name reads it, whatever order the call paths were created in.
TEST(CallpathNames, EveryCallPath_AsCallpathName) {
  Definitions defs;
  for (const char* name : {"main", "_ZN3foo3barEv", "MPI_Send", "_ZN3foo3bazEi"}) {
    Region r;
    r.name = name;
    defs.regions.push_back(r);
  }
  CallTree tree;
  const CallpathId root = tree.find_or_add(CallpathId{}, RegionId{0});
  const CallpathId bar = tree.find_or_add(root, RegionId{1});
  const CallpathId baz = tree.find_or_add(bar, RegionId{3});
  tree.find_or_add(baz, RegionId{2});
  tree.find_or_add(root, RegionId{2});
  tree.find_or_add(bar, RegionId{2});
  const std::vector<std::string> names = callpath_names(defs, tree);
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "main");
  EXPECT_EQ(names[1], "main/foo::bar()");
  EXPECT_EQ(names[2], "main/foo::bar()/foo::baz(int)");
  EXPECT_EQ(names[3], "main/foo::bar()/foo::baz(int)/MPI_Send");
  EXPECT_EQ(names[4], "main/MPI_Send");
  EXPECT_EQ(names[5], "main/foo::bar()/MPI_Send");
  for (std::uint32_t c = 0; c < names.size(); ++c)
    EXPECT_EQ(names[c], callpath_name(defs, tree, c)) << "call path " << c;
}

}  // namespace
}  // namespace cpreplay::analysis
