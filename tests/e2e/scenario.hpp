// SPDX-License-Identifier: BSD-3-Clause
// Shared frame of the forward-replay end-to-end scenarios: quiet prologue/epilogue, one analysis
// run, and a value lookup that refuses misspelt metrics and call paths.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/cube_reader.hpp"
#include "tests/support/run_cpreplay.hpp"
#include "tests/support/trace_writer.hpp"

namespace cpreplay::testing::scenario {

/// Seconds; the trace stores integer nanoseconds, so hand-computed values are exact to ~1e-15.
inline constexpr double kTol = 1e-9;

/// Every rank: ProgramBegin and Enter `main` at 0, MPI_Init [0, 0.5]. All ranks enter and leave
/// MPI_Init together, so mpi_init_completion = 0 (scalasca-metrics.md §4).
inline void open_all(TraceWriter& w) {
  for (int r = 0; r < w.ranks(); ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.5);
  }
}

/// One rank: ProgramBegin and Enter `main` at 0, MPI_Init [0, 0.1]; the caller goes on (the
/// OpenMP scenarios fork after it).
inline void begin_rank(TraceWriter& w, int r) {
  w.program_begin(r, 0.0);
  w.enter(r, 0.0, "main");
  w.init(r, 0.0, 0.1);
}

/// Every rank: MPI_Finalize [t, t + 0.5], Leave `main` and ProgramEnd at t + 1. All ranks enter
/// MPI_Finalize together, so mpi_finalize_wait = 0.
inline void close_all(TraceWriter& w, double t) {
  for (int r = 0; r < w.ranks(); ++r) {
    w.finalize(r, t, t + 0.5);
    w.leave(r, t + 1.0, "main");
    w.program_end(r, t + 1.0);
  }
}

/// Writes the trace to dir/<name>, runs `mpirun -np P cpreplay -q -o dir/<name>.cubex` on it
/// (plus `extra` options) and reads the report. Throws with cpreplay's stderr if it fails, so a
/// gtest reports the reason. `run_out`, if given, receives what cpreplay printed.
inline CubeFile analyze(const TraceWriter& w, const TempDir& dir,
                        const std::vector<std::string>& extra = {},
                        const std::string& name = "t", RunResult* run_out = nullptr) {
  const std::string trace_dir = dir / name;
  const std::string report = dir / (name + ".cubex");
  w.write(trace_dir);
  std::vector<std::string> args = {"-q", "-o", report};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(trace_dir + "/traces.otf2");
  const RunResult run = run_cpreplay(w.ranks(), args);
  if (run_out != nullptr) *run_out = run;
  if (run.exit_code != 0)
    throw std::runtime_error("cpreplay exited with " + std::to_string(run.exit_code) + ": " +
                             run.err);
  return read_cube(report);
}

/// The value of a metric at a call path on a rank, like CubeFile::value, but throws when the
/// report does not declare the metric or has no such call path (a typo would otherwise read 0).
inline double at(const CubeFile& cube, const std::string& metric, const std::string& callpath,
                 int rank) {
  if (cube.metric(metric) == nullptr)
    throw std::invalid_argument("the report declares no metric " + metric);
  if (std::find(cube.callpaths.begin(), cube.callpaths.end(), callpath) == cube.callpaths.end())
    throw std::invalid_argument("the report has no call path " + callpath);
  return cube.value(metric, callpath, rank);
}

/// Sum of a metric over all call paths and ranks.
inline double total(const CubeFile& cube, const std::string& metric) {
  if (cube.metric(metric) == nullptr)
    throw std::invalid_argument("the report declares no metric " + metric);
  double sum = 0.0;
  const auto m = cube.values.find(metric);
  if (m == cube.values.end()) return 0.0;
  for (const auto& [path, row] : m->second)
    for (double v : row) sum += v;
  return sum;
}

/// Exclusive `time` at a call path and location: the report stores `time` inclusive along the
/// call tree, so the direct children's values are taken out (region names here contain no '/').
inline double exclusive_time(const CubeFile& cube, const std::string& path, int location) {
  double v = cube.value("time", path, location);
  for (const std::string& child : cube.callpaths)
    if (child.size() > path.size() + 1 && child.compare(0, path.size() + 1, path + "/") == 0 &&
        child.find('/', path.size() + 1) == std::string::npos)
      v -= cube.value("time", child, location);
  return v;
}

}  // namespace cpreplay::testing::scenario
