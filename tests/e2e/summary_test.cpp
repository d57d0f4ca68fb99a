// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the terminal summary and the --json file on the paper's benchmark traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

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

}  // namespace
}  // namespace cpreplay::testing
