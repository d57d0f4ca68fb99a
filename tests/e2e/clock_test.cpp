// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: clock-condition violations are counted as Scalasca counts them, and
// --time-correct removes them without changing the critical path of the unskewed twin.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

/// The trace's rank count, as job scripts get it.
int read_ranks(const std::string& trace) {
  const RunResult r = run_cpreplay(1, {"--count-ranks", trace});
  return r.exit_code == 0 ? std::stoi(r.out) : 1;
}

Json analyze(const TempDir& dir, const std::string& trace, std::vector<std::string> extra,
             RunResult* run_out = nullptr) {
  std::vector<std::string> args = {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(trace);
  const RunResult run = run_cpreplay(read_ranks(trace), args);
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

// Drift: rank 1 receives at 1.8 a message sent at 2.0 (its clock is behind by >= 0.2) and later
// sends at 3.5 a message rank 0 receives at 3.05 (its clock is ahead by >= 0.45): no constant
// offset fits both. Forward jumps: rank 1's receive moves to 2.0 (+0.2, its later events too,
// so its send is at 3.7); rank 0's receive moves to 3.5, then to 3.7. No violation remains.
TEST(DriftingClocks, TimeCorrect_ForwardJumpsRemoveWhatOffsetsCannot) {
  TempDir dir;
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
  }
  w.send(0, 2.0, 2.1, 1, 1, 8);
  w.recv(0, 3.0, 3.05, 1, 2, 8);
  w.recv(1, 1.5, 1.8, 0, 1, 8);
  w.send(1, 3.5, 3.6, 0, 2, 8);
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, 4.0, 5.0);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
  w.write(dir / "t");
  RunResult run;
  const Json before = analyze(dir, dir / "t/traces.otf2", {}, &run);
  EXPECT_EQ(before["clock_violations"]["point_to_point"].number, 2);
  const Json after = analyze(dir, dir / "t/traces.otf2", {"--time-correct"}, &run);
  EXPECT_EQ(after["clock_violations"]["point_to_point"].number, 0) << run.out;
  EXPECT_EQ(after["clock_violations"]["collective"].number, 0) << run.out;
  EXPECT_FALSE(after["time_correction"]["consistent"].boolean);
  EXPECT_GT(after["time_correction"]["jumped_events"].number, 0);
  EXPECT_NEAR(after["time_correction"]["max_jump_s"].number, 0.45, 1e-9);
}

}  // namespace
}  // namespace cpreplay::testing
