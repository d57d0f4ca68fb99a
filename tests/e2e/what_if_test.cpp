// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the what-if replay (docs/what-if.md) on hand-drawn timelines whose re-timed
// runtimes are computed by hand: the unchanged run reproduced exactly, static and dynamic
// imbalance, near-critical time, a Late Sender chain and every kind of collective, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/e2e/scenario.hpp"
#include "tests/support/json.hpp"

namespace cpreplay::testing {
namespace {

using scenario::kTol;

struct Analysis {
  Json json;
  CubeFile cube;
  RunResult run;
};

/// Writes the trace, runs cpreplay with --json and `extra`, reads the summary and the report.
Analysis analyze(const TraceWriter& w, const TempDir& dir, const std::vector<std::string>& extra) {
  Analysis a;
  std::vector<std::string> args = {"--json", dir / "s.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  a.cube = scenario::analyze(w, dir, args, "t", &a.run);
  a.json = read_json_file(dir / "s.json");
  return a;
}

/// The what_if entry of a call path; throws when it is not listed.
const Json& entry(const Analysis& a, const std::string& path) {
  for (const Json& c : a.json["what_if"]["callpaths"].array)
    if (c["path"].string == path) return c;
  throw std::invalid_argument("what_if.callpaths has no " + path);
}

/// The summary's critical-path imbalance of a call path.
double imbalance(const Analysis& a, const std::string& path) {
  for (const Json& c : a.json["callpaths"].array)
    if (c["path"].string == path) return c["imbalance_s"].number;
  throw std::invalid_argument("callpaths has no " + path);
}

double scenario_runtime(const Analysis& a) {
  return a.json["what_if"]["scenarios"].array.at(0)["runtime_s"].number;
}

// ---- 4 ranks, 8 iterations of `work` and MPI_Barrier ---------------------------------------
//
// Iteration i starts at s_i on every rank (the barrier before it synchronized them): work of
// rank r [s_i, s_i + w(r,i)], MPI_Barrier [s_i + w(r,i), s_i + max_r w + 0.01]. MPI_Init [0,0.5],
// MPI_Finalize [s_8, s_8 + 0.5], main left at s_8 + 1: the runtime is 1.5 + 8 (max w + 0.01).

constexpr int kIterations = 8;
constexpr const char* kWork = "sim.exe/main/work";

TraceWriter barrier_loop(const std::function<double(int, int)>& work) {
  TraceWriter w(4);
  scenario::open_all(w);
  double s = 0.5;
  for (int i = 0; i < kIterations; ++i) {
    double most = 0.0;
    for (int r = 0; r < 4; ++r) most = std::max(most, work(r, i));
    for (int r = 0; r < 4; ++r) {
      w.region(r, "work", s, s + work(r, i));
      w.collective(r, "MPI_Barrier", s + work(r, i), s + most + 0.01, CollOpT::Barrier, 0, 0);
    }
    s += most + 0.01;
  }
  scenario::close_all(w, s);
  return w;
}

// Static: rank 3 always works 1.4 s, the others 1.0 s. Runtime 1.5 + 8 x 1.41 = 12.78 s.
// Zeroing work saves its critical-path time, 8 x 1.4 = 11.2 s. Balanced, every visit takes the
// mean, 1.1 s: 8 x 0.3 = 2.4 s shorter; a static rebalance gives every rank 8.8 s of work, so
// 1.1 s per iteration too: 2.4 s. That is the critical-path imbalance: 11.2 - 35.2 / 4.
TEST(WhatIf, StaticImbalance_BalanceAndRebalanceGainTheCriticalPathImbalance) {
  TempDir dir;
  const Analysis a =
      analyze(barrier_loop([](int r, int) { return r == 3 ? 1.4 : 1.0; }), dir, {});
  const Json& w = entry(a, kWork);
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 12.78, kTol);
  EXPECT_NEAR(w["zeroing_gain_s"].number, 11.2, kTol);
  EXPECT_NEAR(w["balance_gain_s"].number, 2.4, kTol);
  EXPECT_NEAR(w["rebalance_gain_s"].number, 2.4, kTol);
  EXPECT_NEAR(imbalance(a, kWork), 2.4, kTol);
  EXPECT_NEAR(a.json["what_if"]["near_critical_fraction"].number, 0.01, 0.0);
}

// Dynamic: the slow rank changes every iteration (rank i mod 4), so every rank works 8.8 s in
// all. Balancing every visit still gains 2.4 s; a static rebalance changes nothing. The summary
// says so in a finding.
TEST(WhatIf, DynamicImbalance_OnlyBalancingEveryInstancePays) {
  TempDir dir;
  const Analysis a =
      analyze(barrier_loop([](int r, int i) { return r == i % 4 ? 1.4 : 1.0; }), dir, {});
  const Json& w = entry(a, kWork);
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 12.78, kTol);
  EXPECT_NEAR(w["zeroing_gain_s"].number, 11.2, kTol);
  EXPECT_NEAR(w["balance_gain_s"].number, 2.4, kTol);
  EXPECT_NEAR(w["rebalance_gain_s"].number, 0.0, 1e-8);
  EXPECT_NEAR(imbalance(a, kWork), 2.4, kTol);
  bool found = false;
  for (const Json& f : a.json["findings"].array)
    found = found || f.string ==
                         "work: balancing every instance would save 2.40 s (18.8 % of the "
                         "runtime), a static rebalance of its work per rank only 0 s: the "
                         "overload moves between ranks, so only dynamic load balancing pays";
  EXPECT_TRUE(found) << a.run.out;
  EXPECT_NE(a.run.out.find("What if (re-timed replay of the run; runtime 12.78 s"),
            std::string::npos)
      << a.run.out;
}

// δ = 0: only activities on a critical path count, and in the static case that is rank 3's
// work, 8 x 1.4 s: its critical-path time. δ = 1: every activity, all 35.2 s of work.
TEST(WhatIf, NearCritical_DeltaZeroIsTheCriticalPathDeltaOneEverything) {
  const auto work = [](int r, int) { return r == 3 ? 1.4 : 1.0; };
  {
    TempDir dir;
    const Analysis a = analyze(barrier_loop(work), dir, {"--near-critical", "0"});
    EXPECT_NEAR(entry(a, kWork)["near_critical_s"].number, 11.2, kTol);
    EXPECT_NEAR(scenario::at(a.cube, "critical_path", kWork, 3), 11.2, kTol);
    for (int r = 0; r < 3; ++r)
      EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kWork, r), 0.0, kTol) << r;
    EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kWork, 3), 11.2, kTol);
  }
  {
    TempDir dir;
    const Analysis a = analyze(barrier_loop(work), dir, {"--near-critical", "1"});
    EXPECT_NEAR(entry(a, kWork)["near_critical_s"].number, 35.2, kTol);
    for (int r = 0; r < 4; ++r)
      EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kWork, r), r == 3 ? 11.2 : 8.0,
                  kTol)
          << r;
  }
}

// ---- A Late Sender chain -------------------------------------------------------------------
//
// rank 0: a [0.5, 2.5], MPI_Send to 1 [2.5, 2.6], MPI_Finalize [2.6, 4.5]
// rank 1: MPI_Recv from 0 [0.5, 2.7], b [2.7, 3.7], MPI_Send to 2 [3.7, 3.8], Finalize [3.8, 4.5]
// rank 2: MPI_Recv from 1 [0.5, 3.9], c [3.9, 4.4], MPI_Finalize [4.4, 4.5]
// main is left at 4.6: the runtime. Each receive completes 0.2 s after its send was entered.
TraceWriter chain() {
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
  }
  w.region(0, "a", 0.5, 2.5);
  w.send(0, 2.5, 2.6, 1, 7, 64);
  w.recv(1, 0.5, 2.7, 0, 7, 64);
  w.region(1, "b", 2.7, 3.7);
  w.send(1, 3.7, 3.8, 2, 7, 64);
  w.recv(2, 0.5, 3.9, 1, 7, 64);
  w.region(2, "c", 3.9, 4.4);
  const double enter[3] = {2.6, 3.8, 4.4};
  for (int r = 0; r < 3; ++r) {
    w.finalize(r, enter[r], 4.5);
    w.leave(r, 4.6, "main");
    w.program_end(r, 4.6);
  }
  return w;
}

// a at half speed: a [0.5, 1.5], send entered 1.5; rank 1 receives at 1.7, b [1.7, 2.7], send
// at 2.7; rank 2 receives at 2.9, c [2.9, 3.4]; MPI_Finalize left 0.1 s after its last Enter,
// at 3.5; main at 3.6. Zeroing a: 2.0 s earlier everywhere, runtime 2.6 s. The new critical
// path runs through a, b and c: 1.0, 1.0 and 0.5 s of it.
TEST(WhatIf, LateSenderChain_HandComputedRuntimesAndNewCriticalPath) {
  TempDir dir;
  const Analysis a = analyze(chain(), dir, {"--what-if", "a=0.5"});
  EXPECT_NEAR(a.json["wall_clock_s"].number, 4.6, kTol);
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 4.6, kTol);
  EXPECT_NEAR(scenario_runtime(a), 3.6, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/a")["zeroing_gain_s"].number, 2.0, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/b")["zeroing_gain_s"].number, 1.0, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/c")["zeroing_gain_s"].number, 0.5, kTol);
  const Json& sc = a.json["what_if"]["scenarios"].array.at(0);
  EXPECT_NEAR(sc["changes"]["a"].number, 0.5, 0.0);
  std::vector<std::pair<std::string, double>> on_path;
  for (const Json& p : sc["critical_path"].array)
    on_path.push_back({p["path"].string, p["seconds"].number});
  ASSERT_GE(on_path.size(), 3u);
  EXPECT_EQ(on_path[0].first, "sim.exe/main/a");
  EXPECT_NEAR(on_path[0].second, 1.0, kTol);
  EXPECT_EQ(on_path[1].first, "sim.exe/main/b");
  EXPECT_NEAR(on_path[1].second, 1.0, kTol);
  double c = 0.0;
  for (const auto& [path, seconds] : on_path)
    if (path == "sim.exe/main/c") c = seconds;
  EXPECT_NEAR(c, 0.5, kTol);
  EXPECT_NE(a.run.out.find("scenario a=0.5: runtime 3.60 s (-1.00 s, -21.7 %)"),
            std::string::npos)
      << a.run.out;
}

// Late Receiver: rank 0's MPI_Send [0.5, 3.6] completes 0.1 s after rank 1 entered its MPI_Recv
// (at 3.5, after x [0.5, 3.5]); rank 0 then works `post` [3.6, 4.6]. MPI_Finalize: entered at 4.6
// and 3.6, left at 4.7; main at 4.8. With x at half speed rank 1 receives from 2.0: the send
// completes at 2.1, post ends at 3.1, MPI_Finalize is left at 3.2 and main at 3.3.
TEST(WhatIf, LateReceiver_TheSendWaitsForTheReceiveRequest) {
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
  }
  w.send(0, 0.5, 3.6, 1, 3, 1 << 20);
  w.region(0, "post", 3.6, 4.6);
  w.region(1, "x", 0.5, 3.5);
  w.recv(1, 3.5, 3.6, 0, 3, 1 << 20);
  const double enter[2] = {4.6, 3.6};
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, enter[r], 4.7);
    w.leave(r, 4.8, "main");
    w.program_end(r, 4.8);
  }
  TempDir dir;
  const Analysis a = analyze(w, dir, {"--what-if", "x=0.5"});
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 4.8, kTol);
  EXPECT_NEAR(scenario_runtime(a), 3.3, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/x")["zeroing_gain_s"].number, 3.0, kTol);
}

// Waits and completion times beyond 31 bits of ticks (1e9 per second here: 2.15 s), which the
// replay keeps apart from the 4-byte ones: rank 1 enters MPI_Recv at 0.5, rank 0 sends after
// `work` [0.5, 4.0] in an MPI_Send [4.0, 7.0] that completes 3.0 s after the message left (a
// Late Receiver constraint: the call ends after the request was entered, 6.5 s before), and
// the receive completes at 7.0, 3.0 s after the send. Both then work `post` [7.0, 8.0],
// MPI_Finalize [8.0, 8.1], main is left at 8.2. With work at half speed the send enters at 2.25,
// both complete at 5.25, post ends at 6.25, runtime 6.45; without work 4.7; without post 7.2.
TEST(WhatIf, LongWaits_ReadyAndCompletionTimesBeyond31BitsOfTicks) {
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
  }
  w.region(0, "work", 0.5, 4.0);
  w.send(0, 4.0, 7.0, 1, 3, 1 << 20);
  w.recv(1, 0.5, 7.0, 0, 3, 1 << 20);
  for (int r = 0; r < 2; ++r) {
    w.region(r, "post", 7.0, 8.0);
    w.finalize(r, 8.0, 8.1);
    w.leave(r, 8.2, "main");
    w.program_end(r, 8.2);
  }
  TempDir dir;
  const Analysis a = analyze(w, dir, {"--what-if", "work=0.5"});
  EXPECT_EQ(a.json["what_if"]["runtime_s"].number, a.json["wall_clock_s"].number);
  EXPECT_NEAR(a.json["wall_clock_s"].number, 8.2, kTol);
  EXPECT_NEAR(scenario_runtime(a), 6.45, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/work")["zeroing_gain_s"].number, 3.5, kTol);
  EXPECT_NEAR(entry(a, "sim.exe/main/post")["zeroing_gain_s"].number, 1.0, kTol);
  EXPECT_EQ(a.run.err.find("what-if"), std::string::npos) << a.run.err;
}

// ---- One collective of each kind -----------------------------------------------------------
//
// 3 ranks: MPI_Init [0, 0.5]; rank r works `w<r>` for d = (3, 1, 2) s, then enters the
// collective (at 3.5, 1.5, 2.5) on MPI_COMM_WORLD; each member leaves 0.1 s after what the
// wait-state rules say it waits for (its own begin if nothing); rank 1 then works `post` for
// 2 s; everybody enters MPI_Finalize when done and leaves it 0.1 s after the last Enter; main is
// left 0.1 s later. The scenario removes one rank's work; the hand-computed runtime differs
// between the kinds because who waits for whom differs.

struct Kind {
  std::string call;
  CollOpT op;
  int root;               ///< -1: none
  double end[3];          ///< original collective ends
  std::uint64_t sent[3];
  std::uint64_t received[3];
};

TraceWriter one_collective(const Kind& k) {
  TraceWriter w(3);
  const double d[3] = {3.0, 1.0, 2.0};
  double done[3];
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
    w.region(r, "w" + std::to_string(r), 0.5, 0.5 + d[r]);
    w.collective(r, k.call, 0.5 + d[r], k.end[r], k.op, k.sent[r], k.received[r], 0, k.root);
    done[r] = k.end[r];
  }
  w.region(1, "post", done[1], done[1] + 2.0);
  done[1] += 2.0;
  const double last = *std::max_element(done, done + 3);
  for (int r = 0; r < 3; ++r) {
    w.finalize(r, done[r], last + 0.1);
    w.leave(r, last + 0.2, "main");
    w.program_end(r, last + 0.2);
  }
  return w;
}

double collective_runtime(const Kind& k, const std::string& change) {
  TempDir dir;
  const Analysis a = analyze(one_collective(k), dir, {"--what-if", change});
  EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, a.json["wall_clock_s"].number, 0.0);
  return scenario_runtime(a);
}

// Barrier and N x N: everybody waits for the latest begin. Originally all leave at 3.6, post
// ends 5.6, runtime 5.8. Without w0 the latest begin is rank 2's, 2.5: all leave at 2.6, post
// ends 4.6, runtime 4.8.
TEST(WhatIf, Barrier_EverybodyWaitsForTheLatest) {
  const Kind k{"MPI_Barrier", CollOpT::Barrier, -1, {3.6, 3.6, 3.6}, {0, 0, 0}, {0, 0, 0}};
  EXPECT_NEAR(collective_runtime(k, "w0=0"), 4.8, kTol);
}

TEST(WhatIf, Allreduce_EverybodyWaitsForTheLatest) {
  const Kind k{"MPI_Allreduce", CollOpT::Allreduce, -1, {3.6, 3.6, 3.6}, {8, 8, 8}, {8, 8, 8}};
  EXPECT_NEAR(collective_runtime(k, "w0=0"), 4.8, kTol);
}

// 1-to-N, root 0 (the latest): the others wait for the root only. Without w0 the root begins
// at 0.5; rank 1 leaves at 1.6 (it does not wait for rank 2, as a barrier would), post ends at
// 3.6, runtime 3.8.
TEST(WhatIf, Bcast_ReceiversWaitForTheRootOnly) {
  const Kind k{"MPI_Bcast", CollOpT::Bcast, 0, {3.6, 3.6, 3.6}, {16, 0, 0}, {0, 8, 8}};
  EXPECT_NEAR(collective_runtime(k, "w0=0"), 3.8, kTol);
}

// N-to-1, root 1: the root waits for the latest sender (rank 0, 3.5) and leaves at 3.6; the
// senders do not wait: rank 0 leaves at 3.6, rank 2 at 2.6. Post ends 5.6, runtime 5.8.
// Without w0 the latest sender is rank 2 (2.5): the root leaves at 2.6, post ends 4.6, runtime
// 4.8 (the senders still do not wait for anybody).
TEST(WhatIf, Reduce_TheRootWaitsForTheLatestSender) {
  const Kind k{"MPI_Reduce", CollOpT::Reduce, 1, {3.6, 3.6, 2.6}, {8, 0, 8}, {0, 16, 0}};
  EXPECT_NEAR(collective_runtime(k, "w0=0"), 4.8, kTol);
  // Without w2, rank 0 is still the latest sender: the root leaves at 3.6 as before.
  EXPECT_NEAR(collective_runtime(k, "w2=0"), 5.8, kTol);
}

// Scan: member j waits for the senders 0..j. Originally everybody leaves at 3.6 (rank 0 is the
// latest and first). Without w0, rank 1 waits for ranks 0 and 1 (1.5): it leaves at 1.6, post
// ends 3.6; rank 2 leaves at 2.6: runtime 3.8 (a barrier would give 4.8).
TEST(WhatIf, Scan_EachMemberWaitsForTheSendersBeforeIt) {
  const Kind k{"MPI_Scan", CollOpT::Scan, -1, {3.6, 3.6, 3.6}, {8, 8, 8}, {8, 8, 8}};
  EXPECT_NEAR(collective_runtime(k, "w0=0"), 3.8, kTol);
}

// ---- The unchanged run ----------------------------------------------------------------------

// Nothing changed: the replay reproduces every event's time (it checks each one, and the
// joins at every cut) and the runtime: a scenario with factor 1 predicts the trace's own
// wall-clock time, to the tick, on every timeline above.
TEST(WhatIf, Identity_NothingChangedReproducesTheRun) {
  std::vector<std::pair<std::string, TraceWriter>> traces;
  traces.push_back(
      {"barrier loop", barrier_loop([](int r, int i) { return 1.0 + 0.1 * ((r + i) % 3); })});
  traces.push_back({"chain", chain()});
  traces.push_back(
      {"reduce", one_collective({"MPI_Reduce", CollOpT::Reduce, 1, {3.6, 3.6, 2.6}, {8, 0, 8},
                                 {0, 16, 0}})});
  traces.push_back({"scan", one_collective({"MPI_Scan", CollOpT::Scan, -1, {3.6, 3.6, 3.6},
                                            {8, 8, 8}, {8, 8, 8}})});
  for (const auto& [name, w] : traces) {
    TempDir dir;
    const Analysis a = analyze(w, dir, {"--what-if", "main=1"});
    EXPECT_EQ(a.json["what_if"]["runtime_s"].number, a.json["wall_clock_s"].number) << name;
    EXPECT_EQ(scenario_runtime(a), a.json["wall_clock_s"].number) << name;
    EXPECT_EQ(a.run.err.find("what-if"), std::string::npos) << name << ": " << a.run.err;
  }
}

// The check is real: an event moved by one tick (a test hook) stops the run with one line that
// names the rank and the event, exit code 1, and no report.
TEST(WhatIf, Identity_AMovedEventIsCaught) {
  TempDir dir;
  const TraceWriter w = chain();
  w.write(dir / "t");
  ::setenv("CPREPLAY_TEST_RETIME_NUDGE", "0:5", 1);  // rank 0 leaves `a`
  const RunResult run = run_cpreplay(3, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  ::unsetenv("CPREPLAY_TEST_RETIME_NUDGE");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cpreplay: error: " + (dir / "t/traces.otf2") +
                         ": rank 0, event 5: the re-timing replay with nothing changed moved it "
                         "by 1 ticks"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
}

// The parts are replayed --window / 4 at a time: one part per window (--window 4) and all at
// once give the same values, to the bit (gains and near-critical time are sums of ticks).
TEST(WhatIf, Window_ResultsDoNotDependOnIt) {
  const auto work = [](int r, int i) { return 1.0 + 0.1 * ((r * 3 + i) % 4); };
  TempDir one, all;
  const Analysis a = analyze(barrier_loop(work), one, {"--window", "4", "--what-if", "work=0.3"});
  const Analysis b = analyze(barrier_loop(work), all, {"--what-if", "work=0.3"});
  const Json& x = a.json["what_if"];
  const Json& y = b.json["what_if"];
  EXPECT_EQ(x["runtime_s"].number, y["runtime_s"].number);
  ASSERT_EQ(x["callpaths"].array.size(), y["callpaths"].array.size());
  for (std::size_t i = 0; i < x["callpaths"].array.size(); ++i) {
    const Json& p = x["callpaths"].array[i];
    const Json& q = y["callpaths"].array[i];
    EXPECT_EQ(p["path"].string, q["path"].string);
    for (const char* key :
         {"zeroing_gain_s", "balance_gain_s", "rebalance_gain_s", "near_critical_s"})
      EXPECT_EQ(p[key].number, q[key].number) << p["path"].string << " " << key;
  }
  EXPECT_EQ(scenario_runtime(a), scenario_runtime(b));
  EXPECT_TRUE(a.cube.values.at("near_critical_path") == b.cube.values.at("near_critical_path"));
}

/// Every what-if value of two runs of one trace is the same, to the bit.
void expect_same_what_if(const Analysis& a, const Analysis& b, const std::string& name) {
  const Json& x = a.json["what_if"];
  const Json& y = b.json["what_if"];
  EXPECT_EQ(x["runtime_s"].number, y["runtime_s"].number) << name;
  ASSERT_EQ(x["callpaths"].array.size(), y["callpaths"].array.size()) << name;
  ASSERT_GT(x["callpaths"].array.size(), 1u) << name;
  for (std::size_t i = 0; i < x["callpaths"].array.size(); ++i)
    for (const char* key :
         {"zeroing_gain_s", "balance_gain_s", "rebalance_gain_s", "near_critical_s"})
      EXPECT_EQ(x["callpaths"].array[i][key].number, y["callpaths"].array[i][key].number)
          << name << " " << x["callpaths"].array[i]["path"].string << " " << key;
  EXPECT_EQ(scenario_runtime(a), scenario_runtime(b)) << name;
}

/// The mktrace halo exchange in `dir` (written by the caller) analyzed with a scenario at
/// `processes`, its report and JSON named after `name`.
Analysis run_halo_exchange(const TempDir& dir, const std::string& name, int processes = 4) {
  Analysis a;
  a.run = run_cpreplay(processes, {"-o", dir / (name + ".cubex"), "--json",
                                   dir / (name + ".json"), "--what-if", "interior=0.5",
                                   dir / "t/traces.otf2"});
  EXPECT_EQ(a.run.exit_code, 0) << a.run.err;
  a.json = read_json_file(dir / (name + ".json"));
  return a;
}

// Cutting the run into parts at its collectives on all ranks is exact: replayed as one part (a
// test hook), every value is the same, to the bit. The barrier loop has 8 cuts; the mktrace
// halo exchange (Isend/Irecv/Waitall in a ring, an MPI_Allreduce per iteration) 12.
TEST(WhatIf, Parts_OnePartGivesTheSameValues) {
  const auto work = [](int r, int i) { return 1.0 + 0.1 * ((r * 3 + i) % 4); };
  {
    TempDir cut, whole;
    const Analysis a = analyze(barrier_loop(work), cut, {"--what-if", "work=0.3"});
    ::setenv("CPREPLAY_TEST_RETIME_NO_CUTS", "1", 1);
    const Analysis b = analyze(barrier_loop(work), whole, {"--what-if", "work=0.3"});
    ::unsetenv("CPREPLAY_TEST_RETIME_NO_CUTS");
    expect_same_what_if(a, b, "barrier loop");
  }
  {
    TempDir dir;
    ASSERT_EQ(run_mktrace({"nonblocking", dir / "t", "--ranks", "4", "--iters", "12"}).exit_code,
              0);
    const Analysis a = run_halo_exchange(dir, "cut");
    ::setenv("CPREPLAY_TEST_RETIME_NO_CUTS", "1", 1);
    const Analysis b = run_halo_exchange(dir, "whole");
    ::unsetenv("CPREPLAY_TEST_RETIME_NO_CUTS");
    EXPECT_NE(a.run.err.find("13 parts"), std::string::npos) << a.run.err;
    EXPECT_NE(b.run.err.find("1 parts"), std::string::npos) << b.run.err;
    expect_same_what_if(a, b, "nonblocking");
  }
}

// The slack pass replays only the parts where an activity's slack may exceed the limit: from a
// part's end its latest times only go down, so where even the part's upper bound is within the
// limit, every activity in it is near-critical whatever the partners allow, and the part is
// walked once without records (RankRetimer::slack_bound). Replaying every part (a test hook)
// gives the same near-critical times, to the bit, per call path and rank: the mktrace halo
// exchange (13 parts, 62.66 ms) with a limit that skips every part (5 %: no slack round), one
// that skips some (2 %: the 4th and the last), and 0 (the last part only, on the critical path
// to the run's end on every rank).
TEST(WhatIf, NearCritical_PartsNotReplayedSameAsReplayed) {
  TempDir dir;
  ASSERT_EQ(run_mktrace({"nonblocking", dir / "t", "--ranks", "4", "--iters", "12"}).exit_code,
            0);
  const auto run = [&](const std::string& name, const std::string& limit) {
    Analysis a;
    a.run = run_cpreplay(4, {"-v", "-o", dir / (name + ".cubex"), "--json",
                             dir / (name + ".json"), "--what-if", "interior=0.5",
                             "--near-critical", limit, dir / "t/traces.otf2"});
    EXPECT_EQ(a.run.exit_code, 0) << a.run.err;
    a.json = read_json_file(dir / (name + ".json"));
    a.cube = read_cube(dir / (name + ".cubex"));
    return a;
  };
  struct Case {
    const char* limit;
    const char* rounds;  // forward + slack rounds with parts skipped
  };
  std::vector<double> totals;
  for (const Case& c : {Case{"0.05", "4 + 0 rounds"}, Case{"0.02", "4 + 4 rounds"},
                        Case{"0", "4 + 4 rounds"}}) {
    const Analysis a = run(std::string("skip") + c.limit, c.limit);
    ::setenv("CPREPLAY_TEST_RETIME_FULL_SLACK", "1", 1);
    const Analysis b = run(std::string("full") + c.limit, c.limit);
    ::unsetenv("CPREPLAY_TEST_RETIME_FULL_SLACK");
    EXPECT_NE(a.run.err.find(c.rounds), std::string::npos) << c.limit << ": " << a.run.err;
    EXPECT_NE(b.run.err.find("4 + 4 rounds"), std::string::npos) << c.limit << ": " << b.run.err;
    expect_same_what_if(a, b, std::string("limit ") + c.limit);
    EXPECT_TRUE(a.cube.values.at("near_critical_path") == b.cube.values.at("near_critical_path"))
        << c.limit;
    totals.push_back(scenario::total(a.cube, "near_critical_path"));
  }
  // The limits select different activities: the sums differ, and none is empty.
  EXPECT_GT(totals[0], totals[1]);
  EXPECT_GT(totals[1], totals[2]);
  EXPECT_GT(totals[2], 0.0);
}

// The balance statistics (every rank's non-waiting time and visits per call path) start from the
// profile's ticks on pure-MPI traces, and the collectives' rules are the forward replay's; counted
// by walking every event and reduced again (a test hook) they give the same values, to the bit:
// the barrier loop, and the mktrace halo exchange, whose waits make the non-waiting time differ
// from the time.
TEST(WhatIf, SharedInputs_ProfileTicksAndForwardRulesSameAsOwn) {
  {
    const auto work = [](int r, int i) { return 1.0 + 0.1 * ((r * 3 + i) % 4); };
    TempDir profiled, walked;
    const Analysis a = analyze(barrier_loop(work), profiled, {"--what-if", "work=0.3"});
    ::setenv("CPREPLAY_TEST_RETIME_UNSHARED", "1", 1);
    const Analysis b = analyze(barrier_loop(work), walked, {"--what-if", "work=0.3"});
    ::unsetenv("CPREPLAY_TEST_RETIME_UNSHARED");
    expect_same_what_if(a, b, "barrier loop");
    // Balancing work gains here (its visits differ): the statistics are not trivial.
    bool gains = false;
    for (const Json& p : a.json["what_if"]["callpaths"].array)
      if (p["balance_gain_s"].number > 0.0) gains = true;
    EXPECT_TRUE(gains);
  }
  {
    TempDir dir;
    ASSERT_EQ(run_mktrace({"nonblocking", dir / "t", "--ranks", "4", "--iters", "12"}).exit_code,
              0);
    const Analysis a = run_halo_exchange(dir, "profiled");
    const Analysis c = run_halo_exchange(dir, "profiled3", 3);
    ::setenv("CPREPLAY_TEST_RETIME_UNSHARED", "1", 1);
    const Analysis b = run_halo_exchange(dir, "walked");
    ::unsetenv("CPREPLAY_TEST_RETIME_UNSHARED");
    expect_same_what_if(a, b, "nonblocking");
    expect_same_what_if(c, b, "nonblocking, 3 processes");
  }
}

// The same on a Score-P trace of a real run (../shared/traces/ping-pong-otf2): main holds every
// part and has time of its own, so its balance factor must reach every part. The regions open
// where a part starts are found scanning back from it, and a region open since before the
// previous part's start is taken from there (plan_stats_from_profile); the walk finds them
// forwards. Same values, to the bit.
TEST(WhatIf, SharedInputs_RegionsOpenAcrossCutsOnAScorePTrace) {
  const std::string trace =
      (std::filesystem::path(__FILE__).parent_path() / "../../../shared/traces/ping-pong-otf2/"
                                                        "traces.otf2")
          .lexically_normal();
  if (!file_exists(trace)) GTEST_SKIP() << trace << " is absent";
  TempDir dir;
  const auto run = [&](const std::string& name) {
    Analysis a;
    a.run = run_cpreplay(2, {"-o", dir / (name + ".cubex"), "--json", dir / (name + ".json"),
                             "-v", "--what-if", "MPI_Send=0.5", trace});
    EXPECT_EQ(a.run.exit_code, 0) << a.run.err;
    a.json = read_json_file(dir / (name + ".json"));
    return a;
  };
  const Analysis a = run("profiled");
  ::setenv("CPREPLAY_TEST_RETIME_UNSHARED", "1", 1);
  const Analysis b = run("walked");
  ::unsetenv("CPREPLAY_TEST_RETIME_UNSHARED");
  // More than two parts: a region open at the third part's start was open at the second's.
  const std::string& err = a.run.err;
  const std::size_t at = err.find(" parts, ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::size_t from = err.rfind(' ', at - 1);
  EXPECT_GT(std::stoi(err.substr(from + 1, at - from - 1)), 2) << err;
  expect_same_what_if(a, b, "ping-pong-otf2");
  bool balanced = false;  // main's balance changes something: the test sees its factor
  for (const Json& p : a.json["what_if"]["callpaths"].array)
    if (p["path"].string.find("main") != std::string::npos && p["balance_gain_s"].number != 0.0)
      balanced = true;
  EXPECT_TRUE(balanced);
}

// ---- Fewer processes than traced ranks -----------------------------------------------------

/// Writes the trace once and runs it at `processes` (with --json and `extra`).
Analysis analyze_at(const TraceWriter& w, const TempDir& dir, int processes,
                    const std::vector<std::string>& extra) {
  if (!file_exists(dir / "t/traces.otf2")) w.write(dir / "t");
  const std::string tag = "m" + std::to_string(processes);
  std::vector<std::string> args = {"-o", dir / (tag + ".cubex"), "--json", dir / (tag + ".json")};
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

// The static barrier loop (4 ranks) on 1, 3 and 4 processes: the hand-computed values of
// StaticImbalance_... and NearCritical_... (δ = 0) at every M, and work at half speed: rank 3
// works 0.7 s per iteration, so the run takes 1.5 + 8 x 0.71 = 7.18 s and the scenario's
// critical path holds rank 3's work, 8 x 0.7 = 5.6 s, the most of any call path.
TEST(WhatIf, FewerProcesses_StaticImbalanceHandComputedAt1_3_4) {
  TempDir dir;
  const TraceWriter w = barrier_loop([](int r, int) { return r == 3 ? 1.4 : 1.0; });
  for (int m : {1, 3, 4}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    const Analysis a = analyze_at(w, dir, m, {"--near-critical", "0", "--what-if", "work=0.5"});
    const Json& e = entry(a, kWork);
    EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 12.78, kTol);
    EXPECT_NEAR(e["zeroing_gain_s"].number, 11.2, kTol);
    EXPECT_NEAR(e["balance_gain_s"].number, 2.4, kTol);
    EXPECT_NEAR(e["rebalance_gain_s"].number, 2.4, kTol);
    EXPECT_NEAR(e["near_critical_s"].number, 11.2, kTol);
    for (int r = 0; r < 4; ++r)
      EXPECT_NEAR(scenario::at(a.cube, "near_critical_path", kWork, r), r == 3 ? 11.2 : 0.0,
                  kTol)
          << r;
    EXPECT_NEAR(scenario_runtime(a), 7.18, kTol);
    const Json& path = a.json["what_if"]["scenarios"].array.at(0)["critical_path"];
    ASSERT_FALSE(path.array.empty());
    EXPECT_EQ(path.array[0]["path"].string, kWork);
    EXPECT_NEAR(path.array[0]["seconds"].number, 5.6, kTol);
    EXPECT_EQ(a.run.err.find("what-if: not available"), std::string::npos) << a.run.err;
  }
}

// The Late Sender chain (3 ranks) on 1 and 2 processes: the receives of ranks 1 (co-located
// with its sender at M = 1 and 2) and 2 bind in memory or over MPI alike: the runtimes and
// the new critical path of LateSenderChain_..., and Scan and Reduce (hosted by a co-located
// member) as in their own tests.
TEST(WhatIf, FewerProcesses_ChainAndCollectivesHandComputedAt1And2) {
  for (int m : {1, 2}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    TempDir dir;
    const Analysis a = analyze_at(chain(), dir, m, {"--what-if", "a=0.5"});
    EXPECT_NEAR(a.json["what_if"]["runtime_s"].number, 4.6, kTol);
    EXPECT_NEAR(scenario_runtime(a), 3.6, kTol);
    EXPECT_NEAR(entry(a, "sim.exe/main/a")["zeroing_gain_s"].number, 2.0, kTol);
    EXPECT_NEAR(entry(a, "sim.exe/main/b")["zeroing_gain_s"].number, 1.0, kTol);
    EXPECT_NEAR(entry(a, "sim.exe/main/c")["zeroing_gain_s"].number, 0.5, kTol);
    const Json& path = a.json["what_if"]["scenarios"].array.at(0)["critical_path"];
    ASSERT_GE(path.array.size(), 3u);
    EXPECT_EQ(path.array[0]["path"].string, "sim.exe/main/a");
    EXPECT_NEAR(path.array[0]["seconds"].number, 1.0, kTol);
    EXPECT_EQ(path.array[1]["path"].string, "sim.exe/main/b");
    EXPECT_NEAR(path.array[1]["seconds"].number, 1.0, kTol);

    const Kind scan{"MPI_Scan", CollOpT::Scan, -1, {3.6, 3.6, 3.6}, {8, 8, 8}, {8, 8, 8}};
    TempDir s;
    EXPECT_NEAR(scenario_runtime(analyze_at(one_collective(scan), s, m, {"--what-if", "w0=0"})),
                3.8, kTol);
    const Kind reduce{"MPI_Reduce", CollOpT::Reduce, 1, {3.6, 3.6, 2.6}, {8, 0, 8}, {0, 16, 0}};
    TempDir r;
    EXPECT_NEAR(
        scenario_runtime(analyze_at(one_collective(reduce), r, m, {"--what-if", "w0=0"})), 4.8,
        kTol);
  }
}

// The check works on every held rank: rank 1 shares process 0 with rank 0 at M = 1 and M = 2;
// its Leave of main moved by one tick is caught with the same line as at M = 3.
TEST(WhatIf, FewerProcesses_AMovedEventIsCaughtOnASharedProcess) {
  TempDir dir;
  chain().write(dir / "t");
  // Rank 1 leaves main (after MPI_Finalize, the last cut: no other rank sees the tick).
  ::setenv("CPREPLAY_TEST_RETIME_NUDGE", "1:14", 1);
  for (int m : {3, 2, 1}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    const RunResult run = run_cpreplay(m, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("cpreplay: error: " + (dir / "t/traces.otf2") +
                           ": rank 1, event 14: the re-timing replay with nothing changed moved "
                           "it by 1 ticks\n"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.err.find("cpreplay: error:"), run.err.rfind("cpreplay: error:")) << run.err;
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
  ::unsetenv("CPREPLAY_TEST_RETIME_NUDGE");
}

// One part (the test hook) at M = 3 gives the values of the cut replay at M = 4, to the bit.
TEST(WhatIf, FewerProcesses_OnePartAt3SameAsCutsAt4) {
  const auto work = [](int r, int i) { return 1.0 + 0.1 * ((r * 3 + i) % 4); };
  TempDir dir;
  const TraceWriter w = barrier_loop(work);
  const Analysis a = analyze_at(w, dir, 4, {"--what-if", "work=0.3"});
  ::setenv("CPREPLAY_TEST_RETIME_NO_CUTS", "1", 1);
  const Analysis b = analyze_at(w, dir, 3, {"--what-if", "work=0.3"});
  ::unsetenv("CPREPLAY_TEST_RETIME_NO_CUTS");
  EXPECT_NE(a.run.err.find("9 parts"), std::string::npos) << a.run.err;
  EXPECT_NE(b.run.err.find("1 parts"), std::string::npos) << b.run.err;
  const Json& x = a.json["what_if"];
  const Json& y = b.json["what_if"];
  EXPECT_EQ(x["runtime_s"].number, y["runtime_s"].number);
  ASSERT_EQ(x["callpaths"].array.size(), y["callpaths"].array.size());
  for (std::size_t i = 0; i < x["callpaths"].array.size(); ++i)
    for (const char* key :
         {"zeroing_gain_s", "balance_gain_s", "rebalance_gain_s", "near_critical_s"})
      EXPECT_EQ(x["callpaths"].array[i][key].number, y["callpaths"].array[i][key].number)
          << x["callpaths"].array[i]["path"].string << " " << key;
  EXPECT_EQ(scenario_runtime(a), scenario_runtime(b));
  EXPECT_TRUE(a.cube.values.at("near_critical_path") == b.cube.values.at("near_critical_path"));
}

// --no-what-if: no replay, an empty near_critical_path and "what_if": null.
TEST(WhatIf, NoWhatIf_NothingComputed) {
  TempDir dir;
  const Analysis a = analyze(chain(), dir, {"--no-what-if"});
  EXPECT_EQ(a.json["what_if"].type, Json::Type::Null);
  EXPECT_NEAR(scenario::total(a.cube, "near_critical_path"), 0.0, 0.0);
  EXPECT_EQ(a.run.out.find("What if"), std::string::npos);
}

// ---- Bad input: one line, exit code 2, no report ---------------------------------------------

void expect_refused(const std::vector<std::string>& options, const std::string& message) {
  TempDir dir;
  chain().write(dir / "t");
  std::vector<std::string> args = {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(dir / "t/traces.otf2");
  const RunResult run = run_cpreplay(3, args);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err.rfind("cpreplay: error: " + message, 0), 0u) << run.err;
  EXPECT_EQ(run.err.find("cpreplay: error:"), run.err.rfind("cpreplay: error:")) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
  EXPECT_FALSE(file_exists(dir / "s.json"));
  for (const std::string& f : list_dir(dir.path()))
    EXPECT_EQ(f.find(".tmp-"), std::string::npos) << f;
}

TEST(WhatIf, BadInput_UnknownRegion) {
  expect_refused({"--what-if", "nope=0.5"}, "--what-if 'nope=0.5': ");
  expect_refused({"--what-if", "a=0.5", "--what-if", "sim=1"}, "--what-if 'sim=1': ");
}

TEST(WhatIf, BadInput_NegativeFactor) {
  expect_refused({"--what-if", "a=-1"}, "--what-if 'a=-1': FACTOR must not be negative");
}

// A factor whose scenario the replay's signed 64-bit ticks cannot hold is refused in one line
// (it was undefined behaviour: a double beyond 2^63 converted to ticks).
TEST(WhatIf, BadInput_FactorBeyondTheReplaysRange) {
  expect_refused({"--what-if", "a=1e18"}, "--what-if 'a=1e+18': the run would last up to ");
  expect_refused({"--what-if", "a=1e300"}, "--what-if 'a=1e+300': the run would last up to ");
}

TEST(WhatIf, BadInput_NonNumericFactor) {
  expect_refused({"--what-if", "a=fast"}, "--what-if 'a=fast': FACTOR must be a number");
  expect_refused({"--what-if", "a=nan"}, "--what-if 'a=nan': FACTOR must be a number");
  expect_refused({"--what-if", "a=0.5x"}, "--what-if 'a=0.5x': FACTOR must be a number");
}

TEST(WhatIf, BadInput_MalformedArgument) {
  expect_refused({"--what-if", "a"}, "--what-if 'a' must be REGION=FACTOR");
  expect_refused({"--what-if", "=1"}, "--what-if '=1' must be REGION=FACTOR");
  expect_refused({"--what-if", "a="}, "--what-if 'a=' must be REGION=FACTOR");
  expect_refused({"--what-if", "a=1", "--what-if", "a=2"},
                 "--what-if 'a=2': region 'a' given twice");
}

TEST(WhatIf, BadInput_TopAndNearCritical) {
  expect_refused({"--what-if-top", "0"},
                 "--what-if-top '0' must be a whole number of call paths from 1 to 100");
  expect_refused({"--what-if-top", "ten"},
                 "--what-if-top 'ten' must be a whole number of call paths from 1 to 100");
  expect_refused({"--near-critical", "-0.1"},
                 "--near-critical '-0.1' must be a number from 0 to 1");
  expect_refused({"--near-critical", "2"}, "--near-critical '2' must be a number from 0 to 1");
  expect_refused({"--no-what-if", "--what-if", "a=1"},
                 "--no-what-if cannot be combined with --what-if");
}

}  // namespace
}  // namespace cpreplay::testing
