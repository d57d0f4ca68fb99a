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
  EXPECT_EQ(legend[0].string.rfind("sim.exe/main/", 0), 0u) << legend[0].string;
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
};

void PrintTo(const ScenarioCase& c, std::ostream* os) {
  *os << c.name << " --iters " << c.iters << " --timeline-max-events " << c.max_events;
}

class ViewsScenario : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ViewsScenario, PathAddsUpToTheSummaryAndTheLineSpansIt) {
  const ScenarioCase c = GetParam();
  TempDir dir;
  ASSERT_EQ(run_mktrace({c.name, dir / "t", "--ranks", "4", "--iters", c.iters}).exit_code, 0);
  const RunResult run =
      run_cpreplay(4, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", "--timeline",
                       dir / "t.json", "--timeline-max-events", c.max_events, "--overview",
                       dir / "o.svg", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json summary = read_json_file(dir / "s.json");
  const Json facts = check("timeline", dir / "t.json");
  const auto& cp = facts["critical_path"].array;
  ASSERT_GE(cp.size(), 2u);
  const double length_us = summary["critical_path_length_s"].number * kUs;
  EXPECT_NEAR(facts["critical_path_sum_us"].number, length_us, 1.0 * cp.size());
  int handovers = 0;
  for (std::size_t i = 1; i < cp.size(); ++i)
    handovers += cp[i]["rank"].number != cp[i - 1]["rank"].number;
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
  EXPECT_EQ(svg["rows"].array.size(), 4u);
  const double run_s = svg["run_seconds"].number;
  EXPECT_NEAR(run_s, summary["wall_clock_s"].number, 1e-9);
  const double begin_s = cp.front()["ts"].number / kUs;
  const double end_s = (cp.back()["ts"].number + cp.back()["dur"].number) / kUs;
  const double scale = svg["plot_width"].number / run_s;
  EXPECT_NEAR(svg["path_min_x"].number, svg["plot_x"].number + begin_s * scale, 0.1);
  EXPECT_NEAR(svg["path_max_x"].number, svg["plot_x"].number + end_s * scale, 0.1);
  EXPECT_NEAR(svg["path_max_x"].number - svg["path_min_x"].number,
              summary["critical_path_length_s"].number * scale, 0.2);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ViewsScenario,
                         ::testing::Values(ScenarioCase{"example", "1500", "2000000"},
                                           ScenarioCase{"example", "1500", "20000"},
                                           ScenarioCase{"example", "1500", "3000"},
                                           ScenarioCase{"collectives", "10", "2000000"}),
                         [](const ::testing::TestParamInfo<ScenarioCase>& info) {
                           return std::string(info.param.name) + "_max" + info.param.max_events;
                         });

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
