// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: a worker thread's non-waiting time as scout.hyb's runtime map holds it (issue 29,
// docs/openmp.md "Impact indicators per thread"). Scout's TmapCacheHandler clears a worker's
// open map at every fork and at the end, so what a worker did after its last OpenMP
// synchronization point of a parallel region (from its last barrier's Enter to the region's
// Leave) never reaches its non-waiting time: the closing barrier's time and the tail of the
// region. The rule this replaces zeroed only an implicit barrier directly in the parallel region
// and kept the rest, which LULESH's `parallel for` loops (the loop's barrier closes the region,
// under `!$omp for`) showed wrong in 4,855 of Scalasca's values.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

constexpr double kEps = 1e-9;
const std::string kPar = "!$omp parallel @a.c:3";
const std::string kFor = "!$omp for @a.c:3";
const std::string kLbar = "!$omp implicit barrier @a.c:6";
const std::string kMain = "sim.exe/main";
const std::string kMainPar = kMain + "/" + kPar;
const std::string kLoop = kMainPar + "/" + kFor;

// One rank, two threads, one `parallel for` region whose only barrier is the loop's.
// Fork at 1.0, join at 2.7.
// Master: in the region 1.0-2.6: loop_body [1.0, 2.0], the loop barrier [2.0, 2.5] (waits 0.4),
//   leaves the loop at 2.5 and the region at 2.6.
// Worker: in the region 1.2-2.55 (fork time 0.2): loop_body [1.2, 2.4], the loop barrier
//   [2.4, 2.5] (the last to arrive: no wait), leaves the region at 2.55.
// Critical path: the master from MPI_Finalize (4.0) back to its barrier (lbar 0.5 - 0.4,
// parallel 0.1 + 0.1 join, main 1.3), the worker from its barrier back to the fork (loop_body
// 1.2, parallel 0.2), the master back to MPI_Init (main 0.9, MPI_Init 0.1): 4.0 in all.
// Non-waiting time lt: master {MPI_Init 0.1, main 2.7, parallel 0.2, loop_body 1.0, lbar 0.1,
// MPI_Finalize 0.5}; worker {loop_body 1.2, parallel 0.2}: its tail from the barrier's Enter,
// lbar 0.1 and parallel 0.05, is left out with the join part of its management (0.15).
// Activities min(gcp, lt): lbar (gcp 0.1) master 0.1, worker 0 (the replaced rule: 0.1);
// parallel (gcp 0.4) master 0.2, worker 0.2 (replaced: 0.25).
// Imbalance impact: the master's wait 4.0 - 4.6 = -0.6 over ex {parallel 0.2, loop_body 0.2},
// alpha = -1.5; the worker's 4.0 - 1.4 = 2.6 over ex {MPI_Init 0.1, main 2.2, parallel 0.2,
// lbar 0.1}, alpha = 1. g = {MPI_Init 0.1, main 2.2, parallel -0.1, loop_body -0.3, lbar 0.1},
// all of it on the master's path: MPI_Init 0.1, main 2.2, lbar 0.1 (replaced rule: lbar 0).
// Scout.hyb 2.6 gives these values on this trace.
TEST(OpenMpWorkerTail, ParallelForLoopBarrierClosesTheRegion_HandComputed) {
  for (int processes : {1}) {
    TempDir dir;
    TraceWriter w(1);
    w.set_threads_per_process(2);
    scenario::begin_rank(w, 0);
    w.omp_fork(0, 1.0, 2);
    const double in[2] = {1.0, 1.2}, body_end[2] = {2.0, 2.4}, out[2] = {2.6, 2.55};
    for (int t = 0; t < 2; ++t) {
      w.omp_team_begin(0, t, in[t]);
      w.thread_enter(0, t, in[t], kPar);
      w.thread_enter(0, t, in[t], kFor);
      w.thread_enter(0, t, in[t], "loop_body");
      w.thread_leave(0, t, body_end[t], "loop_body");
      w.thread_enter(0, t, body_end[t], kLbar);
      w.thread_leave(0, t, 2.5, kLbar);
      w.thread_leave(0, t, 2.5, kFor);
      w.thread_leave(0, t, out[t], kPar);
      w.omp_team_end(0, t, out[t]);
    }
    w.omp_join(0, 2.7);
    w.finalize(0, 4.0, 4.5);
    w.leave(0, 5.0, "main");
    w.program_end(0, 5.0);
    const CubeFile cube = scenario::analyze(w, dir);
    ASSERT_EQ(cube.location_names.size(), 2u) << processes;
    const std::string lbar = kLoop + "/" + kLbar;
    EXPECT_NEAR(cube.value("critical_path", lbar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.2, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 1), 0.2, kEps);
    EXPECT_NEAR(cube.value("critical_path", kLoop + "/loop_body", 1), 1.2, kEps);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", lbar, 0), 0.4, kEps);
    EXPECT_EQ(cube.value("omp_ibarrier_wait", lbar, 1), 0.0);
    EXPECT_NEAR(cube.value("critical_path_activities", lbar, 0), 0.1, kEps);
    EXPECT_EQ(cube.value("critical_path_activities", lbar, 1), 0.0);
    EXPECT_NEAR(cube.value("critical_path_activities", kMainPar, 0), 0.2, kEps);
    EXPECT_NEAR(cube.value("critical_path_activities", kMainPar, 1), 0.2, kEps);
    EXPECT_NEAR(cube.value("critical_path_activities", kLoop + "/loop_body", 0), 1.0, kEps);
    EXPECT_NEAR(cube.value("critical_path_activities", kLoop + "/loop_body", 1), 1.2, kEps);
    EXPECT_NEAR(cube.value("critical_imbalance_impact", lbar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_imbalance_impact", kMain, 0), 2.2, kEps);
    EXPECT_NEAR(cube.value("critical_imbalance_impact", kMain + "/MPI_Init", 0), 0.1, kEps);
    EXPECT_EQ(cube.value("critical_imbalance_impact", kMainPar, 0), 0.0);
    EXPECT_EQ(cube.value("critical_imbalance_impact", lbar, 1), 0.0);
  }
}

}  // namespace
}  // namespace cpreplay::testing
