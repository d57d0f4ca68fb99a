// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: delay costs on hand-computed scenarios, and the summary's and JSON's root causes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "tests/e2e/scenario.hpp"
#include "tests/support/json.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;
using scenario::total;

/// The text with every run of white space folded to one space (summary lines are word-wrapped).
std::string folded(const std::string& text) {
  std::istringstream in(text);
  std::string out, word;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

/// The wait_states entry of `metric` in the --json file.
const Json& wait_entry(const Json& summary, const std::string& metric) {
  for (const Json& w : summary["wait_states"].array)
    if (w["metric"].string == metric) return w;
  throw std::runtime_error("no wait_states entry " + metric);
}

/// A strict parse with Debian's Python: the real clients' json module, rejecting what the test
/// reader tolerates (NaN/Infinity, duplicate keys). Empty when it passes, else Python's error.
std::string strict_json_error(const std::string& path) {
  const RunResult r = run_command(
      {"/usr/bin/python3", "-c",
       "import json,sys\n"
       "def pairs(p):\n"
       "  keys=[k for k,_ in p]\n"
       "  if len(keys)!=len(set(keys)): raise ValueError('duplicate key')\n"
       "  return dict(p)\n"
       "def bad(c): raise ValueError('non-standard constant '+c)\n"
       "json.load(open(sys.argv[1]), object_pairs_hook=pairs, parse_constant=bad)\n",
       path});
  return r.exit_code == 0 ? "" : "exit " + std::to_string(r.exit_code) + ": " + r.err;
}

// scalasca-metrics.md §8.6, shifted by MPI_Init [0, 0.5] on every rank (Init's completion is 0,
// so it adds nothing to the pruned runtimes):
//   rank 0: foo [0.5, 4.5], send to 1 at 4.5
//   rank 1: bar [0.5, 1.5], MPI_Recv [1.5, 4.5] (Late Sender 3), baz [4.5, 5.0], send to 2 at 5.0
//   rank 2: qux [0.5, 2.5], MPI_Recv [2.5, 5.0] (Late Sender 2.5)
// Rank 2's wait: D = {bar 1, baz 0.5}, Wsum = 3, sigma = 2.5/4.5 = 5/9, so delay_latesender
// bar@1 = 5/9 and baz@1 = 5/18; indirect on rank 2 = sigma * Wsum = 5/3 (direct 5/6);
// propagating on rank 1 = sigma * 3 = 5/3; cost_LS of rank 1's receive = 5/3.
// Rank 1's wait: D = {foo 4}, sigma = 3/4, so delay_latesender foo@0 = 3; rho = (5/3)/4, so
// delay_latesender_longterm foo@0 = 5/3. Total delay 5/6 + 3 + 5/3 = 5.5 = total waiting.
TraceWriter chain() {
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "foo", 0.5, 4.5);
  w.send(0, 4.5, 4.5, /*dest=*/1, /*tag=*/0, /*bytes=*/8);
  w.region(1, "bar", 0.5, 1.5);
  w.recv(1, 1.5, 4.5, /*src=*/0, /*tag=*/0, /*bytes=*/8);
  w.region(1, "baz", 4.5, 5.0);
  w.send(1, 5.0, 5.0, /*dest=*/2, /*tag=*/0, /*bytes=*/8);
  w.region(2, "qux", 0.5, 2.5);
  w.recv(2, 2.5, 5.0, /*src=*/1, /*tag=*/0, /*bytes=*/8);
  scenario::close_all(w, 5.0);
  return w;
}

TEST(RootCauseSummary, Chain_DelayCostsMatchSpecExample) {
  TempDir dir;
  const CubeFile cube = scenario::analyze(chain(), dir);
  EXPECT_NEAR(at(cube, "mpi_latesender", "sim.exe/main/MPI_Recv", 1), 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latesender", "sim.exe/main/MPI_Recv", 2), 2.5, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", "sim.exe/main/foo", 0), 3.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", "sim.exe/main/bar", 1), 5.0 / 9.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender", "sim.exe/main/baz", 1), 5.0 / 18.0, kTol);
  EXPECT_NEAR(at(cube, "delay_latesender_longterm", "sim.exe/main/foo", 0), 5.0 / 3.0, kTol);
  EXPECT_NEAR(total(cube, "delay_latesender"), 3.0 + 5.0 / 6.0, kTol);
  EXPECT_NEAR(total(cube, "delay_latesender_longterm"), 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_indirect_latesender", "sim.exe/main/MPI_Recv", 2), 5.0 / 3.0,
              kTol);
  EXPECT_NEAR(total(cube, "mpi_wait_indirect_latesender"), 5.0 / 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_wait_propagating_ls", "sim.exe/main/MPI_Recv", 1), 5.0 / 3.0, kTol);
  EXPECT_NEAR(total(cube, "mpi_wait_propagating_ls"), 5.0 / 3.0, kTol);
}

// The summary names foo on rank 0 (4.67 s of the 5.5 s) and bar on rank 1 (0.556 s = 10.1 % of
// the waiting, >= 1 % of the 6 s critical path); baz (0.278 s = 5.1 %) stays unnamed.
TEST(RootCauseSummary, Chain_SummaryAndJsonNameFooOnRank0) {
  TempDir dir;
  RunResult run;
  scenario::analyze(chain(), dir, {"--json", dir / "s.json"}, "t", &run);
  const std::string text = folded(run.out);
  EXPECT_NE(text.find("Late Sender in MPI_Recv (5.50 s) is caused by foo on rank 0 (3.00 s "
                      "direct, 1.67 s through other waits) and bar on rank 1 (0.56 s direct)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(text.find("caused by main/foo on rank 0 (3.00 s direct, 1.67 s through other "
                      "waits); main/bar on rank 1 (0.56 s direct)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(text.find("1.67 s of it indirect (caused by other waiting), 1.67 s propagating "
                      "(causes waiting elsewhere)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(text.find("baz on"), std::string::npos) << run.out;
  std::istringstream lines(run.out);
  for (std::string l; std::getline(lines, l);) {
    EXPECT_LE(l.size(), 100u) << l;
    // Wrapping never separates a number from its unit.
    std::istringstream words(l);
    std::string first;
    words >> first;
    EXPECT_TRUE(first != "s" && first != "ms" && first != "us" && first != "%") << l;
  }

  EXPECT_EQ(strict_json_error(dir / "s.json"), "");
  const Json json = read_json_file(dir / "s.json");
  const Json& ls = wait_entry(json, "mpi_latesender");
  EXPECT_NEAR(ls["seconds"].number, 5.5, kTol);
  EXPECT_NEAR(ls["delay_short_term_s"].number, 3.0 + 5.0 / 6.0, kTol);
  EXPECT_NEAR(ls["delay_long_term_s"].number, 5.0 / 3.0, kTol);
  EXPECT_NEAR(ls["indirect_s"].number, 5.0 / 3.0, kTol);
  EXPECT_NEAR(ls["propagating_s"].number, 5.0 / 3.0, kTol);
  const auto& causes = ls["caused_by"].array;
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(causes[0]["path"].string, "sim.exe/main/foo");
  EXPECT_NEAR(causes[0]["short_term_s"].number, 3.0, kTol);
  EXPECT_NEAR(causes[0]["long_term_s"].number, 5.0 / 3.0, kTol);
  ASSERT_EQ(causes[0]["ranks"].array.size(), 1u);
  EXPECT_EQ(causes[0]["ranks"].array[0]["rank"].number, 0);
  EXPECT_NEAR(causes[0]["ranks"].array[0]["seconds"].number, 3.0 + 5.0 / 3.0, kTol);
  EXPECT_EQ(causes[0]["rank_count"].number, 1);
  EXPECT_EQ(causes[0]["named_ranks"].number, 1);
  EXPECT_EQ(causes[0]["rank_names"].string, "rank 0");
  EXPECT_EQ(causes[1]["path"].string, "sim.exe/main/bar");
  EXPECT_NEAR(causes[1]["short_term_s"].number, 5.0 / 9.0, kTol);
  EXPECT_EQ(causes[1]["long_term_s"].number, 0.0);
  EXPECT_EQ(causes[1]["ranks"].array.at(0)["rank"].number, 1);
  EXPECT_EQ(causes[1]["rank_names"].string, "rank 1");
  bool finding = false;
  for (const Json& f : json["findings"].array)
    finding = finding || f.string.rfind("Late Sender in MPI_Recv (5.50 s) is caused by foo on "
                                        "rank 0 (3.00 s direct, 1.67 s through other waits)",
                                        0) == 0;
  EXPECT_TRUE(finding);
}

// Six ranks, two barriers. Before the first, rank 2 computes assemble for 3 s and the others for
// 1 s; before the second, rank 5 does. Each barrier: 5 ranks wait 2 s (10 s), and each member's
// d = assemble 3 - 1 = 2 with s = 2/2 = 1, so delay_barrier assemble = 10 s on rank 2 and 10 s
// on rank 5 (scalasca-metrics.md §8.4); the first barrier's waits lie before the second's
// synchpoint A, so nothing is long-term.
TraceWriter two_barriers() {
  TraceWriter w(6);
  scenario::open_all(w);
  for (int r = 0; r < 6; ++r) {
    const double first = r == 2 ? 3.5 : 1.5, second = r == 5 ? 6.6 : 4.6;
    w.region(r, "assemble", 0.5, first);
    w.collective(r, "MPI_Barrier", first, 3.6, CollOpT::Barrier, 0, 0);
    w.region(r, "assemble", 3.6, second);
    w.collective(r, "MPI_Barrier", second, 6.7, CollOpT::Barrier, 0, 0);
  }
  scenario::close_all(w, 6.7);
  return w;
}

TEST(RootCauseSummary, TwoBarriers_NamesAssembleOnRanks2And5) {
  TempDir dir;
  RunResult run;
  const CubeFile cube =
      scenario::analyze(two_barriers(), dir, {"--json", dir / "s.json"}, "t", &run);
  EXPECT_NEAR(total(cube, "mpi_barrier_wait"), 20.0, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier", "sim.exe/main/assemble", 2), 10.0, kTol);
  EXPECT_NEAR(at(cube, "delay_barrier", "sim.exe/main/assemble", 5), 10.0, kTol);
  EXPECT_NEAR(total(cube, "delay_barrier"), 20.0, kTol);
  EXPECT_NEAR(total(cube, "delay_barrier_longterm"), 0.0, kTol);

  const std::string text = folded(run.out);
  EXPECT_NE(text.find("Wait at Barrier in MPI_Barrier (20.00 s) is caused by assemble on ranks "
                      "2 and 5 (20.00 s direct)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(strict_json_error(dir / "s.json"), "");
  const Json json = read_json_file(dir / "s.json");
  const Json& wb = wait_entry(json, "mpi_barrier_wait");
  EXPECT_NEAR(wb["delay_short_term_s"].number, 20.0, kTol);
  EXPECT_EQ(wb["delay_long_term_s"].number, 0.0);
  EXPECT_FALSE(wb.has("indirect_s"));  // only Late Sender and Late Receiver have classes
  const auto& causes = wb["caused_by"].array;
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0]["path"].string, "sim.exe/main/assemble");
  EXPECT_NEAR(causes[0]["short_term_s"].number, 20.0, kTol);
  ASSERT_EQ(causes[0]["ranks"].array.size(), 2u);
  // Equal delays: MAXLOC takes the lower rank first.
  EXPECT_EQ(causes[0]["ranks"].array[0]["rank"].number, 2);
  EXPECT_EQ(causes[0]["ranks"].array[1]["rank"].number, 5);
  EXPECT_NEAR(causes[0]["ranks"].array[1]["seconds"].number, 10.0, kTol);
  EXPECT_EQ(causes[0]["rank_count"].number, 2);
  EXPECT_EQ(causes[0]["named_ranks"].number, 2);
  EXPECT_EQ(causes[0]["rank_names"].string, "ranks 2 and 5");
}

std::string shared_dir() {
  return (std::filesystem::path(__FILE__).parent_path() / "../../../shared").lexically_normal();
}

// The new JSON keys carry the numbers of the Cube report (read by the independent reader): per
// wait state the delay totals and the indirect/propagating totals, per cause the call path's
// delay summed over ranks, each named rank's own value and the count of ranks with any.
void expect_causes_match_cube(const std::string& scenario_name, int ranks) {
  const std::string trace = shared_dir() + "/conformance/" + scenario_name + "/traces.otf2";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "../shared is absent";
  TempDir dir;
  const RunResult run =
      run_cpreplay(ranks, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", trace});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(strict_json_error(dir / "s.json"), "");
  const CubeFile cube = read_cube(dir / "r.cubex");
  const Json json = read_json_file(dir / "s.json");
  const std::map<std::string, std::string> delay = {
      {"mpi_latesender", "delay_latesender"}, {"mpi_latereceiver", "delay_latereceiver"},
      {"mpi_barrier_wait", "delay_barrier"},  {"mpi_wait_nxn", "delay_n2n"},
      {"mpi_latebroadcast", "delay_12n"},     {"mpi_earlyreduce", "delay_n21"}};
  const std::map<std::string, std::pair<std::string, std::string>> classes = {
      {"mpi_latesender", {"mpi_wait_indirect_latesender", "mpi_wait_propagating_ls"}},
      {"mpi_latereceiver", {"mpi_wait_indirect_latereceiver", "mpi_wait_propagating_lr"}}};
  const double tol = 1e-9;
  int causes_seen = 0;
  for (const Json& w : json["wait_states"].array) {
    const std::string metric = w["metric"].string;
    const auto d = delay.find(metric);
    EXPECT_EQ(w.has("caused_by"), d != delay.end()) << metric;
    EXPECT_EQ(w.has("indirect_s"), classes.count(metric) != 0) << metric;
    if (classes.count(metric)) {
      EXPECT_NEAR(w["indirect_s"].number, total(cube, classes.at(metric).first), tol);
      EXPECT_NEAR(w["propagating_s"].number, total(cube, classes.at(metric).second), tol);
    }
    if (d == delay.end()) continue;
    const std::string st = d->second, lt = d->second + "_longterm";
    EXPECT_NEAR(w["delay_short_term_s"].number, total(cube, st), tol) << metric;
    EXPECT_NEAR(w["delay_long_term_s"].number, total(cube, lt), tol) << metric;
    double previous = 1e300;
    for (const Json& c : w["caused_by"].array) {
      ++causes_seen;
      const std::string path = c["path"].string;
      double s_sum = 0.0, l_sum = 0.0;
      int with_delay = 0;
      for (int r = 0; r < ranks; ++r) {
        s_sum += at(cube, st, path, r);
        l_sum += at(cube, lt, path, r);
        with_delay += at(cube, st, path, r) + at(cube, lt, path, r) > 1e-9 ? 1 : 0;
      }
      EXPECT_NEAR(c["short_term_s"].number, s_sum, tol) << metric << " " << path;
      EXPECT_NEAR(c["long_term_s"].number, l_sum, tol) << metric << " " << path;
      EXPECT_EQ(c["rank_count"].number, with_delay) << metric << " " << path;
      // The rule: >= 10 % of the wait state and >= 1 % of the critical path; largest first.
      const double all = s_sum + l_sum;
      EXPECT_GE(all, 0.1 * w["seconds"].number - tol) << metric << " " << path;
      EXPECT_GE(all, 0.01 * json["critical_path_length_s"].number - tol) << metric << " " << path;
      EXPECT_LE(all, previous + tol);
      previous = all;
      double last_rank = 1e300;
      for (const Json& r : c["ranks"].array) {
        const int rank = static_cast<int>(r["rank"].number);
        EXPECT_NEAR(r["seconds"].number, at(cube, st, path, rank) + at(cube, lt, path, rank), tol);
        EXPECT_LE(r["seconds"].number, last_rank);
        last_rank = r["seconds"].number;
      }
    }
  }
  EXPECT_GT(causes_seen, 0) << run.out;
}

TEST(RootCauseSummary, Collectives_JsonCausesMatchCubeReport) {
  expect_causes_match_cube("collectives", 8);
}

TEST(RootCauseSummary, MasterWorker_JsonCausesMatchCubeReport) {
  expect_causes_match_cube("master-worker", 8);
}

}  // namespace
}  // namespace cpreplay::testing
