// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: --partial on hybrid MPI+OpenMP traces whose rank stopped inside a parallel
// region (hand-timed; values read back per thread location).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/e2e/scenario.hpp"
#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

constexpr double kEps = 1e-9;
const std::string kPar = "!$omp parallel @a.c:3";
const std::string kIbar = "!$omp implicit barrier @a.c:5";
const std::string kMainPar = "sim.exe/main/" + kPar;
const std::string kWork = kMainPar + "/work";
const std::string kBar = kMainPar + "/" + kIbar;

/// Rank 0 runs to the end: fork at 1.0, its master works 1.0-1.5 and its thread 1.0-1.7, the
/// implicit barrier releases both at 1.8, the join is at 1.9, MPI_Finalize 4.0-4.5, main ends
/// at 5.0. Rank 1 forks at 1.0 too; its master works 1.0-1.2 and enters the barrier at 1.2,
/// where its events end. Its thread works from 1.0 and, if `worker_reaches_barrier`, enters
/// the barrier at 1.15; otherwise its events end inside `work`.
void write_crash_in_region(TraceWriter& w, bool worker_reaches_barrier) {
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) {
    scenario::begin_rank(w, r);
    w.omp_fork(r, 1.0, 2);
    for (int t = 0; t < 2; ++t) {
      w.omp_team_begin(r, t, 1.0);
      w.thread_enter(r, t, 1.0, kPar);
      w.thread_enter(r, t, 1.0, "work");
    }
  }
  for (int t = 0; t < 2; ++t) {
    const double done = t == 0 ? 1.5 : 1.7;
    w.thread_leave(0, t, done, "work");
    w.thread_enter(0, t, done, kIbar);
    w.thread_leave(0, t, 1.8, kIbar);
    w.thread_leave(0, t, 1.8, kPar);
    w.omp_team_end(0, t, 1.8);
  }
  w.omp_join(0, 1.9);
  w.finalize(0, 4.0, 4.5);
  w.leave(0, 5.0, "main");
  w.program_end(0, 5.0);
  w.thread_leave(1, 0, 1.2, "work");
  w.thread_enter(1, 0, 1.2, kIbar);
  if (worker_reaches_barrier) {
    w.thread_leave(1, 1, 1.15, "work");
    w.thread_enter(1, 1, 1.15, kIbar);
  }
}

struct PartialRun {
  CubeFile cube;
  Json summary;
};

PartialRun analyze_partial(TraceWriter& w, const TempDir& dir, int processes) {
  w.write(dir / "t");
  const RunResult run = run_cpreplay(processes, {"-q", "-o", dir / "r.cubex", "--json",
                                                 dir / "s.json", "--partial",
                                                 dir / "t/traces.otf2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return PartialRun{read_cube(dir / "r.cubex"), read_json_file(dir / "s.json")};
}

// Without --partial the crashed hybrid rank is refused in one line that names the option.
TEST(OpenMpPartial, CrashInParallelRegionWithoutOption_RefusedWithHint) {
  TempDir dir;
  TraceWriter w(2);
  write_crash_in_region(w, true);
  w.write(dir / "t");
  const RunResult run = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("--partial"), std::string::npos) << run.err;
  // One line of cpreplay's (the rest is mpirun's report of the exit code).
  std::size_t lines = 0;
  for (std::size_t at = run.err.find("cpreplay:"); at != std::string::npos;
       at = run.err.find("cpreplay:", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << run.err;
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
}

// Both threads of rank 1 entered the barrier before its events end (rank 1's master last, at
// 1.2): the cut is at 1.2 on every thread of both ranks, the barrier instance stays, closed at
// the cut. By hand: rank 1's thread waits 1.15-1.2 = 0.05 in the barrier; work: rank 0 0.2 on
// both threads (1.0-1.2), rank 1 0.2 (master) and 0.15 (thread); regions closed at the cut:
// rank 0 master work, parallel, main, the program; thread work, parallel; rank 1 master barrier,
// parallel, main, the program; thread barrier, parallel = 12. Locations: 0, 1 = rank 0; 2, 3 =
// rank 1.
TEST(OpenMpPartial, CrashInsideBarrier_CutOnEveryThread) {
  for (int processes : {2, 1}) {
    TempDir dir;
    TraceWriter w(2);
    write_crash_in_region(w, true);
    const PartialRun run = analyze_partial(w, dir, processes);
    const CubeFile& cube = run.cube;
    ASSERT_EQ(cube.location_names.size(), 4u);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", kBar, 3), 0.05, kEps) << processes;
    EXPECT_EQ(cube.value("omp_ibarrier_wait", kBar, 2), 0.0);
    EXPECT_NEAR(cube.value("time", kWork, 0), 0.2, kEps);
    EXPECT_NEAR(cube.value("time", kWork, 1), 0.2, kEps);
    EXPECT_NEAR(cube.value("time", kWork, 2), 0.2, kEps);
    EXPECT_NEAR(cube.value("time", kWork, 3), 0.15, kEps);
    EXPECT_EQ(cube.value("visits", kBar, 3), 1.0);
    EXPECT_EQ(cube.value("visits", kBar, 0), 0.0);  // rank 0 reached its barrier after the cut
    // Root causes up to the cut: rank 1's master, last into the barrier, is charged with its
    // thread's 0.05 s there (d = work 0.2 - 0.15); idleness only before the forks (MPI_Init
    // 0.1, main 0.1-1.0 on both masters, x 1 worker): the regions the cut falls into have no
    // serial section after them.
    EXPECT_NEAR(cube.value("delay_ompbarrier", kWork, 2), 0.05, kEps);
    for (int master : {0, 2}) {
      EXPECT_NEAR(cube.value("delay_ompidle", "sim.exe/main", master), 0.9, kEps) << master;
      EXPECT_NEAR(cube.value("delay_ompidle", "sim.exe/main/MPI_Init", master), 0.1, kEps);
    }
    const Json& partial = run.summary["partial"];
    EXPECT_TRUE(partial["applied"].boolean);
    EXPECT_EQ(partial["first_rank_to_stop"].number, 1);
    EXPECT_EQ(partial["incomplete_ranks"].number, 1);
    EXPECT_EQ(partial["regions_closed"].number, 12);
  }
}

// Rank 1's master entered the barrier but its thread never did: the team keeps only the
// barriers all of it entered, so the master's barrier Enter is dropped (1 more event cut) and
// its parallel region closed at the cut; no barrier instance, no barrier waiting on rank 1.
// Regions closed: rank 0 as above (6), rank 1 master parallel, main and the program, thread
// work and parallel (5).
TEST(OpenMpPartial, CrashBeforeTheTeamReachedTheBarrier_BarrierDropped) {
  TempDir dir;
  TraceWriter w(2);
  write_crash_in_region(w, false);
  const PartialRun run = analyze_partial(w, dir, 2);
  const CubeFile& cube = run.cube;
  ASSERT_EQ(cube.location_names.size(), 4u);
  EXPECT_EQ(cube.value("visits", kBar, 2), 0.0);
  EXPECT_EQ(cube.value("visits", kBar, 3), 0.0);
  EXPECT_EQ(cube.value("omp_ibarrier_wait", kBar, 2), 0.0);
  EXPECT_NEAR(cube.value("time", kWork, 2), 0.2, kEps);
  EXPECT_NEAR(cube.value("time", kWork, 3), 0.2, kEps);  // 1.0 to the cut
  EXPECT_NEAR(cube.value("time", kMainPar, 2), 0.2, kEps);  // inclusive: its work
  EXPECT_EQ(run.summary["partial"]["regions_closed"].number, 11);
}

}  // namespace
}  // namespace cpreplay::testing
