// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the critical-path paper's synthetic benchmark (§IV-A; ../shared/conformance/
// imbalance-*): critical-path imbalance finds the 25 % runtime loss of static, dynamic and mixed
// imbalance alike, while a profile's max - avg finds 25 %, ~0 and less than half of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "tests/support/cube_reader.hpp"
#include "tests/support/run_cpreplay.hpp"

namespace cpreplay::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 8;
constexpr const char* kWork = "sim.exe/main/work";

/// ../shared next to the repository, found from this source file (tests/e2e/ -> repo -> parent).
fs::path scenario_dir(const std::string& name) {
  return fs::path(__FILE__).parent_path() / "../../../shared/conformance" / name;
}

/// `work` in one scenario, as fractions of the average work time per rank.
struct WorkImbalance {
  double average = 0.0;            ///< inclusive time of work summed over ranks / 8 (seconds)
  double critical_path_imbalance = 0.0;  ///< its critical_path_imbalance summed over ranks / avg
  double profile_max_minus_avg = 0.0;    ///< (max over ranks of its time - avg) / avg
};

WorkImbalance analyze(const std::string& scenario) {
  const fs::path dir = scenario_dir(scenario);
  TempDir tmp;
  const RunResult run =
      run_cpreplay(kRanks, {"-q", "-o", tmp / "r.cubex", (dir / "traces.otf2").string()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const CubeFile cube = read_cube(tmp / "r.cubex");
  WorkImbalance out;
  double sum = 0.0, max = 0.0, cpi = 0.0;
  for (int r = 0; r < kRanks; ++r) {
    const double t = cube.value("time", kWork, r);
    sum += t;
    max = std::max(max, t);
    cpi += cube.value("critical_path_imbalance", kWork, r);
  }
  out.average = sum / kRanks;
  EXPECT_GT(out.average, 0.0) << scenario << ": no time in " << kWork;
  if (out.average <= 0.0) return out;
  out.critical_path_imbalance = cpi / out.average;
  out.profile_max_minus_avg = (max - out.average) / out.average;
  return out;
}

#define SKIP_WITHOUT(scenario)                                                      \
  if (!fs::exists(scenario_dir(scenario) / "traces.otf2"))                          \
  GTEST_SKIP() << scenario_dir(scenario).string() << " is absent"

// Every rank works the same each iteration: nothing to find. The simulated trace has a few µs
// of jitter (critical_path_imbalance 1.5e-5 s of 2 s, 0.0008 %), hence 0.01 % as "zero".
TEST(SyntheticImbalance, Balanced_NoImbalanceAnywhere) {
  SKIP_WITHOUT("imbalance-balanced");
  const WorkImbalance w = analyze("imbalance-balanced");
  EXPECT_NEAR(w.critical_path_imbalance, 0.0, 1e-4);
  EXPECT_NEAR(w.profile_max_minus_avg, 0.0, 1e-4);
}

// One rank is always the slow one (+25 %): the profile sees it as well as the critical path.
TEST(SyntheticImbalance, Static_BothFind25Percent) {
  SKIP_WITHOUT("imbalance-static");
  const WorkImbalance w = analyze("imbalance-static");
  EXPECT_NEAR(w.critical_path_imbalance, 0.25, 0.005);
  EXPECT_NEAR(w.profile_max_minus_avg, 0.25, 0.005);
}

// The slow rank changes every iteration, so every rank's total is the same: the profile sees
// nothing, the critical path still finds the 25 %.
TEST(SyntheticImbalance, Dynamic_OnlyTheCriticalPathFinds25Percent) {
  SKIP_WITHOUT("imbalance-dynamic");
  const WorkImbalance w = analyze("imbalance-dynamic");
  EXPECT_NEAR(w.critical_path_imbalance, 0.25, 0.005);
  EXPECT_LT(std::abs(w.profile_max_minus_avg), 0.005);
}

// Static and dynamic mixed: the profile sees some of it (well above the jitter, well below
// half of the 25 %), the critical path all of it.
TEST(SyntheticImbalance, Mixed_ProfileFindsLessThanHalf) {
  SKIP_WITHOUT("imbalance-mixed");
  const WorkImbalance w = analyze("imbalance-mixed");
  EXPECT_NEAR(w.critical_path_imbalance, 0.25, 0.005);
  EXPECT_GT(w.profile_max_minus_avg, 0.005);
  EXPECT_LT(w.profile_max_minus_avg, 0.125);
}

}  // namespace
}  // namespace cpreplay::testing
