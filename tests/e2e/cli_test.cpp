// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: the command-line surface (help, version, rank count for job scripts).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/scenario.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

#ifndef CPREPLAY_EXE_PATH
#define CPREPLAY_EXE_PATH ""
#endif

namespace cpreplay::testing {
namespace {

void small_trace(int ranks, const std::string& dir) {
  TraceWriter w(ranks);
  for (int r = 0; r < ranks; ++r) {
    scenario::begin_rank(w, r);
    w.finalize(r, 0.2, 0.3);
    w.leave(r, 0.3, "main");
    w.program_end(r, 0.3);
  }
  w.write(dir);
}

TEST(Cli, Help_PrintsUsageOptionsAndExample) {
  const RunResult r = run_cpreplay(1, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: mpirun -np N cpreplay"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--output"), std::string::npos);
  EXPECT_NE(r.out.find("Example:"), std::string::npos);
}

TEST(Cli, Version_PrintsName) {
  const RunResult r = run_cpreplay(1, {"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("cpreplay ", 0), 0u) << r.out;
}

TEST(Cli, UnknownOption_ExitsTwoWithOneLine) {
  const RunResult r = run_cpreplay(1, {"--no-such-option", "x.otf2"});
  EXPECT_EQ(r.exit_code, 2);
  // Our message is the first line and appears once; mpirun may add its own exit banner after it.
  EXPECT_EQ(r.err.rfind("cpreplay: error: unrecognised option '--no-such-option'", 0), 0u)
      << r.err;
  EXPECT_EQ(r.err.find("cpreplay: error:"), r.err.rfind("cpreplay: error:")) << r.err;
}

// A window of 0 would never advance: refused before any work (it used to hang).
TEST(Cli, WindowZero_ExitsTwoWithOneLine) {
  TempDir dir;
  small_trace(2, dir / "t");
  const RunResult r = run_cpreplay(2, {"--window", "0", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("cpreplay: error: --window must be at least 1", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "r.cubex"));
}

TEST(Cli, CountRanks_PrintsTheTracesRankCount) {
  TempDir dir;
  small_trace(3, dir / "t");
  // One process suffices: job scripts call it before they know how many to start.
  const RunResult r = run_cpreplay(1, {"--count-ranks", dir / "t/traces.otf2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "3\n");
  EXPECT_EQ(r.err, "");
}

// The events the definitions announce, for sizing a job with fewer processes than ranks: the
// example has 4 ranks of 168 events (ProgramBegin/End, main, MPI_Init and MPI_Finalize: 8;
// 10 iterations of compute 2, MPI_Send 3, MPI_Recv 3, MPI_Allreduce 4, MPI_Barrier 4).
TEST(Cli, CountEvents_PrintsTheAnnouncedEventCount) {
  TempDir dir;
  ASSERT_EQ(run_mktrace({"example", dir / "t"}).exit_code, 0);
  const RunResult r = run_cpreplay(1, {"--count-events", dir / "t/traces.otf2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "672\n");
  EXPECT_EQ(r.err, "");
  // With --count-ranks: the ranks first, printed once whatever the process count.
  const RunResult both =
      run_cpreplay(2, {"--count-events", "--count-ranks", dir / "t/traces.otf2"});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.out, "4\n672\n");
  // No trace: the usual one-line usage error.
  const RunResult none = run_cpreplay(1, {"--count-events"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err.rfind("cpreplay: error: no trace given", 0), 0u) << none.err;
}

TEST(Cli, DefaultOutput_IsNextToTheAnchor) {
  TempDir dir;
  small_trace(2, dir / "t");
  const RunResult r = run_cpreplay(2, {"-q", dir / "t/traces.otf2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(file_exists(dir / "t/cpreplay.cubex"));
  EXPECT_NE(r.out.find("report " + (dir / "t/cpreplay.cubex")), std::string::npos) << r.out;
}

// Traces with several threads per process are analyzed (issue 17) by every stage: no note, no
// warning.
TEST(Cli, ThreadedTrace_AnalyzedWithoutNote) {
  TempDir dir;
  TraceWriter w(2);
  w.set_threads_per_process(2);
  for (int r = 0; r < 2; ++r) {
    scenario::begin_rank(w, r);
    w.finalize(r, 0.2, 0.3);
    w.leave(r, 0.3, "main");
    w.program_end(r, 0.3);
  }
  w.write(dir / "t");
  const RunResult r = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(file_exists(dir / "r.cubex"));
}

}  // namespace
}  // namespace cpreplay::testing
