// SPDX-License-Identifier: BSD-3-Clause
// What users see on the traces of real applications in ../shared/real (Score-P recordings of
// HPCCG and LULESH, issue 33): job sizing, names, and the views. Skips when ../shared/real is
// absent.
#include <gtest/gtest.h>

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
