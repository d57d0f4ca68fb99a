// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: --timeline (Chrome trace-event JSON) and --overview (SVG) on hand-drawn timelines,
// read back with strict parsers (tests/support/check_views.py: Python's json without NaN or
// duplicate keys, expat for the SVG) and compared with hand-computed times.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "tests/e2e/scenario.hpp"
#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

constexpr double kUs = 1e6;  // microseconds per second, the JSON's ts unit

std::string checker() {
  const std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path() / "support" / "check_views.py").string();
}

/// Runs the strict checker; fails the test with its message when a rule is broken.
Json check(const std::string& mode, const std::string& file) {
  const RunResult r = run_command({"/usr/bin/python3", checker(), mode, file});
  if (r.exit_code != 0)
    throw std::runtime_error("check_views.py " + mode + " " + file + " failed (" +
                             std::to_string(r.exit_code) + "): " + r.err);
  return parse_json(r.out);
}

// The §7.3 example of critical_path_test.cpp:
//   rank 0: Init [0,1], foo [1,5], MPI_Send [5,5.1] -> 1, (main 5.1..6), Finalize [6,9]
//   rank 1: Init [0,1], bar [1,2], MPI_Recv [2,5.2] <- 0, baz [5.2,8], Finalize [8,9]
// Late Sender on rank 1: 5 - 2 = 3 s from t = 2; Wait at Finalize on rank 0: 8 - 6 = 2 s.
// Critical path (length 8): rank 0 from MPI_Init's Enter (0) to its send's cut (5), then
// rank 1 from the receive's cut plus the waiting (2 + 3 = 5) to its Finalize Enter (8).
TraceWriter two_rank_example() {
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
  }
  w.region(0, "foo", 1.0, 5.0);
  w.send(0, 5.0, 5.1, 1, 0, 64);
  w.finalize(0, 6.0, 9.0);
  w.region(1, "bar", 1.0, 2.0);
  w.recv(1, 2.0, 5.2, 0, 0, 64);
  w.region(1, "baz", 5.2, 8.0);
  w.finalize(1, 8.0, 9.0);
  for (int r = 0; r < 2; ++r) {
    w.leave(r, 9.0, "main");
    w.program_end(r, 9.0);
  }
  return w;
}

RunResult analyze(const TraceWriter& w, const TempDir& dir, std::vector<std::string> extra) {
  w.write(dir / "t");
  std::vector<std::string> args = {"-q", "-o", dir / "r.cubex"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(dir / "t/traces.otf2");
  return run_cpreplay(w.ranks(), args);
}

/// One complete event of a thread: [name, ts, dur] and args.
struct Slice {
  std::string name;
  double ts;
  double dur;
};

std::vector<Slice> slices(const Json& facts, const std::string& thread) {
  std::vector<Slice> out;
  for (const Json& e : facts["threads_events"][thread].array)
    if (e.array[0].string == "X")
      out.push_back({e.array[1].string, e.array[2].number, e.array[3].number});
  return out;
}

void expect_slices(const std::vector<Slice>& got, const std::vector<Slice>& want,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << what << " #" << i;
    EXPECT_NEAR(got[i].ts, want[i].ts * kUs, 1e-3) << what << " #" << i << " " << want[i].name;
    EXPECT_NEAR(got[i].dur, want[i].dur * kUs, 1e-3) << what << " #" << i << " " << want[i].name;
  }
}

TEST(Views, TwoRankExample_TimelineHasActivityWaitStatesAndCriticalPath) {
  TempDir dir;
  const RunResult run = analyze(two_rank_example(), dir, {"--timeline", dir / "t.json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json facts = check("timeline", dir / "t.json");

  EXPECT_EQ(facts["processes"]["0"].string, "rank 0");
  EXPECT_EQ(facts["processes"]["1"].string, "rank 1");
  EXPECT_EQ(facts["processes"]["2"].string, "critical path");
  EXPECT_EQ(facts["threads"]["0/1"].string, "wait states");

  // Activity, in order of Enter, parents first (the program region is sim.exe).
  expect_slices(slices(facts, "0/0"),
                {{"sim.exe", 0, 9},
                 {"main", 0, 9},
                 {"MPI_Init", 0, 1},
                 {"foo", 1, 4},
                 {"MPI_Send", 5, 0.1},
                 {"MPI_Finalize", 6, 3}},
                "rank 0 activity");
  expect_slices(slices(facts, "1/0"),
                {{"sim.exe", 0, 9},
                 {"main", 0, 9},
                 {"MPI_Init", 0, 1},
                 {"bar", 1, 1},
                 {"MPI_Recv", 2, 3.2},
                 {"baz", 5.2, 2.8},
                 {"MPI_Finalize", 8, 1}},
                "rank 1 activity");
  const Json& recv = facts["threads_events"]["1/0"].array[4];
  EXPECT_EQ(recv.array[4]["path"].string, "sim.exe/main/MPI_Recv");

  // Wait states on their own thread, with partner and waiting time.
  expect_slices(slices(facts, "1/1"), {{"Late Sender", 2, 3}}, "rank 1 wait states");
  expect_slices(slices(facts, "0/1"), {{"Wait at Finalize", 6, 2}}, "rank 0 wait states");
  const Json& ls = facts["threads_events"]["1/1"].array[0].array[4];
  EXPECT_EQ(ls["partner_rank"].number, 0);
  EXPECT_NEAR(ls["waiting_time_s"].number, 3.0, 1e-12);
  EXPECT_EQ(ls["path"].string, "sim.exe/main/MPI_Recv");
  EXPECT_EQ(facts["threads_events"]["0/1"].array[0].array[4]["partner_rank"].number, 1);

  // Critical path: rank 0 [0, 5], then rank 1 [5, 8]; one hand-over, one pair of flows.
  const auto& cp = facts["critical_path"].array;
  ASSERT_EQ(cp.size(), 2u);
  EXPECT_EQ(cp[0]["rank"].number, 0);
  EXPECT_NEAR(cp[0]["ts"].number, 0.0, 1e-3);
  EXPECT_NEAR(cp[0]["dur"].number, 5 * kUs, 1e-3);
  EXPECT_EQ(cp[0]["path"].string, "sim.exe/main/MPI_Send");
  EXPECT_EQ(cp[1]["rank"].number, 1);
  EXPECT_NEAR(cp[1]["ts"].number, 5 * kUs, 1e-3);
  EXPECT_NEAR(cp[1]["dur"].number, 3 * kUs, 1e-3);
  EXPECT_EQ(cp[1]["path"].string, "sim.exe/main/MPI_Finalize");
  EXPECT_NEAR(facts["critical_path_sum_us"].number, 8 * kUs, 1e-3);
  EXPECT_EQ(facts["flows"].number, 1);
  const auto& flow_s = facts["threads_events"].object;  // the CP process is not listed there
  EXPECT_EQ(flow_s.count("2/0"), 0u);

  const Json& other = facts["otherData"];
  EXPECT_NEAR(other["critical_path_length_s"].number, 8.0, 1e-9);
  EXPECT_NEAR(other["run_length_s"].number, 9.0, 1e-9);
  EXPECT_EQ(other["events_total"].number, 2 + 2 + 13 + 2);  // stretches, flows, visits, waits
  EXPECT_EQ(other["events_written"].number, 19);
  EXPECT_FALSE(other["reduced"].boolean);
}

TEST(Views, TwoRankExample_OverviewHasRowsAndThePathLine) {
  TempDir dir;
  const RunResult run = analyze(two_rank_example(), dir, {"--overview", dir / "o.svg"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json svg = check("svg", dir / "o.svg");
  ASSERT_EQ(svg["rows"].array.size(), 2u);
  EXPECT_EQ(svg["rows"].array[0].array[0].number, 0);
  EXPECT_EQ(svg["rows"].array[1].array[0].number, 1);
  EXPECT_NEAR(svg["run_seconds"].number, 9.0, 1e-9);
  // The path runs from MPI_Init's Enter (0) to the last MPI_Finalize Enter (8) of the 9 s run.
  const double x0 = svg["plot_x"].number, w = svg["plot_width"].number;
  EXPECT_NEAR(svg["path_min_x"].number, x0, 0.1);
  EXPECT_NEAR(svg["path_max_x"].number, x0 + 8.0 / 9.0 * w, 0.1);
  // It jumps from rank 0's row to rank 1's at t = 5.
  const auto& pts = svg["path_points"].array;
  ASSERT_EQ(pts.size(), 4u);
  const double jump_x = x0 + 5.0 / 9.0 * w;
  EXPECT_NEAR(pts[1].array[0].number, jump_x, 0.1);
  EXPECT_NEAR(pts[2].array[0].number, jump_x, 0.1);
  EXPECT_LT(pts[1].array[1].number, pts[2].array[1].number);  // rank 0 above rank 1
  // Legend: the call paths with the most time, largest first: foo 4 s and MPI_Finalize 4 s
  // (3 + 1) lead; waiting is hatched (rank 1's Late Sender fills 3 s of its row).
  const auto& legend = svg["legend"].array;
  ASSERT_GE(legend.size(), 4u);
  EXPECT_EQ(legend[0].string.rfind("main/", 0), 0u) << legend[0].string;  // no program root
  EXPECT_GT(svg["waiting_rects"].number, 0);
}

TEST(Views, MaxEvents_MergesShortVisitsKeepsPathAndLongestWaits) {
  TempDir dir;
  // 19 events in full; 10 leave room for 4 (2 stretches + 2 flows), both wait states, and the
  // four 9 s visits (sim.exe and main on both ranks): the 9 shorter visits are merged.
  const RunResult run = analyze(two_rank_example(), dir,
                                {"--timeline", dir / "t.json", "--timeline-max-events", "10"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("cpreplay: note: timeline: 19 timeline events are more than "
                         "--timeline-max-events 10: 9 region visits shorter than"),
            std::string::npos)
      << run.err;
  const Json facts = check("timeline", dir / "t.json");
  expect_slices(slices(facts, "0/0"), {{"sim.exe", 0, 9}, {"main", 0, 9}}, "rank 0 activity");
  expect_slices(slices(facts, "1/0"), {{"sim.exe", 0, 9}, {"main", 0, 9}}, "rank 1 activity");
  expect_slices(slices(facts, "1/1"), {{"Late Sender", 2, 3}}, "rank 1 wait states");
  expect_slices(slices(facts, "0/1"), {{"Wait at Finalize", 6, 2}}, "rank 0 wait states");
  EXPECT_EQ(facts["critical_path"].array.size(), 2u);
  const Json& other = facts["otherData"];
  EXPECT_TRUE(other["reduced"].boolean);
  EXPECT_EQ(other["events_total"].number, 19);
  EXPECT_EQ(other["events_written"].number, 10);
  EXPECT_EQ(other["activity_merged_into_parent"].number, 9);
  EXPECT_EQ(other["wait_states_left_out"].number, 0);
  // The cut lies between the longest merged visit (foo, 4 s) and the kept ones (9 s).
  EXPECT_GT(other["activity_min_us"].number, 4 * kUs);
  EXPECT_LE(other["activity_min_us"].number, 9 * kUs);

  // Room for the path only: the wait states go next, the longest first.
  TempDir dir2;
  const RunResult tight = analyze(two_rank_example(), dir2,
                                  {"--timeline", dir2 / "t.json", "--timeline-max-events", "5"});
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  const Json f2 = check("timeline", dir2 / "t.json");
  expect_slices(slices(f2, "1/1"), {{"Late Sender", 2, 3}}, "the longer wait state");
  EXPECT_EQ(f2["threads_events"].object.count("0/1"), 0u);
  EXPECT_EQ(f2["otherData"]["wait_states_left_out"].number, 1);
  EXPECT_EQ(f2["otherData"]["events_written"].number, 5);
}

// The README's example (4 ranks, a ring of blocking messages and allreduces; 1500 iterations
// put over 16384 events on each rank, so visits stay open across TimelineSource's blocks) and
// the collectives scenario, in full and cut to a few thousand events: the checker's rules hold
// (order, nesting, contiguous path, paired flows), and the stretches add up to the length the
// summary prints.
struct ScenarioCase {
  const char* name;
  const char* iters;
  const char* max_events;
  const char* threads = "1";  ///< OpenMP threads per rank (the hybrid scenario)
};

void PrintTo(const ScenarioCase& c, std::ostream* os) {
  *os << c.name << " --iters " << c.iters << " --threads " << c.threads
      << " --timeline-max-events " << c.max_events;
}

class ViewsScenario : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ViewsScenario, PathAddsUpToTheSummaryAndTheLineSpansIt) {
  const ScenarioCase c = GetParam();
  TempDir dir;
  const int threads = std::stoi(c.threads);
  std::vector<std::string> make = {c.name, dir / "t", "--ranks", "4", "--iters", c.iters};
  if (threads > 1) make.insert(make.end(), {"--threads", c.threads});
  ASSERT_EQ(run_mktrace(make).exit_code, 0);
  const RunResult run =
      run_cpreplay(4, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", "--timeline",
                       dir / "t.json", "--timeline-max-events", c.max_events, "--overview",
                       dir / "o.svg", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json summary = read_json_file(dir / "s.json");
  const Json facts = check("timeline", dir / "t.json");
  const auto& cp = facts["critical_path"].array;
  ASSERT_GE(cp.size(), 2u);
  // The path's length: the summary's, or on hybrid traces (whose summary has no critical-path
  // part yet) the report's critical_path over all threads.
  double length_s = summary["critical_path_length_s"].number;
  if (threads > 1) {
    length_s = 0.0;
    const CubeFile cube = read_cube(dir / "r.cubex");
    for (const auto& [path, values] : cube.values.at("critical_path"))
      for (double v : values) length_s += v;
  }
  const double length_us = length_s * kUs;
  EXPECT_NEAR(facts["critical_path_sum_us"].number, length_us, 1.0 * cp.size());
  int handovers = 0, on_workers = 0;
  for (std::size_t i = 1; i < cp.size(); ++i)
    handovers += cp[i]["rank"].number != cp[i - 1]["rank"].number ||
                 cp[i]["tid"].number != cp[i - 1]["tid"].number;
  for (const Json& s : cp) on_workers += s.has("thread") && s["thread"].number > 0;
  EXPECT_EQ(on_workers > 0, threads > 1);
  EXPECT_EQ(facts["flows"].number, handovers);
  EXPECT_GT(handovers, 0);
  const Json& other = facts["otherData"];
  const double limit = std::stod(c.max_events);
  EXPECT_EQ(other["reduced"].boolean, other["events_total"].number > limit);
  const double path_events = cp.size() + 2.0 * handovers;
  if (other["reduced"].boolean && path_events <= limit) {
    EXPECT_LE(other["events_written"].number, limit);
    // The budget is used, up to the histogram's granularity (durations in buckets 12.5 % wide;
    // a synthetic trace's visits crowd into few of them).
    EXPECT_GT(other["events_written"].number, 0.5 * limit);
    EXPECT_NE(run.err.find("cpreplay: note: timeline: "), std::string::npos) << run.err;
  } else if (other["reduced"].boolean) {
    // The critical path alone is over the limit: it is kept whole, nothing else.
    EXPECT_EQ(other["events_written"].number, path_events);
    EXPECT_NE(run.err.find("the critical path is kept whole (it alone exceeds the limit)"),
              std::string::npos)
        << run.err;
  } else {
    EXPECT_EQ(run.err.find("cpreplay: note: timeline: "), std::string::npos) << run.err;
  }

  const Json svg = check("svg", dir / "o.svg");
  EXPECT_EQ(svg["rows"].array.size(), 4u * static_cast<unsigned>(threads));
  const double run_s = svg["run_seconds"].number;
  EXPECT_NEAR(run_s, summary["wall_clock_s"].number, 1e-9);
  const double begin_s = cp.front()["ts"].number / kUs;
  const double end_s = (cp.back()["ts"].number + cp.back()["dur"].number) / kUs;
  const double scale = svg["plot_width"].number / run_s;
  EXPECT_NEAR(svg["path_min_x"].number, svg["plot_x"].number + begin_s * scale, 0.1);
  EXPECT_NEAR(svg["path_max_x"].number, svg["plot_x"].number + end_s * scale, 0.1);
  EXPECT_NEAR(svg["path_max_x"].number - svg["path_min_x"].number, length_s * scale, 0.2);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ViewsScenario,
                         ::testing::Values(ScenarioCase{"example", "1500", "2000000"},
                                           ScenarioCase{"example", "1500", "20000"},
                                           ScenarioCase{"example", "1500", "3000"},
                                           ScenarioCase{"collectives", "10", "2000000"},
                                           ScenarioCase{"hybrid", "30", "2000000", "3"},
                                           ScenarioCase{"hybrid", "30", "600", "3"}),
                         [](const ::testing::TestParamInfo<ScenarioCase>& info) {
                           return std::string(info.param.name) + "_max" + info.param.max_events;
                         });

// ---- hybrid MPI+OpenMP traces: a track per thread, the path through the threads

const std::string kPar = "!$omp parallel @a.c:3";
const std::string kIbar = "!$omp implicit barrier @a.c:5";
const std::string kCrit = "!$omp critical @a.c:9";
const std::string kSblock = "!$omp critical sblock @a.c:9";
const std::string kMainPar = "sim.exe/main/" + kPar;

// Two ranks of two threads (openmp_test's Late Sender delayed by a worker, plus a critical
// section on rank 1). Both masters fork at 1.0; thread t enters the team at 1.1 + 0.1 t.
//   rank 0: thread 0 works 1.1-1.5, thread 1 1.2-2.5; the implicit barrier releases both at
//           2.6 (thread 0 waits 1.5-2.5 for thread 1); join 2.7; MPI_Send 2.8-2.9 to rank 1;
//           MPI_Finalize 4.0-4.5 (Wait at Finalize 4.0-4.1 for rank 1).
//   rank 1: thread 0 holds the critical section 1.1-1.3, thread 1 asks at 1.2 and gets it at 1.3
//           (contention 0.1 s), holds it to 1.4; both work to 1.5, barrier 1.5-1.6, join 1.7;
//           MPI_Recv 1.8-2.95 (Late Sender 1.8-2.8); MPI_Finalize 4.1-4.5.
// Critical path (length 4.1, docs/openmp.md): rank 0's master from MPI_Init's Enter (0) to the
// fork (1.0); rank 0's thread 1, last into the barrier, from the fork to its arrival (2.5); the
// master after the last arrival up to its MPI_Send (2.8); rank 1's master from its receive's
// Enter plus the waiting (1.8 + 1.0) to its MPI_Finalize Enter (4.1).
TraceWriter hybrid_example() {
  TraceWriter w(2);
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) {
    scenario::begin_rank(w, r);
    w.omp_fork(r, 1.0, 2);
  }
  for (int t = 0; t < 2; ++t) {
    const double in = 1.1 + 0.1 * t;
    w.omp_team_begin(0, t, in);
    w.thread_enter(0, t, in, kPar);
    w.thread_enter(0, t, in, "work");
    const double done = t == 1 ? 2.5 : 1.5;
    w.thread_leave(0, t, done, "work");
    w.thread_enter(0, t, done, kIbar);
    w.thread_leave(0, t, 2.6, kIbar);
    w.thread_leave(0, t, 2.6, kPar);
    w.omp_team_end(0, t, 2.6);
  }
  w.omp_join(0, 2.7);
  for (int t = 0; t < 2; ++t) {
    const double in = 1.1 + 0.1 * t;
    const double got = t == 0 ? 1.1 : 1.3, freed = t == 0 ? 1.3 : 1.4;
    w.omp_team_begin(1, t, in);
    w.thread_enter(1, t, in, kPar);
    w.thread_enter(1, t, in, kCrit);
    w.omp_acquire_lock(1, t, got, 7, t + 1);
    w.thread_enter(1, t, got, kSblock);
    w.thread_leave(1, t, freed, kSblock);
    w.omp_release_lock(1, t, freed, 7, t + 1);
    w.thread_leave(1, t, freed, kCrit);
    w.thread_enter(1, t, freed, "work");
    w.thread_leave(1, t, 1.5, "work");
    w.thread_enter(1, t, 1.5, kIbar);
    w.thread_leave(1, t, 1.6, kIbar);
    w.thread_leave(1, t, 1.6, kPar);
    w.omp_team_end(1, t, 1.6);
  }
  w.omp_join(1, 1.7);
  w.send(0, 2.8, 2.9, 1, 7, 64);
  w.recv(1, 1.8, 2.95, 0, 7, 64);
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, r == 0 ? 4.0 : 4.1, 4.5);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
  return w;
}

TEST(ViewsHybrid, TwoRanksTwoThreads_TimelineHasEveryThreadItsWaitsAndThePathOnTheWorker) {
  for (int processes : {2, 1}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    TempDir dir;
    hybrid_example().write(dir / "t");
    const RunResult run = run_cpreplay(processes, {"-q", "-o", dir / "r.cubex", "--timeline",
                                                   dir / "t.json", dir / "t/traces.otf2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Json facts = check("timeline", dir / "t.json");

    // One process per rank; per thread its region visits (tid = thread number, the OTF2
    // location's name) and its wait states (tid = threads + thread), each right below the other.
    EXPECT_EQ(facts["processes"]["0"].string, "rank 0");
    EXPECT_EQ(facts["processes"]["2"].string, "critical path");
    for (const char* pid : {"0", "1"}) {
      const std::string p = pid;
      EXPECT_EQ(facts["threads"][p + "/0"].string, "Master thread");
      EXPECT_EQ(facts["threads"][p + "/1"].string, "OMP thread 1");
      EXPECT_EQ(facts["threads"][p + "/2"].string, "Master thread: wait states");
      EXPECT_EQ(facts["threads"][p + "/3"].string, "OMP thread 1: wait states");
      EXPECT_EQ(facts["thread_sort_index"][p + "/0"].number, 0);
      EXPECT_EQ(facts["thread_sort_index"][p + "/2"].number, 1);
      EXPECT_EQ(facts["thread_sort_index"][p + "/1"].number, 2);
      EXPECT_EQ(facts["thread_sort_index"][p + "/3"].number, 3);
    }

    expect_slices(slices(facts, "0/0"),
                  {{"sim.exe", 0, 5},
                   {"main", 0, 5},
                   {"MPI_Init", 0, 0.1},
                   {kPar, 1.1, 1.5},
                   {"work", 1.1, 0.4},
                   {kIbar, 1.5, 1.1},
                   {"MPI_Send", 2.8, 0.1},
                   {"MPI_Finalize", 4.0, 0.5}},
                  "rank 0 master");
    // A worker has only its team's regions: idle outside them.
    expect_slices(slices(facts, "0/1"), {{kPar, 1.2, 1.4}, {"work", 1.2, 1.3}, {kIbar, 2.5, 0.1}},
                  "rank 0 thread 1");
    EXPECT_EQ(facts["threads_events"]["0/1"].array[1].array[4]["path"].string, kMainPar + "/work");
    expect_slices(slices(facts, "1/1"),
                  {{kPar, 1.2, 0.4},
                   {kCrit, 1.2, 0.2},
                   {kSblock, 1.3, 0.1},
                   {"work", 1.4, 0.1},
                   {kIbar, 1.5, 0.1}},
                  "rank 1 thread 1");
    EXPECT_EQ(slices(facts, "1/0").size(), 10u);

    // Wait states on the waiting thread's wait track: OpenMP ones name the thread waited for,
    // MPI ones the rank.
    expect_slices(slices(facts, "0/2"),
                  {{"Wait at OpenMP Implicit Barrier", 1.5, 1.0}, {"Wait at Finalize", 4.0, 0.1}},
                  "rank 0 master's wait states");
    const Json& bar = facts["threads_events"]["0/2"].array[0].array[4];
    EXPECT_EQ(bar["partner_thread"].number, 1);
    EXPECT_FALSE(bar.has("partner_rank"));
    EXPECT_NEAR(bar["waiting_time_s"].number, 1.0, 1e-12);
    EXPECT_EQ(bar["path"].string, kMainPar + "/" + kIbar);
    EXPECT_EQ(facts["threads_events"]["0/2"].array[1].array[4]["partner_rank"].number, 1);
    EXPECT_EQ(facts["threads_events"].object.count("0/3"), 0u);  // thread 1 never waits
    expect_slices(slices(facts, "1/2"), {{"Late Sender", 1.8, 1.0}}, "rank 1 master's waits");
    expect_slices(slices(facts, "1/3"), {{"OpenMP Critical Contention", 1.2, 0.1}},
                  "rank 1 thread 1's waits");
    const Json& lock = facts["threads_events"]["1/3"].array[0].array[4];
    EXPECT_EQ(lock["partner_thread"].number, 0);
    EXPECT_NEAR(lock["waiting_time_s"].number, 0.1, 1e-12);
    EXPECT_EQ(lock["path"].string, kMainPar + "/" + kCrit);

    // The path: on rank 0's thread 1 from the fork to its barrier arrival, a track per thread
    // location of the critical-path process (rank-major: rank 1's master is 2), flows at each
    // hand-over between threads or ranks.
    const auto& cp = facts["critical_path"].array;
    ASSERT_EQ(cp.size(), 4u);
    const struct {
      int rank, thread, tid;
      double ts, dur;
      std::string path;
    } want[] = {{0, 0, 0, 0.0, 1.0, "sim.exe/main"},
                {0, 1, 1, 1.0, 1.5, kMainPar + "/" + kIbar},
                {0, 0, 0, 2.5, 0.3, "sim.exe/main/MPI_Send"},
                {1, 0, 2, 2.8, 1.3, "sim.exe/main/MPI_Finalize"}};
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(cp[i]["rank"].number, want[i].rank) << i;
      EXPECT_EQ(cp[i]["thread"].number, want[i].thread) << i;
      EXPECT_EQ(cp[i]["tid"].number, want[i].tid) << i;
      EXPECT_EQ(cp[i]["name"].string, "rank " + std::to_string(want[i].rank) + " thread " +
                                          std::to_string(want[i].thread));
      EXPECT_NEAR(cp[i]["ts"].number, want[i].ts * kUs, 1e-3) << i;
      EXPECT_NEAR(cp[i]["dur"].number, want[i].dur * kUs, 1e-3) << i;
      EXPECT_EQ(cp[i]["path"].string, want[i].path) << i;
    }
    EXPECT_EQ(facts["threads"]["2/1"].string, "rank 0 thread 1");
    EXPECT_EQ(facts["threads"]["2/2"].string, "rank 1 thread 0");
    EXPECT_NEAR(facts["critical_path_sum_us"].number, 4.1 * kUs, 1e-3);
    EXPECT_EQ(facts["flows"].number, 3);

    const Json& other = facts["otherData"];
    EXPECT_NEAR(other["critical_path_length_s"].number, 4.1, 1e-9);
    EXPECT_EQ(other["critical_path_stretches"].number, 4);
    EXPECT_EQ(other["critical_path_handovers"].number, 3);
    // 4 stretches, 6 flow events, 8 + 3 + 10 + 5 region visits, 4 wait states.
    EXPECT_EQ(other["events_total"].number, 4 + 6 + 26 + 4);
    EXPECT_EQ(other["events_written"].number, 40);
    EXPECT_FALSE(other["reduced"].boolean);
  }
}

// --timeline-max-events counts every thread's visits: 20 leaves 10 after the path, all 4 wait
// states, and the 6 longest visits: sim.exe and main on both masters (5 s), rank 0's parallel
// region on its master (1.5 s) and on its thread 1 (1.4 s); the next (1.15 s, 1.1 s) are merged.
TEST(ViewsHybrid, MaxEvents_CountsEveryThread) {
  TempDir dir;
  hybrid_example().write(dir / "t");
  const RunResult run =
      run_cpreplay(2, {"-q", "-o", dir / "r.cubex", "--timeline", dir / "t.json",
                       "--timeline-max-events", "20", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("cpreplay: note: timeline: 40 timeline events are more than "
                         "--timeline-max-events 20: 20 region visits shorter than"),
            std::string::npos)
      << run.err;
  const Json facts = check("timeline", dir / "t.json");
  expect_slices(slices(facts, "0/0"), {{"sim.exe", 0, 5}, {"main", 0, 5}, {kPar, 1.1, 1.5}},
                "rank 0 master");
  expect_slices(slices(facts, "0/1"), {{kPar, 1.2, 1.4}}, "rank 0 thread 1");
  expect_slices(slices(facts, "1/0"), {{"sim.exe", 0, 5}, {"main", 0, 5}}, "rank 1 master");
  EXPECT_EQ(facts["threads_events"].object.count("1/1"), 0u);
  EXPECT_EQ(slices(facts, "1/3").size(), 1u);  // the contention is kept
  const Json& other = facts["otherData"];
  EXPECT_TRUE(other["reduced"].boolean);
  EXPECT_EQ(other["events_total"].number, 40);
  EXPECT_EQ(other["events_written"].number, 20);
  EXPECT_EQ(other["activity_merged_into_parent"].number, 20);
  EXPECT_EQ(other["wait_states_left_out"].number, 0);
  EXPECT_GT(other["activity_min_us"].number, 1.15 * kUs);
  EXPECT_LE(other["activity_min_us"].number, 1.4 * kUs);
}

// The overview of the same run: a row per thread, grouped by rank; a worker's row is coloured
// only while it is in its team (1.2-2.6 s) and blank while idle; the waits hatched on their
// thread's row; the path line goes down to rank 0's thread 1 at the fork and back at 2.5 s.
TEST(ViewsHybrid, TwoRanksTwoThreads_OverviewHasARowPerThreadAndThePathOnTheWorker) {
  TempDir dir;
  hybrid_example().write(dir / "t");
  const RunResult run = run_cpreplay(
      2, {"-q", "-o", dir / "r.cubex", "--overview", dir / "o.svg", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json svg = check("svg", dir / "o.svg");
  EXPECT_EQ(svg["row_unit"].string, "thread");
  EXPECT_EQ(svg["threads"].number, 4);
  ASSERT_EQ(svg["rows"].array.size(), 4u);
  const int rows[4][3] = {{0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}};
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(svg["rows"].array[i].array[k].number, rows[i][k]);
  const char* labels[4] = {"rank 0", "thread 1", "rank 1", "thread 1"};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(svg["row_labels"].array[i].array.at(0).string, labels[i]);
  EXPECT_EQ(svg["separators"].number, 1);
  EXPECT_NEAR(svg["run_seconds"].number, 5.0, 1e-9);

  const double x0 = svg["plot_x"].number, w = svg["plot_width"].number;
  auto x = [&](double s) { return x0 + s / 5.0 * w; };
  // Rank 0's thread 1 runs 1.2-2.6: its colour runs cover exactly that.
  const auto& worker = svg["row_runs"].array[1].array;
  ASSERT_FALSE(worker.empty());
  EXPECT_NEAR(worker.front().array[0].number, x(1.2), 0.01);
  EXPECT_NEAR(worker.back().array[0].number + worker.back().array[1].number, x(2.6), 0.01);
  double covered = 0.0;
  for (const Json& run_rect : worker) covered += run_rect.array[1].number;
  EXPECT_NEAR(covered, x(2.6) - x(1.2), 0.01);
  // Hatching: the barrier wait and Wait at Finalize on rank 0's master, the Late Sender on rank
  // 1's, the contention on rank 1's thread 1.
  auto expect_waiting = [&](int row, std::vector<std::pair<double, double>> spans) {
    const auto& got = svg["row_waiting"].array[static_cast<std::size_t>(row)].array;
    ASSERT_EQ(got.size(), spans.size()) << "row " << row;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      EXPECT_NEAR(got[i].array[0].number, x(spans[i].first), 0.01) << row;
      EXPECT_NEAR(got[i].array[1].number, x(spans[i].second) - x(spans[i].first), 0.01) << row;
    }
  };
  expect_waiting(0, {{1.5, 2.5}, {4.0, 4.1}});
  expect_waiting(1, {});
  expect_waiting(2, {{1.8, 2.8}});
  expect_waiting(3, {{1.2, 1.3}});

  // The path: rows are 48 px; it starts on row 0, goes to row 1 at 1.0 s, back at 2.5 s, to
  // row 2 (rank 1's master) at 2.8 s and ends there at 4.1 s.
  const double top = svg["plot_y"].number;
  auto y = [&](int row) { return top + (row + 0.5) * svg["plot_height"].number / 4.0; };
  const double want[8][2] = {{x(0.0), y(0)}, {x(1.0), y(0)}, {x(1.0), y(1)}, {x(2.5), y(1)},
                             {x(2.5), y(0)}, {x(2.8), y(0)}, {x(2.8), y(2)}, {x(4.1), y(2)}};
  const auto& pts = svg["path_points"].array;
  ASSERT_EQ(pts.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_NEAR(pts[i].array[0].number, want[i][0], 0.06) << i;
    EXPECT_NEAR(pts[i].array[1].number, want[i][1], 0.01) << i;
  }
  EXPECT_EQ(svg["legend"].array.back().string,
            "critical path (jumps to the thread it continues on)");
}

// More threads than rows (33 ranks x 4 threads = 132 > 128): a row per rank, its threads added
// up, as for pure MPI; analyzed on 2 processes (17 and 16 ranks). The timeline's stretches add
// up per thread location to the report's critical_path there.
TEST(ViewsHybrid, ManyThreads_RowPerRankAndStretchesMatchTheReportPerThread) {
  TempDir dir;
  ASSERT_EQ(run_mktrace({"hybrid", dir / "t", "--ranks", "33", "--threads", "4", "--iters", "2"})
                .exit_code,
            0);
  const RunResult run =
      run_cpreplay(2, {"-q", "-o", dir / "r.cubex", "--timeline", dir / "t.json", "--overview",
                       dir / "o.svg", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json svg = check("svg", dir / "o.svg");
  EXPECT_EQ(svg["row_unit"].string, "rank");
  EXPECT_EQ(svg["threads"].number, 132);
  ASSERT_EQ(svg["rows"].array.size(), 33u);
  EXPECT_EQ(svg["rows"].array[32].array.size(), 2u);  // [first rank, last rank]: no thread
  EXPECT_EQ(svg["separators"].number, 0);

  const Json facts = check("timeline", dir / "t.json");
  const CubeFile cube = read_cube(dir / "r.cubex");
  ASSERT_EQ(cube.location_names.size(), 132u);
  std::vector<double> per_location(132, 0.0), from_report(132, 0.0);
  std::vector<int> stretches(132, 0);
  int on_workers = 0;
  for (const Json& s : facts["critical_path"].array) {
    const auto loc = static_cast<std::size_t>(s["rank"].number * 4 + s["thread"].number);
    per_location[loc] += s["dur"].number / kUs;
    ++stretches[loc];
    on_workers += s["thread"].number > 0;
  }
  EXPECT_GT(on_workers, 0);
  for (const auto& [path, values] : cube.values.at("critical_path"))
    for (std::size_t l = 0; l < values.size(); ++l) from_report[l] += values[l];
  // Each stretch's ends are rounded to the nanosecond in the file.
  for (std::size_t l = 0; l < 132; ++l)
    EXPECT_NEAR(per_location[l], from_report[l], 1e-9 * (stretches[l] + 1)) << "location " << l;
  double total = 0.0;
  for (double v : from_report) total += v;
  EXPECT_NEAR(facts["critical_path_sum_us"].number, total * kUs, 1e-2);
}

// Issue 33, item 3: the critical-path paper's dynamic-imbalance run on 32 ranks (written by
// ../shared/tools/simtrace.py): every rank waits in MPI_Barrier every iteration, 20 % of all
// time. The picture's areas are the profile's shares: each call path's colour covers its
// share of the rows (the legend's "% of all time"), the hatch the wait states' share of the
// allocation time, each within 5 points (here they agree to 0.1).
TEST(Views, DynamicImbalance32Ranks_OverviewAreasAreTheProfilesShares) {
  const std::filesystem::path tool =
      std::filesystem::path(__FILE__).parent_path() / "../../../shared/tools/simtrace.py";
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << tool.string() << " is absent";
  if (run_command({"/usr/bin/python3", "-c", "import otf2"}).exit_code != 0)
    GTEST_SKIP() << "Debian's python3-otf2 is not installed (simtrace.py needs it)";
  TempDir dir;
  const RunResult made = run_command({"/usr/bin/python3", tool.string(), "imbalance-dynamic",
                                      dir / "t", "--ranks", "32", "--iters", "40"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const RunResult run =
      run_cpreplay(2, {"-q", "--no-what-if", "-o", dir / "r.cubex", "--json", dir / "r.json",
                       "--overview", dir / "o.svg", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json svg = check("svg", dir / "o.svg");
  const Json summary = read_json_file(dir / "r.json");
  const double cells = svg["rows_area"].number;
  ASSERT_GT(cells, 0.0);
  auto area_share = [&](const char* key) {
    return svg["areas"].has(key) ? svg["areas"][key].number / cells : 0.0;
  };
  // The legend's shares, in palette order.
  const char* const colours[] = {"#4e79a7", "#f28e2b"};
  const auto& legend = svg["legend"].array;
  ASSERT_GE(legend.size(), 2u);
  EXPECT_EQ(legend[0].string, "main/work (80.0 % of all time)");
  EXPECT_EQ(legend[1].string, "main/MPI_Barrier (20.0 % of all time)");
  for (std::size_t k = 0; k < 2; ++k) {
    const std::string& text = legend[k].string;
    const double share = std::stod(text.substr(text.rfind('(') + 1)) / 100.0;
    EXPECT_NEAR(area_share(colours[k]), share, 0.05) << text;
  }
  EXPECT_NEAR(area_share("#f28e2b"), 0.20, 0.05);
  // Waiting: the summary's wait states over the allocation time, 16 of 80 s.
  double waiting = 0.0;
  for (const Json& w : summary["wait_states"].array) waiting += w["seconds"].number;
  const double wait_share = waiting / summary["allocation_time_s"].number;
  EXPECT_NEAR(wait_share, 0.20, 0.01);
  EXPECT_NEAR(area_share("waiting"), wait_share, 0.05);
}

TEST(Views, UnwritableTimeline_OneLineErrorBeforeAnalysisNothingLeft) {
  TempDir dir;
  const RunResult run =
      analyze(two_rank_example(), dir, {"--timeline", dir / "no/such/dir/t.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.rfind("cpreplay: error: cannot write timeline " + dir / "no/such/dir/t.json" +
                              ": No such file or directory\n",
                          0),
            0u)
      << run.err;
  EXPECT_EQ(run.err.find("cpreplay: error:"), run.err.rfind("cpreplay: error:")) << run.err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"t"});  // no report either
}

// A timeline whose name ends in ".gz" is written gzip-compressed (Perfetto and chrome://tracing
// open it so): the same events as the plain file, each call path once in stackFrames.
TEST(Views, GzipTimeline_SameEventsAsThePlainFile) {
  TempDir dir;
  const TraceWriter w = two_rank_example();
  ASSERT_EQ(analyze(w, dir, {"--timeline", dir / "t.json"}).exit_code, 0);
  const RunResult gz = analyze(w, dir, {"--timeline", dir / "t.json.gz"});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  const std::string bytes = read_file(dir / "t.json.gz");
  ASSERT_GE(bytes.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip's magic number
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_LT(bytes.size(), read_file(dir / "t.json").size() / 2);
  // What the checker reads from both (it prints its facts with sorted keys): the same.
  const RunResult plain = run_command({"/usr/bin/python3", checker(), "timeline", dir / "t.json"});
  const RunResult unpacked =
      run_command({"/usr/bin/python3", checker(), "timeline", dir / "t.json.gz"});
  ASSERT_EQ(unpacked.exit_code, 0) << unpacked.err;
  EXPECT_EQ(plain.out, unpacked.out);
  const Json packed = parse_json(unpacked.out);
  // The event's call path comes from its stack frame: rank 1's MPI_Recv.
  EXPECT_EQ(packed["threads_events"]["1/0"].array[4].array[4]["path"].string,
            "sim.exe/main/MPI_Recv");
  for (const std::string& name : list_dir(dir.path()))
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
}

TEST(Views, UnwritableGzipTimeline_OneLineErrorNothingLeft) {
  TempDir dir;
  const RunResult run =
      analyze(two_rank_example(), dir, {"--timeline", dir / "no/such/dir/t.json.gz"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.rfind("cpreplay: error: cannot write timeline " +
                              dir / "no/such/dir/t.json.gz" + ": No such file or directory\n",
                          0),
            0u)
      << run.err;
  EXPECT_EQ(run.err.find("cpreplay: error:"), run.err.rfind("cpreplay: error:")) << run.err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"t"});
}

TEST(Views, UnwritableOverview_OneLineErrorBeforeAnalysisNothingLeft) {
  TempDir dir;
  std::filesystem::create_directory(dir / "ro");
  std::filesystem::permissions(
      dir / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const bool root_ignores_modes = ::access((dir / "ro").c_str(), W_OK) == 0;
  const std::string target = root_ignores_modes ? dir / "t/traces.otf2/o.svg" : dir / "ro/o.svg";
  const RunResult run =
      analyze(two_rank_example(), dir, {"--timeline", dir / "t.json", "--overview", target});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.rfind("cpreplay: error: cannot write overview " + target + ": ", 0), 0u)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "t.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "r.cubex"));
  EXPECT_EQ(list_dir(dir / "ro").size(), 0u);
}

// A run that fails after the probe (no MPI_Finalize: the critical path has no end) writes no
// views and leaves no temporary files.
TEST(Views, FailedRun_LeavesNoViews) {
  TempDir dir;
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
    w.region(r, "foo", 1.0, 2.0);
    w.leave(r, 3.0, "main");
    w.program_end(r, 3.0);
  }
  const RunResult run =
      analyze(w, dir, {"--timeline", dir / "t.json", "--overview", dir / "o.svg"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("has no MPI_Finalize"), std::string::npos) << run.err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"t"});
}

// A hybrid trace whose team the critical path cannot follow (rank 1's thread 1 skipped the
// barrier its master went through): the one line of openmp_test.cpp, no views, no temporaries.
TEST(ViewsHybrid, TeamWithMissingBarrier_LeavesNoViews) {
  TempDir dir;
  TraceWriter w(2);
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) {
    scenario::begin_rank(w, r);
    w.omp_fork(r, 1.0, 2);
    for (int t = 0; t < 2; ++t) {
      w.omp_team_begin(r, t, 1.1);
      w.thread_enter(r, t, 1.1, kPar);
      if (r == 0 || t == 0) {
        w.thread_enter(r, t, 1.5, kIbar);
        w.thread_leave(r, t, 1.6, kIbar);
      }
      w.thread_leave(r, t, 1.6, kPar);
      w.omp_team_end(r, t, 1.6);
    }
    w.omp_join(r, 1.7);
    w.finalize(r, 4.0, 4.5);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
  const RunResult run =
      analyze(w, dir, {"--timeline", dir / "t.json", "--overview", dir / "o.svg"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cpreplay: error: " + dir / "t/traces.otf2" +
                         ": rank 1, thread 1: parallel region 1 has 0 complete barriers on this "
                         "thread but 1 on the master (the critical path cannot follow the team)\n"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"t"});
}

TEST(Views, MaxEventsBadValues_Refused) {
  TempDir dir;
  two_rank_example().write(dir / "t");
  const std::string trace = dir / "t/traces.otf2";
  for (const std::string bad : {"0", "-5", "12abc", "", "1e6", "1000000000001"}) {
    const RunResult r = run_cpreplay(2, {"--timeline", dir / "t.json", "--timeline-max-events", bad,
                                         "-o", dir / "r.cubex", trace});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind("cpreplay: error: --timeline-max-events '" + bad +
                              "' must be a whole number of events from 1 to 10^12",
                          0),
              0u)
        << r.err;
  }
  const RunResult alone =
      run_cpreplay(2, {"--timeline-max-events", "100", "-o", dir / "r.cubex", trace});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err.rfind("cpreplay: error: --timeline-max-events '100' needs --timeline", 0), 0u)
      << alone.err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"t"});
}

}  // namespace
}  // namespace cpreplay::testing
