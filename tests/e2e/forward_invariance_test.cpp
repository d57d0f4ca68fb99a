// SPDX-License-Identifier: BSD-3-Clause
// End-to-end invariance and scale checks of the forward replay: the report does not depend on
// the collective window, and a generated ring gives hand-predictable totals at 2..8 ranks.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/e2e/scenario.hpp"
#include "tests/support/json.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";

/// Describes the first few differences between two reports' values (empty when identical).
std::string diff_values(const CubeFile& a, const CubeFile& b) {
  std::ostringstream out;
  int shown = 0;
  auto note = [&](const std::string& what) {
    if (shown++ < 10) out << what << "\n";
  };
  for (const auto& [metric, rows] : a.values) {
    const auto other = b.values.find(metric);
    if (other == b.values.end()) {
      note("metric " + metric + " only in the first report");
      continue;
    }
    for (const auto& [path, row] : rows) {
      const auto orow = other->second.find(path);
      if (orow == other->second.end()) {
        note(metric + " " + path + ": row only in the first report");
        continue;
      }
      for (std::size_t r = 0; r < row.size() && r < orow->second.size(); ++r)
        if (row[r] != orow->second[r]) {
          std::ostringstream v;
          v.precision(17);
          v << metric << " " << path << " rank " << r << ": " << row[r] << " vs "
            << orow->second[r];
          note(v.str());
        }
    }
    for (const auto& [path, row] : other->second)
      if (rows.count(path) == 0) note(metric + " " + path + ": row only in the second report");
  }
  for (const auto& [metric, rows] : b.values)
    if (a.values.count(metric) == 0) note("metric " + metric + " only in the second report");
  return out.str();
}

/// 4 ranks, 12 iterations, every collective kind on MPI_COMM_WORLD plus Allreduce on two
/// sub-communicators ({0, 2} and {3, 1}), a Late Sender pair, an unanalyzed Alltoallv and a
/// partial-overlap Allgather.
/// Begin times are shuffled per rank and iteration by small deterministic offsets, so that
/// every wait-state metric is non-zero and every instance has a different latest rank.
TraceWriter mixed_trace() {
  constexpr int kRanks = 4, kIterations = 12;
  TraceWriter w(kRanks);
  const int even = w.add_comm({0, 2}, "even");
  const int odd = w.add_comm({3, 1}, "odd");
  scenario::open_all(w);
  for (int k = 0; k < kIterations; ++k) {
    const double t = 20.0 * k + 1.0;
    for (int r = 0; r < kRanks; ++r) {
      auto jitter = [&](int a, int m) { return 0.1 * ((a * r + k) % m); };
      const double late_end = 0.02 * ((r + 2 * k) % 4);  // completions differ per rank
      w.collective(r, "MPI_Barrier", t + jitter(3, 4), t + 1.0 + late_end, CollOpT::Barrier, 0,
                   0);
      w.collective(r, "MPI_Allreduce", t + 1.1 + jitter(1, 4), t + 2.0 + late_end,
                   CollOpT::Allreduce, 8, 8);
      const int root = k % kRanks;
      w.collective(r, "MPI_Bcast", t + 2.1 + jitter(5, 3), t + 3.0, CollOpT::Bcast,
                   r == root ? 64 * (kRanks - 1) : 0, r == root ? 0 : 64, 0, root);
      const int sink = (k + 1) % kRanks;
      w.collective(r, "MPI_Reduce", t + 3.1 + jitter(2, 4), t + 4.0, CollOpT::Reduce, 8,
                   r == sink ? 8 * kRanks : 0, 0, sink);
      w.collective(r, "MPI_Scan", t + 4.1 + jitter(3, 4), t + 5.0, CollOpT::Scan, 8, 8);
      w.collective(r, "MPI_Allreduce", t + 5.1 + jitter(1, 2), t + 6.0 + late_end,
                   CollOpT::Allreduce, 8, 8, r % 2 == 0 ? even : odd);
      if (r % 2 == 0)
        w.send(r, t + 6.1 + 0.1 * (k % 3), t + 6.5, r + 1, k, 16);
      else
        w.recv(r, t + 6.2, t + 6.6, r - 1, k, 16);
      w.collective(r, "MPI_Alltoallv", t + 7.0 + jitter(1, 3), t + 7.5, CollOpT::Alltoallv, 32,
                   32);
      // Partial overlap: rank 3 sends nothing and enters after the others left.
      if (r < 3)
        w.collective(r, "MPI_Allgather", t + 8.0 + jitter(1, 3), t + 8.5 + late_end,
                     CollOpT::Allgather, 8, 32);
      else
        w.collective(r, "MPI_Allgather", t + 8.6, t + 8.7, CollOpT::Allgather, 0, 32);
    }
  }
  scenario::close_all(w, 20.0 * kIterations + 2.0);
  return w;
}

// The same trace analyzed with --window 1, --window 3 and the default window (4096) must give
// bit-identical values for every metric, call path and rank (STYLE.md §3: results do not depend
// on the batch size). The default report must also have every forward wait state non-zero, so
// the comparison is not vacuous.
TEST(Invariance, CollectiveWindowSize_IdenticalReports) {
  TempDir dir;
  const TraceWriter w = mixed_trace();
  const CubeFile base = scenario::analyze(w, dir, {}, "default");
  const CubeFile one = scenario::analyze(w, dir, {"--window", "1"}, "w1");
  const CubeFile three = scenario::analyze(w, dir, {"--window", "3"}, "w3");
  EXPECT_EQ(diff_values(base, one), "");
  EXPECT_EQ(diff_values(base, three), "");
  EXPECT_TRUE(base.values == one.values);
  EXPECT_TRUE(base.values == three.values);
  EXPECT_EQ(base.callpaths, one.callpaths);
  for (const char* metric : {"mpi_barrier_wait", "mpi_barrier_completion", "mpi_wait_nxn",
                             "mpi_nxn_completion", "mpi_latebroadcast", "mpi_earlyreduce",
                             "mpi_earlyscan", "mpi_latesender"})
    EXPECT_GT(scenario::total(base, metric), 0.0) << metric;
  EXPECT_GT(scenario::total(base, "mpi_wait_nxn"), 0.0);
  EXPECT_GT(at(base, "mpi_wait_nxn", kMain + "/MPI_Allgather", 0) +
                at(base, "mpi_wait_nxn", kMain + "/MPI_Allgather", 1) +
                at(base, "mpi_wait_nxn", kMain + "/MPI_Allgather", 2),
            0.0);
  EXPECT_EQ(at(base, "mpi_wait_nxn", kMain + "/MPI_Allgather", 3), 0.0);
  // Per iteration: 2 Allreduce, Scan, Alltoallv on 4 ranks, the Reduce root (8 out, 32 in) and
  // the Allgather on ranks 0-2 (rank 3 only receives).
  EXPECT_EQ(scenario::total(base, "comms_cxch"), 12.0 * (4 * 4 + 1 + 3));
}

// --time-correct must leave a trace alone where no clock condition is violated. The mixed trace
// has an Allgather that rank 3 enters after ranks 0-2 have left (rank 3 only receives, so they
// need not wait for it) and collectives without payload: neither orders the ranks' clocks, just
// as neither counts as a violation. Nothing may move and the values must stay the same.
TEST(Invariance, TimeCorrect_NoViolations_MovesNothing) {
  TempDir dir;
  const TraceWriter w = mixed_trace();
  RunResult run;
  const CubeFile plain = scenario::analyze(w, dir, {"--json", dir / "p.json"}, "plain");
  const CubeFile corrected =
      scenario::analyze(w, dir, {"--time-correct", "--json", dir / "c.json"}, "tc", &run);
  const Json p = read_json_file(dir / "p.json");
  const Json c = read_json_file(dir / "c.json");
  EXPECT_EQ(p["clock_violations"]["collective"].number, 0);
  EXPECT_EQ(p["clock_violations"]["point_to_point"].number, 0);
  EXPECT_EQ(c["time_correction"]["moved_events"].number, 0) << run.err;
  EXPECT_EQ(c["time_correction"]["jumped_events"].number, 0);
  EXPECT_EQ(diff_values(plain, corrected), "");
}

// Analyzes a cpreplay-mktrace scenario twice: streamed (the default route, with a window of 2)
// and stored (--time-correct, whose clock correction keeps the tables; a simulated trace needs
// no correction, so nothing moves). Both reports must hold identical values; returns the
// streamed one.
CubeFile streamed_equals_stored(const TempDir& dir, const std::string& kind, int ranks) {
  EXPECT_EQ(run_mktrace({kind, dir / "t", "--ranks", std::to_string(ranks), "--iters", "8"})
                .exit_code,
            0);
  const std::string trace = dir / "t/traces.otf2";
  const RunResult streamed =
      run_cpreplay(ranks, {"-q", "--window", "2", "-o", dir / "streamed.cubex", trace});
  const RunResult stored = run_cpreplay(
      ranks, {"-q", "--time-correct", "-o", dir / "stored.cubex", "--json", dir / "s.json", trace});
  EXPECT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_EQ(read_json_file(dir / "s.json")["time_correction"]["moved_events"].number, 0);
  const CubeFile a = read_cube(dir / "streamed.cubex");
  const CubeFile b = read_cube(dir / "stored.cubex");
  EXPECT_EQ(diff_values(a, b), "");
  EXPECT_TRUE(a.values == b.values);
  return a;
}

// Collective timings reach the wait-state pass window by window by default, and through the
// stored table with --time-correct.
TEST(Invariance, StreamedAndStoredCollectiveTimings_IdenticalReports) {
  TempDir dir;
  const CubeFile a = streamed_equals_stored(dir, "collectives", 5);
  EXPECT_GT(scenario::total(a, "mpi_wait_nxn") + scenario::total(a, "mpi_barrier_wait"), 0.0);
}

// Matched messages likewise: round by round into the wait-state pass by default, through the
// stored table with --time-correct. Blocking send/receive pairs with a new tag every iteration
// (late-sender) and Isend/Irecv halos completed in MPI_Waitall (nonblocking).
TEST(Invariance, StreamedAndStoredMessages_IdenticalReports) {
  {
    TempDir dir;
    const CubeFile a = streamed_equals_stored(dir, "late-sender", 4);
    EXPECT_EQ(scenario::total(a, "comms_recv"), 4.0 * 8);  // one message per rank and iteration
    EXPECT_GT(scenario::total(a, "mpi_latesender"), 0.0);
  }
  {
    TempDir dir;
    const CubeFile a = streamed_equals_stored(dir, "nonblocking", 4);
    EXPECT_EQ(scenario::total(a, "comms_recv"), 2.0 * 4 * 8);  // two per rank and iteration
  }
}

/// A token ring of P ranks, K rounds: at step j (0 <= j < K*P) rank s = j mod P sends to
/// d = (j + 1) mod P in MPI_Send [2j + 2, 2j + 2.1], and d waits in MPI_Recv [2j + 1, 2j + 2.2].
/// Each rank's events stay in time order: its send at step j follows its receive at step j - 1
/// (left at 2j + 0.2), and its next receive (step j + P - 1, entered 2j + 2P - 1) follows the send.
/// Then MPI_Barrier entered at B + 0.5 r and left at B + 0.5 P, with B = 2KP + 1.
TraceWriter ring_trace(int ranks, int rounds) {
  TraceWriter w(ranks);
  scenario::open_all(w);
  for (int j = 0; j < rounds * ranks; ++j) {
    const int s = j % ranks, d = (j + 1) % ranks;
    w.send(s, 2.0 * j + 2.0, 2.0 * j + 2.1, d, 0, 1024);
    w.recv(d, 2.0 * j + 1.0, 2.0 * j + 2.2, s, 0, 1024);
  }
  const double b = 2.0 * rounds * ranks + 1.0;
  for (int r = 0; r < ranks; ++r)
    w.collective(r, "MPI_Barrier", b + 0.5 * r, b + 0.5 * ranks, CollOpT::Barrier, 0, 0);
  scenario::close_all(w, b + 0.5 * ranks + 1.0);
  return w;
}

class Ring : public ::testing::TestWithParam<int> {};

// Every receive is posted exactly 1 s before its sender enters MPI_Send (es - er = 1, and
// lr = es + 0.2 does not clip): LS = 1 s per receive, K = 3 receives per rank -> 3 s and
// mpi_cls_count = 3 on every rank at sim.exe/main/MPI_Recv; total P * K. One sender per
// receiver, in send order: no wrong order. Sends enter after the receive was posted: no LR.
// Barrier: L = B + 0.5 (P - 1), so mpi_barrier_wait = 0.5 (P - 1 - r); all leave together:
// completion 0.
TEST_P(Ring, EverySendOneSecondLate_OneSecondPerReceive) {
  const int ranks = GetParam();
  constexpr int kRounds = 3;
  TempDir dir;
  const CubeFile cube = scenario::analyze(ring_trace(ranks, kRounds), dir);
  const std::string recv = kMain + "/MPI_Recv", send = kMain + "/MPI_Send",
                    barrier = kMain + "/MPI_Barrier";
  for (int r = 0; r < ranks; ++r) {
    EXPECT_NEAR(at(cube, "mpi_latesender", recv, r), 1.0 * kRounds, kTol) << "rank " << r;
    EXPECT_EQ(at(cube, "mpi_cls_count", recv, r), kRounds) << "rank " << r;
    EXPECT_EQ(at(cube, "comms_recv", recv, r), kRounds) << "rank " << r;
    EXPECT_EQ(at(cube, "comms_send", send, r), kRounds) << "rank " << r;
    EXPECT_EQ(at(cube, "bytes_rcvd", recv, r), 1024.0 * kRounds) << "rank " << r;
    EXPECT_NEAR(at(cube, "mpi_barrier_wait", barrier, r), 0.5 * (ranks - 1 - r), kTol)
        << "rank " << r;
    EXPECT_EQ(at(cube, "mpi_barrier_completion", barrier, r), 0.0) << "rank " << r;
  }
  EXPECT_NEAR(scenario::total(cube, "mpi_latesender"), 1.0 * kRounds * ranks, kTol);
  EXPECT_EQ(scenario::total(cube, "mpi_latesender_wo"), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Ring, ::testing::Values(2, 3, 5, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "P" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace cpreplay::testing
