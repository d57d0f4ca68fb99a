// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: delay costs and wait-state classes on hand-computed scenarios
// (scalasca-metrics.md §8; the cases the spec leaves open are decided as docs/root-cause.md says).
#include <gtest/gtest.h>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";

// The 3-rank chain of scalasca-metrics.md §8.6, 0.5 s later (MPI_Init [0, 0.5] is pruned away:
// only its completion time, 0, would remain).
// Rank 0: foo [0.5, 4.5], MPI_Send to 1 [4.5, 4.6].
// Rank 1: bar [0.5, 1.5], MPI_Recv [1.5, 4.5] (Late Sender 3), baz [4.5, 5], MPI_Send to 2.
// Rank 2: qux [0.5, 2.5], MPI_Recv [2.5, 5.1] (Late Sender 2.5).
// Rank 2's wait first: D = {bar 1, baz 0.5}, W = 3, sigma = 2.5 / 4.5 = 5/9, so
// delay_latesender bar@1 = 5/9, baz@1 = 5/18; indirect on rank 2 = 5/9 * 3 = 5/3, which is
// also rank 1's propagating wait and its Late Sender cost. Rank 1's wait: D = {foo 4},
// sigma = 3/4, so foo@0 = 3, and rho = (5/3) / 4 gives the long-term foo@0 = 5/3.
// Every second of waiting is accounted for: 3 + 5/9 + 5/18 + 5/3 = 5.5 = 3 + 2.5.
TEST(RootCause, LateSenderChain_ShortLongTermIndirectPropagating) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "foo", 0.5, 4.5);
  w.send(0, 4.5, 4.6, 1, 0, 64);
  w.region(1, "bar", 0.5, 1.5);
  w.recv(1, 1.5, 4.5, 0, 0, 64);
  w.region(1, "baz", 4.5, 5.0);
  w.send(1, 5.0, 5.1, 2, 0, 64);
  w.region(2, "qux", 0.5, 2.5);
  w.recv(2, 2.5, 5.1, 1, 0, 64);
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string recv = kMain + "/MPI_Recv";
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/foo", 0), 3.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/bar", 1), 5.0 / 9.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/baz", 1), 5.0 / 18.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender_longterm", kMain + "/foo", 0), 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_indirect_latesender", recv, 2), 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_direct_latesender", recv, 2), 2.5 - 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_propagating_ls", recv, 1), 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_terminal_ls", recv, 1), 3.0 - 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_terminal_ls", recv, 2), 2.5, kTol);
  // The metric tree: every parent holds its children.
  EXPECT_NEAR(at(cube, "delay_latesender_aggregate", kMain + "/foo", 0), 3.0 + 5.0 / 3.0, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay"), 5.5, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay_p2p"), 5.5, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay_collective"), 0.0, kTol);
  EXPECT_NEAR(scenario::total(cube, "mpi_wait_indirect"), 5.0 / 3.0, kTol);
}

// A barrier whose causer (rank 2) synchronized with rank 1 between the previous barrier B1 and
// this one X, through a Late Sender, gives rank 1 an individual A_1 (§8.4 step 1): the "lag"
// case the spec leaves open.
// All ranks: MPI_Barrier B1 [0.5, 1.5]. Rank 0: work0 [1.5, 3.5], X from 3.5 (waits 5).
// Rank 1: work1 [1.5, 4.5], MPI_Send to 2 [4.5, 4.6], X from 4.6 (waits 3.9).
// Rank 2: MPI_Recv from 1 [1.5, 4.7] (Late Sender e, 3), work2 [4.7, 8.5], X from 8.5.
// X ends at 9 everywhere.
// G = prune(B1, X) on rank 2 = {MPI_Recv 0.2, work2 3.8}, Gw = 3. G_1 = prune(e, X) =
// {MPI_Recv 0.1, work2 3.8} (e's completion 4.7 - 4.6 remains), Gw_1 = 0.
// Rank 0: d = G (work0 is another call path), s_0 = 5 / (4 + 3) = 5/7. Rank 1: its own interval
// since its send adds nothing, d = G_1, s_1 = 3.9 / 3.9 = 1.
// delay_barrier on rank 2: MPI_Recv 0.2 * 5/7 + 0.1, work2 3.8 * 5/7 + 3.8.
// Decision (scout's CalculateScales, read from its source): the scale a wait state of P(A, X)
// gets at or after A_k leaves out the ranks attached to that A_k: e's barrier cost is
// 5/7 * 3 = 15/7, not (5/7 + 1) * 3. It reaches rank 1 with e's Late Sender: D = {work1 3},
// sigma = 1, rho = (15/7) / 3, so delay_barrier_longterm work1@1 = 15/7. With this rule the
// barrier's 8.9 s of waiting are accounted for exactly (6.757 short-term + 2.143 long-term);
// the other reading would account for 11.9 s.
TEST(RootCause, BarrierWithIndividualAnchor_LagLeavesOutTheAnchoredRank) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  for (int r = 0; r < 3; ++r)
    w.collective(r, "MPI_Barrier", 0.5, 1.5, CollOpT::Barrier, 0, 0);
  w.region(0, "work0", 1.5, 3.5);
  w.collective(0, "MPI_Barrier", 3.5, 9.0, CollOpT::Barrier, 0, 0);
  w.region(1, "work1", 1.5, 4.5);
  w.send(1, 4.5, 4.6, 2, 0, 64);
  w.collective(1, "MPI_Barrier", 4.6, 9.0, CollOpT::Barrier, 0, 0);
  w.recv(2, 1.5, 4.7, 1, 0, 64);
  w.region(2, "work2", 4.7, 8.5);
  w.collective(2, "MPI_Barrier", 8.5, 9.0, CollOpT::Barrier, 0, 0);
  scenario::close_all(w, 9.5);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_barrier_wait", kMain + "/MPI_Barrier", 0), 5.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_barrier_wait", kMain + "/MPI_Barrier", 1), 3.9, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier", kMain + "/MPI_Recv", 2), 0.2 * 5.0 / 7.0 + 0.1, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier", kMain + "/work2", 2), 3.8 * 5.0 / 7.0 + 3.8, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", kMain + "/work1", 1), 3.0, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier_longterm", kMain + "/work1", 1), 15.0 / 7.0, kTol);
  EXPECT_NEAR(scenario::total(cube, "delay_barrier_aggregate"), 8.9, kTol);
}

// Late Receiver in MPI_Waitall, which the spec leaves open (§12): rank 0 posts MPI_Isend to
// rank 1 [0.5, 0.6] and to rank 2 [0.6, 0.7], computes comp [0.7, 1], and completes both in
// MPI_Waitall [1, 6]. Both receivers compute until 4 and enter MPI_Recv there: the two idle
// times tie at 4 - 1 = 3. Decision (scout: it visits the sends backwards and replaces its
// maximum only when strictly larger): the latest MPI_Isend of the call carries the instance, so
// the delay lands on rank 2, not rank 1: U = {MPI_Isend 0.2, comp 0.3}, D = {work2 3.5},
// sigma = 3 / 3.5, delay_latereceiver work2@2 = 3.
TEST(RootCause, LateReceiverTieInWaitall_LatestSendCarriesIt) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  for (int dest = 1; dest <= 2; ++dest) {
    const double t = 0.4 + 0.1 * dest;
    w.enter(0, t, "MPI_Isend");
    w.mpi_isend(0, t, dest, 0, 64, dest);
    w.leave(0, t + 0.1, "MPI_Isend");
  }
  w.region(0, "comp", 0.7, 1.0);
  w.enter(0, 1.0, "MPI_Waitall");
  w.mpi_isend_complete(0, 6.0, 1);
  w.mpi_isend_complete(0, 6.0, 2);
  w.leave(0, 6.0, "MPI_Waitall");
  w.region(1, "work1", 0.5, 4.0);
  w.recv(1, 4.0, 6.1, 0, 0, 64);
  w.region(2, "work2", 0.5, 4.0);
  w.recv(2, 4.0, 6.1, 0, 0, 64);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_latereceiver", kMain + "/MPI_Waitall", 0), 3.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latereceiver", kMain + "/work2", 2), 3.0, kTol);
  EXPECT_EQ(at(cube, "delay_latereceiver", kMain + "/work1", 1), 0.0);
  EXPECT_NEAR(scenario::total(cube, "delay_latereceiver"), 3.0, kTol);
}

// A trace whose clocks make the backward dependencies circular, which no real run can produce:
// a ring of 3 ranks where each receives from its left neighbour and then sends to its right one,
// every receive completing before the matching send begins (a Late Sender of 1 s on each rank).
// The critical path's hops go round the ring for ever, and the root causes' reverse records
// would wait on each other. Decided: the run stops with one error line naming the rank and
// event where the path comes back, exit code 1, and no report (a silently partial critical
// path would be a wrong answer).
// Rank r: MPI_Recv from r-1 [0.5, 1.5], MPI_Send to r+1 [2, 2.1].
TEST(RootCause, CircularDependenciesFromBrokenClocks_OneErrorLineNoReport) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  for (int r = 0; r < 3; ++r) {
    w.recv(r, 0.5, 1.5, (r + 2) % 3, 0, 64);
    w.send(r, 2.0, 2.1, (r + 1) % 3, 0, 64);
  }
  scenario::close_all(w, 3.0);
  w.write(dir / "t");
  const std::string report = dir / "t.cubex";
  const RunResult run = run_cpreplay(3, {"-q", "-o", report, dir / "t/traces.otf2"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  // Exactly one error line (the launcher may add its own note about the exit code).
  std::size_t errors = 0, pos = 0;
  while ((pos = run.err.find("cpreplay: error: ", pos)) != std::string::npos) {
    ++errors;
    ++pos;
  }
  EXPECT_EQ(errors, 1u) << run.err;
  EXPECT_NE(run.err.find("rank 0, event "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("form a cycle"), std::string::npos) << run.err;
  EXPECT_FALSE(file_exists(report));
}

}  // namespace
}  // namespace cpreplay::testing

namespace cpreplay::testing {
namespace {

// --no-rootcause: the wait states stay, the delay costs and classes stay empty (Scalasca's
// option of the same name). Rank 1 waits 2 s for rank 0's `work` in MPI_Recv.
TEST(RootCause, NoRootcauseOption_KeepsWaitStatesLeavesDelaysEmpty) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 3.0);
  w.send(0, 3.0, 3.1, 1, 0, 64);
  w.recv(1, 1.0, 3.2, 0, 0, 64);
  scenario::close_all(w, 4.0);
  const CubeFile with = scenario::analyze(w, dir, {}, "with");
  EXPECT_NEAR(at(with, "delay_latesender", kMain + "/work", 0), 2.0, kTol);
  const CubeFile without = scenario::analyze(w, dir, {"--no-rootcause"}, "without");
  EXPECT_NEAR(at(without, "mpi_latesender", kMain + "/MPI_Recv", 1), 2.0, kTol);
  EXPECT_EQ(scenario::total(without, "delay"), 0.0);
  EXPECT_EQ(scenario::total(without, "mpi_wait_indirect"), 0.0);
  EXPECT_EQ(scenario::total(without, "mpi_wait_propagating"), 0.0);
}

}  // namespace
}  // namespace cpreplay::testing

