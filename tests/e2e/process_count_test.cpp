// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: an N-rank trace analyzed by M <= N processes (issue 16). Every report value,
// every summary line and every JSON value is identical (bit for bit) to the M = N run, for
// M = 1 and for M that does not divide N, with every option; M > N is refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

/// One analysis at M processes, with everything it wrote.
struct Run {
  int processes = 0;
  RunResult result;
  CubeFile cube;
  std::string json;      ///< the --json file
  std::string timeline;  ///< the --timeline file, empty without
  std::string overview;  ///< the --overview file, empty without
};

Run analyze(const TempDir& dir, const std::string& anchor, int processes,
            const std::vector<std::string>& extra, bool views = false) {
  Run run;
  run.processes = processes;
  const std::string tag = "m" + std::to_string(processes);
  // The what-if replay runs too (unless `extra` says --no-what-if): its JSON block and the
  // report's near_critical_path are compared with everything else.
  std::vector<std::string> args = {"-o", dir / (tag + ".cubex"), "--json", dir / (tag + ".json")};
  if (views) {
    args.insert(args.end(), {"--timeline", dir / (tag + ".timeline.json"), "--overview",
                             dir / (tag + ".svg")});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(anchor);
  run.result = run_cpreplay(processes, args);
  EXPECT_EQ(run.result.exit_code, 0) << "M = " << processes << ": " << run.result.err;
  if (run.result.exit_code != 0) return run;
  run.cube = read_cube(dir / (tag + ".cubex"));
  run.json = read_file(dir / (tag + ".json"));
  if (views) {
    run.timeline = read_file(dir / (tag + ".timeline.json"));
    run.overview = read_file(dir / (tag + ".svg"));
  }
  return run;
}

/// The summary without what differs between runs: the analysis time, the output paths and how
/// many processes there were (checked on its own).
std::vector<std::string> comparable_summary(const std::string& out) {
  std::vector<std::string> kept;
  for (std::string line : lines_of(out)) {
    if (line.rfind("  analyzed by ", 0) == 0 || line.rfind("  report ", 0) == 0 ||
        line.rfind("  json ", 0) == 0)
      continue;
    const auto at = line.find("   analysis ");
    if (line.rfind("  ranks ", 0) == 0 && at != std::string::npos) line = line.substr(0, at);
    kept.push_back(line);
  }
  return kept;
}

/// The JSON lines without "analysis_s", "report" and "processes" (one field per line).
std::vector<std::string> comparable_json(const std::string& json) {
  std::vector<std::string> kept;
  for (const std::string& line : lines_of(json))
    if (line.find("\"analysis_s\"") == std::string::npos &&
        line.find("\"report\"") == std::string::npos &&
        line.find("\"processes\"") == std::string::npos)
      kept.push_back(line);
  return kept;
}

/// Timeline events come in whatever order the processes' chunks arrive: compared as a sorted
/// list of lines (one event per line), without the separating commas.
std::vector<std::string> sorted_events(const std::string& timeline) {
  std::vector<std::string> out;
  for (std::string line : lines_of(timeline)) {
    if (!line.empty() && line.back() == ',') line.pop_back();
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// "analyzed by 3 processes, 3 or 2 ranks each" for N ranks on M processes.
std::string analyzed_line(int ranks, int processes) {
  const int small = ranks / processes, large = small + (ranks % processes ? 1 : 0);
  auto count = [](int n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  return "  analyzed by " + std::to_string(processes) +
         (processes == 1 ? " process, " : " processes, ") +
         (small == large ? count(large, "rank") : std::to_string(large) + " or " + count(small, "rank")) +
         " each";
}

/// Sets a test hook for its lifetime.
struct HookGuard {
  explicit HookGuard(const char* name) : name_(name) {
    if (name_ != nullptr) ::setenv(name_, "1", 1);
  }
  ~HookGuard() {
    if (name_ != nullptr) ::unsetenv(name_);
  }
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;
  const char* name_;
};

/// Runs at N (the reference), 1 and each other M, and checks that everything agrees. With
/// `others_hook`, that test hook is set for the other runs (not the reference).
void expect_same_at(const TempDir& dir, const std::string& anchor, int ranks,
                    const std::vector<int>& others, const std::vector<std::string>& extra,
                    bool views = false, const char* others_hook = nullptr) {
  const Run base = analyze(dir, anchor, ranks, extra, views);
  ASSERT_EQ(base.result.exit_code, 0);
  // Not vacuous: the reference has wait states and a critical path (hybrid traces without one,
  // for now: OpenMP management time instead).
  ASSERT_FALSE(base.cube.values.empty());
  // Hybrid traces (OpenMP metrics in the report): OpenMP management time too.
  const bool hybrid = base.cube.metric("omp_management") != nullptr;
  EXPECT_GT(scenario::total(base.cube, hybrid ? "omp_management" : "critical_path"), 0.0);
  // Hybrid traces have critical_path_imbalance over all threads (sums over ranks in the fixed
  // tree, each rank's threads in thread order): there, and the same bits at every M below.
  if (hybrid) {
    EXPECT_GT(scenario::total(base.cube, "critical_path_imbalance"), 0.0);
  }
  // ...and, unless turned off, what-if values (hybrid traces too, through their threads): the
  // critical path is near-critical (slack 0), and the top call paths have gains.
  const Json base_json = parse_json(base.json);
  // The summary's critical-path table and impact split follow the threads of hybrid traces
  // (every thread a location): compared bit for bit below, so not empty.
  EXPECT_GT(base_json["critical_path_length_s"].number, 0.0);
  EXPECT_FALSE(base_json["callpaths"].array.empty());
  EXPECT_GT(base_json["impact"]["total_s"].number, 0.0);
  const bool what_if = std::find(extra.begin(), extra.end(), "--no-what-if") == extra.end();
  if (what_if) {
    EXPECT_EQ(base_json["what_if"].type, Json::Type::Object);
    EXPECT_FALSE(base_json["what_if"]["callpaths"].array.empty());
    EXPECT_GT(scenario::total(base.cube, "near_critical_path"), 0.0);
  }
  const HookGuard hook(others_hook);
  for (int m : others) {
    SCOPED_TRACE("M = " + std::to_string(m) + " of N = " + std::to_string(ranks));
    const Run run = analyze(dir, anchor, m, extra, views);
    ASSERT_EQ(run.result.exit_code, 0);
    EXPECT_TRUE(run.cube.values == base.cube.values) << "report values differ";
    if (hybrid) {
      EXPECT_TRUE(run.cube.values.count("critical_path_imbalance") &&
                  run.cube.values.at("critical_path_imbalance") ==
                      base.cube.values.at("critical_path_imbalance"))
          << "critical_path_imbalance differs";
    }
    EXPECT_EQ(run.cube.callpaths, base.cube.callpaths);
    EXPECT_EQ(run.cube.attributes, base.cube.attributes);
    EXPECT_EQ(run.cube.process_names, base.cube.process_names);
    EXPECT_EQ(comparable_summary(run.result.out), comparable_summary(base.result.out));
    EXPECT_EQ(comparable_json(run.json), comparable_json(base.json));
    const Json s = parse_json(run.json);
    if (what_if) {
      // Spelled out (the line comparison above covers them too): the what-if block's values
      // and the near_critical_path metric, bit for bit.
      EXPECT_TRUE(run.cube.values.at("near_critical_path") ==
                  base.cube.values.at("near_critical_path"));
      const Json& x = s["what_if"];
      const Json& y = base_json["what_if"];
      EXPECT_EQ(x["runtime_s"].number, y["runtime_s"].number);
      ASSERT_EQ(x["callpaths"].array.size(), y["callpaths"].array.size());
      for (std::size_t i = 0; i < x["callpaths"].array.size(); ++i)
        for (const char* key :
             {"zeroing_gain_s", "balance_gain_s", "rebalance_gain_s", "near_critical_s"})
        {
          EXPECT_EQ(x["callpaths"].array[i].has(key), y["callpaths"].array[i].has(key)) << key;
          if (!x["callpaths"].array[i].has(key) || !y["callpaths"].array[i].has(key)) continue;
          const Json& a = x["callpaths"].array[i][key];
          const Json& b = y["callpaths"].array[i][key];
          EXPECT_EQ(a.type, b.type) << key;
          EXPECT_EQ(a.number, b.number) << x["callpaths"].array[i]["path"].string << " " << key;
        }
      ASSERT_EQ(x["scenarios"].array.size(), y["scenarios"].array.size());
      for (std::size_t i = 0; i < x["scenarios"].array.size(); ++i)
        EXPECT_EQ(x["scenarios"].array[i]["runtime_s"].number,
                  y["scenarios"].array[i]["runtime_s"].number);
    }
    EXPECT_EQ(s["processes"]["count"].number, m);
    EXPECT_EQ(s["processes"]["ranks_max"].number, (ranks + m - 1) / m);
    EXPECT_EQ(s["processes"]["ranks_min"].number, ranks / m);
    EXPECT_NE(run.result.out.find(analyzed_line(ranks, m) + "\n"), std::string::npos)
        << run.result.out;
    // Warnings and notes (clock violations, timeline reductions) are the same lines too.
    std::vector<std::string> warnings, base_warnings;
    for (const std::string& l : lines_of(run.result.err))
      if (l.rfind("cpreplay: warning", 0) == 0 || l.rfind("cpreplay: note", 0) == 0)
        warnings.push_back(l);
    for (const std::string& l : lines_of(base.result.err))
      if (l.rfind("cpreplay: warning", 0) == 0 || l.rfind("cpreplay: note", 0) == 0)
        base_warnings.push_back(l);
    EXPECT_EQ(warnings, base_warnings);
    if (views) {
      EXPECT_EQ(run.overview, base.overview) << "overview SVG differs";
      EXPECT_EQ(sorted_events(run.timeline), sorted_events(base.timeline));
    }
  }
  EXPECT_NE(base.result.out.find(analyzed_line(ranks, ranks) + "\n"), std::string::npos);
}

// 7 ranks (a prime: no M between 1 and 7 divides it) on 1, 2 and 3 processes.
TEST(ProcessCount, Example7Ranks_SameReportSummaryJsonAndViewsAt1_2_3) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "7", "--iters", "12"});
  expect_same_at(dir, anchor, 7, {1, 2, 3}, {"--what-if", "compute=0.5"}, true);
}

TEST(ProcessCount, LateSender6Ranks_SameAt1And4) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"late-sender", "--ranks", "6", "--iters", "8"});
  expect_same_at(dir, anchor, 6, {1, 4}, {});
}

TEST(ProcessCount, Collectives5Ranks_SameAt1And2) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"collectives", "--ranks", "5", "--iters", "6"});
  expect_same_at(dir, anchor, 5, {1, 2}, {}, true);
}

TEST(ProcessCount, Nonblocking5Ranks_SameAt1And3) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"nonblocking", "--ranks", "5", "--iters", "6"});
  expect_same_at(dir, anchor, 5, {1, 3}, {});
}

// A round's records go as one message per process pair, found by a probe, up to
// RecordExchange::kProbedUpTo processes; beyond, the sizes go first in an all-to-all. The test
// hook takes the sized way at every count (the what-if replay's rounds, the root causes'): the
// same values as the probed rounds at N, also with a process that holds two ranks and one that
// holds one.
TEST(ProcessCount, SizedRoundExchange_SameAsProbedAt6_4_1) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"late-sender", "--ranks", "6", "--iters", "8"});
  expect_same_at(dir, anchor, 6, {6, 4, 1}, {"--what-if", "work=0.5"}, false,
                 "CPREPLAY_TEST_EXCHANGE_SIZED");
}

// --time-correct on a skewed clock (offsets by Bellman-Ford on process 0, shifts per rank).
TEST(ProcessCount, TimeCorrectSkewedRing_SameAt1And3) {
  TempDir dir;
  const std::string anchor = make_trace(
      dir, {"late-sender", "--ranks", "5", "--iters", "5", "--skew", "1:3000000"});
  expect_same_at(dir, anchor, 5, {1, 3}, {"--time-correct"});
}

// A hybrid trace (5 ranks x 3 threads, issue 17): the report, summary and JSON, and the views
// that follow the threads (a timeline track per thread, the path through the worker threads, an
// overview row per thread) are the same at every M.
TEST(ProcessCount, Hybrid5Ranks3Threads_SameReportSummaryJsonAndViewsAt1_2_3) {
  TempDir dir;
  const std::string anchor =
      make_trace(dir, {"hybrid", "--ranks", "5", "--threads", "3", "--iters", "4"});
  expect_same_at(dir, anchor, 5, {1, 2, 3}, {}, true);
}

// Hybrid MPI+OpenMP (5 ranks x 3 threads): the what-if replay through the threads, with a
// scenario and the near-critical time of every thread, the same at every M.
TEST(ProcessCount, Hybrid5Ranks3Threads_WhatIfSameAt1And2And3) {
  TempDir dir;
  const std::string anchor =
      make_trace(dir, {"hybrid", "--ranks", "5", "--threads", "3", "--iters", "6"});
  expect_same_at(dir, anchor, 5, {1, 2, 3}, {"--what-if", "loop_body=0.5", "--near-critical",
                                             "0.05"});
}

// A tiny window: many message rounds and collective windows, the same at every M.
TEST(ProcessCount, Window3AndNoRootCause_SameAt1And2) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "5", "--iters", "6"});
  expect_same_at(dir, anchor, 5, {1, 2}, {"--window", "3"});
  TempDir other;
  expect_same_at(other, anchor, 5, {1, 2}, {"--no-rootcause", "--no-what-if"});
}

/// Collectives on communicators whose members interleave between processes at M = 2 ({0, 2,
/// 1, 3}: a scan over them cannot follow process order) and in reverse ({3, 1}), with begin
/// times shuffled so that every rank is the latest somewhere.
TraceWriter interleaved_trace() {
  constexpr int kRanks = 4, kIterations = 6;
  TraceWriter w(kRanks);
  const int mixed = w.add_comm({0, 2, 1, 3}, "mixed");
  const int odd = w.add_comm({3, 1}, "odd");
  scenario::open_all(w);
  for (int k = 0; k < kIterations; ++k) {
    const double t = 10.0 * k + 1.0;
    for (int r = 0; r < kRanks; ++r) {
      auto jitter = [&](int a, int m) { return 0.1 * ((a * r + k) % m); };
      // Ranks 1 and 3 send nothing in the scan every other iteration.
      const std::uint64_t sent = (r % 2 == 1 && k % 2 == 0) ? 0 : 8;
      w.collective(r, "MPI_Scan", t + jitter(3, 4), t + 1.0, CollOpT::Scan, sent, 8, mixed);
      w.collective(r, "MPI_Exscan", t + 1.1 + jitter(1, 4), t + 2.0, CollOpT::Exscan, 8, 8);
      if (r % 2 == 1)
        w.collective(r, "MPI_Allreduce", t + 2.1 + jitter(2, 3), t + 3.0, CollOpT::Allreduce,
                     8, 8, odd);
      w.collective(r, "MPI_Reduce", t + 3.1 + jitter(5, 4), t + 4.0, CollOpT::Reduce, 8,
                   r == 2 ? 32 : 0, mixed, 1);  // root: comm-local 1 = world rank 2
      if (r == 0)
        w.send(r, t + 4.2 + 0.1 * k, t + 4.9, 3, k, 16);
      else if (r == 3)
        w.recv(r, t + 4.1, t + 5.0, 0, k, 16);
    }
  }
  scenario::close_all(w, 10.0 * kIterations + 2.0);
  return w;
}

TEST(ProcessCount, InterleavedCommunicators_SameAt1_2_3) {
  TempDir dir;
  interleaved_trace().write(dir / "t");
  expect_same_at(dir, dir / "t/traces.otf2", 4, {1, 2, 3}, {});
  // The scans are analyzed: Early Scan is non-zero.
  const CubeFile cube = read_cube(dir / "m2.cubex");
  EXPECT_GT(scenario::total(cube, "mpi_earlyscan"), 0.0);
  EXPECT_GT(scenario::total(cube, "mpi_earlyreduce"), 0.0);
}

// --partial on a run whose rank 2 stopped mid-run: the cut and what it dropped are the same
// whether rank 2 shares its process or not.
TEST(ProcessCount, PartialCrashedRank_SameAt1And2) {
  TempDir dir;
  TraceWriter w(3);
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
  }
  w.region(0, "work", 1.0, 3.0);
  w.send(0, 3.0, 3.1, 2, 5, 8);
  w.region(0, "work", 3.1, 8.0);
  w.region(1, "work", 1.0, 2.5);
  w.send(1, 2.5, 2.6, 2, 6, 8);
  w.region(1, "work", 2.6, 8.0);
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, 8.0, 9.0);
    w.leave(r, 9.0, "main");
    w.program_end(r, 9.0);
  }
  w.recv(2, 1.0, 3.2, 0, 5, 8);
  w.recv(2, 3.2, 3.3, 1, 6, 8);
  w.enter(2, 3.3, "work2");
  w.write(dir / "t");
  expect_same_at(dir, dir / "t/traces.otf2", 3, {1, 2}, {"--partial"});
  const Json s = read_json_file(dir / "m2.json");
  EXPECT_EQ(s["partial"]["first_rank_to_stop"].number, 2);
}

// ---- the shared conformance traces (Scalasca's test programs): bit-identical at every M

namespace fs = std::filesystem;

/// ../shared next to the repository, found from this source file (tests/e2e/ -> repo -> ..).
fs::path shared_dir() { return fs::path(__FILE__).parent_path() / "../../../shared"; }

/// Every shared trace directory with an expected.json; one empty entry when there is none.
std::vector<std::string> shared_traces() {
  std::vector<std::string> out;
  for (const char* group : {"conformance", "traces", "conformance-next", "conformance-hybrid"}) {
    std::error_code ec;
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(shared_dir() / group, ec))
      if (fs::exists(entry.path() / "expected.json")) found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty()) out.push_back("");
  return out;
}

/// At N, 1 and the smallest M that does not divide N: the same report, summary and JSON.
class SharedTraceAtEveryM : public ::testing::Test {
 public:
  explicit SharedTraceAtEveryM(std::string dir) : dir_(std::move(dir)) {}
  void TestBody() override {
    if (dir_.empty()) GTEST_SKIP() << shared_dir().string() << " is absent";
    const Json expected = read_json_file((fs::path(dir_) / "expected.json").string());
    // Hybrid traces count locations (ranks x threads) and list the threads per rank.
    const int ranks = expected.has("threads") ? static_cast<int>(expected["threads"].object.size())
                                              : static_cast<int>(expected["locations"].number);
    std::vector<int> others = {1};
    for (int m = 2; m < ranks; ++m)
      if (ranks % m != 0) {
        others.push_back(m);
        break;
      }
    TempDir tmp;
    // The hybrid ones with the views too (they follow the threads).
    expect_same_at(tmp, (fs::path(dir_) / "traces.otf2").string(), ranks, others, {},
                   expected.has("threads"));
  }

 private:
  std::string dir_;
};

const bool kRegistered = [] {
  for (const std::string& dir : shared_traces()) {
    std::string name = dir.empty() ? "shared_absent" : fs::path(dir).filename().string();
    if (dir.find("conformance-hybrid") != std::string::npos) name = "hybrid_" + name;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    ::testing::RegisterTest("ProcessCountShared", name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__,
                            [dir]() -> ::testing::Test* { return new SharedTraceAtEveryM(dir); });
  }
  return true;
}();

// --read-only decodes every rank's events, whatever process holds them: the example has 4 ranks
// of 168 events.
TEST(ProcessCount, ReadOnly_CountsEveryRanksEventsAt1_3_4) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example"});
  for (int m : {1, 3, 4}) {
    const RunResult run = run_cpreplay(m, {"--read-only", anchor});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find(" 672 events (read-only)"), std::string::npos) << "M = " << m << ": "
                                                                          << run.err;
  }
}

// ---- bad input

// More processes than ranks: one line naming N, exit 2, no report.
TEST(ProcessCount, MoreProcessesThanRanks_OneLineNamingNNoReport) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "3", "--iters", "2"});
  const RunResult run = run_cpreplay(5, {"-o", dir / "r.cubex", "--json", dir / "s.json", anchor});
  EXPECT_EQ(run.exit_code, 2);
  std::vector<std::string> errors;
  for (const std::string& l : lines_of(run.err))
    if (l.find("cpreplay: error:") != std::string::npos) errors.push_back(l);
  ASSERT_EQ(errors.size(), 1u) << run.err;
  EXPECT_EQ(errors[0], "cpreplay: error: " + anchor +
                           " has 3 MPI ranks but cpreplay runs on 5 processes: use at most 3 "
                           "(mpirun -np 3 or fewer)");
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
  EXPECT_FALSE(file_exists(dir / "s.json"));
  for (const std::string& name : list_dir(dir.path()))
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
}

// A broken trace analyzed with several ranks per process: the same one line as at M = N, which
// names the rank (not the process) and the event.
TEST(ProcessCount, UnmatchedReceiveOnSharedProcess_SameErrorLine) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.recv(2, 1.0, 2.0, 0, 9, 8);  // rank 0 never sends it
  scenario::close_all(w, 3.0);
  w.write(dir / "t");
  const std::string anchor = dir / "t/traces.otf2";
  std::vector<std::string> lines;
  for (int m : {3, 1, 2}) {
    const RunResult run = run_cpreplay(m, {"-q", "-o", dir / "r.cubex", anchor});
    EXPECT_EQ(run.exit_code, 1) << "M = " << m;
    std::vector<std::string> errors;
    for (const std::string& l : lines_of(run.err))
      if (l.find("cpreplay: error:") != std::string::npos) errors.push_back(l);
    ASSERT_EQ(errors.size(), 1u) << "M = " << m << ": " << run.err;
    lines.push_back(errors[0]);
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
  EXPECT_EQ(lines[0], "cpreplay: error: " + anchor +
                          ": rank 2, event 5: receive has no matching send from rank 0 (tag 9, "
                          "communicator MPI_COMM_WORLD)");
  EXPECT_EQ(lines[1], lines[0]);
  EXPECT_EQ(lines[2], lines[0]);
}

}  // namespace
}  // namespace cpreplay::testing
