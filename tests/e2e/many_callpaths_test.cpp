// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: a stretch between two synchronization points with more call paths than Scalasca's
// time maps hold (issue 29; docs/root-cause.md, "Scalasca's 128-entry time maps"). Scout keeps
// at most 128 call paths per time map (scout_types.h: fixed_priority_map<..., 128>) and drops the
// one with the least time whenever a new one with more arrives, so on code with deep call trees
// of short calls (HPCCG's std::map internals) time vanishes from the critical path, the
// activities and the delay costs. cpreplay keeps every call path: the critical path still adds
// up to the run's wall-clock span. The conformance suite compares ../shared/real with scout's
// values corrected for this (tests/conformance/corrections).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";

std::string fname(int i) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "f%03d", i);
  return buf;
}

// Rank 0: MPI_Init [0, 0.5], f000 .. f199 one after another, f_i taking (i + 1) * 10 us (0.201 s
// in all, until 0.701), MPI_Barrier [0.701, 0.8], MPI_Finalize [1.0, 1.5].
// Rank 1: MPI_Init [0, 0.5], w1 [0.5, 0.6], MPI_Barrier [0.6, 0.8] (waits 0.101), MPI_Finalize
// [1.0, 1.5].
// Both enter MPI_Finalize at 1.0: the path starts on rank 0 (ties: the lower rank), which never
// waits, and runs back to MPI_Init on rank 0: every f_i with its own time, MPI_Init 0.5, the
// barrier 0.099, main 0.2 (0.8 to 1.0): 1.0 s, the span from MPI_Init's Enter to MPI_Finalize's.
// Scout 2.6 on this trace: its path adds up to 0.9715 s; f000 .. f072 are missing from it, and
// from the barrier's delay costs, which it spreads over f073 .. f199 only (f073: 0.000430 s
// instead of 74e-5 * 0.101 / 0.201 = 0.000372 s). With its map limit raised to 4096 it gives
// exactly the values below.
TEST(ManyCallPaths, MoreThan128BetweenTwoPoints_CriticalPathKeepsEveryOne) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  double t = 0.5;
  for (int i = 0; i < 200; ++i) {
    const double d = (i + 1) * 1e-5;
    w.region(0, fname(i), t, t + d);
    t += d;
  }
  ASSERT_NEAR(t, 0.701, 1e-12);
  w.collective(0, "MPI_Barrier", t, 0.8, CollOpT::Barrier, 0, 0);
  w.region(1, "w1", 0.5, 0.6);
  w.collective(1, "MPI_Barrier", 0.6, 0.8, CollOpT::Barrier, 0, 0);
  scenario::close_all(w, 1.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (int i = 0; i < 200; ++i) {
    EXPECT_NEAR(at(cube, "critical_path", kMain + "/" + fname(i), 0), (i + 1) * 1e-5, kTol) << i;
    EXPECT_NEAR(at(cube, "critical_path_activities", kMain + "/" + fname(i), 0), (i + 1) * 1e-5,
                kTol)
        << i;
  }
  EXPECT_NEAR(at(cube, "critical_path", kMain + "/MPI_Init", 0), 0.5, kTol);
  EXPECT_NEAR(at(cube, "critical_path", kMain + "/MPI_Barrier", 0), 0.099, kTol);
  EXPECT_NEAR(at(cube, "critical_path", kMain, 0), 0.2, kTol);
  EXPECT_NEAR(scenario::total(cube, "critical_path"), 1.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_barrier_wait", kMain + "/MPI_Barrier", 1), 0.101, kTol);
  // The barrier's waiting is charged to the 200 calls in proportion, all of them: rank 1's
  // interval holds w1 0.1, rank 0's every f_i, so d = {f_i} and the scale is 0.101 / 0.201.
  EXPECT_NEAR(scenario::total(cube, "delay_barrier"), 0.101, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier", kMain + "/" + fname(0), 0), 1e-5 * 0.101 / 0.201, kTol);
}

}  // namespace
}  // namespace cpreplay::testing
