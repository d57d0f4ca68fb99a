// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the trace model: call tree, MPI region classification, names, unification.
#include <gtest/gtest.h>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/preprocess.hpp"

namespace cpreplay {
namespace {

TEST(CallTree, SameRegionUnderDifferentParents_GivesDistinctPaths) {
  CallTree t;
  const CallpathId root = t.find_or_add(CallpathId{}, RegionId{0});
  const CallpathId a = t.find_or_add(root, RegionId{1});
  const CallpathId b = t.find_or_add(root, RegionId{2});
  const CallpathId a_under_b = t.find_or_add(b, RegionId{1});
  EXPECT_EQ(t.find_or_add(root, RegionId{1}), a);  // found again, not added
  EXPECT_NE(a, a_under_b);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.node(a_under_b).parent, b);
  const auto kids = t.children();
  EXPECT_EQ(kids[root.value], (std::vector<std::uint32_t>{a.value, b.value}));
}

TEST(ClassifyMpiRegion, NamesAsScoutClassifiesThem) {
  EXPECT_EQ(classify_mpi_region("sim.c", "MPI_Send"), MpiClass::None);  // not an MPI wrapper
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Init"), MpiClass::Init);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Init_thread"), MpiClass::Init);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Finalize"), MpiClass::Finalize);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Send"), MpiClass::Send);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Ssend"), MpiClass::Send);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Bsend"), MpiClass::OtherSend);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Isend"), MpiClass::OtherSend);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Sendrecv"), MpiClass::SendRecv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Sendrecv_replace"), MpiClass::SendRecv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Recv"), MpiClass::Recv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Wait"), MpiClass::WaitSingle);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitany"), MpiClass::WaitSingle);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitall"), MpiClass::WaitMulti);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitsome"), MpiClass::WaitMulti);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Testall"), MpiClass::Test);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Barrier"), MpiClass::Other);
}

TEST(RoleAndParadigmNames, ArePearlStrings) {
  EXPECT_STREQ(role_name(RegionRole::Point2Point), "point2point");
  EXPECT_STREQ(role_name(RegionRole::Barrier), "barrier");
  EXPECT_STREQ(role_name(RegionRole::Coll1ToN), "one2all");
  EXPECT_STREQ(role_name(RegionRole::CollOther), "other collective");
  EXPECT_STREQ(paradigm_name(Paradigm::Mpi), "mpi");
  EXPECT_STREQ(paradigm_name(Paradigm::Measurement), "measurement");
}

TEST(Clock, SpanUsesTheIntegerDifference) {
  Clock c;
  c.global_offset = 1000;
  c.ticks_per_second = 1'000'000'000;
  EXPECT_DOUBLE_EQ(c.seconds(1000 + 2'500'000'000ULL), 2.5);
  EXPECT_DOUBLE_EQ(c.span(1'000'000'000'123ULL, 1'000'000'000'623ULL), 5e-7);
}

// Rank 0 calls main/{a,b}, rank 1 calls main/{b,c}: the merged tree has main, a, b, c with
// preorder ids, rank 0's nodes first, and both ranks' call path columns are rewritten.
TEST(UnifyCallTrees, TwoRanks_MergedInPreorderAndColumnsRewritten) {
  std::vector<CallTree> trees(2);
  LocalTrace t0, t1;
  const RegionId prog{0}, main{1}, a{2}, b{3}, c{4};
  auto add = [](CallTree& tree, LocalTrace& trace, std::vector<RegionId> path) {
    CallpathId cp;
    for (RegionId r : path) cp = tree.find_or_add(cp, r);
    trace.push(EventKind::Enter, 0, path.back().value);
    trace.callpath.push_back(cp.value);
  };
  add(trees[0], t0, {prog, main, a});
  add(trees[0], t0, {prog, main, b});
  add(trees[1], t1, {prog, main, c});  // rank 1 sees c before b
  add(trees[1], t1, {prog, main, b});
  const CallTree g = replay::unify_call_trees_serial(trees, {&t0, &t1});
  ASSERT_EQ(g.size(), 5u);
  // Preorder: prog, main, a, b, c (siblings in order of first appearance, rank 0 first).
  EXPECT_EQ(g.node(CallpathId{2}).region, a);
  EXPECT_EQ(g.node(CallpathId{3}).region, b);
  EXPECT_EQ(g.node(CallpathId{4}).region, c);
  EXPECT_EQ(t0.callpath, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(t1.callpath, (std::vector<std::uint32_t>{4, 3}));
  for (std::uint32_t i = 1; i < g.size(); ++i)
    EXPECT_LT(g.node(CallpathId{i}).parent.value, i);
}

}  // namespace
}  // namespace cpreplay
