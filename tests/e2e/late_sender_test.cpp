// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: a hand-timed Late Sender scenario, analyzed by `mpirun cpreplay`, read back.
#include <gtest/gtest.h>

#include "tests/support/cube_reader.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing {
namespace {

// Rank 1 enters MPI_Recv at t=1; rank 0 enters MPI_Send at t=3, so Late Sender is 2 s at
// sim.exe/main/MPI_Recv on rank 1 (scalasca-metrics.md §5.1).
TEST(LateSender, RecvPostedBeforeSend_ReportsGap) {
  TempDir dir;
  TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
  }
  w.region(0, "work", 0.5, 3.0);
  w.send(0, 3.0, 3.1, /*dest=*/1, /*tag=*/7, /*bytes=*/64);
  w.recv(1, 1.0, 3.2, /*src=*/0, /*tag=*/7, /*bytes=*/64);
  for (int r = 0; r < 2; ++r) {
    w.finalize(r, 4.0, 4.5);
    w.leave(r, 5.0, "main");
    w.program_end(r, 5.0);
  }
  w.write(dir / "t");
  const RunResult run = run_cpreplay(2, {"-q", "-o", dir / "r.cubex", dir / "t/traces.otf2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CubeFile cube = read_cube(dir / "r.cubex");
  EXPECT_NEAR(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 1), 2.0, 1e-9);
  EXPECT_EQ(cube.value("mpi_latesender", "sim.exe/main/MPI_Recv", 0), 0.0);
  EXPECT_EQ(cube.value("mpi_cls_count", "sim.exe/main/MPI_Recv", 1), 1.0);
  EXPECT_EQ(cube.value("comms_recv", "sim.exe/main/MPI_Recv", 1), 1.0);
  EXPECT_EQ(cube.value("bytes_sent", "sim.exe/main/MPI_Send", 0), 64.0);
  EXPECT_NEAR(cube.value("time", "sim.exe", 0), 5.0, 1e-9);
}

}  // namespace
}  // namespace cpreplay::testing
