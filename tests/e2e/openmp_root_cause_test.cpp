// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: root causes through threads on a hand-timed hybrid trace (OpenMP barrier and
// idleness delays, a Late Sender caused by a slow worker thread), read back per thread location.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

constexpr double kEps = 1e-9;
const std::string kPar = "!$omp parallel @a.c:3";
const std::string kIbar = "!$omp implicit barrier @a.c:5";
const std::string kMain = "sim.exe/main";
const std::string kMainPar = kMain + "/" + kPar;

/// Every value of `metric` in the report, summed over call paths and locations.
double total(const CubeFile& cube, const std::string& metric) {
  double sum = 0.0;
  const auto it = cube.values.find(metric);
  if (it == cube.values.end()) return 0.0;
  for (const auto& [path, locations] : it->second)
    for (double v : locations) sum += std::fabs(v);
  return sum;
}

/// The scenario below; rank 0's clock runs `skew` seconds ahead (all its threads).
void write_late_sender_by_worker(TraceWriter& w, double skew = 0.0) {
  auto at = [skew](int r, double t) { return r == 0 ? t + skew : t; };
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, at(r, 0.0));
    w.enter(r, at(r, 0.0), "main");
    w.init(r, at(r, 0.0), at(r, 0.1));
    w.omp_fork(r, at(r, 1.0), 2);
    for (int t = 0; t < 2; ++t) {
      w.omp_team_begin(r, t, at(r, 1.1 + 0.1 * t));
      w.thread_enter(r, t, at(r, 1.1 + 0.1 * t), kPar);
      w.thread_enter(r, t, at(r, 1.1 + 0.1 * t), "work");
      const double done = r == 0 && t == 1 ? 2.5 : 1.5;
      w.thread_leave(r, t, at(r, done), "work");
      w.thread_enter(r, t, at(r, done), kIbar);
      w.thread_leave(r, t, at(r, r == 0 ? 2.6 : 1.6), kIbar);
      w.thread_leave(r, t, at(r, r == 0 ? 2.6 : 1.6), kPar);
      w.omp_team_end(r, t, at(r, r == 0 ? 2.6 : 1.6));
    }
    w.omp_join(r, at(r, r == 0 ? 2.7 : 1.7));
  }
  w.send(0, at(0, 2.8), at(0, 2.9), 1, 7, 64);
  w.recv(1, 1.8, 2.95, 0, 7, 64);
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, at(r, r == 0 ? 4.0 : 4.1), at(r, 4.5));
    w.leave(r, at(r, 5.0), "main");
    w.program_end(r, at(r, 5.0));
  }
}

// Two ranks of two threads. Both fork at 1.0; thread t enters the team at 1.1 + 0.1 t. Rank 0's
// worker works 1.2-2.5 (its master 1.1-1.5), the implicit barrier releases at 2.6, the join is at
// 2.7 and rank 0 sends at 2.8-2.9; rank 1's team works until 1.5 (both enter the barrier at 1.5,
// a tie: no wait), joins at 1.7 and its MPI_Recv waits 1.8-2.8 (Late Sender 1.0). MPI_Finalize:
// rank 0 enters at 4.0, rank 1 at 4.1; main ends at 5.0.
// Locations: 0 = rank 0 master, 1 = its thread 1, 2 = rank 1 master, 3 = its thread 1.
//
// By hand (scout.hyb's rules, docs/root-cause.md "OpenMP"):
// - Rank 0's barrier: the worker is latest (2.5; the master waits 1.0). Its interval from its
//   fork point: the parallel region 1.0-1.2 (fork to Enter) less the fork point's total 0.2 -
//   completion 0.1 (Enter - the team's earliest Enter 1.1) = 0.1, work 1.3. The master's: the
//   parallel region 1.0-1.1 less its 0.1 - 0 = 0, work 0.4. d = {parallel 0.1, work 0.9}, sum 1.0;
//   the master's scale 1.0 / 1.0: delay_ompbarrier on thread 0.1: parallel 0.1, work 0.9.
// - The Late Sender: rank 0's interval since MPI_Init holds the master's barrier wait (1.0) and
//   no time rank 1's does not (both ran main 1.0, MPI_Init, parallel 0.2, work 0.4; rank 0's
//   barrier 1.1 less its wait = rank 1's 0.1): d = 0, sigma = 1.0 / (0 + 1.0) = 1, so the wait is
//   indirect (mpi_wait_indirect_latesender 1.0 on rank 1) and the barrier wait state gets a Late
//   Sender cost of 1.0. Rank 1's wait state lies in its last serial section: an idleness cost of
//   (threads - 1) x 1.0 = 1.0, shipped with the Late Sender (rho 1.0 / 1.0 = 1).
// - At rank 0's barrier both costs cross to the worker with the master's d: delay_latesender_
//   longterm and delay_ompidle_longterm on thread 0.1: parallel 0.1, work 0.9.
// - Idleness (threads - 1 = 1 x the master's serial time less its waits): rank 0: MPI_Init 0.1,
//   main 0.9 (0.1-1.0) + 1.7 (2.7-2.8, 2.9-4.0, 4.5-5.0), MPI_Send 0.1, MPI_Finalize 0.5 - its
//   wait 0.1 = 0.4. Rank 1: MPI_Init 0.1, main 0.9 + 1.75, MPI_Recv 1.15 - 1.0 = 0.15,
//   MPI_Finalize 0.4.
// The same with both ranks on one process.
TEST(OpenMpRootCause, LateSenderCausedBySlowWorker_HandComputed) {
  for (int processes : {2, 1}) {
    TempDir dir;
    TraceWriter w(2);
    write_late_sender_by_worker(w);
    w.write(dir / "t");
    const RunResult run = run_cpreplay(
        processes,
        {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", dir / "t/traces.otf2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const CubeFile cube = read_cube(dir / "r.cubex");
    ASSERT_EQ(cube.location_names.size(), 4u);
    const std::string work = kMainPar + "/work";

    EXPECT_NEAR(cube.value("mpi_latesender", kMain + "/MPI_Recv", 2), 1.0, kEps);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", kMainPar + "/" + kIbar, 0), 1.0, kEps);
    for (const char* m : {"delay_ompbarrier", "delay_latesender_longterm",
                          "delay_ompidle_longterm"}) {
      EXPECT_NEAR(cube.value(m, kMainPar, 1), 0.1, kEps) << m << " " << processes;
      EXPECT_NEAR(cube.value(m, work, 1), 0.9, kEps) << m << " " << processes;
      EXPECT_NEAR(total(cube, m), 1.0, kEps) << m << ": only on thread 0.1";
    }
    EXPECT_NEAR(total(cube, "delay_latesender"), 0.0, kEps);
    EXPECT_NEAR(cube.value("mpi_wait_indirect_latesender", kMain + "/MPI_Recv", 2), 1.0, kEps);
    EXPECT_NEAR(total(cube, "mpi_wait_propagating_ls"), 0.0, kEps);

    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Init", 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain, 0), 2.6, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Send", 0), 0.1, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Finalize", 0), 0.4, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Init", 2), 0.1, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain, 2), 2.65, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Recv", 2), 0.15, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle", kMain + "/MPI_Finalize", 2), 0.4, kEps);
    EXPECT_NEAR(total(cube, "delay_ompidle"), 0.1 + 2.6 + 0.1 + 0.4 + 0.1 + 2.65 + 0.15 + 0.4,
                kEps);
    // The tree: delay_omp holds both OpenMP aggregates, delay holds it (sums per cell).
    EXPECT_NEAR(cube.value("delay_ompbarrier_aggregate", work, 1), 0.9, kEps);
    EXPECT_NEAR(cube.value("delay_ompidle_aggregate", work, 1), 0.9, kEps);
    EXPECT_NEAR(cube.value("delay_omp", work, 1), 1.8, kEps);
    EXPECT_NEAR(cube.value("delay", work, 1), 2.7, kEps);

    // The summary names the worker's call path on its rank as the Late Sender's cause (a
    // rank's delays are those of all its threads), through other waits: long-term.
    const Json summary = read_json_file(dir / "s.json");
    const Json* ls = nullptr;
    for (const Json& w : summary["wait_states"].array)
      if (w["metric"].string == "mpi_latesender") ls = &w;
    ASSERT_NE(ls, nullptr);
    EXPECT_NEAR((*ls)["delay_long_term_s"].number, 1.0, kEps);
    ASSERT_GE((*ls)["caused_by"].array.size(), 1u);
    const Json& cause = (*ls)["caused_by"].array[0];
    EXPECT_EQ(cause["path"].string, work);
    EXPECT_NEAR(cause["long_term_s"].number, 0.9, kEps);
    EXPECT_NEAR(cause["short_term_s"].number, 0.0, kEps);
    EXPECT_EQ(cause["rank_names"].string, "rank 0");
  }
}

// The same run with rank 0's clock 1.5 s ahead (every thread of it): its message arrives before
// it was sent. --time-correct moves rank 0 back by the smallest shift that removes every
// violation and its worker thread with it (one clock per process), so the OpenMP barrier delay
// inside rank 0 is the one of the unskewed run (the worker's interval starts at the master's
// fork: a worker left behind would count the clock difference as fork time), and the Late
// Sender is the unskewed 1.0 plus what the shift leaves of the skew.
TEST(OpenMpRootCause, TimeCorrectMovesThreadsWithTheirMaster) {
  for (int processes : {2, 1}) {
    TempDir dir;
    TraceWriter w(2);
    write_late_sender_by_worker(w, 1.5);
    w.write(dir / "t");
    const RunResult run = run_cpreplay(
        processes, {"-q", "--time-correct", "-o", dir / "r.cubex", "--json", dir / "s.json",
                    dir / "t/traces.otf2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const CubeFile cube = read_cube(dir / "r.cubex");
    const Json summary = read_json_file(dir / "s.json");
    const Json& correction = summary["time_correction"];
    EXPECT_EQ(correction["moved_ranks"].number, 1);
    const double shift = correction["max_shift_s"].number;
    EXPECT_GT(shift, 1.3);
    EXPECT_LE(shift, 1.5 + kEps);
    const std::string work = kMainPar + "/work";
    EXPECT_NEAR(cube.value("delay_ompbarrier", kMainPar, 1), 0.1, kEps) << processes;
    EXPECT_NEAR(cube.value("delay_ompbarrier", work, 1), 0.9, kEps) << processes;
    EXPECT_NEAR(total(cube, "delay_ompbarrier"), 1.0, kEps);
    EXPECT_NEAR(cube.value("omp_ibarrier_wait", kMainPar + "/" + kIbar, 0), 1.0, kEps);
    EXPECT_NEAR(cube.value("mpi_latesender", kMain + "/MPI_Recv", 2), 1.0 + 1.5 - shift, 1e-6);
    // The critical path runs through rank 0's worker (its loop makes the message late).
    EXPECT_NEAR(cube.value("critical_path", work, 1), 1.3, kEps) << processes;
  }
}

}  // namespace
}  // namespace cpreplay::testing
