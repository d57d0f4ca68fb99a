// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: long-term delay costs through rooted collectives (issue 30), by hand.
//
// The rule these pin down (docs/root-cause.md, rule 3): the causer's scale for the wait states
// of P(A, X) steps at EVERY individual anchor A_k of the communicator's members, also at the
// A_k of a member that is no synchronization point of this instance (a rank that entered a
// broadcast after its root, a sender of a reduce or gather other than the latest one) and so
// never replies: it adds 0 there, but from that A_k on the running sum of the members attached
// to the earlier A_k counts. Scout builds its scale map from all members' anchors
// (CalculateScales in MpiDelayOps.cpp); cpreplay stepped only at the A_k of members that
// replied, so a rooted collective whose latest anchor belonged to a non-waiting member left
// the earlier members out of the costs from there on.
//
// Each scenario accounts for its waiting exactly (short-term + long-term delays = the waits),
// which the old reading did not: it lost the long-term part charged through the last anchor.
#include <gtest/gtest.h>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";

void barrier_all(TraceWriter& w) {
  for (int r = 0; r < w.ranks(); ++r)
    w.collective(r, "MPI_Barrier", 0.5, 1.5, CollOpT::Barrier, 0, 0);
}

// Late root of a broadcast whose lateness was itself waiting. All ranks: barrier B1 [0.5, 1.5].
// Rank 0 (root): MPI_Recv from 1 [1.5, 2.5] (Late Sender e1, 0.9), MPI_Recv from 3 [2.5, 4.0]
//   (Late Sender e3, 1.4), work0 [4.0, 4.5], MPI_Bcast X [4.5, 5.0].
// Rank 1: feed1 [1.5, 2.4], MPI_Send to 0 [2.4, 2.5], MPI_Bcast [2.5, 5.0]: waits 2.0.
// Rank 2: w2 [1.5, 3.0], MPI_Bcast [3.0, 5.0]: waits 1.5.
// Rank 3: feed3 [1.5, 3.9], MPI_Send to 0 [3.9, 4.0], work3 [4.0, 4.8], MPI_Bcast [4.8, 5.0]:
//   enters after the root, no waiter, no reply.
// The root's anchors walking back from X: e3 covers rank 3 (A_3 = e3), e1 rank 1 (A_1 = e1),
// B1 the rest (A = B1). G = prune(B1, X) = {MPI_Recv 2.5 - 2.3 = 0.2, work0 0.5}, Gw = 2.3;
// G_1 = prune(e1, X) = {MPI_Recv 0.1, work0 0.5}, Gw_1 = 1.4.
// Rank 1: local = prune(its send, X) = {} so d = G_1, dsum 0.6, s_1 = 2.0 / (0.6 + 1.4) = 1.
// Rank 2: local = {w2 1.5}, d = G, dsum 0.7, s_2 = 1.5 / (0.7 + 2.3) = 0.5.
// delay_12n on rank 0: MPI_Recv 1 * 0.1 + 0.5 * 0.2 = 0.2, work0 1 * 0.5 + 0.5 * 0.5 = 0.75.
// Scale of P(B1, X): 0.5 (rank 2) from B1; at e1 still 0.5 (rank 1 is attached to e1); at e3
// 0.5 + 1 = 1.5 (rank 3, attached there, adds 0). Costs (Late Broadcast): e1 0.5 * 0.9 = 0.45,
// e3 1.5 * 1.4 = 2.1 (the old reading: 0.5 * 1.4 = 0.7).
// e3's delay on rank 3: D = {feed3 2.4}, U = {MPI_Recv 0.1}, sigma = 1.4 / 2.4, rho = 2.1 / 2.4:
// delay_latesender feed3 = 1.4, delay_12n_longterm feed3 = 2.1. e1's on rank 1: D = {feed1
// 0.9}, sigma = 1, rho = 0.45 / 0.9: delay_latesender feed1 = 0.9, delay_12n_longterm = 0.45.
// Waiting 0.9 + 1.4 + 2.0 + 1.5 = 5.8 = 2.3 + 0.95 + 2.55.
TEST(RootCauseRooted, LateBroadcastRootThatWaited_LongTermThroughEveryAnchor) {
  TempDir dir;
  TraceWriter w(4);
  scenario::open_all(w);
  barrier_all(w);
  w.recv(0, 1.5, 2.5, 1, 0, 64);
  w.recv(0, 2.5, 4.0, 3, 0, 64);
  w.region(0, "work0", 4.0, 4.5);
  w.collective(0, "MPI_Bcast", 4.5, 5.0, CollOpT::Bcast, 64, 0, 0, 0);
  w.region(1, "feed1", 1.5, 2.4);
  w.send(1, 2.4, 2.5, 0, 0, 64);
  w.collective(1, "MPI_Bcast", 2.5, 5.0, CollOpT::Bcast, 0, 64, 0, 0);
  w.region(2, "w2", 1.5, 3.0);
  w.collective(2, "MPI_Bcast", 3.0, 5.0, CollOpT::Bcast, 0, 64, 0, 0);
  w.region(3, "feed3", 1.5, 3.9);
  w.send(3, 3.9, 4.0, 0, 0, 64);
  w.region(3, "work3", 4.0, 4.8);
  w.collective(3, "MPI_Bcast", 4.8, 5.0, CollOpT::Bcast, 0, 64, 0, 0);
  scenario::close_all(w, 5.5);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--window", "1"}}) {
    const CubeFile cube = scenario::analyze(w, dir, extra);
    const std::string bcast = kMain + "/MPI_Bcast";
    EXPECT_NEAR(at(cube, "mpi_latebroadcast", bcast, 1), 2.0, kTol);
    EXPECT_NEAR(at(cube, "mpi_latebroadcast", bcast, 2), 1.5, kTol);
    EXPECT_EQ(at(cube, "mpi_latebroadcast", bcast, 3), 0.0);
    EXPECT_NEAR(at(cube, "delay_12n", kMain + "/MPI_Recv", 0), 0.2, kTol);
    EXPECT_NEAR(at(cube, "delay_12n", kMain + "/work0", 0), 0.75, kTol);
    EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/feed3", 3), 1.4, kTol);
    EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/feed1", 1), 0.9, kTol);
    EXPECT_NEAR(at(cube, "delay_12n_longterm", kMain + "/feed3", 3), 2.1, kTol);
    EXPECT_NEAR(at(cube, "delay_12n_longterm", kMain + "/feed1", 1), 0.45, kTol);
    EXPECT_NEAR(scenario::total(cube, "delay_12n_longterm"), 2.55, kTol);
    EXPECT_NEAR(scenario::total(cube, "delay"), 5.8, kTol);
  }
}

// A late contributor to a reduce, on `comm` (members root, L, M, O from world rank `off` on).
// The latest sender L waited twice before it (Late Sender from the root, then from the member M
// that never replies); the fourth member O, another sender, is covered only by the barrier (so
// the root's anchor is an individual one, not A). With `off` = 1, world and comm-local ranks
// differ.
// B1 (world) [0.5, 1.5]. Root: pre [1.5, 2.0], MPI_Send to L [2.0, 2.1], the collective
//   [2.1, 4.5]: Early Reduce 4.0 - 2.1 = 1.9.
// L: MPI_Recv from the root [1.5, 2.1] (e_R, 0.5), MPI_Recv from M [2.1, 3.1] (e_M, 0.9),
//   workL [3.1, 4.0], the collective [4.0, 4.5].
// M: feedM [1.5, 3.0], MPI_Send to L [3.0, 3.1], wM [3.1, 3.8], the collective [3.8, 3.9].
// O: wO [1.5, 3.5], the collective [3.5, 3.6].
// L's anchors: e_M (M), e_R (the root), B1 (O, so A = B1). G = {MPI_Recv 1.6 - 1.4 = 0.2, workL 0.9}, Gw =
// 1.4; G_root = prune(e_R, X) = {MPI_Recv 0.1, workL 0.9}, Gw_root = 0.9. The root: local =
// prune(its send, X) = {}, d = G_root, dsum 1.0, s = 1.9 / (1.0 + 0.9) = 1.
// delay_n21 on L: MPI_Recv 0.1, workL 0.9. Scale of P(B1, X): 0 (no member without an anchor
// replies: O is no synchronization point) until e_R, still 0 at e_R, 1 at e_M: costs e_R 0, e_M 1 * 0.9 = 0.9 (old: 0).
// e_M's delay on M: D = {feedM 1.5}, sigma = 0.9 / 1.5, rho = 0.9 / 1.5: delay_latesender
// feedM = 0.9, delay_n21_longterm feedM = 0.9. e_R's on the root: D = {pre 0.5}: 0.5, no cost.
// Waiting 0.5 + 0.9 + 1.9 = 3.3 = 1.4 + 1.0 + 0.9.
void late_contributor(TraceWriter& w, int comm, int off, const std::string& call, CollOpT op) {
  const int root = off, latest = off + 1, m = off + 2, o = off + 3;
  scenario::open_all(w);
  barrier_all(w);
  w.region(root, "pre", 1.5, 2.0);
  w.send(root, 2.0, 2.1, latest, 0, 64);
  w.collective(root, call, 2.1, 4.5, op, 8, 32, comm, 0);
  w.recv(latest, 1.5, 2.1, root, 0, 64);
  w.recv(latest, 2.1, 3.1, m, 0, 64);
  w.region(latest, "workL", 3.1, 4.0);
  w.collective(latest, call, 4.0, 4.5, op, 8, 0, comm, 0);
  w.region(m, "feedM", 1.5, 3.0);
  w.send(m, 3.0, 3.1, latest, 0, 64);
  w.region(m, "wM", 3.1, 3.8);
  w.collective(m, call, 3.8, 3.9, op, 8, 0, comm, 0);
  w.region(o, "wO", 1.5, 3.5);
  w.collective(o, call, 3.5, 3.6, op, 8, 0, comm, 0);
  for (int r = 0; r < w.ranks(); ++r)
    if (r < off || r > o) w.region(r, "other", 1.5, 4.5);
  scenario::close_all(w, 5.0);
}

void expect_late_contributor(const CubeFile& cube, int off, const std::string& call) {
  const int root = off, latest = off + 1, m = off + 2;
  EXPECT_NEAR(at(cube, "mpi_earlyreduce", kMain + "/" + call, root), 1.9, kTol);
  EXPECT_NEAR(at(cube, "delay_n21", kMain + "/MPI_Recv", latest), 0.1, kTol);
  EXPECT_NEAR(at(cube, "delay_n21", kMain + "/workL", latest), 0.9, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/feedM", m), 0.9, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/pre", root), 0.5, kTol);
  EXPECT_NEAR(at(cube, "delay_n21_longterm", kMain + "/feedM", m), 0.9, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay_n21_longterm"), 0.9, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay"), 3.3, kTol);
}

TEST(RootCauseRooted, LateContributorToReduce_LongTermThroughTheNonReplyingSender) {
  TempDir dir;
  TraceWriter w(4);
  late_contributor(w, w.world(), 0, "MPI_Reduce", CollOpT::Reduce);
  expect_late_contributor(scenario::analyze(w, dir), 0, "MPI_Reduce");
  expect_late_contributor(scenario::analyze(w, dir, {"--window", "1"}), 0, "MPI_Reduce");
}

// The same on a sub-communicator {1, 2, 3, 4} of 5 ranks (comm-local root 0 = world rank 1), as
// MPI_Gather; world rank 0 computes meanwhile.
TEST(RootCauseRooted, GatherOnSplitCommunicator_LongTermThroughTheNonReplyingSender) {
  TempDir dir;
  TraceWriter w(5);
  const int sub = w.add_comm({1, 2, 3, 4}, "split");
  late_contributor(w, sub, 1, "MPI_Gather", CollOpT::Gather);
  expect_late_contributor(scenario::analyze(w, dir), 1, "MPI_Gather");
  expect_late_contributor(scenario::analyze(w, dir, {"--window", "1"}), 1, "MPI_Gather");
}

}  // namespace
}  // namespace cpreplay::testing
