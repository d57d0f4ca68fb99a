// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: clock-condition violations are counted as Scalasca counts them, and
// --time-correct removes them without changing the critical path of the unskewed twin.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"

namespace cpreplay::testing {
namespace {

Json analyze(const TempDir& dir, const std::string& trace, std::vector<std::string> extra,
             RunResult* run_out = nullptr) {
  std::vector<std::string> args = {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(trace);
  const RunResult run = run_cpreplay(4, args);
  if (run_out) *run_out = run;
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return read_json_file(dir / "s.json");
}

// The late-sender ring of simtrace.py with rank 1's clock 3 ms ahead: Scalasca 2.6 counts 11
// violations, 5 point-to-point and 6 collective.
class SkewedRing : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run_mktrace({"late-sender", dir_ / "skew", "--ranks", "4", "--iters", "5",
                           "--skew", "1:3000000"}).exit_code, 0);
    ASSERT_EQ(run_mktrace({"late-sender", dir_ / "twin", "--ranks", "4", "--iters", "5"})
                  .exit_code, 0);
  }
  TempDir dir_;
};

TEST_F(SkewedRing, Uncorrected_CountsElevenViolationsLikeScalasca) {
  RunResult run;
  const Json s = analyze(dir_, dir_ / "skew/traces.otf2", {}, &run);
  EXPECT_EQ(s["clock_violations"]["point_to_point"].number, 5);
  EXPECT_EQ(s["clock_violations"]["collective"].number, 6);
  // One warning line on stderr that says what to do.
  EXPECT_NE(run.err.find("cpreplay: warning: 11 clock-condition violations (5 point-to-point, "
                         "6 collective); rerun with --time-correct"),
            std::string::npos)
      << run.err;
}

TEST_F(SkewedRing, TimeCorrect_RemovesViolationsAndKeepsCriticalPath) {
  const Json twin = analyze(dir_, dir_ / "twin/traces.otf2", {});
  EXPECT_EQ(twin["clock_violations"]["point_to_point"].number, 0);
  EXPECT_EQ(twin["clock_violations"]["collective"].number, 0);
  const Json fixed = analyze(dir_, dir_ / "skew/traces.otf2", {"--time-correct"});
  EXPECT_EQ(fixed["clock_violations"]["point_to_point"].number, 0);
  EXPECT_EQ(fixed["clock_violations"]["collective"].number, 0);
  EXPECT_TRUE(fixed["time_correction"]["applied"].boolean);
  EXPECT_TRUE(fixed["time_correction"]["consistent"].boolean);
  EXPECT_EQ(fixed["time_correction"]["moved_ranks"].number, 1);
  // Rank 1's 48 events move back by almost the 3 ms skew (the 2 us message latency is slack).
  EXPECT_EQ(fixed["time_correction"]["moved_events"].number, 48);
  EXPECT_NEAR(fixed["time_correction"]["max_shift_s"].number, 3e-3, 5e-6);
  const double a = fixed["critical_path_length_s"].number;
  const double b = twin["critical_path_length_s"].number;
  EXPECT_LT(std::fabs(a - b), 0.01 * b) << a << " vs " << b;
}

TEST_F(SkewedRing, TimeCorrect_OnCleanTraceMovesNothing) {
  const Json s = analyze(dir_, dir_ / "twin/traces.otf2", {"--time-correct"});
  EXPECT_EQ(s["time_correction"]["moved_events"].number, 0);
  EXPECT_EQ(s["time_correction"]["max_shift_s"].number, 0);
}

}  // namespace
}  // namespace cpreplay::testing
