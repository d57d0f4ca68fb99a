// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: hand-drawn timelines whose critical path and performance-impact indicators are
// computed by hand from scalasca-metrics.md §7, analyzed by `mpirun cpreplay`, read back.
//
// Conventions of every timeline below (unless a test says otherwise): each rank has ProgramBegin
// and `main` entered at 0, MPI_Init [0,1] inside main, and main/ProgramEnd at its Finalize leave,
// so main itself has no exclusive time. A region written `foo [a,b]` is sim.exe/main/foo.
// "cut" is the Enter of the MPI call holding a synchpoint (§7.2); the path starts at the latest
// MPI_Finalize Enter and ends at the final owner's MPI_Init Enter (§7.3).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/cube_reader.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

constexpr double kTol = 1e-9;

/// One expected value: metric at call path on rank.
struct Cell {
  std::string path;
  int rank;
  double value;
};

void begin_rank(TraceWriter& w, int r) {
  w.program_begin(r, 0.0);
  w.enter(r, 0.0, "main");
  w.init(r, 0.0, 1.0);
}

void end_rank(TraceWriter& w, int r, double finalize_enter, double finalize_leave) {
  w.finalize(r, finalize_enter, finalize_leave);
  w.leave(r, finalize_leave, "main");
  w.program_end(r, finalize_leave);
}

/// Writes the trace, runs cpreplay with one rank per traced rank and reads the report back.
CubeFile analyze(const TraceWriter& w, const TempDir& dir) {
  w.write(dir / "t");
  const RunResult run =
      run_cpreplay(w.ranks(), {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return read_cube(dir / "r.cubex");
}

/// The metric is `cells` at those (call path, rank) pairs and 0 (|v| <= kTol) everywhere else.
void expect_only(const CubeFile& cube, const std::string& metric, const std::vector<Cell>& cells) {
  for (const Cell& c : cells) {
    EXPECT_NEAR(cube.value(metric, c.path, c.rank), c.value, kTol)
        << metric << " at " << c.path << " on rank " << c.rank;
  }
  const auto m = cube.values.find(metric);
  if (m == cube.values.end()) return;
  for (const auto& [path, row] : m->second) {
    for (std::size_t r = 0; r < row.size(); ++r) {
      bool listed = false;
      for (const Cell& c : cells) listed |= c.path == path && c.rank == static_cast<int>(r);
      if (!listed) {
        EXPECT_NEAR(row[r], 0.0, kTol) << metric << " at " << path << " on rank " << r
                                       << " should be 0";
      }
    }
  }
}

double total(const CubeFile& cube, const std::string& metric) {
  double sum = 0.0;
  const auto m = cube.values.find(metric);
  if (m == cube.values.end()) return 0.0;
  for (const auto& [path, row] : m->second)
    for (double v : row) sum += v;
  return sum;
}

// The §7.3 example, with main as the root region under sim.exe:
//   rank 0: Init [0,1], foo [1,5], MPI_Send [5,5.1] -> 1, (main 5.1..6), Finalize [6,9]
//   rank 1: Init [0,1], bar [1,2], MPI_Recv [2,5.2] <- 0, baz [5.2,8], Finalize [8,9]
// LS on rank 1 = 5 - 2 = 3; rank 0's finalize wait = 8 - 6 = 2.
// Path: starts on rank 1 (latest Finalize enter, 8). LS receive (cut 2): runtime(2,8) =
// {Recv 3.2, baz 2.8}, Recv loses min(3, 3.2) = 3 -> rank 1 {Recv 0.2, baz 2.8}. Rank 0 from its
// send (cut 5) back to Init: {Init 1, foo 4}. Length 8 = 8 - 0.
// §7.6: lt0 = {Init 1, foo 4, Send 0.1, main 0.9, Finalize 1} (sum 7), lt1 = {Init 1, bar 1,
// Recv 0.2, baz 2.8, Finalize 1} (sum 6). gcp = {Init 1, foo 4, Recv 0.2, baz 2.8}.
//   impact: rank 0 waits 8-7 = 1 over ex {Recv 0.2, baz 2.8} (alpha 1/3), rank 1 waits 8-6 = 2
//   over ex {foo 4} (alpha 1/2): g = {Recv 0.2/3, baz 2.8/3, foo 2}, all owned by one rank each.
//   inter: hr0 = {Recv 0.2, baz 2.8}, lplen0 = 1+4+0.1+0.9+1 = 7, f0 = 1/3; hr1 = {foo 4},
//   lplen1 = 6, f1 = 1/2 -> same values, so intra = 0.
//   activities (gcp > 0): rank 0 {Init 1, foo 4}, rank 1 {Init 1, Recv 0.2, baz 2.8};
//   non-CP: rank 0 {Send 0.1, main 0.9, Finalize 1}, rank 1 {bar 1, Finalize 1}.
// §7.7 (N = 2): foo (4 - 4/2)/4 * 4 = 2; baz (2.8 - 1.4)/2.8 * 2.8 = 1.4;
//   Recv (0.2 - (3.2-3)/2)/0.2 * 0.2 = 0.1; Init (1 - 2/2) = 0.
TEST(CriticalPath, TwoRankExample_Section73_ProfileImpactAndImbalance) {
  TempDir dir;
  TraceWriter w(2);
  begin_rank(w, 0);
  w.region(0, "foo", 1.0, 5.0);
  w.send(0, 5.0, 5.1, 1, 0, 64);
  end_rank(w, 0, 6.0, 9.0);
  begin_rank(w, 1);
  w.region(1, "bar", 1.0, 2.0);
  w.recv(1, 2.0, 5.2, 0, 0, 64);
  w.region(1, "baz", 5.2, 8.0);
  end_rank(w, 1, 8.0, 9.0);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_latesender", p + "MPI_Recv", 1), 3.0, kTol);
  EXPECT_NEAR(cube.value("mpi_finalize_wait", p + "MPI_Finalize", 0), 2.0, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Init", 0, 1.0}, {p + "foo", 0, 4.0},
               {p + "MPI_Recv", 1, 0.2}, {p + "baz", 1, 2.8}});
  EXPECT_NEAR(total(cube, "critical_path"), 8.0, kTol);
  expect_only(cube, "critical_imbalance_impact",
              {{p + "foo", 0, 2.0}, {p + "MPI_Recv", 1, 0.2 / 3}, {p + "baz", 1, 2.8 / 3}});
  EXPECT_NEAR(total(cube, "critical_imbalance_impact"), 3.0, kTol);  // = total waiting
  expect_only(cube, "inter_partition_imbalance",
              {{p + "foo", 0, 2.0}, {p + "MPI_Recv", 1, 0.2 / 3}, {p + "baz", 1, 2.8 / 3}});
  expect_only(cube, "intra_partition_imbalance", {});
  expect_only(cube, "critical_path_imbalance",
              {{p + "foo", 0, 2.0}, {p + "baz", 1, 1.4}, {p + "MPI_Recv", 1, 0.1}});
  expect_only(cube, "critical_path_activities",
              {{p + "MPI_Init", 0, 1.0}, {p + "foo", 0, 4.0},
               {p + "MPI_Init", 1, 1.0}, {p + "MPI_Recv", 1, 0.2}, {p + "baz", 1, 2.8}});
  expect_only(cube, "non_critical_path_activities",
              {{p + "MPI_Send", 0, 0.1}, {"sim.exe/main", 0, 0.9}, {p + "MPI_Finalize", 0, 1.0},
               {p + "bar", 1, 1.0}, {p + "MPI_Finalize", 1, 1.0}});
}

// §8.6's chain, shifted by MPI_Init [0,1], with a tail on rank 2 so that it enters Finalize last:
//   rank 0: foo [1,5], MPI_Send [5,5.1] -> 1, Finalize [5.1,7]
//   rank 1: bar [1,2], MPI_Recv [2,5.2] <- 0 (LS 3), baz [5.2,5.7], MPI_Send [5.7,5.8] -> 2,
//           Finalize [5.8,7]
//   rank 2: qux [1,3], MPI_Recv [3,6] <- 1 (LS 5.7-3 = 2.7), quux [6,6.5], Finalize [6.5,7]
// Path: rank 2 from 6.5 back to its LS receive (cut 3): {Recv 3 - 2.7 = 0.3, quux 0.5}; rank 1
// from its send (cut 5.7) back to its LS receive (cut 2): {Recv 3.2 - 3 = 0.2, baz 0.5}; rank 0
// from its send (cut 5) back to Init: {Init 1, foo 4}. Length 6.5 = 6.5 - 0. bar and qux, done
// while waiting for nobody, are off the path.
TEST(CriticalPath, LateSenderChainThreeRanks_PathFollowsTheSends) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "foo", 1.0, 5.0);
  w.send(0, 5.0, 5.1, 1, 0, 64);
  end_rank(w, 0, 5.1, 7.0);
  w.region(1, "bar", 1.0, 2.0);
  w.recv(1, 2.0, 5.2, 0, 0, 64);
  w.region(1, "baz", 5.2, 5.7);
  w.send(1, 5.7, 5.8, 2, 0, 64);
  end_rank(w, 1, 5.8, 7.0);
  w.region(2, "qux", 1.0, 3.0);
  w.recv(2, 3.0, 6.0, 1, 0, 64);
  w.region(2, "quux", 6.0, 6.5);
  end_rank(w, 2, 6.5, 7.0);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_latesender", p + "MPI_Recv", 1), 3.0, kTol);
  EXPECT_NEAR(cube.value("mpi_latesender", p + "MPI_Recv", 2), 2.7, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Init", 0, 1.0}, {p + "foo", 0, 4.0},
               {p + "MPI_Recv", 1, 0.2}, {p + "baz", 1, 0.5},
               {p + "MPI_Recv", 2, 0.3}, {p + "quux", 2, 0.5}});
  EXPECT_NEAR(total(cube, "critical_path"), 6.5, kTol);
}

// Late Receiver: a synchronous send waits for the receiver to post.
//   rank 0: foo [1,2], MPI_Ssend [2,5] -> 1, baz [5,8], Finalize [8,8.5]
//   rank 1: bar [1,4], MPI_Recv [4,5] <- 0, qux [5,6], Finalize [6,8.5]
// LR = eq - ec = 4 - 2 = 2 on rank 0's MPI_Ssend (§5.3); no Late Sender (the send came first).
// Path: rank 0 (Finalize enter 8) back to the LR completion (cut 2): {Ssend 3 - 2 = 1, baz 3};
// ownership goes to the receiver with end = its receive request (cut = MPI_Recv enter, 4):
// rank 1 {Init 1, bar 3}. Length 8.
TEST(CriticalPath, LateReceiverSsend_OwnershipPassesToTheReceiver) {
  TempDir dir;
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) begin_rank(w, r);
  w.region(0, "foo", 1.0, 2.0);
  w.send(0, 2.0, 5.0, 1, 0, 64, w.world(), "MPI_Ssend");
  w.region(0, "baz", 5.0, 8.0);
  end_rank(w, 0, 8.0, 8.5);
  w.region(1, "bar", 1.0, 4.0);
  w.recv(1, 4.0, 5.0, 0, 0, 64);
  w.region(1, "qux", 5.0, 6.0);
  end_rank(w, 1, 6.0, 8.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_latereceiver", p + "MPI_Ssend", 0), 2.0, kTol);
  EXPECT_EQ(cube.value("mpi_latesender", p + "MPI_Recv", 1), 0.0);
  expect_only(cube, "critical_path",
              {{p + "MPI_Ssend", 0, 1.0}, {p + "baz", 0, 3.0},
               {p + "MPI_Init", 1, 1.0}, {p + "bar", 1, 3.0}});
  EXPECT_NEAR(total(cube, "critical_path"), 8.0, kTol);
}

// Barrier: the waiting owner hands the path to the last rank to enter.
//   rank 0: work [1,3], MPI_Barrier [3,5.5], post [5.5,9], Finalize [9,9.5]
//   rank 1: work [1,5], MPI_Barrier [5,5.5], Finalize [5.5,9.5]
//   rank 2: work [1,2], MPI_Barrier [2,5.5], post [5.5,7], Finalize [7,9.5]
// Barrier waits 2, 0, 3 (latest: rank 1 at 5). Path: rank 0 from 9 back to the barrier (cut 3):
// {Barrier 2.5 - 2 = 0.5, post 3.5}; rank 1 from its barrier (cut 5) to Init: {Init 1, work 4}.
// Rank 2, which waited longer than rank 0, is off the path. Length 9.
TEST(CriticalPath, BarrierWait_OwnershipPassesToTheLastToEnter) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "work", 1.0, 3.0);
  w.collective(0, "MPI_Barrier", 3.0, 5.5, CollOpT::Barrier, 0, 0);
  w.region(0, "post", 5.5, 9.0);
  end_rank(w, 0, 9.0, 9.5);
  w.region(1, "work", 1.0, 5.0);
  w.collective(1, "MPI_Barrier", 5.0, 5.5, CollOpT::Barrier, 0, 0);
  end_rank(w, 1, 5.5, 9.5);
  w.region(2, "work", 1.0, 2.0);
  w.collective(2, "MPI_Barrier", 2.0, 5.5, CollOpT::Barrier, 0, 0);
  w.region(2, "post", 5.5, 7.0);
  end_rank(w, 2, 7.0, 9.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_barrier_wait", p + "MPI_Barrier", 0), 2.0, kTol);
  EXPECT_NEAR(cube.value("mpi_barrier_wait", p + "MPI_Barrier", 2), 3.0, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Barrier", 0, 0.5}, {p + "post", 0, 3.5},
               {p + "MPI_Init", 1, 1.0}, {p + "work", 1, 4.0}});
  EXPECT_NEAR(total(cube, "critical_path"), 9.0, kTol);
}

// Allreduce (N x N, full overlap: earliest end 6.2 > latest begin 6): to the last to enter.
//   rank 0: work [1,3], MPI_Allreduce [3,6.2], Finalize [6.2,9.5]
//   rank 1: work [1,2], MPI_Allreduce [2,6.2], post [6.2,9], Finalize [9,9.5]
//   rank 2: work [1,6], MPI_Allreduce [6,6.2], Finalize [6.2,9.5]
// N x N waits 3, 4, 0. Path: rank 1 from 9 back to the Allreduce (cut 2):
// {Allreduce 4.2 - 4 = 0.2, post 2.8}; rank 2 from its Allreduce (cut 6): {Init 1, work 5}.
// Length 9.
TEST(CriticalPath, AllreduceWait_OwnershipPassesToTheLastToEnter) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "work", 1.0, 3.0);
  w.collective(0, "MPI_Allreduce", 3.0, 6.2, CollOpT::Allreduce, 8, 8);
  end_rank(w, 0, 6.2, 9.5);
  w.region(1, "work", 1.0, 2.0);
  w.collective(1, "MPI_Allreduce", 2.0, 6.2, CollOpT::Allreduce, 8, 8);
  w.region(1, "post", 6.2, 9.0);
  end_rank(w, 1, 9.0, 9.5);
  w.region(2, "work", 1.0, 6.0);
  w.collective(2, "MPI_Allreduce", 6.0, 6.2, CollOpT::Allreduce, 8, 8);
  end_rank(w, 2, 6.2, 9.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_wait_nxn", p + "MPI_Allreduce", 1), 4.0, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Allreduce", 1, 0.2}, {p + "post", 1, 2.8},
               {p + "MPI_Init", 2, 1.0}, {p + "work", 2, 5.0}});
  EXPECT_NEAR(total(cube, "critical_path"), 9.0, kTol);
}

// Bcast (1 -> N, root 0): a non-root that waited hands the path to the root, not to the latest.
//   rank 0 (root): work [1,4], MPI_Bcast [4,4.5], post [4.5,5], Finalize [5,8.5]
//   rank 1: work [1,2], MPI_Bcast [2,4.6], post [4.6,8], Finalize [8,8.5]
//   rank 2: work [1,5], MPI_Bcast [5,5.2], post [5.2,6], Finalize [6,8.5]
// Late broadcast on rank 1 = min(4, 4.6) - 2 = 2; rank 2 entered after the root: no wait.
// Path: rank 1 from 8 back to its Bcast (cut 2): {Bcast 2.6 - 2 = 0.6, post 3.4}; the root from
// its Bcast (cut 4): {Init 1, work 3}. Rank 2 (the last to enter) is off the path. Length 8.
TEST(CriticalPath, BcastNonRootWaited_OwnershipPassesToTheRoot) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "work", 1.0, 4.0);
  w.collective(0, "MPI_Bcast", 4.0, 4.5, CollOpT::Bcast, 64, 64, w.world(), 0);
  w.region(0, "post", 4.5, 5.0);
  end_rank(w, 0, 5.0, 8.5);
  w.region(1, "work", 1.0, 2.0);
  w.collective(1, "MPI_Bcast", 2.0, 4.6, CollOpT::Bcast, 0, 64, w.world(), 0);
  w.region(1, "post", 4.6, 8.0);
  end_rank(w, 1, 8.0, 8.5);
  w.region(2, "work", 1.0, 5.0);
  w.collective(2, "MPI_Bcast", 5.0, 5.2, CollOpT::Bcast, 0, 64, w.world(), 0);
  w.region(2, "post", 5.2, 6.0);
  end_rank(w, 2, 6.0, 8.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_latebroadcast", p + "MPI_Bcast", 1), 2.0, kTol);
  EXPECT_EQ(cube.value("mpi_latebroadcast", p + "MPI_Bcast", 2), 0.0);
  expect_only(cube, "critical_path",
              {{p + "MPI_Init", 0, 1.0}, {p + "work", 0, 3.0},
               {p + "MPI_Bcast", 1, 0.6}, {p + "post", 1, 3.4}});
  EXPECT_NEAR(total(cube, "critical_path"), 8.0, kTol);
}

// Reduce (N -> 1, root 0): the root waited, so the path goes to the latest sender.
//   rank 0 (root): work [1,2], MPI_Reduce [2,5.5], post [5.5,9], Finalize [9,9.5]
//   rank 1: work [1,5], MPI_Reduce [5,5.1], Finalize [5.1,9.5]
//   rank 2: work [1,3], MPI_Reduce [3,3.1], Finalize [3.1,9.5]
// Early reduce on the root = min(5, 5.5) - 2 = 3 (latest sender: rank 1 at 5).
// Path: root from 9 back to its Reduce (cut 2): {Reduce 3.5 - 3 = 0.5, post 3.5}; rank 1 from
// its Reduce (cut 5): {Init 1, work 4}. Length 9.
TEST(CriticalPath, ReduceRootWaited_OwnershipPassesToTheLatestSender) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "work", 1.0, 2.0);
  w.collective(0, "MPI_Reduce", 2.0, 5.5, CollOpT::Reduce, 64, 192, w.world(), 0);
  w.region(0, "post", 5.5, 9.0);
  end_rank(w, 0, 9.0, 9.5);
  w.region(1, "work", 1.0, 5.0);
  w.collective(1, "MPI_Reduce", 5.0, 5.1, CollOpT::Reduce, 64, 0, w.world(), 0);
  end_rank(w, 1, 5.1, 9.5);
  w.region(2, "work", 1.0, 3.0);
  w.collective(2, "MPI_Reduce", 3.0, 3.1, CollOpT::Reduce, 64, 0, w.world(), 0);
  end_rank(w, 2, 3.1, 9.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_earlyreduce", p + "MPI_Reduce", 0), 3.0, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Reduce", 0, 0.5}, {p + "post", 0, 3.5},
               {p + "MPI_Init", 1, 1.0}, {p + "work", 1, 4.0}});
  EXPECT_NEAR(total(cube, "critical_path"), 9.0, kTol);
}

// The slowest rank owns the whole path: everybody waits for it at the barrier and at Finalize.
//   rank 0: work [1,6], MPI_Barrier [6,6.5], post [6.5,8], Finalize [8,8.5]
//   rank 1: work [1,3], MPI_Barrier [3,6.5], Finalize [6.5,8.5]
//   rank 2: work [1,5], MPI_Barrier [5,6.5], Finalize [6.5,8.5]
// Rank 0 is latest at both synchpoints, has no wait state, and keeps the path from its
// Finalize enter (8) back to Init: {Init 1, work 5, Barrier 0.5, post 1.5}, length 8.
// §7.6: lt0 = {Init 1, work 5, Barrier 0.5, post 1.5, Finalize 0.5} (sum 8.5, "wait" -0.5,
//   ex = 0: the guarded 0/0, scale 0); lt1 = {Init 1, work 2, Barrier 3.5-3, Finalize 2-1.5}
//   (sum 4, wait 4, ex {work 3, post 1.5}, alpha 8/9); lt2 = {Init 1, work 4, Barrier 0.5,
//   Finalize 0.5} (sum 6, wait 2, ex {work 1, post 1.5}, alpha 0.8).
//   impact (all on rank 0): work 8/9*3 + 0.8*1 = 52/15, post 8/9*1.5 + 0.8*1.5 = 38/15 (sum 6 =
//   the waits 4 + 2). inter: hr1 = hr2 = {post 1.5}, lplen = 1+5+0.5+0.5 = 7, f = (8-7)/1.5,
//   G = {post 2}; so inter post = 2, intra = {work 52/15, post 8/15}.
// §7.7 (N = 3): work (5 - 11/3)/5 * 5 = 4/3, post (1.5 - 1.5/3)/1.5 * 1.5 = 1,
//   Barrier (0.5 - (5.5-4)/3) = 0, Init (1 - 3/3) = 0.
// Activities + impact + non-CP = 17 + 6 + 1.5 = 24.5 = 3 x 8 + 0.5: rank 0's negative "wait"
// (its non-waiting Finalize tail) is not spread anywhere.
TEST(CriticalPath, SlowestRankAlwaysLatest_PathNeverLeavesIt) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) begin_rank(w, r);
  w.region(0, "work", 1.0, 6.0);
  w.collective(0, "MPI_Barrier", 6.0, 6.5, CollOpT::Barrier, 0, 0);
  w.region(0, "post", 6.5, 8.0);
  end_rank(w, 0, 8.0, 8.5);
  w.region(1, "work", 1.0, 3.0);
  w.collective(1, "MPI_Barrier", 3.0, 6.5, CollOpT::Barrier, 0, 0);
  end_rank(w, 1, 6.5, 8.5);
  w.region(2, "work", 1.0, 5.0);
  w.collective(2, "MPI_Barrier", 5.0, 6.5, CollOpT::Barrier, 0, 0);
  end_rank(w, 2, 6.5, 8.5);
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_finalize_wait", p + "MPI_Finalize", 1), 1.5, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Init", 0, 1.0}, {p + "work", 0, 5.0},
               {p + "MPI_Barrier", 0, 0.5}, {p + "post", 0, 1.5}});
  EXPECT_NEAR(total(cube, "critical_path"), 8.0, kTol);
  expect_only(cube, "critical_imbalance_impact",
              {{p + "work", 0, 52.0 / 15}, {p + "post", 0, 38.0 / 15}});
  expect_only(cube, "inter_partition_imbalance", {{p + "post", 0, 2.0}});
  expect_only(cube, "intra_partition_imbalance",
              {{p + "work", 0, 52.0 / 15}, {p + "post", 0, 8.0 / 15}});
  expect_only(cube, "critical_path_imbalance", {{p + "work", 0, 4.0 / 3}, {p + "post", 0, 1.0}});
  EXPECT_NEAR(total(cube, "critical_path_activities"), 17.0, kTol);
  EXPECT_NEAR(total(cube, "non_critical_path_activities"), 1.5, kTol);
}

// MPMD like the paper's Fig. 2: partition A = {0,1} runs `particle` and an Allreduce on its
// sub-communicator, partition B = {2,3} runs `mesh` and an Allreduce on its own; then a world
// barrier. Everybody leaves the barrier at 10 and runs Finalize [10,11].
//   rank 0: particle [1,3], MPI_Allreduce(A) [3,4.5], MPI_Barrier [4.5,10]
//   rank 1: particle [1,4], MPI_Allreduce(A) [4,4.5], MPI_Barrier [4.5,10]
//   rank 2: mesh [1,7],     MPI_Allreduce(B) [7,9.5], MPI_Barrier [9.5,10]
//   rank 3: mesh [1,9],     MPI_Allreduce(B) [9,9.5], MPI_Barrier [9.5,10]
// Waits: Allreduce 1 (rank 0) and 2 (rank 2); barrier 5 on ranks 0 and 1; Finalize none.
// Ties go to the lower rank (§2.5): rank 0 starts the path (all enter Finalize at 10), and rank
// 2 is "latest" at the barrier (2 and 3 both enter at 9.5).
// Path: rank 0 from 10 back to the barrier (cut 4.5): {Barrier 5.5 - 5 = 0.5}; rank 2 from its
// barrier (cut 9.5) back to its Allreduce (cut 7): {Allreduce 2.5 - 2 = 0.5}; rank 3 from its
// Allreduce (cut 9) back to Init: {Init 1, mesh 8}. Length 10.
// §7.6: gcp = {Init 1, mesh 8, Allreduce 0.5, Barrier 0.5}. Every rank has lt = 0.5 for each
// collective and 1 for Init and Finalize, so
//   lt0 = 5 (particle 2), lt1 = 6 (particle 3), lt2 = 9 (mesh 6), lt3 = 11 (mesh 8).
//   impact: waits 10-5 = 5, 4, 1, -1; ex = {mesh 8}, {mesh 8}, {mesh 2}, {} (guarded: 0)
//     -> g = {mesh 5 + 4 + 1 = 10}, all of it rank 3's.
//   inter: hr = {mesh 8} on ranks 0 and 1 only (lt[mesh] = 0 there, partition A never runs
//     mesh); lplen0 = 1+2+0.5+0.5+1 = 5, f0 = 5/8; lplen1 = 6, f1 = 4/8 -> G = {mesh 5 + 4 = 9}.
//   So inter-partition imbalance = 9 (A waiting for B), intra-partition imbalance = 1 (rank 2
//   waiting for rank 3 inside B, net of its Finalize tail).
// §7.7 (N = 4): mesh (8 - 14/4)/8 * 8 = 4.5; Allreduce (0.5 - (5-3)/4) = 0;
//   Barrier (0.5 - (12-10)/4) = 0; Init (1 - 4/4) = 0.
TEST(CriticalPath, MpmdTwoPartitions_InterAndIntraPartitionImbalance) {
  TempDir dir;
  TraceWriter w(4);
  const int comm_a = w.add_comm({0, 1}, "particle_comm");
  const int comm_b = w.add_comm({2, 3}, "mesh_comm");
  struct Plan {
    const char* work;
    double work_end, allreduce_leave;
    int comm;
  };
  const Plan plan[4] = {{"particle", 3.0, 4.5, comm_a}, {"particle", 4.0, 4.5, comm_a},
                        {"mesh", 7.0, 9.5, comm_b}, {"mesh", 9.0, 9.5, comm_b}};
  for (int r = 0; r < 4; ++r) {
    begin_rank(w, r);
    w.region(r, plan[r].work, 1.0, plan[r].work_end);
    w.collective(r, "MPI_Allreduce", plan[r].work_end, plan[r].allreduce_leave,
                 CollOpT::Allreduce, 8, 8, plan[r].comm);
    w.collective(r, "MPI_Barrier", plan[r].allreduce_leave, 10.0, CollOpT::Barrier, 0, 0);
    end_rank(w, r, 10.0, 11.0);
  }
  const CubeFile cube = analyze(w, dir);

  const std::string p = "sim.exe/main/";
  EXPECT_NEAR(cube.value("mpi_barrier_wait", p + "MPI_Barrier", 0), 5.0, kTol);
  EXPECT_NEAR(cube.value("mpi_wait_nxn", p + "MPI_Allreduce", 2), 2.0, kTol);
  expect_only(cube, "critical_path",
              {{p + "MPI_Barrier", 0, 0.5}, {p + "MPI_Allreduce", 2, 0.5},
               {p + "MPI_Init", 3, 1.0}, {p + "mesh", 3, 8.0}});
  EXPECT_NEAR(total(cube, "critical_path"), 10.0, kTol);
  expect_only(cube, "critical_imbalance_impact", {{p + "mesh", 3, 10.0}});
  expect_only(cube, "inter_partition_imbalance", {{p + "mesh", 3, 9.0}});
  expect_only(cube, "intra_partition_imbalance", {{p + "mesh", 3, 1.0}});
  expect_only(cube, "critical_path_imbalance", {{p + "mesh", 3, 4.5}});
  expect_only(cube, "non_critical_path_activities",
              {{p + "particle", 0, 2.0}, {p + "MPI_Finalize", 0, 1.0},
               {p + "particle", 1, 3.0}, {p + "MPI_Finalize", 1, 1.0},
               {p + "MPI_Finalize", 2, 1.0}, {p + "MPI_Finalize", 3, 1.0}});
}

}  // namespace
}  // namespace cpreplay::testing
