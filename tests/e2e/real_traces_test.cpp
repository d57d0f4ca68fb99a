// SPDX-License-Identifier: BSD-3-Clause
// What users see on the traces of real applications in ../shared/real (Score-P recordings of
// HPCCG and LULESH, issue 33): job sizing, names, and the views. Skips when ../shared/real is
// absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cpreplay/names.hpp"
#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"

namespace cpreplay::testing {
namespace {

namespace fs = std::filesystem;

/// ../shared/real next to the repository, found from this source file.
fs::path real_dir() { return fs::path(__FILE__).parent_path() / "../../../shared/real"; }

/// Analysis processes: at most two (the machine's cores), fewer ranks' traces on as many.
constexpr int kProcesses = 2;

class RealTrace : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = real_dir() / GetParam();
    if (!fs::exists(dir_ / "traces.otf2"))
      GTEST_SKIP() << (dir_ / "traces.otf2").string() << " is absent";
  }
  std::string anchor() const { return (dir_ / "traces.otf2").string(); }
  fs::path dir_;
};

// --count-events sizes the cluster jobs' memory: it must count what the analysis holds, every
// thread of a hybrid trace included (lulesh-8x2: 1,250,128 events, not the masters' 749,704).
TEST_P(RealTrace, CountEvents_EqualsTheSummarysEvents) {
  const RunResult count = run_cpreplay(1, {"--count-events", anchor()});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  TempDir tmp;
  const RunResult run =
      run_cpreplay(kProcesses, {"-q", "--no-what-if", "-o", tmp / "r.cubex", "--json",
                                tmp / "r.json", anchor()},
                   600);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json summary = read_json_file(tmp / "r.json");
  const auto events = static_cast<unsigned long long>(summary["events"].number);
  EXPECT_EQ(count.out, std::to_string(events) + "\n");
  if (GetParam() == "lulesh-8x2") {
    EXPECT_EQ(count.out, "1250128\n");
  }
}

// The same on every other shared trace (the conformance sets, the hybrid ones): what
// --count-events prints is what the analysis reads. Each folder's traces in name order, at M = 1.
TEST(SharedTraces, CountEvents_EqualsTheSummarysEventsOnEveryTrace) {
  const fs::path shared = real_dir().parent_path();
  int traces = 0;
  for (const char* set : {"conformance", "traces", "conformance-next", "conformance-hybrid"}) {
    if (!fs::is_directory(shared / set)) continue;
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(shared / set))
      if (fs::exists(entry.path() / "traces.otf2")) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      const std::string anchor = (dir / "traces.otf2").string();
      const RunResult count = run_cpreplay(1, {"--count-events", anchor});
      ASSERT_EQ(count.exit_code, 0) << anchor << ": " << count.err;
      TempDir tmp;
      const RunResult run = run_cpreplay(
          1, {"-q", "--no-what-if", "-o", tmp / "r.cubex", "--json", tmp / "r.json", anchor},
          600);
      ASSERT_EQ(run.exit_code, 0) << anchor << ": " << run.err;
      const auto events =
          static_cast<unsigned long long>(read_json_file(tmp / "r.json")["events"].number);
      EXPECT_EQ(count.out, std::to_string(events) + "\n") << anchor;
      ++traces;
    }
  }
  if (traces == 0) GTEST_SKIP() << shared.string() << " has no shared traces";
}

/// The call-path cells of the summary table whose header line starts with `header`: a row's
/// first 30 columns after the indent, or its whole first line where the path did not fit
/// (the numbers follow on the next line).
std::vector<std::string> table_paths(const std::string& out, const std::string& header) {
  std::vector<std::string> cells;
  const std::size_t at = out.find("\n" + header);
  if (at == std::string::npos) return cells;
  const std::vector<std::string> lines = lines_of(out.substr(at + 1));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.size() < 3 || l.rfind("  (", 0) == 0 || l[0] != ' ') break;
    if (l[2] == ' ') continue;  // the numbers of a row whose path had a line of its own
    const bool own_line = i + 1 < lines.size() && lines[i + 1].size() > 2 &&
                          lines[i + 1][0] == ' ' && lines[i + 1][2] == ' ';
    std::string cell = own_line ? l.substr(2) : l.substr(2, 30);
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
  }
  return cells;
}

/// Where any of `text` holds a mangled C++ symbol: the line, or "" for none.
std::string mangled_line(const std::string& text) {
  for (const std::string& line : lines_of(text))
    if (looks_mangled(line)) return line;
  return "";
}

// Issue 33, item 2: Score-P without a demangler stores mangled symbols; the summary, its JSON,
// the timeline, the overview and the report's region names show them demangled (the report
// keeps the trace's in mangled_name).
TEST_P(RealTrace, Names_DemangledEverywhere) {
  TempDir tmp;
  const RunResult run = run_cpreplay(
      kProcesses, {"-o", tmp / "r.cubex", "--json", tmp / "r.json", "--timeline",
                   tmp / "t.json", "--timeline-max-events", "20000", "--overview", tmp / "o.svg",
                   anchor()},
      600);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(mangled_line(run.out), "") << run.out;
  EXPECT_EQ(mangled_line(read_file(tmp / "r.json")), "");
  EXPECT_EQ(mangled_line(read_file(tmp / "t.json")), "");
  EXPECT_EQ(mangled_line(read_file(tmp / "o.svg")), "");

  // The report: Cube's name demangled, the trace's name in mangled_name, as Score-P writes a
  // region it could demangle.
  const CubeFile cube = read_cube(tmp / "r.cubex");
  ASSERT_EQ(cube.region_names.size(), cube.region_mangled_names.size());
  std::size_t demangled = 0;
  for (std::size_t r = 0; r < cube.region_names.size(); ++r) {
    EXPECT_FALSE(looks_mangled(cube.region_names[r])) << cube.region_names[r];
    EXPECT_EQ(cube.region_names[r], demangle(cube.region_mangled_names[r]));
    demangled += cube.region_names[r] != cube.region_mangled_names[r];
  }
  EXPECT_GT(demangled, 10u);
  const bool lulesh = GetParam() == "lulesh-8x2";
  const std::string name = lulesh ? "LagrangeLeapFrog(Domain&)"
                                  : "exchange_externals(HPC_Sparse_Matrix_STRUCT*, double const*)";
  const std::string mangled = lulesh ? "_ZL16LagrangeLeapFrogR6Domain"
                                     : "_Z18exchange_externalsP24HPC_Sparse_Matrix_STRUCTPKd";
  bool found = false;
  for (std::size_t r = 0; r < cube.region_names.size(); ++r)
    found = found || (cube.region_names[r] == name && cube.region_mangled_names[r] == mangled);
  EXPECT_TRUE(found) << name;
}

// Issue 33, item 1: no two rows of a summary table, nor two entries of the overview's legend,
// read the same; LULESH's parallel regions keep their line numbers.
TEST_P(RealTrace, Names_TableRowsAndLegendReadApart) {
  TempDir tmp;
  const RunResult run = run_cpreplay(
      kProcesses, {"-o", tmp / "r.cubex", "--overview", tmp / "o.svg", anchor()}, 600);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string svg = read_file(tmp / "o.svg");
  // Every table's rows read apart; LULESH's parallel regions keep their line numbers.
  for (const char* header : {"  call path                        on path   share",
                             "  call path                        on path imbalance"}) {
    const std::vector<std::string> cells = table_paths(run.out, header);
    EXPECT_GE(cells.size(), 5u) << header << "\n" << run.out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      for (std::size_t k = i + 1; k < cells.size(); ++k)
        EXPECT_NE(cells[i], cells[k]) << run.out;
      const std::size_t at = cells[i].find(" @lulesh.cc:");
      if (at != std::string::npos) {
        EXPECT_NE(cells[i].find_first_of("0123456789", at), std::string::npos) << cells[i];
      }
    }
  }
  // The legend's call paths, too.
  std::vector<std::string> legend;
  for (std::size_t at = svg.find("<g class=\"legend\">"); at != std::string::npos;) {
    at = svg.find("<text", at + 1);
    if (at == std::string::npos) break;
    const std::size_t open = svg.find('>', at) + 1;
    legend.push_back(svg.substr(open, svg.find("</text>", open) - open));
  }
  EXPECT_GE(legend.size(), 5u);
  for (std::size_t i = 0; i < legend.size(); ++i)
    for (std::size_t k = i + 1; k < legend.size(); ++k) EXPECT_NE(legend[i], legend[k]);
}

// Issue 33, item 5: at the defaults the timeline of every real trace stays under 50 MB (it was
// 284 MB for hpccg-4u: every event repeated its call path's text), in fact near 12 MB at most
// (the default cap of 100,000 events, which speedscope opens in seconds); each call path is written
// once, as a stack frame, and the file passes the strict checker. Gzip-compressed, it is at
// most a sixth of that.
TEST_P(RealTrace, Timeline_DefaultUnder50MBCallPathsOnce) {
  TempDir tmp;
  const RunResult run = run_cpreplay(
      kProcesses, {"-q", "--no-what-if", "-o", tmp / "r.cubex", "--timeline", tmp / "t.json",
                   anchor()},
      600);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::uintmax_t bytes = fs::file_size(tmp / "t.json");
  EXPECT_LT(bytes, 50u * 1000 * 1000);
  EXPECT_LT(bytes, 13u * 1000 * 1000);
  const RunResult check = run_command(
      {"/usr/bin/python3",
       (fs::path(__FILE__).parent_path().parent_path() / "support" / "check_views.py").string(),
       "timeline", tmp / "t.json"},
      600);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const Json facts = parse_json(check.out);
  const double written = facts["otherData"]["events_written"].number;
  EXPECT_LE(written, 100000.0);  // the default --timeline-max-events
  EXPECT_LT(static_cast<double>(bytes) / written, 135.0);  // bytes per event, names included
  // The whole call path's text appears once, in stackFrames: no event carries it.
  const std::string text = read_file(tmp / "t.json");
  EXPECT_EQ(text.find("\"path\":"), std::string::npos);
  EXPECT_NE(text.find("\"stackFrames\":{"), std::string::npos);

  const RunResult gz = run_cpreplay(
      kProcesses, {"-q", "--no-what-if", "-o", tmp / "r.cubex", "--timeline",
                   tmp / "t.json.gz", anchor()},
      600);
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_LT(fs::file_size(tmp / "t.json.gz"), bytes / 6);
}

INSTANTIATE_TEST_SUITE_P(Shared, RealTrace,
                         ::testing::Values("hpccg-4", "hpccg-4u", "lulesh-8x2"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace cpreplay::testing
