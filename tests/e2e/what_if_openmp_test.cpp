// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the what-if replay on hybrid MPI+OpenMP timelines (docs/what-if.md, "Threads"):
// the unchanged run reproduced to the tick, a slow loop thread whose halved or zeroed loop body
// makes the barrier, the master's MPI_Send and the partner's Late Sender earlier, a critical
// section handed on in lock order, per-thread near-critical time, and every value the same at
// one process per rank and on fewer processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/scenario.hpp"
#include "tests/support/json.hpp"

namespace cpreplay::testing {
namespace {

using scenario::kTol;

const std::string kPar = "!$omp parallel @a.c:3";
const std::string kIbar = "!$omp implicit barrier @a.c:5";
const std::string kCrit = "!$omp critical @a.c:9";
const std::string kSblock = "!$omp critical sblock @a.c:9";
const std::string kMainPar = "sim.exe/main/" + kPar;
const std::string kBody = kMainPar + "/loop_body";

struct Analysis {
  Json json;
  CubeFile cube;
  RunResult run;
};

/// Writes the trace once into dir/t and runs it quietly on `processes` with --json and `extra`.
Analysis analyze(const TraceWriter& w, const TempDir& dir, int processes,
                 const std::vector<std::string>& extra) {
  if (!file_exists(dir / "t/traces.otf2")) w.write(dir / "t");
  const std::string tag = "m" + std::to_string(processes);
  std::vector<std::string> args = {"-q", "-o", dir / (tag + ".cubex"), "--json",
                                   dir / (tag + ".json")};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(dir / "t/traces.otf2");
  Analysis a;
  a.run = run_cpreplay(processes, args);
  if (a.run.exit_code != 0)
    throw std::runtime_error("cpreplay -np " + std::to_string(processes) + " exited with " +
                             std::to_string(a.run.exit_code) + ": " + a.run.err);
  a.cube = read_cube(dir / (tag + ".cubex"));
  a.json = read_json_file(dir / (tag + ".json"));
  return a;
}

/// The what_if entry of a call path; throws when it is not listed.
const Json& entry(const Analysis& a, const std::string& path) {
  for (const Json& c : a.json["what_if"]["callpaths"].array)
    if (c["path"].string == path) return c;
  throw std::invalid_argument("what_if.callpaths has no " + path);
}

const Json& user_scenario(const Analysis& a) {
  return a.json["what_if"]["scenarios"].array.at(0);
}

/// The seconds of the user scenario's critical path at a call path (0 when not listed).
double scenario_path(const Analysis& a, const std::string& path) {
  for (const Json& p : user_scenario(a)["critical_path"].array)
    if (p["path"].string == path) return p["seconds"].number;
  return 0.0;
}

void team_in(TraceWriter& w, int r, int t, double t0) {
  w.omp_team_begin(r, t, t0);
  w.thread_enter(r, t, t0, kPar);
}

void team_out(TraceWriter& w, int r, int t, double t1) {
  w.thread_leave(r, t, t1, kPar);
  w.omp_team_end(r, t, t1);
}

// ---- A slow loop thread ---------------------------------------------------------------------
//
// 2 ranks x 2 threads. Both: MPI_Init [0, 0.1], main until the fork at 1.0; thread t begins
// the team at 1.0 + 0.1 t and runs loop_body, then the implicit barrier, and leaves the region
// when the barrier releases; the master joins 0.1 s after the barrier.
//   rank 0: loop_body 1.0-1.4 (thread 0), 1.1-2.3 (thread 1: slow); the barrier releases at
//           2.4, the join is at 2.5; MPI_Send to rank 1 [2.6, 2.7]; MPI_Finalize [3.0, 3.5].
//   rank 1: loop_body 1.0-1.4, 1.1-1.5; barrier 1.6, join 1.7; MPI_Recv from 0 [1.8, 2.8]
//           (Late Sender 0.8 s, completed 0.2 s after the send was entered); MPI_Finalize
//           [3.1, 3.5].
// main is left at 3.6 on both ranks: the runtime.
TraceWriter slow_loop() {
  TraceWriter w(2);
  w.set_threads_per_process(2);
  const double body_end[2][2] = {{1.4, 2.3}, {1.4, 1.5}};
  const double release[2] = {2.4, 1.6};
  const double join[2] = {2.5, 1.7};
  for (int r = 0; r < 2; ++r) {
    scenario::begin_rank(w, r);
    w.omp_fork(r, 1.0, 2);
    for (int t = 0; t < 2; ++t) {
      team_in(w, r, t, 1.0 + 0.1 * t);
      w.thread_enter(r, t, 1.0 + 0.1 * t, "loop_body");
      w.thread_leave(r, t, body_end[r][t], "loop_body");
      w.thread_enter(r, t, body_end[r][t], kIbar);
      w.thread_leave(r, t, release[r], kIbar);
      team_out(w, r, t, release[r]);
    }
    w.omp_join(r, join[r]);
  }
  w.send(0, 2.6, 2.7, 1, 7, 64);
  w.finalize(0, 3.0, 3.5);
  w.recv(1, 1.8, 2.8, 0, 7, 64);
  w.finalize(1, 3.1, 3.5);
  for (int r = 0; r < 2; ++r) {
    w.leave(r, 3.6, "main");
    w.program_end(r, 3.6);
  }
  return w;
}

// loop_body at half speed: rank 0's thread 1 works 1.1-1.7, the barrier releases both threads
// at 1.8 (0.1 s after the last arrival, as originally), the join is at 1.9 and MPI_Send is
// entered at 2.0 (was 2.6), MPI_Finalize at 2.4. Rank 1's team joins at 1.5, its MPI_Recv is
// entered at 1.6 and completes 0.2 s after the send's Enter, at 2.2 (its Late Sender shrinks
// from 0.8 to 0.4 s); MPI_Finalize is entered at 2.5 and left at 2.9 by both; main at 3.0: 0.6 s
// gained. Zeroed: rank 0's barrier releases at 1.2 (thread 1 arrives at 1.1), the send is
// entered at 1.4, rank 1 receives at 1.6 and enters MPI_Finalize at 1.9: runtime 2.4, 1.2 s
// gained. Balanced (every visit takes the mean, 2.4 / 4 = 0.6 s) and rebalanced (each thread's
// total to the average over the 4 threads, the same here): both ranks' barriers release at 1.8,
// as at half speed on rank 0: 0.6 s. The re-timed run's critical path (half speed, from rank
// 0's end, ties to the lower rank): main 0.1 + 0.1 (the join) + 0.1 + 0.9 on rank 0, rank 1's
// main 0.3 after its MPI_Recv (0.2): 1.5 s of main; thread 1's loop body 0.6 s; MPI_Finalize
// 0.4 s; the parallel region 0.1 s (thread 1's fork), the barrier 0.1 s, MPI_Init 0.1 s.
TEST(WhatIfOpenMp, SlowLoopThread_HalvedAndZeroedLoopBodyHandComputed) {
  TempDir dir;
  const TraceWriter w = slow_loop();
  for (int m : {2, 1}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    const Analysis a = analyze(w, dir, m, {"--what-if", "loop_body=0.5"});
    EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 3.6, kTol);
    EXPECT_NEAR(scenario::at(a.cube, "mpi_latesender", "sim.exe/main/MPI_Recv", 2), 0.8, kTol);
    const Json& body = entry(a, kBody);
    EXPECT_NEAR(body["zeroing_gain_s"].number, 1.2, kTol);
    EXPECT_NEAR(body["balance_gain_s"].number, 0.6, kTol);
    EXPECT_NEAR(body["rebalance_gain_s"].number, 0.6, kTol);
    // The summary's what-if table names its time on the critical path over all threads (rank
    // 0's thread 1: 1.2 s), not the masters' only.
    const std::size_t block = a.run.out.find("What if (");
    ASSERT_NE(block, std::string::npos) << a.run.out;
    const std::size_t row = a.run.out.find("\n  main/.../loop_body ", block);
    ASSERT_NE(row, std::string::npos) << a.run.out;
    EXPECT_EQ(a.run.out.substr(row + 1 + 32, 10), "    1.20 s") << a.run.out;
    EXPECT_NEAR(user_scenario(a)["runtime_s"].number, 3.0, kTol);
    EXPECT_NEAR(scenario_path(a, "sim.exe/main"), 1.5, kTol);
    EXPECT_NEAR(scenario_path(a, kBody), 0.6, kTol);
    EXPECT_NEAR(scenario_path(a, "sim.exe/main/MPI_Finalize"), 0.4, kTol);
    EXPECT_NEAR(scenario_path(a, "sim.exe/main/MPI_Recv"), 0.2, kTol);
    EXPECT_EQ(a.run.err.find("what-if"), std::string::npos) << a.run.err;
  }
}

// δ = 0: near-critical time is the time on a critical path of the unchanged run, per thread
// location (locations: 0 = rank 0's master, 1 = its thread 1, 2 and 3 rank 1's). On rank 0
// the path runs through thread 1 from the fork: its fork time (0.1 s, the parallel region's),
// its loop body (1.2 s); both threads' barrier completion (0.1 s each: both leave the barrier
// as late as the join allows); nothing of rank 1's team, which the Late Sender waits for.
TEST(WhatIfOpenMp, NearCritical_PerThreadLocation) {
  TempDir dir;
  const Analysis a = analyze(slow_loop(), dir, 2, {"--near-critical", "0"});
  const std::string bar = kMainPar + "/" + kIbar;
  EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kBody, 1), 1.2, kTol);
  for (int loc : {0, 2, 3})
    EXPECT_EQ(scenario::at(a.cube, "near_critical_path", kBody, loc), 0.0) << loc;
  EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kMainPar, 1), 0.1, kTol);
  EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", bar, 0), 0.1, kTol);
  EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", bar, 1), 0.1, kTol);
  EXPECT_EQ(scenario::at(a.cube, "near_critical_path", bar, 2), 0.0);
  EXPECT_EQ(scenario::at(a.cube, "near_critical_path", bar, 3), 0.0);
  // The summary sums every thread: loop_body's near-critical time is thread 1's.
  EXPECT_NEAR(entry(a, kBody)["near_critical_s"].number, 1.2, kTol);
}

// ---- A critical section handed on in lock order ---------------------------------------------
//
// 1 rank x 2 threads, fork at 1.0. Thread 0 takes the critical section at 1.0 and runs
// `update` 1.0-1.5; thread 1 begins the team at 1.1, asks at 1.1 and gets the lock when thread
// 0 releases it (1.5), runs `update` 1.5-2.0. Both leave the implicit barrier at 2.1, the join
// is at 2.2, main until MPI_Finalize [3.0, 3.5], main left at 3.6.
TraceWriter critical_section() {
  TraceWriter w(1);
  w.set_threads_per_process(2);
  w.program_begin(0, 0.0);
  w.enter(0, 0.0, "main");
  w.init(0, 0.0, 0.1);
  w.omp_fork(0, 1.0, 2);
  const double ask[2] = {1.0, 1.1}, got[2] = {1.0, 1.5}, done[2] = {1.5, 2.0};
  for (int t = 0; t < 2; ++t) {
    team_in(w, 0, t, ask[t]);
    w.thread_enter(0, t, ask[t], kCrit);
    w.omp_acquire_lock(0, t, got[t], 7, static_cast<std::uint32_t>(t + 1));
    w.thread_enter(0, t, got[t], kSblock);
    w.thread_enter(0, t, got[t], "update");
    w.thread_leave(0, t, done[t], "update");
    w.thread_leave(0, t, done[t], kSblock);
    w.omp_release_lock(0, t, done[t], 7, static_cast<std::uint32_t>(t + 1));
    w.thread_leave(0, t, done[t], kCrit);
    w.thread_enter(0, t, done[t], kIbar);
    w.thread_leave(0, t, 2.1, kIbar);
    team_out(w, 0, t, 2.1);
  }
  w.omp_join(0, 2.2);
  w.finalize(0, 3.0, 3.5);
  w.leave(0, 3.6, "main");
  w.program_end(0, 3.6);
  return w;
}

// `update` at half speed: thread 0 releases the lock at 1.25, thread 1 gets it then (not at
// 1.5: the acquisition of order 2 follows the release of order 1) and releases it at 1.5; the
// barrier releases both at 1.6, the join is at 1.7, MPI_Finalize is entered at 2.5: runtime 3.1
// (without the lock order, thread 1 would keep its 0.4 s wait and the run would take 3.35 s).
// Zeroed: thread 0 releases at 1.0, thread 1 gets the lock at once at 1.1 and arrives at the
// barrier then: it releases at 1.2, runtime 2.7, 0.9 s gained. The re-timed run's critical path
// follows the lock from thread 1 back to thread 0: update 0.25 s on each.
TEST(WhatIfOpenMp, CriticalSection_LockOrderHandComputed) {
  TempDir dir;
  const Analysis a = analyze(critical_section(), dir, 1, {"--what-if", "update=0.5"});
  const std::string update = kMainPar + "/" + kCrit + "/" + kSblock + "/update";
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 3.6, kTol);
  EXPECT_NEAR(scenario::at(a.cube, "omp_lock_contention_critical", kMainPar + "/" + kCrit, 1),
              0.4, kTol);
  EXPECT_NEAR(user_scenario(a)["runtime_s"].number, 3.1, kTol);
  EXPECT_NEAR(entry(a, update)["zeroing_gain_s"].number, 0.9, kTol);
  EXPECT_NEAR(scenario_path(a, update), 0.5, kTol);
  EXPECT_NEAR(scenario_path(a, "sim.exe/main"), 1.9, kTol);
  EXPECT_NEAR(scenario_path(a, "sim.exe/main/MPI_Finalize"), 0.5, kTol);
}

// ---- Parts and windows ----------------------------------------------------------------------

// 3 ranks x 3 threads, 6 iterations: a parallel region whose threads take a critical section
// in turn (the order rotates with the iteration) and work unevenly, then an MPI_Allreduce on
// the masters (a cut: the run has 7 parts). Parallel regions never contain a cut, so every
// team is replayed within one part, and the values are the same, to the bit, replayed as one
// part (the test hook) and one part per window (--window 4).
TraceWriter critical_loop() {
  constexpr int kRanks = 3, kThreads = 3, kIterations = 6;
  TraceWriter w(kRanks);
  w.set_threads_per_process(kThreads);
  for (int r = 0; r < kRanks; ++r) {
    scenario::begin_rank(w, r);
  }
  double s = 0.5;
  for (int i = 0; i < kIterations; ++i) {
    double end[kRanks];
    for (int r = 0; r < kRanks; ++r) {
      w.omp_fork(r, s, kThreads);
      // The k-th to take the lock is thread (i + k + r) mod 3: after 0.05 s of work, it holds
      // the lock 0.1 or 0.11 s, then works 0.02 t s more and waits in the implicit barrier.
      double crit_end[kThreads], got[kThreads], last = 0.0;
      double free = s + 0.05;
      for (int k = 0; k < kThreads; ++k) {
        const int t = (i + k + r) % kThreads;
        got[t] = free;
        crit_end[t] = free + 0.1 + 0.01 * ((r + t) % 2);
        free = crit_end[t];
        last = std::max(last, crit_end[t] + 0.02 * t);
      }
      for (int k = 0; k < kThreads; ++k) {
        const int t = (i + k + r) % kThreads;
        const auto order = static_cast<std::uint32_t>(i * kThreads + k + 1);
        team_in(w, r, t, s + 0.01 * t);
        w.thread_enter(r, t, s + 0.01 * t, "work");
        w.thread_leave(r, t, s + 0.05, "work");
        w.thread_enter(r, t, s + 0.05, kCrit);
        w.omp_acquire_lock(r, t, got[t], 3, order);
        w.thread_enter(r, t, got[t], kSblock);
        w.thread_enter(r, t, got[t], "update");
        w.thread_leave(r, t, crit_end[t], "update");
        w.thread_leave(r, t, crit_end[t], kSblock);
        w.omp_release_lock(r, t, crit_end[t], 3, order);
        w.thread_leave(r, t, crit_end[t], kCrit);
        w.thread_enter(r, t, crit_end[t], "tail");
        w.thread_leave(r, t, crit_end[t] + 0.02 * t, "tail");
        w.thread_enter(r, t, crit_end[t] + 0.02 * t, kIbar);
        w.thread_leave(r, t, last + 0.01, kIbar);
        team_out(w, r, t, last + 0.01);
      }
      w.omp_join(r, last + 0.02);
      end[r] = last + 0.03 + 0.01 * r;
      w.region(r, "serial", last + 0.02, end[r]);
    }
    const double latest = *std::max_element(end, end + kRanks);
    for (int r = 0; r < kRanks; ++r)
      w.collective(r, "MPI_Allreduce", end[r], latest + 0.01, CollOpT::Allreduce, 8, 8);
    s = latest + 0.02;
  }
  for (int r = 0; r < kRanks; ++r) {
    w.finalize(r, s, s + 0.1);
    w.leave(r, s + 0.2, "main");
    w.program_end(r, s + 0.2);
  }
  return w;
}

TEST(WhatIfOpenMp, PartsAndWindows_DoNotChangeAValue) {
  auto run = [](const TempDir& dir, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--what-if", "update=0.5", "--near-critical", "0.05"};
    args.insert(args.end(), extra.begin(), extra.end());
    return analyze(critical_loop(), dir, 3, args);
  };
  TempDir cut, whole, small;
  const Analysis a = run(cut, {});
  ::setenv("CPREPLAY_TEST_RETIME_NO_CUTS", "1", 1);
  const Analysis b = run(whole, {});
  ::unsetenv("CPREPLAY_TEST_RETIME_NO_CUTS");
  const Analysis c = run(small, {"--window", "4"});
  EXPECT_NE(user_scenario(a)["runtime_s"].number, a.json["what_if"]["runtime_s"].number);
  for (const Analysis* x : {&b, &c}) {
    EXPECT_EQ(x->json["what_if"]["runtime_s"].number, a.json["what_if"]["runtime_s"].number);
    EXPECT_EQ(user_scenario(*x)["runtime_s"].number, user_scenario(a)["runtime_s"].number);
    const Json& p = x->json["what_if"]["callpaths"];
    const Json& q = a.json["what_if"]["callpaths"];
    ASSERT_EQ(p.array.size(), q.array.size());
    for (std::size_t i = 0; i < p.array.size(); ++i)
      for (const char* key :
           {"zeroing_gain_s", "balance_gain_s", "rebalance_gain_s", "near_critical_s"}) {
        EXPECT_EQ(p.array[i][key].type, q.array[i][key].type) << key;
        EXPECT_EQ(p.array[i][key].number, q.array[i][key].number)
            << p.array[i]["path"].string << " " << key;
      }
    EXPECT_TRUE(x->cube.values.at("near_critical_path") == a.cube.values.at("near_critical_path"));
  }
  EXPECT_GT(scenario::total(a.cube, "near_critical_path"), 0.0);
  const RunResult parts =
      run_cpreplay(3, {"-o", cut / "p.cubex", cut / "t/traces.otf2"});
  EXPECT_NE(parts.err.find(" 7 parts"), std::string::npos) << parts.err;
}

// The slack pass skips the parts whose every activity is within the slack limit on every
// thread (RankRetimer::slack_bound) and walks them once; replaying every part (a test hook)
// gives the same near-critical times per call path and thread, to the bit: the mktrace hybrid
// loop (4 ranks x 3 threads, 7 parts) with a limit that skips every part (10 %: no slack
// round), one that skips some (5 %: the 4th, 6th and 7th) and 0 (the last).
TEST(WhatIfOpenMp, NearCritical_PartsNotReplayedSameAsReplayed) {
  TempDir dir;
  ASSERT_EQ(run_mktrace({"hybrid", dir / "h", "--ranks", "4", "--threads", "3", "--iters", "6"})
                .exit_code,
            0);
  const auto run = [&](const std::string& name, const char* limit) {
    const RunResult r = run_cpreplay(
        4, {"-v", "-o", dir / (name + ".cubex"), "--json", dir / (name + ".json"), "--what-if",
            "loop_body=0.5", "--near-critical", limit, dir / "h/traces.otf2"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Analysis a;
    a.run = r;
    a.cube = read_cube(dir / (name + ".cubex"));
    a.json = read_json_file(dir / (name + ".json"));
    return a;
  };
  std::vector<double> totals;
  for (const auto& [limit, rounds] : std::vector<std::pair<const char*, const char*>>{
           {"0.1", "6 + 0 rounds"}, {"0.05", "6 + 6 rounds"}, {"0", "6 + 6 rounds"}}) {
    const Analysis a = run(std::string("skip") + limit, limit);
    ::setenv("CPREPLAY_TEST_RETIME_FULL_SLACK", "1", 1);
    const Analysis b = run(std::string("full") + limit, limit);
    ::unsetenv("CPREPLAY_TEST_RETIME_FULL_SLACK");
    EXPECT_NE(a.run.err.find(rounds), std::string::npos) << limit << ": " << a.run.err;
    EXPECT_NE(b.run.err.find("6 + 6 rounds"), std::string::npos) << limit << ": " << b.run.err;
    EXPECT_TRUE(a.cube.values.at("near_critical_path") == b.cube.values.at("near_critical_path"))
        << limit;
    const Json& p = a.json["what_if"]["callpaths"];
    const Json& q = b.json["what_if"]["callpaths"];
    ASSERT_EQ(p.array.size(), q.array.size()) << limit;
    for (std::size_t i = 0; i < p.array.size(); ++i)
      EXPECT_EQ(p.array[i]["near_critical_s"].number, q.array[i]["near_critical_s"].number)
          << limit << " " << p.array[i]["path"].string;
    totals.push_back(scenario::total(a.cube, "near_critical_path"));
  }
  EXPECT_GT(totals[0], totals[1]);
  EXPECT_GT(totals[1], totals[2]);
  EXPECT_GT(totals[2], 0.0);
}

// ---- The unchanged run --------------------------------------------------------------------

// Nothing changed: every event of every thread is reproduced to the tick (the replay checks
// each one) and the runtime is the trace's wall-clock time, at one process per rank and on one
// process: the traces above and the mktrace hybrid loop (4 ranks x 3 threads, a worksharing
// loop, a halo exchange and an MPI_Allreduce per iteration: parts cut at the reductions).
TEST(WhatIfOpenMp, Identity_NothingChangedReproducesEveryThread) {
  std::vector<std::pair<std::string, TraceWriter>> traces;
  traces.push_back({"slow loop", slow_loop()});
  traces.push_back({"critical section", critical_section()});
  for (const auto& [name, w] : traces)
    for (int m : {w.ranks(), 1}) {
      TempDir dir;
      const Analysis a = analyze(w, dir, m, {"--what-if", "main=1"});
      EXPECT_EQ(a.json["what_if"]["runtime_s"].number, a.json["wall_clock_s"].number) << name;
      EXPECT_EQ(user_scenario(a)["runtime_s"].number, a.json["wall_clock_s"].number) << name;
      EXPECT_EQ(a.run.err.find("what-if"), std::string::npos) << name << ": " << a.run.err;
    }
  TempDir dir;
  ASSERT_EQ(run_mktrace({"hybrid", dir / "h", "--ranks", "4", "--threads", "3", "--iters", "6"})
                .exit_code,
            0);
  for (int m : {4, 3}) {
    const RunResult run = run_cpreplay(
        m, {"-o", dir / "h.cubex", "--json", dir / "h.json", "--what-if", "loop_body=1",
            dir / "h/traces.otf2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Json j = read_json_file(dir / "h.json");
    EXPECT_EQ(j["what_if"]["runtime_s"].number, j["wall_clock_s"].number);
    EXPECT_EQ(j["what_if"]["scenarios"].array.at(0)["runtime_s"].number,
              j["wall_clock_s"].number);
    EXPECT_NE(run.err.find(" 7 parts"), std::string::npos) << run.err;
  }
}

// The check covers the threads: an event of a worker thread moved by one tick (the test hook,
// R.T:E) stops the run with one line naming rank, thread and event, exit code 1, no report;
// also with the rank on the second of two processes.
TEST(WhatIfOpenMp, Identity_AMovedThreadEventIsCaught) {
  for (int m : {2, 1}) {
    TempDir dir;
    slow_loop().write(dir / "t");
    ::setenv("CPREPLAY_TEST_RETIME_NUDGE", "1.1:3", 1);  // rank 1, thread 1 leaves loop_body
    const RunResult run = run_cpreplay(m, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
    ::unsetenv("CPREPLAY_TEST_RETIME_NUDGE");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("cpreplay: error: " + (dir / "t/traces.otf2") +
                           ": rank 1, thread 1, event 3: the re-timing replay with nothing "
                           "changed moved it by 1 ticks\n"),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
}

// ---- Bad input --------------------------------------------------------------------------------

// The --what-if errors of pure-MPI traces apply unchanged: one line, exit code 2, no report,
// no summary.
TEST(WhatIfOpenMp, BadInput_RefusedWithOneLine) {
  TempDir dir;
  slow_loop().write(dir / "t");
  const std::string anchor = dir / "t/traces.otf2";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"loop=0.5", "--what-if 'loop=0.5': " + anchor + " has no region named 'loop'\n"},
      {"loop_body=-1", "--what-if 'loop_body=-1': FACTOR must not be negative"}};
  for (const auto& [option, message] : cases) {
    const RunResult run = run_cpreplay(2, {"-q", "--what-if", option, "-o", dir / "r.cubex",
                                           "--json", dir / "s.json", anchor});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(run.err.rfind("cpreplay: error: " + message, 0), 0u) << run.err;
    EXPECT_EQ(run.err.find("cpreplay: error:"), run.err.rfind("cpreplay: error:")) << run.err;
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
    EXPECT_FALSE(file_exists(dir / "s.json"));
  }
}

}  // namespace
}  // namespace cpreplay::testing
