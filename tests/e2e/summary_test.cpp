// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the terminal summary and the --json file on the paper's benchmark traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/scenario.hpp"
#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"

namespace cpreplay::testing {
namespace {

std::string shared_dir() {
  return (std::filesystem::path(__FILE__).parent_path() / "../../../shared").lexically_normal();
}

struct Analyzed {
  RunResult run;
  CubeFile cube;
  Json json;
};

Analyzed analyze(const std::string& scenario, const TempDir& dir) {
  Analyzed a;
  const std::string trace = shared_dir() + "/conformance/" + scenario + "/traces.otf2";
  a.run = run_cpreplay(8, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", trace});
  if (a.run.exit_code == 0) {
    a.cube = read_cube(dir / "r.cubex");
    a.json = read_json_file(dir / "s.json");
  }
  return a;
}

std::string line_containing(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) return line;
  return "";
}

/// The text with every run of white space folded to one space (findings are word-wrapped).
std::string folded(const std::string& text) {
  std::istringstream in(text);
  std::string out, word;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

double sum_over(const CubeFile& cube, const std::string& metric, const std::string& path) {
  double s = 0;
  for (int r = 0; r < static_cast<int>(cube.location_names.size()); ++r)
    s += cube.value(metric, path, r);
  return s;
}

// imbalance-dynamic: work() takes 2.0 s per rank on average, the critical path 2.5 s; the
// overload moves between ranks, so the critical-path imbalance of work is 0.5 s (20 % of the
// path, 25 % of work's average time) while the profile's max-avg is ~0.
TEST(Summary, DynamicImbalance_TopLineNamesWorkWithPaperNumbers) {
  if (!std::filesystem::exists(shared_dir() + "/conformance/imbalance-dynamic"))
    GTEST_SKIP() << "../shared is absent";
  TempDir dir;
  const Analyzed a = analyze("imbalance-dynamic", dir);
  ASSERT_EQ(a.run.exit_code, 0) << a.run.err;
  const std::string& out = a.run.out;
  const auto table = out.find("Critical path:");
  ASSERT_NE(table, std::string::npos) << out;
  // The first row after the column header is the top call path.
  std::istringstream rows(out.substr(table));
  std::string line;
  std::getline(rows, line);
  std::getline(rows, line);
  std::getline(rows, line);
  EXPECT_NE(line.find("main/work"), std::string::npos) << line;
  EXPECT_NE(line.find("0.50 s"), std::string::npos) << line;
  EXPECT_NE(line.find("20.0 %"), std::string::npos) << line;
  EXPECT_NE(line.find("25.0 %"), std::string::npos) << line;
  EXPECT_NE(folded(out).find("work: load imbalance costs 0.50 s (20.0 % of the runtime, 25.0 % of "
                             "its average time); the overload moves between ranks"),
            std::string::npos)
      << out;

  const Json& top = a.json["callpaths"].array.at(0);
  EXPECT_EQ(top["path"].string, "sim.exe/main/work");
  EXPECT_NEAR(top["imbalance_s"].number, 0.5, 0.005);
  EXPECT_NEAR(top["imbalance_share"].number, 0.20, 0.0005);
  EXPECT_NEAR(top["imbalance_of_average"].number, 0.25, 0.0005);
  EXPECT_LT(top["profile_imbalance_s"].number, 1e-3);
  for (const std::string& l : {std::string("cpreplay summary")})
    EXPECT_NE(line_containing(out, l), "");
  std::istringstream all(out);
  for (std::string l; std::getline(all, l);) EXPECT_LE(l.size(), 100u) << l;
}

// mpmd: the mesh partition is slower; particle ranks wait for it.
TEST(Summary, Mpmd_InterPartitionFindingNamesMesh) {
  if (!std::filesystem::exists(shared_dir() + "/conformance/mpmd"))
    GTEST_SKIP() << "../shared is absent";
  TempDir dir;
  const Analyzed a = analyze("mpmd", dir);
  ASSERT_EQ(a.run.exit_code, 0) << a.run.err;
  const std::string text = folded(a.run.out);
  EXPECT_NE(text.find("mesh partition is the bottleneck: particle ranks wait"), std::string::npos)
      << a.run.out;
  EXPECT_NE(text.find("move ranks from particle to mesh"), std::string::npos) << a.run.out;
  bool in_json = false;
  for (const Json& f : a.json["findings"].array)
    in_json = in_json || f.string.find("mesh partition is the bottleneck") != std::string::npos;
  EXPECT_TRUE(in_json);
}

// The JSON carries the same numbers as the Cube report.
TEST(Summary, Json_MatchesCubeReport) {
  if (!std::filesystem::exists(shared_dir() + "/conformance/mpmd"))
    GTEST_SKIP() << "../shared is absent";
  TempDir dir;
  const Analyzed a = analyze("mpmd", dir);
  ASSERT_EQ(a.run.exit_code, 0) << a.run.err;
  EXPECT_EQ(a.json["schema"].string, "cpreplay-summary/1");
  EXPECT_EQ(a.json["ranks"].number, 8);
  double length = 0;
  for (const auto& [path, values] : a.cube.values.at("critical_path"))
    for (double v : values) length += v;
  EXPECT_NEAR(a.json["critical_path_length_s"].number, length, 1e-9);
  for (const Json& c : a.json["callpaths"].array) {
    const std::string path = c["path"].string;
    EXPECT_NEAR(c["critical_path_s"].number, sum_over(a.cube, "critical_path", path), 1e-9);
    EXPECT_NEAR(c["imbalance_s"].number, sum_over(a.cube, "critical_path_imbalance", path),
                1e-9);
  }
  double inter = 0, impact = 0;
  for (const auto& [path, values] : a.cube.values.at("inter_partition_imbalance"))
    for (double v : values) inter += v;
  for (const auto& [path, values] : a.cube.values.at("critical_imbalance_impact"))
    for (double v : values) impact += v;
  EXPECT_NEAR(a.json["impact"]["inter_partition_s"].number, inter, 1e-9);
  EXPECT_NEAR(a.json["impact"]["imbalance_impact_s"].number, impact, 1e-9);
  for (const Json& w : a.json["wait_states"].array) {
    double total = 0;
    for (const auto& [path, values] : a.cube.values.at(w["metric"].string))
      for (double v : values) total += v;
    EXPECT_NEAR(w["seconds"].number, total, 1e-9) << w["metric"].string;
  }
}

// ---- hybrid MPI+OpenMP traces: every thread a location of the table and the impact split

/// For a shared hybrid trace: the --json summary's critical-path length, critical-path table,
/// impact split and allocation time are the report's sums over all call paths and thread
/// locations (docs/json-schema.md), and the terminal summary shows them.
class SummaryHybridShared : public ::testing::Test {
 public:
  explicit SummaryHybridShared(std::string dir) : dir_(std::move(dir)) {}
  void TestBody() override;

 private:
  std::string dir_;
};

void SummaryHybridShared::TestBody() {
  if (dir_.empty()) GTEST_SKIP() << "../shared/conformance-hybrid is absent";
  const Json expected = read_json_file(dir_ + "/expected.json");
  const int ranks = static_cast<int>(expected["threads"].object.size());
  const int locations = static_cast<int>(expected["locations"].number);
  ASSERT_GT(locations, ranks) << "not a hybrid trace";
  TempDir dir;
  const RunResult run = run_cpreplay(ranks, {"-o", dir / "r.cubex", "--json", dir / "s.json",
                                             dir_ + "/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CubeFile cube = read_cube(dir / "r.cubex");
  const Json j = read_json_file(dir / "s.json");
  ASSERT_EQ(cube.location_names.size(), static_cast<std::size_t>(locations));
  EXPECT_EQ(j["openmp"]["thread_locations"].number, locations);
  constexpr double kTol = 1e-12;  // the same values summed in another order

  const double length = scenario::total(cube, "critical_path");
  ASSERT_GT(length, 0.0);
  EXPECT_NEAR(j["critical_path_length_s"].number, length, kTol);
  double allocation = 0.0;
  for (const std::string& path : cube.callpaths)
    if (path.find('/') == std::string::npos)
      for (int l = 0; l < locations; ++l) allocation += cube.value("time", path, l);
  EXPECT_NEAR(j["allocation_time_s"].number, allocation, kTol * locations);

  // One row per call path with critical-path time, largest first, each the report's sums.
  std::map<std::string, double> on_path;
  for (const auto& [path, values] : cube.values.at("critical_path"))
    for (double v : values) on_path[path] += v;
  std::size_t with_time = 0;
  for (const auto& [path, v] : on_path) with_time += v > 0.0 ? 1 : 0;
  const std::vector<Json>& rows = j["callpaths"].array;
  ASSERT_EQ(rows.size(), with_time);
  double previous = length;
  for (const Json& row : rows) {
    const std::string path = row["path"].string;
    SCOPED_TRACE(path);
    EXPECT_LE(row["critical_path_s"].number, previous);
    previous = row["critical_path_s"].number;
    EXPECT_NEAR(row["critical_path_s"].number, sum_over(cube, "critical_path", path), kTol);
    EXPECT_NEAR(row["critical_path_share"].number, row["critical_path_s"].number / length, kTol);
    EXPECT_NEAR(row["imbalance_s"].number, sum_over(cube, "critical_path_imbalance", path),
                kTol);
    double total = 0.0, most = 0.0;
    for (int l = 0; l < locations; ++l) {
      total += scenario::exclusive_time(cube, path, l);
      most = std::max(most, scenario::exclusive_time(cube, path, l));
    }
    EXPECT_NEAR(row["time_total_s"].number, total, kTol);
    EXPECT_NEAR(row["time_average_s"].number, total / locations, kTol);
    EXPECT_NEAR(row["time_max_s"].number, most, kTol);
    EXPECT_NEAR(row["profile_imbalance_s"].number, std::max(0.0, most - total / locations), kTol);
  }

  // The impact split: the report's sums; together they are every thread's share of the path.
  const Json& im = j["impact"];
  EXPECT_NEAR(im["total_s"].number, locations * length, kTol * locations);
  const std::pair<const char*, const char*> parts[] = {
      {"critical_path_activities_s", "critical_path_activities"},
      {"imbalance_impact_s", "critical_imbalance_impact"},
      {"intra_partition_s", "intra_partition_imbalance"},
      {"inter_partition_s", "inter_partition_imbalance"},
      {"non_critical_path_activities_s", "non_critical_path_activities"}};
  for (const auto& [key, metric] : parts)
    EXPECT_NEAR(im[key].number, scenario::total(cube, metric), kTol) << key;
  EXPECT_GT(im["critical_path_activities_s"].number, 0.0);
  EXPECT_GT(im["imbalance_impact_s"].number, 0.0);
  EXPECT_NEAR(im["intra_partition_s"].number + im["inter_partition_s"].number,
              im["imbalance_impact_s"].number, kTol);
  EXPECT_NEAR(im["critical_path_activities_s"].number + im["imbalance_impact_s"].number +
                  im["non_critical_path_activities_s"].number,
              im["total_s"].number, 1e-3 * im["total_s"].number);

  // The terminal summary: the length in the header, the table and the split over threads.
  // The summary's units: seconds from 0.1 s, milliseconds below (the traces' paths are 0.06 to
  // 0.12 s).
  char header[64];
  if (length >= 0.1)
    std::snprintf(header, sizeof header, "   critical path %.2f s   analysis ", length);
  else
    std::snprintf(header, sizeof header, "   critical path %.2f ms   analysis ", length * 1e3);
  EXPECT_NE(run.out.find(header), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("not yet"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nCritical path: where the runtime goes"), std::string::npos);
  EXPECT_NE(run.out.find("\nPerformance impact (" + std::to_string(locations) +
                         " thread locations x "),
            std::string::npos)
      << run.out;
  std::istringstream lines(run.out);
  for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 100u) << l;
}

const bool kRegistered = [] {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(shared_dir() + "/conformance-hybrid", ec))
    if (std::filesystem::exists(entry.path() / "expected.json"))
      dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) dirs.push_back("");
  for (const std::string& dir : dirs) {
    std::string name =
        dir.empty() ? "shared_absent" : std::filesystem::path(dir).filename().string();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    ::testing::RegisterTest("SummaryHybridShared", name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__,
                            [dir]() -> ::testing::Test* { return new SummaryHybridShared(dir); });
  }
  return true;
}();

}  // namespace
}  // namespace cpreplay::testing
