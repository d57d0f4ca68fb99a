// SPDX-License-Identifier: BSD-3-Clause
// fakeapp: an MPI program that stands in for a Score-P-instrumented application in the tests of
// cpreplay-run (no Score-P on the test machines): it measures nothing, but leaves in
// $SCOREP_EXPERIMENT_DIRECTORY what Score-P would, an OTF2 trace of its ranks written with the
// project's TraceWriter.
//
// Run as `mpirun -np N fakeapp`. Like Score-P it reads SCOREP_ENABLE_TRACING,
// SCOREP_ENABLE_PROFILING (default true, as Score-P's) and SCOREP_EXPERIMENT_DIRECTORY, and
// writes scorep.cfg there with every SCOREP_* variable it saw. Unlike Score-P, an existing
// experiment directory is an error (exit 99): Score-P would move it aside, and the tests must see
// whether cpreplay-run let the application run into one.
//
// The trace (rank r of N, seconds): MPI_Init [0, 0.1], compute [0.1, 0.1 + 0.1 (r + 1)],
// MPI_Barrier from there to 0.1 + 0.1 N + 0.001, MPI_Finalize for 0.01 s; 14 events per rank
// (ProgramBegin/End, main, MPI_Init, compute, MPI_Barrier with its collective events,
// MPI_Finalize). Wait at Barrier: 0.1 (N - 1 - r) s on rank r, 0.05 N (N - 1) s in all.
//
// Failures on request, for the error paths:
//   FAKEAPP_FAIL=S          exit with status S (1 to 255) after doing what the others say
//   FAKEAPP_PARTIAL=1       the last rank's trace stops halfway (as after a crash)
//   FAKEAPP_NO_TRACE=1      behave as a binary built without Score-P: write nothing
//   FAKEAPP_PROFILE_ONLY=1  write profile.cubex (a placeholder, not a Cube file) and no trace
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/trace_writer.hpp"

extern char** environ;

namespace {

using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

/// Score-P's boolean spellings (case-insensitive): true, yes, on, 1.
bool enabled(const char* name, bool fallback) {
  std::string v = env(name);
  if (v.empty()) return fallback;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "true" || v == "yes" || v == "on" || v == "1";
}

/// FAKEAPP_FAIL: 0 when unset, else a status from 1 to 255 (anything else is a test bug: 98).
int requested_status() {
  const std::string v = env("FAKEAPP_FAIL");
  if (v.empty()) return 0;
  char* end = nullptr;
  const long s = std::strtol(v.c_str(), &end, 10);
  if (*end != '\0' || s < 1 || s > 255) {
    std::fprintf(stderr, "fakeapp: FAKEAPP_FAIL '%s' must be from 1 to 255\n", v.c_str());
    return 98;
  }
  return static_cast<int>(s);
}

TraceWriter make_trace(int n, const std::string& executable) {
  TraceWriter w(n, executable);
  const double barrier_end = 0.1 + 0.1 * n + 0.001;
  for (int r = 0; r < n; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.1);
    const double work_end = 0.1 + 0.1 * (r + 1);
    w.region(r, "compute", 0.1, work_end);
    w.collective(r, "MPI_Barrier", work_end, barrier_end, CollOpT::Barrier, 0, 0);
    w.finalize(r, barrier_end, barrier_end + 0.01);
    w.leave(r, barrier_end + 0.01, "main");
    w.program_end(r, barrier_end + 0.01);
  }
  if (enabled("FAKEAPP_PARTIAL", false)) w.set_truncation(n - 1, 0.5);
  return w;
}

/// What Score-P leaves in the experiment directory; returns an exit status (0: written).
int measure(int n, const std::string& executable) {
  namespace fs = std::filesystem;
  const bool tracing = enabled("SCOREP_ENABLE_TRACING", false);
  const bool profiling = enabled("SCOREP_ENABLE_PROFILING", true);
  const std::string dir = env("SCOREP_EXPERIMENT_DIRECTORY");
  if (dir.empty()) {
    std::fprintf(stderr, "fakeapp: SCOREP_EXPERIMENT_DIRECTORY is not set\n");
    return 97;
  }
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    std::fprintf(stderr, "fakeapp: %s exists; refusing to replace it\n", dir.c_str());
    return 99;
  }
  const bool profile_only = enabled("FAKEAPP_PROFILE_ONLY", false);
  if (tracing && !profile_only) {
    make_trace(n, executable).write(dir);  // creates dir
  } else {
    fs::create_directories(dir);
  }
  if (profiling || profile_only) {
    std::ofstream(dir + "/profile.cubex") << "fakeapp: a placeholder, not a Cube report\n";
  }
  std::vector<std::string> seen;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "SCOREP_", 7) == 0) seen.emplace_back(*e);
  std::sort(seen.begin(), seen.end());
  std::ofstream cfg(dir + "/scorep.cfg");
  for (const auto& line : seen) cfg << line << "\n";
  return cfg ? 0 : 96;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = requested_status();
  if (rank == 0 && !enabled("FAKEAPP_NO_TRACE", false)) {
    try {
      const int written = measure(size, std::filesystem::path(argv[0]).filename().string());
      if (written != 0) status = written;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fakeapp: %s\n", e.what());
      status = 95;
    }
  }
  // Every rank leaves with rank 0's status, as a program that fails as a whole does.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
