// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: hand-timed hybrid MPI+OpenMP scenarios (fork/join, barriers, critical sections,
// lock API, limited parallelism), analyzed by `mpirun cpreplay`, read back per thread location.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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
const std::string kEbar = "!$omp barrier @a.c:7";
const std::string kCrit = "!$omp critical @a.c:9";
const std::string kSblock = "!$omp critical sblock @a.c:9";
const std::string kMainPar = "sim.exe/main/" + kPar;

/// A rank's program, main and MPI_Init 0-0.1; the caller adds the parallel regions; closed by
/// end_rank.
using scenario::begin_rank;

void end_rank(TraceWriter& w, int r) {
  w.finalize(r, 4.0, 4.5);
  w.leave(r, 5.0, "main");
  w.program_end(r, 5.0);
}

/// Thread t begins the team and enters the parallel region at t0.
void team_in(TraceWriter& w, int r, int t, double t0) {
  w.omp_team_begin(r, t, t0);
  w.thread_enter(r, t, t0, kPar);
}

void team_out(TraceWriter& w, int r, int t, double t1) {
  w.thread_leave(r, t, t1, kPar);
  w.omp_team_end(r, t, t1);
}

CubeFile analyze(TraceWriter& w, const TempDir& dir, int processes, std::string* err = nullptr) {
  w.write(dir / "t");
  const RunResult run =
      run_cpreplay(processes, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (err) *err = run.err;
  return read_cube(dir / "r.cubex");
}

/// The critical-path profile summed over all call paths and locations (the path length).
double critical_path_total(const CubeFile& cube) {
  double sum = 0.0;
  const auto it = cube.values.find("critical_path");
  if (it == cube.values.end()) return 0.0;
  for (const auto& [path, locations] : it->second)
    for (double v : locations) sum += v;
  return sum;
}

// Fork at 1.0; thread t enters the team at 1.1 + 0.1 t, works until 2.0 + 0.5 t, waits in the
// implicit barrier until 3.1 + 0.05 t; the master joins at 3.4. Locations are rank-major:
// 0 = rank 0 master, 1 and 2 its threads.
TEST(OpenMp, ForkJoinAndImplicitBarrier_HandComputed) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(3);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 3);
  for (int t = 0; t < 3; ++t) {
    team_in(w, 0, t, 1.1 + 0.1 * t);
    w.thread_enter(0, t, 1.1 + 0.1 * t, "work");
    w.thread_leave(0, t, 2.0 + 0.5 * t, "work");
    w.thread_enter(0, t, 2.0 + 0.5 * t, kIbar);
    w.thread_leave(0, t, 3.1 + 0.05 * t, kIbar);
    team_out(w, 0, t, 3.1 + 0.05 * t);
  }
  w.omp_join(0, 3.4);
  end_rank(w, 0);
  std::string err;
  const CubeFile cube = analyze(w, dir, 1, &err);
  ASSERT_EQ(cube.location_names.size(), 3u);
  EXPECT_EQ(cube.location_names[1], "OMP thread 1");
  EXPECT_EQ(cube.process_names[2], "MPI Rank 0");
  EXPECT_EQ(err, "");  // every stage follows the threads: no note
  // Critical path (MPI_Init's Enter at 0 to MPI_Finalize's at 4.0): main 0.1-1.0 on the master,
  // then thread 2 (last into the barrier, at 3.0) from the fork: 0.3 fork-to-Enter and its work
  // 1.3-3.0; the master's barrier after the last arrival (3.0-3.1), its Leave to the join
  // (3.1-3.4), main up to MPI_Finalize (3.4-4.0).
  ASSERT_NE(cube.metric("critical_path"), nullptr);
  EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/MPI_Init", 0), 0.1, kEps);
  EXPECT_NEAR(cube.value("critical_path", "sim.exe/main", 0), 0.9 + 0.6, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar + "/work", 2), 1.7, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar, 2), 0.3, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar + "/" + kIbar, 0), 0.1, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.3, kEps);
  EXPECT_EQ(cube.value("critical_path", kMainPar + "/work", 0), 0.0);
  EXPECT_EQ(cube.value("critical_path", kMainPar + "/work", 1), 0.0);
  EXPECT_NEAR(critical_path_total(cube), 4.0, kEps);
  // The last thread arrives at 3.0.
  const std::string bar = kMainPar + "/" + kIbar;
  EXPECT_NEAR(cube.value("omp_ibarrier_wait", bar, 0), 1.0, kEps);
  EXPECT_NEAR(cube.value("omp_ibarrier_wait", bar, 1), 0.5, kEps);
  EXPECT_EQ(cube.value("omp_ibarrier_wait", bar, 2), 0.0);
  // Fork: Enter parallel - fork; management adds join - Leave parallel.
  for (int t = 0; t < 3; ++t) {
    EXPECT_NEAR(cube.value("omp_fork", kMainPar, t), 0.1 * (t + 1), kEps) << t;
    EXPECT_NEAR(cube.value("omp_management", kMainPar, t),
                0.1 * (t + 1) + (3.4 - (3.1 + 0.05 * t)), kEps) << t;
    // time (stored inclusive) of the parallel region runs from the fork to the join everywhere.
    EXPECT_NEAR(cube.value("time", kMainPar, t), 2.4, kEps) << t;
    EXPECT_EQ(cube.value("visits", kMainPar, t), 1.0) << t;
    EXPECT_NEAR(cube.value("omp_ibarrier", bar, t), 3.1 + 0.05 * t - (2.0 + 0.5 * t), kEps);
  }
  EXPECT_NEAR(cube.value("time", "sim.exe", 0), 5.0, kEps);
  // A worker's time is CPU allocation time, as after Cube's remapper: 2.4 s in the parallel
  // region and 2.6 s idle while the master runs serial code (time includes omp_idle_threads).
  EXPECT_NEAR(cube.value("time", "sim.exe", 1), 5.0, kEps);
  EXPECT_EQ(cube.value("visits", "sim.exe/main", 1), 0.0);
  // The master's parallel region time less management is its computation: 2.4 - 0.9 (work)
  // - 1.1 (barrier) - 0.4 (management) = 0.
  EXPECT_NEAR(cube.value("comp", kMainPar, 0), 0.0, kEps);
  // Idle threads: while the master is outside the parallel region (main 2.0 s, MPI_Init 0.1 s,
  // MPI_Finalize 0.5 s), each worker is idle.
  for (int t = 1; t < 3; ++t) {
    EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main", t), 2.0, kEps);
    EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main/MPI_Init", t), 0.1, kEps);
    EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main/MPI_Finalize", t), 0.5, kEps);
    EXPECT_EQ(cube.value("omp_limited_parallelism", kMainPar, t), 0.0);
  }
  EXPECT_EQ(cube.value("omp_idle_threads", "sim.exe/main", 0), 0.0);
}

// The summary's OpenMP part, from the same fork/join scenario: idle threads 2 x 2.6 s, barrier
// waiting 1.0 + 0.5 s, management 0.4 + 0.45 + 0.5 s, allocation 3 x 5.0 s (a worker's time
// includes its 2.6 s idle).
TEST(OpenMp, SummaryJson_HandComputed) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(3);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 3);
  for (int t = 0; t < 3; ++t) {
    team_in(w, 0, t, 1.1 + 0.1 * t);
    w.thread_enter(0, t, 1.1 + 0.1 * t, "work");
    w.thread_leave(0, t, 2.0 + 0.5 * t, "work");
    w.thread_enter(0, t, 2.0 + 0.5 * t, kIbar);
    w.thread_leave(0, t, 3.1 + 0.05 * t, kIbar);
    team_out(w, 0, t, 3.1 + 0.05 * t);
  }
  w.omp_join(0, 3.4);
  end_rank(w, 0);
  w.write(dir / "t");
  const RunResult run = run_cpreplay(
      1, {"-q", "--json", dir / "s.json", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json j = read_json_file(dir / "s.json");
  const Json& o = j["openmp"];
  EXPECT_EQ(j["events"].number, 34.0);  // 18 on the master, 8 on each worker
  EXPECT_NEAR(j["allocation_time_s"].number, 15.0, kEps);
  EXPECT_EQ(o["thread_locations"].number, 3.0);
  EXPECT_NEAR(o["idle_threads_serial_s"].number, 5.2, kEps);
  EXPECT_NEAR(o["ibarrier_wait_s"].number, 1.5, kEps);
  EXPECT_NEAR(o["management_s"].number, 1.35, kEps);
  EXPECT_NEAR(o["worker_time_s"].number, 10.0, kEps);
  ASSERT_EQ(o["barriers"].array.size(), 1u);
  const Json& b = o["barriers"].array[0];
  EXPECT_EQ(b["construct"].string, kPar);
  EXPECT_EQ(b["last_to_arrive"].array.at(0).string, "0.2");
  EXPECT_EQ(b["waiting_most"].array.at(0)["thread"].string, "0.0");
  EXPECT_NEAR(b["waiting_most"].array.at(0)["seconds"].number, 1.0, kEps);
  // The critical path's finding first (thread 2's work: 1.7 s on the path, the threads' average
  // x is 3.9 / 3 = 1.3, so 0.4 s of imbalance, 10 % of the 4.0 s path and 30.8 % of work's
  // average time per thread; SummaryCriticalPathAndImpact_HandComputed has the table), then the
  // OpenMP ones. The parallel region's own imbalance (its management) is no finding.
  ASSERT_EQ(j["findings"].array.size(), 3u);
  EXPECT_EQ(j["findings"].array[0].string,
            "work: load imbalance costs 0.40 s (10.0 % of the runtime, 30.8 % of its average "
            "time); the same threads carry the overload throughout (thread 2 of rank 0 has the "
            "most): a static redistribution of work fixes it");
  EXPECT_EQ(j["findings"].array[1].string.rfind("Idle threads: worker threads are idle for 5.20 s "
                                                "(34.7 % of the allocation time)", 0),
            0u) << j["findings"].array[1].string;
  EXPECT_EQ(j["findings"].array[2].string.rfind("OpenMP imbalance in " + kPar +
                                                ": threads wait 1.50 s", 0),
            0u) << j["findings"].array[2].string;
  EXPECT_NE(run.out.find("idle threads (serial code)"), std::string::npos) << run.out;
}

// Two parallel regions: an explicit barrier then the implicit one in the first, the implicit one
// in the second; barrier instances are matched per team, in order.
TEST(OpenMp, ExplicitAndImplicitBarriers_PerInstance) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(2);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 2);
  for (int t = 0; t < 2; ++t) {
    team_in(w, 0, t, 1.0);
    w.thread_enter(0, t, 1.0, "phase1");
    w.thread_leave(0, t, t == 0 ? 1.5 : 2.0, "phase1");
    w.thread_enter(0, t, t == 0 ? 1.5 : 2.0, kEbar);
    w.thread_leave(0, t, 2.1, kEbar);
    w.thread_enter(0, t, 2.1, "phase2");
    w.thread_leave(0, t, t == 0 ? 2.1 : 2.3, "phase2");
    w.thread_enter(0, t, t == 0 ? 2.1 : 2.3, kIbar);
    w.thread_leave(0, t, 2.3, kIbar);
    team_out(w, 0, t, 2.3);
  }
  w.omp_join(0, 2.3);
  w.omp_fork(0, 3.0, 2);
  for (int t = 0; t < 2; ++t) {
    team_in(w, 0, t, 3.0);
    w.thread_enter(0, t, 3.0, "phase2");
    w.thread_leave(0, t, t == 0 ? 3.5 : 3.1, "phase2");
    w.thread_enter(0, t, t == 0 ? 3.5 : 3.1, kIbar);
    w.thread_leave(0, t, 3.6, kIbar);
    team_out(w, 0, t, 3.6);
  }
  w.omp_join(0, 3.6);
  end_rank(w, 0);
  const CubeFile cube = analyze(w, dir, 1);
  EXPECT_NEAR(cube.value("omp_ebarrier_wait", kMainPar + "/" + kEbar, 0), 0.5, kEps);
  EXPECT_EQ(cube.value("omp_ebarrier_wait", kMainPar + "/" + kEbar, 1), 0.0);
  EXPECT_NEAR(cube.value("omp_ibarrier_wait", kMainPar + "/" + kIbar, 0), 0.2, kEps);
  EXPECT_NEAR(cube.value("omp_ibarrier_wait", kMainPar + "/" + kIbar, 1), 0.4, kEps);
  EXPECT_NEAR(cube.value("omp_ebarrier", kMainPar + "/" + kEbar, 0), 0.6, kEps);
  EXPECT_EQ(cube.value("visits", kMainPar, 1), 2.0);
}

// Thread 0 holds the critical section 1.1-1.6; thread 1 asks at 1.2 and gets it at 1.6.
TEST(OpenMp, CriticalSectionContention_HandComputed) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(2);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 2);
  team_in(w, 0, 0, 1.0);
  team_in(w, 0, 1, 1.0);
  w.thread_enter(0, 0, 1.1, kCrit);
  w.omp_acquire_lock(0, 0, 1.1, 7, 1);
  w.thread_enter(0, 0, 1.1, kSblock);
  w.thread_leave(0, 0, 1.6, kSblock);
  w.omp_release_lock(0, 0, 1.6, 7, 1);
  w.thread_leave(0, 0, 1.6, kCrit);
  w.thread_enter(0, 1, 1.2, kCrit);
  w.omp_acquire_lock(0, 1, 1.6, 7, 2);
  w.thread_enter(0, 1, 1.6, kSblock);
  w.thread_leave(0, 1, 1.8, kSblock);
  w.omp_release_lock(0, 1, 1.8, 7, 2);
  w.thread_leave(0, 1, 1.8, kCrit);
  w.thread_enter(0, 0, 1.6, kIbar);
  w.thread_enter(0, 1, 1.8, kIbar);
  for (int t = 0; t < 2; ++t) {
    w.thread_leave(0, t, 1.9, kIbar);
    team_out(w, 0, t, 1.9);
  }
  w.omp_join(0, 1.9);
  end_rank(w, 0);
  const CubeFile cube = analyze(w, dir, 1);
  const std::string crit = kMainPar + "/" + kCrit;
  EXPECT_EQ(cube.value("omp_lock_contention_critical", crit, 0), 0.0);
  EXPECT_NEAR(cube.value("omp_lock_contention_critical", crit, 1), 0.4, kEps);
  EXPECT_EQ(cube.value("omp_lock_contention_api", crit, 1), 0.0);
  EXPECT_NEAR(cube.value("omp_critical", crit, 1), 0.6 - 0.2, kEps);  // critical less sblock
  EXPECT_NEAR(cube.value("omp_ibarrier_wait", kMainPar + "/" + kIbar, 0), 0.2, kEps);
}

// omp_set_lock: thread 0 takes lock 3 at 1.1 and frees it at 1.5; thread 1 asks at 1.2.
TEST(OpenMp, LockApiContention_HandComputed) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(2);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 2);
  team_in(w, 0, 0, 1.0);
  team_in(w, 0, 1, 1.0);
  w.thread_enter(0, 0, 1.1, "omp_set_lock");
  w.omp_acquire_lock(0, 0, 1.1, 3, 1);
  w.thread_leave(0, 0, 1.1, "omp_set_lock");
  w.thread_enter(0, 0, 1.5, "omp_unset_lock");
  w.omp_release_lock(0, 0, 1.5, 3, 1);
  w.thread_leave(0, 0, 1.5, "omp_unset_lock");
  w.thread_enter(0, 1, 1.2, "omp_set_lock");
  w.omp_acquire_lock(0, 1, 1.5, 3, 2);
  w.thread_leave(0, 1, 1.5, "omp_set_lock");
  w.thread_enter(0, 1, 1.7, "omp_unset_lock");
  w.omp_release_lock(0, 1, 1.7, 3, 2);
  w.thread_leave(0, 1, 1.7, "omp_unset_lock");
  for (int t = 0; t < 2; ++t) team_out(w, 0, t, 1.8);
  w.omp_join(0, 1.8);
  end_rank(w, 0);
  const CubeFile cube = analyze(w, dir, 1);
  const std::string set = kMainPar + "/omp_set_lock";
  EXPECT_EQ(cube.value("omp_lock_contention_api", set, 0), 0.0);
  EXPECT_NEAR(cube.value("omp_lock_contention_api", set, 1), 0.3, kEps);
  EXPECT_NEAR(cube.value("omp_lock_api", set, 1), 0.3, kEps);
  EXPECT_EQ(cube.value("omp_lock_contention_critical", set, 1), 0.0);
}

// A team of 2 on a rank with 3 threads: thread 2 is idle from the fork to the join.
TEST(OpenMp, SmallerTeam_LimitedParallelism) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(3);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 2);
  for (int t = 0; t < 2; ++t) {
    team_in(w, 0, t, 1.0);
    team_out(w, 0, t, 2.0);
  }
  w.omp_join(0, 2.25);
  end_rank(w, 0);
  const CubeFile cube = analyze(w, dir, 1);
  EXPECT_NEAR(cube.value("omp_limited_parallelism", kMainPar, 2), 1.25, kEps);
  EXPECT_NEAR(cube.value("omp_idle_threads", kMainPar, 2), 1.25, kEps);
  EXPECT_EQ(cube.value("omp_limited_parallelism", kMainPar, 1), 0.0);
  EXPECT_NEAR(cube.value("omp_management", kMainPar, 1), 0.25, kEps);
  // Its time is its idle time there (allocation time, as after Cube's remapper), and over the
  // run 5.0 s like every thread: 3.75 s serial, 1.25 s left out of the team.
  EXPECT_NEAR(cube.value("time", kMainPar, 2), 1.25, kEps);
  EXPECT_NEAR(cube.value("time", "sim.exe", 2), 5.0, kEps);
  EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main", 2), 3.75 - 0.1 - 0.5, kEps);
}

// Two ranks with two threads each, MPI on the masters: a Late Sender is found exactly as in a
// pure-MPI trace, on the master thread's location, also with both ranks on one process.
TEST(OpenMp, LateSenderOnMasters_SameOnOneProcess) {
  for (int processes : {2, 1}) {
    TempDir dir;
    TraceWriter w(2);
    w.set_threads_per_process(2);
    for (int r = 0; r < 2; ++r) {
      begin_rank(w, r);
      w.omp_fork(r, 1.0, 2);
      for (int t = 0; t < 2; ++t) {
        team_in(w, r, t, 1.0);
        team_out(w, r, t, r == 0 ? 2.0 : 1.5);
      }
      w.omp_join(r, r == 0 ? 2.0 : 1.5);
    }
    w.send(0, 3.0, 3.1, 1, 7, 64);
    w.recv(1, 1.6, 3.2, 0, 7, 64);
    for (int r = 0; r < 2; ++r) end_rank(w, r);
    const CubeFile cube = analyze(w, dir, processes);
    ASSERT_EQ(cube.location_names.size(), 4u);
    // Location 2 is rank 1's master thread.
    EXPECT_NEAR(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 2), 1.4, kEps) << processes;
    EXPECT_EQ(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 3), 0.0);
    EXPECT_EQ(cube.value("bytes_sent", "sim.exe/main/MPI_Send", 0), 64.0);
    EXPECT_NEAR(cube.value("time", kMainPar, 3), 0.5, kEps);
  }
}

// Critical path through a worksharing loop: parallel { for { loop_body } (implicit barrier) }
// (implicit barrier), thread 1 slow. Thread t enters at 1.1 + 0.1 t, its loop body ends at 2.0,
// 3.0, 2.2; the loop barrier releases thread t at 3.2 + 0.01 t, the end barrier at 3.5 + 0.01 t;
// the master joins at 3.6. Backwards from MPI_Finalize (4.0): main 3.6-4.0 and the parallel
// region 3.5-3.6 on the master, the end barrier after the last arrival (thread 2 at 3.22) on the
// master (3.22-3.5); thread 2's loop barrier after the last arrival (thread 1 at 3.0) 3.0-3.22;
// thread 1's loop body 1.2-3.0 and fork-to-Enter 1.0-1.2; the master's main 0.1-1.0, MPI_Init.
TEST(OpenMp, CriticalPathThroughSlowLoopThread_HandComputed) {
  const std::string loop = kMainPar + "/!$omp for @a.c:4";
  const std::string lbar_name = "!$omp implicit barrier @a.c:6";
  {
    const int processes = 1;
    TempDir dir;
    TraceWriter w(1);
    w.set_threads_per_process(3);
    begin_rank(w, 0);
    w.omp_fork(0, 1.0, 3);
    const double body_end[3] = {2.0, 3.0, 2.2};
    for (int t = 0; t < 3; ++t) {
      const double in = 1.1 + 0.1 * t;
      team_in(w, 0, t, in);
      w.thread_enter(0, t, in, "!$omp for @a.c:4");
      w.thread_enter(0, t, in, "loop_body");
      w.thread_leave(0, t, body_end[t], "loop_body");
      w.thread_enter(0, t, body_end[t], lbar_name);
      w.thread_leave(0, t, 3.2 + 0.01 * t, lbar_name);
      w.thread_leave(0, t, 3.2 + 0.01 * t, "!$omp for @a.c:4");
      w.thread_enter(0, t, 3.2 + 0.01 * t, kIbar);
      w.thread_leave(0, t, 3.5 + 0.01 * t, kIbar);
      team_out(w, 0, t, 3.5 + 0.01 * t);
    }
    w.omp_join(0, 3.6);
    end_rank(w, 0);
    const CubeFile cube = analyze(w, dir, processes);
    ASSERT_EQ(cube.location_names.size(), 3u);
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main", 0), 0.9 + 0.4, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar + "/" + kIbar, 0), 0.28, kEps);
    EXPECT_NEAR(cube.value("critical_path", loop + "/" + lbar_name, 2), 0.22, kEps);
    EXPECT_NEAR(cube.value("critical_path", loop + "/loop_body", 1), 1.8, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 1), 0.2, kEps);
    EXPECT_EQ(cube.value("critical_path", loop + "/loop_body", 0), 0.0);
    EXPECT_EQ(cube.value("critical_path", loop + "/loop_body", 2), 0.0);
    EXPECT_EQ(cube.value("critical_path", loop + "/" + lbar_name, 1), 0.0);
    EXPECT_NEAR(critical_path_total(cube), 4.0, kEps);
    // Activities per thread (docs/openmp.md): min(global profile, the thread's non-waiting time).
    // loop_body: profile 1.8; threads ran 0.9, 1.8, 0.9.
    const double body[3] = {0.9, 1.8, 0.9};
    // The loop barrier (profile 0.22): time less the barrier wait, 1.2 - 1.0, 0.21 - 0, 1.02 - 0.8.
    const double lbar[3] = {0.2, 0.21, 0.22};
    // The parallel region (profile 0.3): the master's management 0.1 + 0.1; a worker's fork part
    // only (0.2, 0.3), as scout's runtime ends a worker's region at its Leave.
    const double par[3] = {0.2, 0.2, 0.3};
    for (int t = 0; t < 3; ++t) {
      EXPECT_NEAR(cube.value("critical_path_activities", loop + "/loop_body", t), body[t], kEps);
      EXPECT_NEAR(cube.value("critical_path_activities", loop + "/" + lbar_name, t), lbar[t], kEps);
      EXPECT_NEAR(cube.value("critical_path_activities", kMainPar, t), par[t], kEps) << t;
    }
    // The region's closing barrier is all waiting on the workers (scout.hyb), 0.3 - 0.02 on the
    // master.
    EXPECT_NEAR(cube.value("critical_path_activities", kMainPar + "/" + kIbar, 0), 0.28, kEps);
    EXPECT_EQ(cube.value("critical_path_activities", kMainPar + "/" + kIbar, 1), 0.0);
    EXPECT_EQ(cube.value("critical_path_activities", kMainPar + "/" + kIbar, 2), 0.0);
    // main: the master ran 0.9 + 0.4 + 0.5 (after MPI_Finalize) of which 1.3 is on the path.
    EXPECT_NEAR(cube.value("non_critical_path_activities", "sim.exe/main", 0), 0.5, kEps);
    EXPECT_EQ(cube.value("non_critical_path_activities", "sim.exe/main", 1), 0.0);
  }
}

// A tie at a barrier: threads 1 and 2 finish their work at the same tick (3.0) and every thread
// leaves the barrier at 3.1. Exactly one of them (the lowest thread number, 1) carries the path,
// so the profile adds up to the path length (4.0); Scalasca would credit both (6.0).
TEST(OpenMp, CriticalPathTieAtBarrier_OneThreadCarriesIt) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(3);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 3);
  for (int t = 0; t < 3; ++t) {
    team_in(w, 0, t, 1.1 + 0.1 * t);
    w.thread_enter(0, t, 1.1 + 0.1 * t, "work");
    w.thread_leave(0, t, t == 0 ? 2.0 : 3.0, "work");
    w.thread_enter(0, t, t == 0 ? 2.0 : 3.0, kIbar);
    w.thread_leave(0, t, 3.1, kIbar);
    team_out(w, 0, t, 3.1);
  }
  w.omp_join(0, 3.4);
  end_rank(w, 0);
  const CubeFile cube = analyze(w, dir, 1);
  const std::string bar = kMainPar + "/" + kIbar;
  EXPECT_NEAR(cube.value("critical_path", kMainPar + "/work", 1), 1.8, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar, 1), 0.2, kEps);
  EXPECT_NEAR(cube.value("critical_path", bar, 0), 0.1, kEps);
  EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.3, kEps);
  for (const std::string& path : {kMainPar, kMainPar + "/work", bar})
    EXPECT_EQ(cube.value("critical_path", path, 2), 0.0) << path;
  EXPECT_NEAR(critical_path_total(cube), 4.0, kEps);
}

// A Late Sender between masters whose sender was late because of a slow worker: rank 0's thread 1
// works 1.2-2.5 (its master 1.1-1.5), the barrier releases at 2.6, the join is at 2.7 and rank 0
// sends at 2.8; rank 1's balanced team joins at 1.7 and its MPI_Recv waits 1.8-2.8 (Late Sender
// 1.0). Backwards from rank 1's MPI_Finalize (4.1): rank 1's main 2.95-4.1 and MPI_Recv less the
// waiting (0.15), then rank 0 from its MPI_Send: main 2.7-2.8, the parallel region 2.6-2.7 and
// the barrier after the last arrival 2.5-2.6 on the master, thread 1's work 1.2-2.5 and fork
// 1.0-1.2, the master's main 0.1-1.0 and MPI_Init. The same with both ranks on one process.
TEST(OpenMp, CriticalPathLateSenderDelayedByWorker_HandComputed) {
  for (int processes : {2, 1}) {
    TempDir dir;
    TraceWriter w(2);
    w.set_threads_per_process(2);
    for (int r = 0; r < 2; ++r) {
      begin_rank(w, r);
      w.omp_fork(r, 1.0, 2);
      for (int t = 0; t < 2; ++t) {
        team_in(w, r, t, 1.1 + 0.1 * t);
        w.thread_enter(r, t, 1.1 + 0.1 * t, "work");
        const double done = r == 0 && t == 1 ? 2.5 : 1.5;
        w.thread_leave(r, t, done, "work");
        w.thread_enter(r, t, done, kIbar);
        w.thread_leave(r, t, r == 0 ? 2.6 : 1.6, kIbar);
        team_out(w, r, t, r == 0 ? 2.6 : 1.6);
      }
      w.omp_join(r, r == 0 ? 2.7 : 1.7);
    }
    w.send(0, 2.8, 2.9, 1, 7, 64);
    w.recv(1, 1.8, 2.95, 0, 7, 64);
    for (int r = 0; r < 2; ++r) {
      w.finalize(r, r == 0 ? 4.0 : 4.1, 4.5);
      w.leave(r, 5.0, "main");
      w.program_end(r, 5.0);
    }
    const CubeFile cube = analyze(w, dir, processes);
    ASSERT_EQ(cube.location_names.size(), 4u);
    // Locations: 0 = rank 0 master, 1 = its thread 1, 2 = rank 1 master, 3 = its thread 1.
    EXPECT_NEAR(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 2), 1.0, kEps);
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main", 2), 1.15, kEps) << processes;
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/MPI_Recv", 2), 0.15, kEps);
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main", 0), 0.9 + 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/MPI_Init", 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar + "/" + kIbar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar + "/work", 1), 1.3, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 1), 0.2, kEps);
    EXPECT_EQ(cube.value("critical_path", kMainPar + "/work", 0), 0.0);
    EXPECT_EQ(cube.value("critical_path", kMainPar + "/work", 3), 0.0);
    EXPECT_EQ(cube.value("critical_path", kMainPar, 2), 0.0);
    EXPECT_NEAR(critical_path_total(cube), 4.1, kEps);
  }
}

/// 2 ranks x 2 threads, rank 0's thread 1 slow in `work` (described with the test below; the
/// summary test after it analyzes the same trace).
void write_slow_thread_team(TraceWriter& w) {
  for (int r = 0; r < 2; ++r) {
    begin_rank(w, r);
    w.omp_fork(r, 1.0, 2);
    const double release = r == 0 ? 2.6 : 1.7;
    for (int t = 0; t < 2; ++t) {
      team_in(w, r, t, 1.1 + 0.1 * t);
      w.thread_enter(r, t, 1.1 + 0.1 * t, "work");
      const double done = r == 0 ? (t == 1 ? 2.5 : 1.5) : 1.5 + 0.1 * t;
      w.thread_leave(r, t, done, "work");
      w.thread_enter(r, t, done, kIbar);
      w.thread_leave(r, t, release, kIbar);
      team_out(w, r, t, release);
    }
    w.omp_join(r, r == 0 ? 2.7 : 1.8);
    w.finalize(r, r == 0 ? 4.0 : 3.9, 4.5);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
}

// critical_path_imbalance on a hybrid trace, as the Cube browser derives it for Scalasca's hybrid
// report (scout.spec, docs/openmp.md "Critical-path imbalance per thread"): every thread is a
// location, and per call path e and location l
//   cpi(e, l) = max(0, (Σcp(e) − Σx(e) / #locations) / Σcp(e)) × cp(e, l),
// where Σcp and Σx sum over all 4 locations the inclusive (call path plus callees) critical path
// and x = time − MPI waits − omp_management − OpenMP barrier waits − lock contention −
// omp_ordered − omp_idle_threads, and only where l's own inclusive critical path is positive.
//
// 2 ranks x 2 threads; locations 0 = rank 0 master, 1 = its thread 1, 2 = rank 1 master, 3 = its
// thread 1. Both: MPI_Init 0-0.1, fork at 1.0, thread t enters the parallel region at 1.1 + 0.1 t
// and runs `work` until it enters the implicit barrier. Rank 0's thread 1 is slow: work 1.2-2.5
// (its master 1.1-1.5), barrier release 2.6, join 2.7. Rank 1 is balanced: work 1.1-1.5 and
// 1.2-1.6, release 1.7, join 1.8. MPI_Finalize: rank 0 enters at 4.0, rank 1 at 3.9 (Wait at
// Finalize 0.1 on rank 1), both leave at 4.5; main ends at 5.0.
//
// Critical path (backwards from rank 0's MPI_Finalize at 4.0, all on rank 0): main 2.7-4.0, the
// parallel region join part 2.6-2.7 (master), the barrier after the last arrival 2.5-2.6
// (master), thread 1's work 1.2-2.5 and its fork part 1.0-1.2, main 0.1-1.0, MPI_Init 0-0.1.
//   cp exclusive: loc 0: MPI_Init 0.1, main 0.9 + 1.3 = 2.2, parallel 0.1, barrier 0.1;
//                 loc 1: parallel 0.2, work 1.3.
//   Σcp inclusive: main 4.0, MPI_Init 0.1, parallel 0.1 + 0.1 + 0.2 + 1.3 = 1.7, work 1.3,
//                  barrier 0.1.
// x per location, exclusive (time less what the formula subtracts):
//   loc 0: main 5.0 - 0.1 - 1.7 (fork to join) - 0.5 = 2.7; MPI_Init 0.1; parallel 0.2 - 0.2
//          management = 0; work 0.4; barrier 1.1 - 1.0 wait = 0.1; MPI_Finalize 0.5 (no wait).
//          Inclusive main 3.8, parallel 0.5.
//   loc 1: outside the parallel region its time is all idle (main 2.7, Init 0.1, Finalize 0.5:
//          x = 0); parallel 1.7 - 1.3 - 0.1 = 0.3, all management (0.2 fork + 0.1 join): 0;
//          work 1.3; barrier 0.1 (last in, no wait). Inclusive main 1.4, parallel 1.4.
//   loc 2: main 5.0 - 0.1 - 0.8 - 0.6 = 3.5; MPI_Init 0.1; parallel 0.8 - 0.4 - 0.2 = 0.2, all
//          management: 0; work 0.4; barrier 0.2 - 0.1 wait = 0.1; MPI_Finalize 0.6 - 0.1 wait
//          = 0.5. Inclusive main 4.6, parallel 0.5.
//   loc 3: idle outside (0); parallel 0.8 - 0.4 - 0.1 = 0.3 management: 0; work 0.4; barrier
//          0.1. Inclusive main 0.5, parallel 0.5.
//   Σx inclusive: main 3.8 + 1.4 + 4.6 + 0.5 = 10.3, MPI_Init 0.2, parallel 2.9, work 2.5,
//                 barrier 0.4.
// Hence (#locations = 4):
//   work, loc 1:     (1.3 - 2.5/4) / 1.3 x 1.3 = 0.675
//   parallel, loc 0: (1.7 - 2.9/4) / 1.7 x 0.1 = 0.975 / 17;  loc 1: x 0.2 = 1.95 / 17
//   MPI_Init, loc 0: (0.1 - 0.2/4) / 0.1 x 0.1 = 0.05
//   main, loc 0:     (4.0 - 10.3/4) / 4.0 x 2.2 = 0.78375
//   barrier:         (0.1 - 0.4/4) / 0.1 = 0 (balanced after the waiting is taken out)
// and 0 on rank 1 (no critical path there) and at main on thread 1 (its path is all below).
// The same bits on one process as on two.
TEST(OpenMp, CriticalPathImbalancePerThread_HandComputed) {
  std::vector<std::map<std::string, std::vector<double>>> reports;
  for (int processes : {2, 1}) {
    SCOPED_TRACE("processes = " + std::to_string(processes));
    TempDir dir;
    TraceWriter w(2);
    w.set_threads_per_process(2);
    write_slow_thread_team(w);
    std::string err;
    const CubeFile cube = analyze(w, dir, processes, &err);
    ASSERT_EQ(cube.location_names.size(), 4u);
    ASSERT_NE(cube.metric("critical_path_imbalance"), nullptr) << err;
    const std::string bar = kMainPar + "/" + kIbar;
    // The inputs, as computed above.
    EXPECT_NEAR(cube.value("critical_path", kMainPar + "/work", 1), 1.3, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 1), 0.2, kEps);
    EXPECT_NEAR(cube.value("critical_path", kMainPar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", bar, 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("critical_path", "sim.exe/main", 0), 2.2, kEps);
    EXPECT_NEAR(critical_path_total(cube), 4.0, kEps);
    EXPECT_NEAR(cube.value("mpi_finalize_wait", "sim.exe/main/MPI_Finalize", 2), 0.1, kEps);
    EXPECT_NEAR(cube.value("omp_management", kMainPar, 1), 0.3, kEps);
    EXPECT_NEAR(cube.value("omp_management", kMainPar, 2), 0.2, kEps);
    EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main", 1), 2.7, kEps);
    EXPECT_NEAR(cube.value("omp_idle_threads", "sim.exe/main", 3), 3.5, kEps);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", bar, 0), 1.0, kEps);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", bar, 2), 0.1, kEps);

    const std::string m = "critical_path_imbalance";
    EXPECT_NEAR(cube.value(m, kMainPar + "/work", 1), 0.675, kEps);
    EXPECT_NEAR(cube.value(m, kMainPar, 0), 0.975 / 17, kEps);
    EXPECT_NEAR(cube.value(m, kMainPar, 1), 1.95 / 17, kEps);
    EXPECT_NEAR(cube.value(m, "sim.exe/main/MPI_Init", 0), 0.05, kEps);
    EXPECT_NEAR(cube.value(m, "sim.exe/main", 0), 0.78375, kEps);
    for (int l = 0; l < 4; ++l) EXPECT_NEAR(cube.value(m, bar, l), 0.0, kEps) << l;
    EXPECT_EQ(cube.value(m, "sim.exe/main", 1), 0.0);
    EXPECT_EQ(cube.value(m, kMainPar + "/work", 0), 0.0);
    for (const std::string& path : {std::string("sim.exe/main"), kMainPar, kMainPar + "/work",
                                    std::string("sim.exe/main/MPI_Init"),
                                    std::string("sim.exe/main/MPI_Finalize")})
      for (int l = 2; l < 4; ++l) EXPECT_EQ(cube.value(m, path, l), 0.0) << path << " " << l;
    // Nothing else: the values above are all the metric holds.
    double sum = 0.0;
    for (const auto& [path, row] : cube.values.at(m))
      for (double v : row) sum += v;
    EXPECT_NEAR(sum, 0.675 + 2.925 / 17 + 0.05 + 0.78375, 1e-8);
    reports.push_back(cube.values.at(m));
  }
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0] == reports[1]) << "critical_path_imbalance differs on one process";
}

/// The sum of a Cube metric at one call path over all locations.
double path_total(const CubeFile& cube, const std::string& metric, const std::string& path) {
  double sum = 0.0;
  for (std::size_t l = 0; l < cube.location_names.size(); ++l)
    sum += cube.value(metric, path, static_cast<int>(l));
  return sum;
}

/// The --json summary's critical-path row of a call path; fails the test when absent.
const Json& summary_row(const Json& summary, const std::string& path) {
  for (const Json& row : summary["callpaths"].array)
    if (row["path"].string == path) return row;
  ADD_FAILURE() << "no callpaths row for " << path;
  static const Json none;
  return none;
}

// The summary's critical-path table and impact split on a hybrid trace: every thread is a
// location, as for the indicators (docs/json-schema.md). The scenario of
// CriticalPathImbalancePerThread_HandComputed (2 ranks x 2 threads, rank 0's thread 1 slow in
// `work`; locations 0 = rank 0 master, 1 = its thread 1, 2 = rank 1 master, 3 = its thread 1):
// critical path 4.0 s (loc 0: MPI_Init 0.1, main 2.2, parallel 0.1, barrier 0.1; loc 1:
// parallel 0.2, work 1.3), critical_path_imbalance work 0.675, parallel 2.925 / 17, MPI_Init
// 0.05, main 0.78375, barrier 0.
//
// Time columns (exclusive `time` per thread, a worker's idle time included as in the report):
//   main       2.7, 2.7 (idle), 3.5, 3.5 (idle): total 12.4, average 3.1, max 3.5 (rank 1's master)
//   work       0.4, 1.3, 0.4, 0.4:               total 2.5, average 0.625, max 1.3
//   parallel   0.2, 0.3, 0.2, 0.3 (management): total 1.0, average 0.25, max 0.3
//   MPI_Init   0.1 on every thread:              total 0.4, average 0.1, max 0.1
//   barrier    1.1, 0.1, 0.2, 0.1:               total 1.5, average 0.375, max 1.1
// allocation time 4 x 5.0 = 20.0 s (every thread's time, no double counting of the workers').
//
// Impact (docs/openmp.md "Impact indicators per thread"), global profile gcp: MPI_Init 0.1,
// main 2.2, parallel 0.3, barrier 0.1, work 1.3. Non-waiting time lt per location:
//   loc 0: MPI_Init 0.1, main 2.7, parallel 0.2, work 0.4, barrier 1.1 - 1.0 = 0.1, Finalize 0.5
//   loc 1: parallel 0.3 - 0.1 (join part) = 0.2, work 1.3; 0 at the end barrier and while idle
//   loc 2: MPI_Init 0.1, main 3.5, parallel 0.2, work 0.4, barrier 0.1, Finalize 0.6 - 0.1 = 0.5
//   loc 3: parallel 0.2, work 0.4
// critical_path_activities = Σ min(gcp, lt): 3.0 + 1.5 + 3.0 + 0.6 = 8.1;
// non_critical_path_activities = Σ max(0, lt - gcp): loc 0 main 0.5 + Finalize 0.5, loc 2 main
// 1.3 + Finalize 0.5 = 2.8;
// imbalance impact: per location alpha = (4.0 - Σlt) / Σmax(0, gcp - lt): loc 0 0 (Σlt 4.0),
// loc 1 2.5 / 2.5 = 1, loc 2 -0.8 / 1.0 (Σlt 4.8; excess parallel 0.1, work 0.9), loc 3
// 3.4 / 3.4 = 1; per call path MPI_Init 0.2, main 4.4, parallel 0.1 - 0.08 + 0.1 = 0.12,
// barrier 0.2, work -0.72 + 0.9 = 0.18: 5.1 in all, shared out by the critical path;
// inter-partition (headroom where lt = 0): the workers', f = (4.0 - 1.6) / 2.4 = 1 each, at
// MPI_Init 0.1, main 2.2, barrier 0.1: 0.2 + 4.4 + 0.2 = 4.8 (all on loc 0, which carries the
// path there); intra-partition 5.1 - 4.8 = 0.3 (parallel 0.12, work 0.18).
// Sum: 8.1 + 5.1 + 2.8 = 16.0 = 4 locations x 4.0 s.
TEST(OpenMp, SummaryCriticalPathAndImpact_HandComputed) {
  std::vector<std::string> jsons;
  TempDir dir;
  {
    TraceWriter w(2);
    w.set_threads_per_process(2);
    write_slow_thread_team(w);
    w.write(dir / "t");
  }
  for (int processes : {2, 1}) {
    SCOPED_TRACE("processes = " + std::to_string(processes));
    const std::string tag = "m" + std::to_string(processes);
    const RunResult run =
        run_cpreplay(processes, {"--no-what-if", "--json", dir / (tag + ".json"), "-o",
                                 dir / (tag + ".cubex"), dir / "t/traces.otf2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const CubeFile cube = read_cube(dir / (tag + ".cubex"));
    ASSERT_EQ(cube.location_names.size(), 4u);
    std::ifstream in(dir / (tag + ".json"));
    jsons.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const Json j = parse_json(jsons.back());
    const std::string bar = kMainPar + "/" + kIbar;
    const std::string work = kMainPar + "/work";

    EXPECT_NEAR(j["critical_path_length_s"].number, 4.0, kEps);
    EXPECT_NEAR(j["allocation_time_s"].number, 20.0, kEps);
    EXPECT_NEAR(j["openmp"]["worker_time_s"].number, 10.0, kEps);

    // The table: every call path with critical-path time, largest first.
    const std::vector<Json>& rows = j["callpaths"].array;
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0]["path"].string, "sim.exe/main");
    EXPECT_EQ(rows[1]["path"].string, work);
    EXPECT_EQ(rows[2]["path"].string, kMainPar);
    struct Expected {
      std::string path;
      double cp, cpi, total, average, max;
    };
    const Expected expected[] = {
        {"sim.exe/main", 2.2, 0.78375, 12.4, 3.1, 3.5},
        {work, 1.3, 0.675, 2.5, 0.625, 1.3},
        {kMainPar, 0.3, 2.925 / 17, 1.0, 0.25, 0.3},
        {"sim.exe/main/MPI_Init", 0.1, 0.05, 0.4, 0.1, 0.1},
        {bar, 0.1, 0.0, 1.5, 0.375, 1.1}};
    for (const Expected& e : expected) {
      SCOPED_TRACE(e.path);
      const Json& row = summary_row(j, e.path);
      EXPECT_NEAR(row["critical_path_s"].number, e.cp, kEps);
      EXPECT_NEAR(row["critical_path_share"].number, e.cp / 4.0, kEps);
      EXPECT_NEAR(row["imbalance_s"].number, e.cpi, kEps);
      EXPECT_NEAR(row["imbalance_share"].number, e.cpi / 4.0, kEps);
      EXPECT_NEAR(row["time_total_s"].number, e.total, kEps);
      EXPECT_NEAR(row["time_average_s"].number, e.average, kEps);
      EXPECT_NEAR(row["time_max_s"].number, e.max, kEps);
      EXPECT_NEAR(row["profile_imbalance_s"].number, e.max - e.average, kEps);
      EXPECT_NEAR(row["imbalance_of_average"].number, e.cpi / e.average, 1e-8);
      // The same numbers as the report, summed over the four thread locations.
      EXPECT_NEAR(row["critical_path_s"].number, path_total(cube, "critical_path", e.path), kEps);
      EXPECT_NEAR(row["imbalance_s"].number, path_total(cube, "critical_path_imbalance", e.path),
                  kEps);
      double total = 0.0, most = 0.0;
      for (int l = 0; l < 4; ++l) {
        total += scenario::exclusive_time(cube, e.path, l);
        most = std::max(most, scenario::exclusive_time(cube, e.path, l));
      }
      EXPECT_NEAR(row["time_total_s"].number, total, kEps);
      EXPECT_NEAR(row["time_max_s"].number, most, kEps);
    }

    const Json& im = j["impact"];
    EXPECT_NEAR(im["total_s"].number, 16.0, kEps);
    EXPECT_NEAR(im["critical_path_activities_s"].number, 8.1, kEps);
    EXPECT_NEAR(im["imbalance_impact_s"].number, 5.1, kEps);
    EXPECT_NEAR(im["intra_partition_s"].number, 0.3, kEps);
    EXPECT_NEAR(im["inter_partition_s"].number, 4.8, kEps);
    EXPECT_NEAR(im["non_critical_path_activities_s"].number, 2.8, kEps);
    EXPECT_NEAR(im["critical_path_activities_s"].number,
                scenario::total(cube, "critical_path_activities"), kEps);
    EXPECT_NEAR(im["imbalance_impact_s"].number, scenario::total(cube, "critical_imbalance_impact"),
                kEps);
    EXPECT_NEAR(im["intra_partition_s"].number, scenario::total(cube, "intra_partition_imbalance"),
                kEps);
    EXPECT_NEAR(im["inter_partition_s"].number, scenario::total(cube, "inter_partition_imbalance"),
                kEps);
    EXPECT_NEAR(im["non_critical_path_activities_s"].number,
                scenario::total(cube, "non_critical_path_activities"), kEps);
    // Per thread where it lands: the slow thread's work and its share of the parallel region.
    EXPECT_NEAR(cube.value("intra_partition_imbalance", work, 1), 0.18, kEps);
    EXPECT_NEAR(cube.value("intra_partition_imbalance", kMainPar, 1), 0.08, kEps);
    EXPECT_NEAR(cube.value("inter_partition_imbalance", "sim.exe/main", 0), 4.4, kEps);

    // Findings: the slow loop thread is named; main's imbalance is the workers' idling in serial
    // code (inter-partition), said by the idle-threads finding instead; no rank partition; the
    // parallel region's (its management, 4.3 % of the path) would not pass 5 % anyway.
    std::vector<std::string> findings;
    for (const Json& f : j["findings"].array) findings.push_back(f.string);
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(findings[0],
              "work: load imbalance costs 0.68 s (16.9 % of the runtime, 108.0 % of its average "
              "time); the same threads carry the overload throughout (thread 1 of rank 0 has the "
              "most): a static redistribution of work fixes it");
    for (const std::string& f : findings) {
      EXPECT_NE(f.rfind("main: load imbalance", 0), 0u) << f;
      EXPECT_EQ(f.find("partition is the bottleneck"), std::string::npos) << f;
    }
    EXPECT_NE(std::find_if(findings.begin(), findings.end(),
                           [](const std::string& f) {
                             return f.rfind("Idle threads: worker threads are idle for 7.50 s "
                                            "(37.5 % of the allocation time)", 0) == 0;
                           }),
              findings.end());

    // The terminal summary: the path length in the header, the table, the impact over threads.
    EXPECT_NE(run.out.find("   critical path 4.00 s   analysis "), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("not yet"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\n  main                              2.20 s  55.0 %     0.78 s   "
                           "19.6 %  25.3 %    0.40 s     12.40 s\n  main/.../work                "
                           "     1.30 s  32.5 %     0.68 s   16.9 % 108.0 %    0.68 s      "
                           "2.50 s\n"),
              std::string::npos) << run.out;
    EXPECT_NE(run.out.find("   average time per thread; "), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("Performance impact (4 thread locations x 4.00 s = 16.00 s)"),
              std::string::npos) << run.out;
  }
  ASSERT_EQ(jsons.size(), 2u);
  // The same bits on one process as on two, but for the analysis time and the process count.
  auto comparable = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find("\"analysis_s\"") == std::string::npos &&
          line.find("\"report\"") == std::string::npos &&
          line.find("\"processes\"") == std::string::npos)
        out += line + "\n";
    return out;
  };
  EXPECT_EQ(comparable(jsons[0]), comparable(jsons[1]));
}

// A team whose worker skipped a barrier the master went through: the critical path cannot follow
// it; one line naming rank, thread and parallel region, a non-zero exit, no report. Also with the rank on
// the second of two processes (the others stop at the same boundary).
TEST(OpenMp, CriticalPathTeamWithMissingBarrier_RefusedWithOneLine) {
  for (int processes : {1, 2}) {
    TempDir dir;
    TraceWriter w(2);
    w.set_threads_per_process(2);
    for (int r = 0; r < 2; ++r) {
      begin_rank(w, r);
      w.omp_fork(r, 1.0, 2);
      for (int t = 0; t < 2; ++t) {
        team_in(w, r, t, 1.1);
        if (r == 0 || t == 0) {
          w.thread_enter(r, t, 1.5, kIbar);
          w.thread_leave(r, t, 1.6, kIbar);
        }
        team_out(w, r, t, 1.6);
      }
      w.omp_join(r, 1.7);
      end_rank(w, r);
    }
    w.write(dir / "t");
    const RunResult run =
        run_cpreplay(processes, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
    EXPECT_NE(run.exit_code, 0) << run.err;
    const std::string line = "cpreplay: error: " + dir / "t/traces.otf2" +
                             ": rank 1, thread 1: parallel region 1 has 0 complete barriers on "
                             "this thread but 1 on the master (the critical path cannot follow "
                             "the team)\n";
    EXPECT_NE(run.err.find(line), std::string::npos) << run.err;
    // One line from cpreplay (mpirun adds its own notice about the exit status).
    std::size_t ours = 0;
    for (std::size_t at = run.err.find("cpreplay:"); at != std::string::npos;
         at = run.err.find("cpreplay:", at + 1))
      ++ours;
    EXPECT_EQ(ours, 1u) << run.err;
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
}

// MPI events on a worker thread: one line naming rank and thread, no report.
TEST(OpenMp, MpiOnWorkerThread_RefusedWithOneLine) {
  TempDir dir;
  TraceWriter w(2);
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) begin_rank(w, r);
  w.omp_fork(1, 1.0, 2);
  team_in(w, 1, 0, 1.0);
  team_in(w, 1, 1, 1.0);
  w.thread_enter(1, 1, 1.1, "MPI_Send");
  w.thread_mpi_send(1, 1, 1.1, 0, 1, 8);
  w.thread_leave(1, 1, 1.2, "MPI_Send");
  for (int t = 0; t < 2; ++t) team_out(w, 1, t, 1.5);
  w.omp_join(1, 1.5);
  for (int r = 0; r < 2; ++r) end_rank(w, r);
  w.write(dir / "t");
  const RunResult run = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find(dir / "t/traces.otf2" + ": rank 1, thread 1, event 3: MPI message "
                         "event on a worker thread: cpreplay analyzes hybrid traces whose MPI "
                         "calls are made by the master thread only (MPI_THREAD_FUNNELED)\n"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("communicator"), std::string::npos) << run.err;
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
}

// --timeline and --overview follow the threads (views_test.cpp has the scenarios); a worker
// without events (no parallel region) gets its named tracks and an empty row.
TEST(OpenMp, TimelineAndOverviewOnHybrid_IdleWorkerHasEmptyTracks) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(2);
  begin_rank(w, 0);
  end_rank(w, 0);
  w.write(dir / "t");
  const RunResult run =
      run_cpreplay(1, {"-q", "--timeline", dir / "tl.json", "--overview", dir / "o.svg", "-o",
                       dir / "r.cubex", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json tl = read_json_file(dir / "tl.json");
  int master = 0, worker = 0, names = 0;
  for (const Json& e : tl["traceEvents"].array) {
    if (e["ph"].string == "M" && e["name"].string == "thread_name" && e["pid"].number == 0) {
      const std::string want[4] = {"Master thread", "OMP thread 1", "Master thread: wait states",
                                   "OMP thread 1: wait states"};
      EXPECT_EQ(e["args"]["name"].string, want[static_cast<int>(e["tid"].number)]);
      ++names;
    }
    if (e["ph"].string != "X" || e["pid"].number != 0) continue;
    (e["tid"].number == 0 ? master : worker) += 1;
  }
  EXPECT_EQ(names, 4);
  EXPECT_EQ(master, 4);  // sim.exe, main, MPI_Init, MPI_Finalize; nothing on thread 1
  EXPECT_EQ(worker, 0);
  EXPECT_EQ(tl["otherData"]["critical_path_stretches"].number, 1);
  EXPECT_NEAR(tl["otherData"]["critical_path_length_s"].number, 4.0, kEps);
  EXPECT_TRUE(file_exists(dir / "o.svg"));
}

// --what-if on a hybrid trace: the worksharing loop of CriticalPathThroughSlowLoopThread_...
// with loop_body at half speed. Thread t's body ends at 1.55, 2.1, 1.75 (thread 1 works 0.9 s
// instead of 1.8); the loop barrier releases thread t at 2.1 + 0.2 + 0.01 t (each thread's time
// after the last arrival, as originally), the end barrier, whose last arrival is thread 2 at
// 2.32, at 2.32 + 0.28 + 0.01 t; the master joins 0.08 s after thread 2 left, at 2.7 (was 3.6),
// and everything after moves with it: main is left at 4.1 instead of 5.0.
TEST(OpenMp, WhatIfScenarioOnHybrid_SlowLoopThreadHalved) {
  TempDir dir;
  TraceWriter w(1);
  w.set_threads_per_process(3);
  begin_rank(w, 0);
  w.omp_fork(0, 1.0, 3);
  const double body_end[3] = {2.0, 3.0, 2.2};
  const std::string lbar = "!$omp implicit barrier @a.c:6";
  for (int t = 0; t < 3; ++t) {
    const double in = 1.1 + 0.1 * t;
    team_in(w, 0, t, in);
    w.thread_enter(0, t, in, "!$omp for @a.c:4");
    w.thread_enter(0, t, in, "loop_body");
    w.thread_leave(0, t, body_end[t], "loop_body");
    w.thread_enter(0, t, body_end[t], lbar);
    w.thread_leave(0, t, 3.2 + 0.01 * t, lbar);
    w.thread_leave(0, t, 3.2 + 0.01 * t, "!$omp for @a.c:4");
    w.thread_enter(0, t, 3.2 + 0.01 * t, kIbar);
    w.thread_leave(0, t, 3.5 + 0.01 * t, kIbar);
    team_out(w, 0, t, 3.5 + 0.01 * t);
  }
  w.omp_join(0, 3.6);
  end_rank(w, 0);
  w.write(dir / "t");
  const RunResult run =
      run_cpreplay(1, {"-q", "--what-if", "loop_body=0.5", "--json", dir / "s.json", "-o",
                       dir / "r.cubex", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json j = read_json_file(dir / "s.json");
  EXPECT_NEAR(j["what_if"]["runtime_s"].number, 5.0, kEps);
  EXPECT_NEAR(j["what_if"]["scenarios"].array.at(0)["runtime_s"].number, 4.1, kEps);
  EXPECT_NE(run.out.find("scenario loop_body=0.5: runtime 4.10 s (-0.90 s, -18.0 %)"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(file_exists(dir / "r.cubex"));
}

}  // namespace
}  // namespace cpreplay::testing
