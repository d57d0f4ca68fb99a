// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: a rank that died mid-run; refused with a hint, analyzed up to the cut with
// --partial.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

// rank 0: Init [0,1], work [1,3], MPI_Send [3,3.1] to 1, work [3.1,8], Finalize [8,9], ends 9.
// rank 1: Init [0,1], MPI_Recv [1,3.2] from 0, enters work2 at 3.2 and dies: no more events.
// leave_work2: rank 1 leaves work2 at 5 (its last event), for the tests that cut it off.
void crashed_run(const std::string& dir, bool leave_work2 = false) {
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
  }
  w.region(0, "work", 1.0, 3.0);
  w.send(0, 3.0, 3.1, 1, 5, 8);
  w.region(0, "work", 3.1, 8.0);
  w.finalize(0, 8.0, 9.0);
  w.leave(0, 9.0, "main");
  w.program_end(0, 9.0);
  w.recv(1, 1.0, 3.2, 0, 5, 8);
  w.enter(1, 3.2, "work2");
  if (leave_work2) w.leave(1, 5.0, "work2");
  w.write(dir);
}

/// crashed_run's rank 1 written up to its Leave of work2 at 5, its event file then cut inside
/// that last record (3 bytes before the end: the end-of-file record, the byte after it and at
/// least one byte of the Leave are gone): the rank died while writing.
std::string cut_run(const std::string& dir) {
  crashed_run(dir, true);
  const std::string evt = dir + "/traces/1.evt";
  std::filesystem::resize_file(evt, std::filesystem::file_size(evt) - 3);
  return evt;
}

TEST(Partial, CrashedRankWithoutOption_RefusedWithHint) {
  TempDir dir;
  crashed_run(dir / "t");
  const RunResult run = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("rank 1: events end after"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--partial"), std::string::npos) << run.err;
  EXPECT_FALSE(file_exists(dir / "r.cubex"));
}

// The cut is rank 1's last event, t = 3.2: rank 0 loses Leave work, Finalize's Enter/Leave,
// Leave main and ProgramEnd (5 events); work, main and sim.exe on rank 0 and work2, main and
// sim.exe on rank 1 are closed at 3.2 (6 regions); the message arrived before the cut.
// Late Sender on rank 1: 3 - 1 = 2. The critical path starts at the end of rank 1's events:
// MPI_Recv keeps 2.2 - 2 = 0.2, then the sender: MPI_Init 1 and work 2 (to the send's Enter).
void expect_crashed_run_values(const TempDir& dir, const RunResult& run) {
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CubeFile cube = read_cube(dir / "r.cubex");
  EXPECT_EQ(cube.attributes.at("cpreplay::partial"), "true");
  EXPECT_EQ(cube.attributes.at("cpreplay::partial_first_rank_to_stop"), "1");
  EXPECT_NEAR(cube.value("time", "sim.exe", 0), 3.2, 1e-9);
  EXPECT_NEAR(cube.value("time", "sim.exe", 1), 3.2, 1e-9);
  EXPECT_NEAR(cube.value("time", "sim.exe/main/work", 0), 2.1, 1e-9);  // [1,3] + [3.1,3.2]
  EXPECT_NEAR(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 1), 2.0, 1e-9);
  EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/MPI_Recv", 1), 0.2, 1e-9);
  EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/MPI_Init", 0), 1.0, 1e-9);
  EXPECT_NEAR(cube.value("critical_path", "sim.exe/main/work", 0), 2.0, 1e-9);
  EXPECT_EQ(cube.value("visits", "sim.exe/main/MPI_Finalize", 0), 0.0);
  // Root causes up to the cut: the Late Sender's 2 s are caused by rank 0's work [1,3] against
  // rank 1's nothing since MPI_Init (the synchronization before); nothing propagates further.
  EXPECT_NEAR(cube.value("delay_latesender", "sim.exe/main/work", 0), 2.0, 1e-9);
  EXPECT_NEAR(cube.value("mpi_wait_propagating_ls", "sim.exe/main/MPI_Recv", 1), 0.0, 1e-9);

  const Json s = read_json_file(dir / "s.json");
  EXPECT_TRUE(s["partial"]["applied"].boolean);
  EXPECT_EQ(s["partial"]["first_rank_to_stop"].number, 1);
  EXPECT_EQ(s["partial"]["incomplete_ranks"].number, 1);
  EXPECT_EQ(s["partial"]["events_cut"].number, 5);
  EXPECT_EQ(s["partial"]["regions_closed"].number, 6);
  EXPECT_EQ(s["partial"]["unmatched_messages"].number, 0);
  EXPECT_NEAR(s["critical_path_length_s"].number, 3.2, 1e-9);
  EXPECT_NE(run.out.find("PARTIAL: rank 1 stopped mid-run"), std::string::npos) << run.out;
}

TEST(Partial, CrashedRank_AnalyzedUpToTheCut) {
  TempDir dir;
  crashed_run(dir / "t");
  expect_crashed_run_values(
      dir, run_cpreplay(2, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", "--partial",
                            dir / "t/traces.otf2"}));
}

// An event file cut inside a record (libotf2 would read past its end): refused with where it
// ends and the hint, at every process count.
TEST(Partial, EventFileCutMidRecordWithoutOption_RefusedWithHint) {
  TempDir dir;
  const std::string evt = cut_run(dir / "t");
  const std::string size = std::to_string(std::filesystem::file_size(evt));
  for (const int np : {2, 1}) {
    const RunResult run = run_cpreplay(np, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
    EXPECT_EQ(run.exit_code, 1) << np;
    EXPECT_NE(run.err.find("cpreplay: error: " + (dir / "t/traces.otf2") +
                           ": rank 1: event file " + evt + " is cut short after "),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find(" events (it ends inside a record, at " + size +
                           " bytes; --partial analyzes the events before the cut)"),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
}

// With --partial, the events before the cut are the crashed run's: the same values.
TEST(Partial, EventFileCutMidRecord_AnalyzedUpToTheCut) {
  TempDir dir;
  cut_run(dir / "t");
  expect_crashed_run_values(
      dir, run_cpreplay(2, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json", "--partial",
                            dir / "t/traces.otf2"}));
}

// A complete trace is untouched by --partial.
TEST(Partial, CompleteTrace_NothingCut) {
  TempDir dir;
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 1.0);
    w.finalize(r, 2.0, 3.0);
    w.leave(r, 3.0, "main");
    w.program_end(r, 3.0);
  }
  w.write(dir / "t");
  const RunResult run = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", "--json", dir / "s.json",
                                         "--partial", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(read_json_file(dir / "s.json")["partial"]["applied"].boolean);
  EXPECT_EQ(read_cube(dir / "r.cubex").attributes.count("cpreplay::partial"), 0u);
}

}  // namespace
}  // namespace cpreplay::testing
