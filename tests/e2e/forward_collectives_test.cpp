// SPDX-License-Identifier: BSD-3-Clause
// End-to-end proof of the collective forward replay: hand-timed barrier, N x N, 1-to-N, N-to-1,
// scan, sub-communicator and Init/Finalize scenarios checked against scalasca-metrics.md §4, §6.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";

// The §4 example: 3 ranks, MPI_Barrier begins 1, 3, 5 and ends 6, 6.5, 7.
// L = 5 (rank 2), E = 6. cap_r = min(5, x_r) = 5; E' = max(6, 5) = 6.
// mpi_barrier_wait = cap - b_r = 4, 2, 0; mpi_barrier_completion = x_r - E' = 0, 0.5, 1.
// Each rank counts one synchronization (0 bytes): syncs_coll = 1.
TEST(Barrier, SpecExample_WaitsAndCompletions) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  const double b[3] = {1.0, 3.0, 5.0}, x[3] = {6.0, 6.5, 7.0};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Barrier", b[r], x[r], CollOpT::Barrier, 0, 0);
  }
  scenario::close_all(w, 8.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string path = kMain + "/MPI_Barrier";
  const double wait[3] = {4.0, 2.0, 0.0}, completion[3] = {0.0, 0.5, 1.0};
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(at(cube, "mpi_barrier_wait", path, r), wait[r], kTol) << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_barrier_completion", path, r), completion[r], kTol) << "rank " << r;
    EXPECT_EQ(at(cube, "syncs_coll", path, r), 1.0);
  }
}

// A barrier with a clock-condition violation: rank 0 [1, 3] leaves before rank 1 [4, 5] enters.
// L = 4, E = 3. Rank 0: cap = min(4, 3) = 3 -> wait = 3 - 1 = 2; E' = max(3, 3) = 3 ->
// completion 0. Rank 1: cap = 4 -> wait 0; E' = max(3, 4) = 4 -> completion = 5 - 4 = 1 (not
// 5 - E = 2). The violation (L = 4 > x_0 = 3) is counted once and warned about, not fatal.
TEST(Barrier, ClockViolation_ClippedAtOwnEnd) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 1.0);
  w.collective(0, "MPI_Barrier", 1.0, 3.0, CollOpT::Barrier, 0, 0);
  w.region(1, "work", 0.5, 4.0);
  w.collective(1, "MPI_Barrier", 4.0, 5.0, CollOpT::Barrier, 0, 0);
  scenario::close_all(w, 6.0);
  RunResult run;
  const CubeFile cube = scenario::analyze(w, dir, {}, "t", &run);
  EXPECT_NE(run.err.find("clock-condition violation"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("1 collective"), std::string::npos) << run.err;
  const std::string path = kMain + "/MPI_Barrier";
  EXPECT_NEAR(at(cube, "mpi_barrier_wait", path, 0), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_barrier_completion", path, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_barrier_wait", path, 1), 0.0);
  EXPECT_NEAR(at(cube, "mpi_barrier_completion", path, 1), 1.0, kTol);
}

// MPI_Allreduce on 4 ranks, begins 1, 2, 4, 3 and ends 5, 5.5, 6, 5.2 (8 B each way).
// min x = 5 > max b = 4: full overlap. L = 4, E = 5, cap = 4, E' = max(5, 4) = 5.
// mpi_wait_nxn = 4 - b_r = 3, 2, 0, 1; mpi_nxn_completion = x_r - 5 = 0, 0.5, 1, 0.2.
// Counters: sent and received > 0 -> comms_cxch = 1, bytes_cout = bytes_cin = 8.
TEST(Allreduce, FullOverlap_NxnWaitAndCompletion) {
  TempDir dir;
  TraceWriter w(4);
  scenario::open_all(w);
  const double b[4] = {1.0, 2.0, 4.0, 3.0}, x[4] = {5.0, 5.5, 6.0, 5.2};
  for (int r = 0; r < 4; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Allreduce", b[r], x[r], CollOpT::Allreduce, 8, 8);
  }
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string path = kMain + "/MPI_Allreduce";
  const double wait[4] = {3.0, 2.0, 0.0, 1.0}, completion[4] = {0.0, 0.5, 1.0, 0.2};
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(at(cube, "mpi_wait_nxn", path, r), wait[r], kTol) << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_nxn_completion", path, r), completion[r], kTol) << "rank " << r;
    EXPECT_EQ(at(cube, "comms_cxch", path, r), 1.0);
    EXPECT_EQ(at(cube, "bytes_cout", path, r), 8.0);
    EXPECT_EQ(at(cube, "bytes_cin", path, r), 8.0);
    EXPECT_EQ(at(cube, "mpi_barrier_wait", path, r), 0.0);
  }
}

// MPI_Allgather on 3 ranks; rank 2 sends nothing and enters late.
// Rank 0 [1, 5] 8/16 B, rank 1 [2, 5.5] 8/16 B, rank 2 [10, 10.5] 0/16 B.
// min x = 5 <= max b = 10: partial overlap. Latest sender L = 2 (rank 1; rank 2 sent 0 B).
// Syncpoints: rank 1 (latest sender) and rank 0 (received > 0, b = 1 < 2); not rank 2 (10 >= 2).
// E = min x over syncpoints = 5. Rank 0: wait = min(2, 5) - 1 = 1, completion = 5 - max(5, 2) = 0.
// Rank 1: wait 0, completion = 5.5 - 5 = 0.5. Rank 2: nothing.
TEST(Allgather, PartialOverlap_OnlySyncpointsReport) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 1.0);
  w.collective(0, "MPI_Allgather", 1.0, 5.0, CollOpT::Allgather, 8, 16);
  w.region(1, "work", 0.5, 2.0);
  w.collective(1, "MPI_Allgather", 2.0, 5.5, CollOpT::Allgather, 8, 16);
  w.region(2, "work", 0.5, 10.0);
  w.collective(2, "MPI_Allgather", 10.0, 10.5, CollOpT::Allgather, 0, 16);
  scenario::close_all(w, 11.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string path = kMain + "/MPI_Allgather";
  const double wait[3] = {1.0, 0.0, 0.0}, completion[3] = {0.0, 0.5, 0.0};
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(at(cube, "mpi_wait_nxn", path, r), wait[r], kTol) << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_nxn_completion", path, r), completion[r], kTol) << "rank " << r;
  }
  EXPECT_EQ(at(cube, "comms_cdst", path, 2), 1.0);
  EXPECT_EQ(at(cube, "comms_cxch", path, 0), 1.0);
}

// MPI_Bcast from root 0 on 3 ranks, the root last: root [4, 4.5] sends 200 B, ranks 1 and 2
// [1, 5] and [2, 5] receive 100 B. R = b_root = 4; waiters: b_r < 4 and received > 0.
// mpi_latebroadcast = min(R, x_r) - b_r = 0 (root), 4 - 1 = 3, 4 - 2 = 2.
// Counters: root sent only -> comms_csrc, bytes_cout 200; others received only -> comms_cdst,
// bytes_cin 100.
TEST(Bcast, RootLast_LateBroadcast) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 4.0);
  w.collective(0, "MPI_Bcast", 4.0, 4.5, CollOpT::Bcast, 200, 0, 0, /*root=*/0);
  w.region(1, "work", 0.5, 1.0);
  w.collective(1, "MPI_Bcast", 1.0, 5.0, CollOpT::Bcast, 0, 100, 0, 0);
  w.region(2, "work", 0.5, 2.0);
  w.collective(2, "MPI_Bcast", 2.0, 5.0, CollOpT::Bcast, 0, 100, 0, 0);
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string path = kMain + "/MPI_Bcast";
  EXPECT_EQ(at(cube, "mpi_latebroadcast", path, 0), 0.0);
  EXPECT_NEAR(at(cube, "mpi_latebroadcast", path, 1), 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latebroadcast", path, 2), 2.0, kTol);
  EXPECT_EQ(at(cube, "comms_csrc", path, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_cout", path, 0), 200.0);
  EXPECT_EQ(at(cube, "bytes_cin", path, 0), 0.0);
  for (int r = 1; r < 3; ++r) {
    EXPECT_EQ(at(cube, "comms_cdst", path, r), 1.0);
    EXPECT_EQ(at(cube, "bytes_cin", path, r), 100.0);
    EXPECT_EQ(at(cube, "bytes_cout", path, r), 0.0);
  }
  EXPECT_EQ(scenario::total(cube, "mpi_wait_nxn"), 0.0);
}

// MPI_Bcast from root 1, the root first: root [1, 1.5], rank 0 [2, 2.5], rank 2 [3, 3.5].
// R = 1: no rank has b_r < R -> mpi_latebroadcast = 0 everywhere.
TEST(Bcast, RootFirst_NoWait) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  const double b[3] = {2.0, 1.0, 3.0};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Bcast", b[r], b[r] + 0.5, CollOpT::Bcast, r == 1 ? 64 : 0,
                 r == 1 ? 0 : 32, 0, /*root=*/1);
  }
  scenario::close_all(w, 4.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(at(cube, "mpi_latebroadcast", kMain + "/MPI_Bcast", r), 0.0) << "rank " << r;
}

// The root-last timing of Bcast.RootLast_LateBroadcast, but the root sends 0 bytes (and nobody
// receives any): zero payload, the instance is skipped (§4) -> mpi_latebroadcast = 0; each rank
// still counts syncs_coll = 1.
TEST(Bcast, RootSendsZeroBytes_Skipped) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  const double b[3] = {4.0, 1.0, 2.0}, x[3] = {4.5, 5.0, 5.0};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Bcast", b[r], x[r], CollOpT::Bcast, 0, 0, 0, /*root=*/0);
  }
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(at(cube, "mpi_latebroadcast", kMain + "/MPI_Bcast", r), 0.0) << "rank " << r;
    EXPECT_EQ(at(cube, "syncs_coll", kMain + "/MPI_Bcast", r), 1.0) << "rank " << r;
  }
}

// MPI_Reduce to root 0 on 4 ranks, the root first: root [1, 5] 8/32 B, rank 1 [3, 3.1] 8/0 B,
// rank 2 [4, 4.2] 8/0 B, rank 3 [4.5, 4.6] 0/0 B (contributes no bytes).
// L = max b over ranks with bytes sent > 0 = 4 (rank 2; rank 3 does not count).
// b_root = 1 < 4: mpi_earlyreduce (root) = min(4, 5) - 1 = 3. Non-roots get nothing.
TEST(Reduce, RootFirst_EarlyReduce) {
  TempDir dir;
  TraceWriter w(4);
  scenario::open_all(w);
  const double b[4] = {1.0, 3.0, 4.0, 4.5}, x[4] = {5.0, 3.1, 4.2, 4.6};
  const std::uint64_t sent[4] = {8, 8, 8, 0}, received[4] = {32, 0, 0, 0};
  for (int r = 0; r < 4; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Reduce", b[r], x[r], CollOpT::Reduce, sent[r], received[r], 0, 0);
  }
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string path = kMain + "/MPI_Reduce";
  EXPECT_NEAR(at(cube, "mpi_earlyreduce", path, 0), 3.0, kTol);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(at(cube, "mpi_earlyreduce", path, r), 0.0);
  EXPECT_EQ(at(cube, "comms_cxch", path, 0), 1.0);
  EXPECT_EQ(at(cube, "comms_csrc", path, 1), 1.0);
  EXPECT_EQ(at(cube, "syncs_coll", path, 3), 1.0);
}

// MPI_Reduce to root 0, the root last: root [5, 5.5], ranks 1, 2 [1, 1.1], [2, 2.1].
// L = 5 (the root itself): b_root < L is false -> mpi_earlyreduce = 0 everywhere.
TEST(Reduce, RootLast_NoWait) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  const double b[3] = {5.0, 1.0, 2.0};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Reduce", b[r], b[r] + (r == 0 ? 0.5 : 0.1), CollOpT::Reduce, 8,
                 r == 0 ? 24 : 0, 0, 0);
  }
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(at(cube, "mpi_earlyreduce", kMain + "/MPI_Reduce", r), 0.0) << "rank " << r;
}

// MPI_Scan on 4 ranks, begins 3, 1, 4, 2, ends 5, 5.1, 5.2, 5.3, 8 B each way.
// L_r = max b over ranks 0..r (r included): 3, 3, 4, 4.
// mpi_earlyscan = [min(L_r, x_r) - b_r]+ = 0, 3 - 1 = 2, 0, 4 - 2 = 2.
// Then MPI_Exscan with the same begins (+10) where rank 2 sends 0 B (but receives 8 B, so it is
// not skipped): L_r only counts senders: 13, 13, 13, max(13, 11, 12) = 13.
// mpi_earlyscan = 0, 2, 0 (b = 14 >= 13), 13 - 12 = 1.
TEST(Scan, PrefixMaxima_EarlyScan) {
  TempDir dir;
  TraceWriter w(4);
  scenario::open_all(w);
  const double b[4] = {3.0, 1.0, 4.0, 2.0}, x[4] = {5.0, 5.1, 5.2, 5.3};
  for (int r = 0; r < 4; ++r) {
    w.region(r, "work", 0.5, b[r]);
    w.collective(r, "MPI_Scan", b[r], x[r], CollOpT::Scan, 8, 8);
    w.region(r, "work", x[r], b[r] + 10.0);
    w.collective(r, "MPI_Exscan", b[r] + 10.0, x[r] + 10.0, CollOpT::Exscan, r == 2 ? 0 : 8, 8);
  }
  scenario::close_all(w, 16.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const double scan[4] = {0.0, 2.0, 0.0, 2.0}, exscan[4] = {0.0, 2.0, 0.0, 1.0};
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(at(cube, "mpi_earlyscan", kMain + "/MPI_Scan", r), scan[r], kTol) << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_earlyscan", kMain + "/MPI_Exscan", r), exscan[r], kTol)
        << "rank " << r;
  }
}

// Clock-condition violations in rooted collectives and scan: the latest begin is clipped at
// the rank's own end (§4, §10). 3 ranks:
// MPI_Bcast root 0 [4, 4.5] (64 B out); rank 1 [1, 5], rank 2 [2, 3.5] (left before the root
//   entered). mpi_latebroadcast = min(4, x_r) - b_r = 0, 3, min(4, 3.5) - 2 = 1.5.
// MPI_Reduce root 0 [6, 7]; rank 1 [8, 8.1], rank 2 [7.5, 7.6], all send 8 B. L = 8 > x_root:
//   mpi_earlyreduce (root) = min(8, 7) - 6 = 1.
// MPI_Scan r0 [10, 10.5], r1 [9.2, 9.8], r2 [9.5, 10.6]. L_r = 10, 10, 10:
//   mpi_earlyscan = 0, min(10, 9.8) - 9.2 = 0.6, min(10, 10.6) - 9.5 = 0.5.
TEST(RootedAndScan, ClockViolation_ClippedAtOwnEnd) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  const double bcast_b[3] = {4.0, 1.0, 2.0}, bcast_x[3] = {4.5, 5.0, 3.5};
  const double reduce_b[3] = {6.0, 8.0, 7.5}, reduce_x[3] = {7.0, 8.1, 7.6};
  const double scan_b[3] = {10.0, 9.2, 9.5}, scan_x[3] = {10.5, 9.8, 10.6};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, bcast_b[r]);
    w.collective(r, "MPI_Bcast", bcast_b[r], bcast_x[r], CollOpT::Bcast, r == 0 ? 128 : 0,
                 r == 0 ? 0 : 64, 0, 0);
    w.region(r, "work", bcast_x[r], reduce_b[r]);
    w.collective(r, "MPI_Reduce", reduce_b[r], reduce_x[r], CollOpT::Reduce, 8, r == 0 ? 24 : 0,
                 0, 0);
    w.region(r, "work", reduce_x[r], scan_b[r]);
    w.collective(r, "MPI_Scan", scan_b[r], scan_x[r], CollOpT::Scan, 8, 8);
  }
  scenario::close_all(w, 11.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const double bcast[3] = {0.0, 3.0, 1.5}, reduce[3] = {1.0, 0.0, 0.0}, scan[3] = {0.0, 0.6, 0.5};
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(at(cube, "mpi_latebroadcast", kMain + "/MPI_Bcast", r), bcast[r], kTol)
        << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_earlyreduce", kMain + "/MPI_Reduce", r), reduce[r], kTol)
        << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_earlyscan", kMain + "/MPI_Scan", r), scan[r], kTol)
        << "rank " << r;
  }
}

// 3 ranks; sub-communicator "pair" = world ranks {1, 0} (local 0 = world 1) and "solo" = {2}.
// pair: MPI_Barrier world 0 [1, 4], world 1 [3, 4] -> L = 3, E = 4: waits 2, 0; completions
//   x - max(4, 3) = 0, 0.
// pair: MPI_Bcast root local 0 = world 1 [6, 6.5] sends 8 B; world 0 [5, 6.5] receives 8 B ->
//   mpi_latebroadcast (world 0) = min(6, 6.5) - 5 = 1.
// solo (size 1): MPI_Barrier [1, 9] and MPI_Allreduce [9.5, 12] on rank 2 are not analyzed
//   (all waits and completions 0; mixing with "pair" would have given a wait of 2) but still
//   count: syncs_coll 1 at MPI_Barrier, comms_cxch 1 and bytes 8/8 at MPI_Allreduce.
TEST(SubCommunicator, RankAloneInItsCommunicator_OnlyCounted) {
  TempDir dir;
  TraceWriter w(3);
  const int pair = w.add_comm({1, 0}, "pair");
  const int solo = w.add_comm({2}, "solo");
  scenario::open_all(w);
  w.region(0, "work", 0.5, 1.0);
  w.collective(0, "MPI_Barrier", 1.0, 4.0, CollOpT::Barrier, 0, 0, pair);
  w.region(0, "work", 4.0, 5.0);
  w.collective(0, "MPI_Bcast", 5.0, 6.5, CollOpT::Bcast, 0, 8, pair, /*root=*/0);
  w.region(1, "work", 0.5, 3.0);
  w.collective(1, "MPI_Barrier", 3.0, 4.0, CollOpT::Barrier, 0, 0, pair);
  w.region(1, "work", 4.0, 6.0);
  w.collective(1, "MPI_Bcast", 6.0, 6.5, CollOpT::Bcast, 8, 0, pair, /*root=*/0);
  w.region(2, "work", 0.5, 1.0);
  w.collective(2, "MPI_Barrier", 1.0, 9.0, CollOpT::Barrier, 0, 0, solo);
  w.region(2, "work", 9.0, 9.5);
  w.collective(2, "MPI_Allreduce", 9.5, 12.0, CollOpT::Allreduce, 8, 8, solo);
  scenario::close_all(w, 13.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string barrier = kMain + "/MPI_Barrier", bcast = kMain + "/MPI_Bcast",
                    allreduce = kMain + "/MPI_Allreduce";
  EXPECT_NEAR(at(cube, "mpi_barrier_wait", barrier, 0), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_barrier_wait", barrier, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_barrier_completion", barrier, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_barrier_completion", barrier, 1), 0.0);
  EXPECT_NEAR(at(cube, "mpi_latebroadcast", bcast, 0), 1.0, kTol);
  EXPECT_EQ(at(cube, "mpi_latebroadcast", bcast, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_barrier_wait", barrier, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_barrier_completion", barrier, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_wait_nxn", allreduce, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_nxn_completion", allreduce, 2), 0.0);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(at(cube, "syncs_coll", barrier, r), 1.0) << "rank " << r;
  EXPECT_EQ(at(cube, "comms_cxch", allreduce, 2), 1.0);
  EXPECT_EQ(at(cube, "bytes_cout", allreduce, 2), 8.0);
  EXPECT_EQ(at(cube, "bytes_cin", allreduce, 2), 8.0);
  EXPECT_EQ(at(cube, "comms_csrc", bcast, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_cdst", bcast, 0), 1.0);
}

// MPI_COMM_SELF is one definition but a different communicator on every rank, so ranks may
// record different numbers of collectives on it. Rank 0 alone: MPI_Allreduce on MPI_COMM_SELF
// [1, 3] (4/4 B), then all 3 ranks MPI_Barrier on world [3.5, 4], [2, 4], [3, 4].
// Self: size 1, not analyzed (no wait) but counted: comms_cxch 1, bytes 4/4 on rank 0 only.
// Barrier: L = 3.5 -> mpi_barrier_wait = 0, 1.5, 0.5 (the Allreduce does not shift instances).
TEST(CommSelf, CollectiveOnOneRankOnly_CountedNotAnalyzed) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.collective(0, "MPI_Allreduce", 1.0, 3.0, CollOpT::Allreduce, 4, 4, w.self());
  const double b[3] = {3.5, 2.0, 3.0};
  for (int r = 0; r < 3; ++r) w.collective(r, "MPI_Barrier", b[r], 4.0, CollOpT::Barrier, 0, 0);
  scenario::close_all(w, 5.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string allreduce = kMain + "/MPI_Allreduce", barrier = kMain + "/MPI_Barrier";
  EXPECT_EQ(at(cube, "comms_cxch", allreduce, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_cout", allreduce, 0), 4.0);
  EXPECT_EQ(at(cube, "bytes_cin", allreduce, 0), 4.0);
  EXPECT_EQ(at(cube, "mpi_wait_nxn", allreduce, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_nxn_completion", allreduce, 0), 0.0);
  EXPECT_EQ(at(cube, "comms_cxch", allreduce, 1), 0.0);
  const double wait[3] = {0.0, 1.5, 0.5};
  for (int r = 0; r < 3; ++r)
    EXPECT_NEAR(at(cube, "mpi_barrier_wait", barrier, r), wait[r], kTol) << "rank " << r;
}

// 3 ranks. MPI_Init entered at 0, 0.2, 0.4 and left at 1, 1.5, 2: L = 0.4, E = 1,
// cap = min(0.4, x_r) = 0.4, E' = max(1, 0.4) = 1 -> mpi_init_completion = x_r - 1 = 0, 0.5, 1.
// MPI_Finalize entered at 5, 7, 6 and left at 8: L = 7 -> mpi_finalize_wait = 7 - b_r = 2, 0, 1.
TEST(InitFinalize, StaggeredRanks_CompletionAndWait) {
  TempDir dir;
  TraceWriter w(3);
  const double init_b[3] = {0.0, 0.2, 0.4}, init_x[3] = {1.0, 1.5, 2.0};
  const double fin_b[3] = {5.0, 7.0, 6.0};
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, init_b[r], init_x[r]);
    w.region(r, "work", init_x[r], fin_b[r]);
    w.finalize(r, fin_b[r], 8.0);
    w.leave(r, 8.5, "main");
    w.program_end(r, 8.5);
  }
  const CubeFile cube = scenario::analyze(w, dir);
  const double completion[3] = {0.0, 0.5, 1.0}, wait[3] = {2.0, 0.0, 1.0};
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(at(cube, "mpi_init_completion", kMain + "/MPI_Init", r), completion[r], kTol)
        << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_finalize_wait", kMain + "/MPI_Finalize", r), wait[r], kTol)
        << "rank " << r;
  }
  EXPECT_NEAR(scenario::total(cube, "mpi_init_completion"), 1.5, kTol);
  EXPECT_NEAR(scenario::total(cube, "mpi_finalize_wait"), 3.0, kTol);
}

// Clock-condition violations in MPI_Init and MPI_Finalize.
// MPI_Init entered at 0, 0.2, 1.2 (rank 2 after rank 0 left) and left at 1, 1.5, 2.
//   L = 1.2, E = 1. cap_r = min(1.2, x_r) = 1, 1.2, 1.2; E' = max(1, cap_r) = 1, 1.2, 1.2
//   -> mpi_init_completion = 0, 0.3, 0.8 (not 0, 0.5, 1).
// MPI_Finalize [3, 3.5], [3, 4.5], [4, 4.5] (rank 2 enters after rank 0 left). L = 4:
//   mpi_finalize_wait = min(4, x_r) - b_r = 0.5 (not 1), 1, 0.
TEST(InitFinalize, ClockViolations_ClippedAtOwnEnd) {
  TempDir dir;
  TraceWriter w(3);
  const double init_b[3] = {0.0, 0.2, 1.2}, init_x[3] = {1.0, 1.5, 2.0};
  const double fin_b[3] = {3.0, 3.0, 4.0}, fin_x[3] = {3.5, 4.5, 4.5};
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, init_b[r], init_x[r]);
    w.finalize(r, fin_b[r], fin_x[r]);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
  const CubeFile cube = scenario::analyze(w, dir);
  const double completion[3] = {0.0, 0.3, 0.8}, wait[3] = {0.5, 1.0, 0.0};
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(at(cube, "mpi_init_completion", kMain + "/MPI_Init", r), completion[r], kTol)
        << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_finalize_wait", kMain + "/MPI_Finalize", r), wait[r], kTol)
        << "rank " << r;
  }
}

// 2 ranks, one instance of every counter class (§6), each at its own call path:
//   MPI_Barrier 0/0 B                  -> syncs_coll
//   zero/MPI_Allreduce 0/0 B [3,5],[4,5] -> syncs_coll; zero payload: no mpi_wait_nxn (would be 1)
//   MPI_Allreduce 8/8 B                -> comms_cxch, bytes 8/8
//   MPI_Bcast root 1: 16/0 B on rank 1 -> comms_csrc, bytes_cout 16; 0/16 B on rank 0 -> comms_cdst
//   MPI_Alltoallv 32/32 B [9,10],[9.5,10] -> comms_cxch, bytes 32/32; never analyzed: no wait
TEST(CollectiveCounters, EveryByteDirection_CountedByClass) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  for (int r = 0; r < 2; ++r) {
    w.collective(r, "MPI_Barrier", 1.0, 2.0, CollOpT::Barrier, 0, 0);
    w.enter(r, 2.5, "zero");
    w.collective(r, "MPI_Allreduce", r == 0 ? 3.0 : 4.0, 5.0, CollOpT::Allreduce, 0, 0);
    w.leave(r, 5.5, "zero");
    w.collective(r, "MPI_Allreduce", 6.0, 7.0, CollOpT::Allreduce, 8, 8);
    w.collective(r, "MPI_Bcast", 8.0, 8.5, CollOpT::Bcast, r == 1 ? 16 : 0, r == 1 ? 0 : 16, 0,
                 /*root=*/1);
    w.collective(r, "MPI_Alltoallv", r == 0 ? 9.0 : 9.5, 10.0, CollOpT::Alltoallv, 32, 32);
  }
  scenario::close_all(w, 11.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string barrier = kMain + "/MPI_Barrier", zero = kMain + "/zero/MPI_Allreduce",
                    allreduce = kMain + "/MPI_Allreduce", bcast = kMain + "/MPI_Bcast",
                    alltoallv = kMain + "/MPI_Alltoallv";
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(at(cube, "syncs_coll", barrier, r), 1.0);
    EXPECT_EQ(at(cube, "syncs_coll", zero, r), 1.0);
    EXPECT_EQ(at(cube, "comms_cxch", zero, r), 0.0);
    EXPECT_EQ(at(cube, "comms_cxch", allreduce, r), 1.0);
    EXPECT_EQ(at(cube, "bytes_cout", allreduce, r), 8.0);
    EXPECT_EQ(at(cube, "bytes_cin", allreduce, r), 8.0);
    EXPECT_EQ(at(cube, "comms_cxch", alltoallv, r), 1.0);
    EXPECT_EQ(at(cube, "bytes_cout", alltoallv, r), 32.0);
    EXPECT_EQ(at(cube, "bytes_cin", alltoallv, r), 32.0);
    EXPECT_EQ(at(cube, "syncs_coll", allreduce, r), 0.0);
  }
  EXPECT_EQ(at(cube, "comms_cdst", bcast, 0), 1.0);
  EXPECT_EQ(at(cube, "comms_csrc", bcast, 0), 0.0);
  EXPECT_EQ(at(cube, "bytes_cin", bcast, 0), 16.0);
  EXPECT_EQ(at(cube, "comms_csrc", bcast, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_cdst", bcast, 1), 0.0);
  EXPECT_EQ(at(cube, "bytes_cout", bcast, 1), 16.0);
  EXPECT_EQ(at(cube, "mpi_wait_nxn", zero, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_wait_nxn", alltoallv, 0), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_wait_nxn"), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_nxn_completion"), 0.0);
  EXPECT_EQ(scenario::total(cube, "syncs_coll"), 4.0);
  EXPECT_EQ(scenario::total(cube, "comms_cxch"), 4.0);
}

}  // namespace
}  // namespace cpreplay::testing
