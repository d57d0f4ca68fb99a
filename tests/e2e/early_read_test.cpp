// SPDX-License-Identifier: BSD-3-Clause
// End-to-end: what happens while MPI starts. Open MPI's transport on one node
// (tools/mpi_startup.hpp, the MpiStartup tests at the end), and the trace read meanwhile
// (tools/early_read.hpp). mpirun's environment
// names each process's rank, so every MPI test takes the early path; these check that it is
// taken, that it changes nothing (report, summary, JSON and error lines are identical to a run
// that reads after MPI_Init), and that a wrong guess of the rank or the process count, on some
// processes or all, is caught and read again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_cpreplay.hpp"
#include "tools/mpi_startup.hpp"

namespace cpreplay::testing {
namespace {

/// Sets (or, with nullptr, removes) an environment variable for the scope; mpirun hands the
/// environment on to the processes it starts on this machine.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

/// The report's bytes with each tar header's modification time and checksum blanked (the
/// report is a plain tar: Cube's writers do not compress it); everything else compared as is.
std::string without_tar_times(std::string tar) {
  std::size_t at = 0;
  while (at + 512 <= tar.size() && tar[at] != '\0') {
    const std::size_t size = std::stoull(tar.substr(at + 124, 12), nullptr, 8);
    tar.replace(at + 136, 12, 12, ' ');  // mtime
    tar.replace(at + 148, 8, 8, ' ');    // chksum
    at += 512 + (size + 511) / 512 * 512;
  }
  return tar;
}

/// What a run wrote that must not depend on how the trace was read.
struct Outputs {
  RunResult result;
  std::string cube;     ///< the report's bytes
  std::string json;     ///< --json, without the analysis time
  std::string summary;  ///< stdout, without the analysis time
};

std::string without_timing(const std::string& text) {
  std::string kept;
  for (std::string line : lines_of(text)) {
    if (line.find("\"analysis_s\"") != std::string::npos) continue;
    const auto at = line.find("   analysis ");
    if (line.rfind("  ranks ", 0) == 0 && at != std::string::npos) line = line.substr(0, at);
    kept += line + "\n";
  }
  return kept;
}

/// One run at `processes` with the early read as `mode` says: "early" (the default), "off"
/// (CPREPLAY_NO_EARLY_READ=1) or a guess "RANK:SIZE" for every process.
Outputs analyze(const TempDir& dir, const std::string& anchor, int processes,
                const std::string& mode, const std::vector<std::string>& extra = {}) {
  ScopedEnv off("CPREPLAY_NO_EARLY_READ", mode == "off" ? "1" : nullptr);
  const bool guess = mode != "off" && mode != "early";
  ScopedEnv hook("CPREPLAY_TEST_EARLY_GUESS", guess ? mode.c_str() : nullptr);
  Outputs o;
  std::vector<std::string> args = {"-o", dir / "r.cubex", "--json", dir / "s.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(anchor);
  o.result = run_cpreplay(processes, args);
  EXPECT_EQ(o.result.exit_code, 0) << mode << ": " << o.result.err;
  o.cube = without_tar_times(read_file(dir / "r.cubex"));
  o.json = without_timing(read_file(dir / "s.json"));
  o.summary = without_timing(o.result.out);
  std::filesystem::remove(dir / "r.cubex");
  std::filesystem::remove(dir / "s.json");
  return o;
}

bool read_early(const RunResult& r) {
  return r.err.find("events     ... ") != std::string::npos &&
         r.err.find("events (read while MPI started)") != std::string::npos;
}

void expect_same(const Outputs& a, const Outputs& b, const std::string& what) {
  EXPECT_FALSE(a.cube.empty()) << what;
  EXPECT_EQ(a.cube, b.cube) << what << ": the reports differ";
  EXPECT_EQ(a.json, b.json) << what << ": the JSON summaries differ";
  EXPECT_EQ(a.summary, b.summary) << what << ": the summaries differ";
}

// 5 ranks on 3 processes (blocks of 2, 2, 1), every analysis on: the early read is taken, and
// the report, JSON and summary are byte for byte those of a run that reads after MPI_Init.
TEST(EarlyRead, TakenAndChangesNothing_5RanksOn3Processes) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "5", "--iters", "6"});
  const Outputs early = analyze(dir, anchor, 3, "early");
  const Outputs off = analyze(dir, anchor, 3, "off");
  EXPECT_TRUE(read_early(early.result)) << early.result.err;
  EXPECT_FALSE(read_early(off.result)) << off.result.err;
  expect_same(early, off, "early against off");
}

// A guess that is right on process 0 only (size right, rank wrong elsewhere), and one whose
// process count is wrong everywhere: the processes with a wrong guess read again after
// MPI_Init, and the results are the same as reading after MPI_Init everywhere.
TEST(EarlyRead, WrongGuessIsReadAgain_SomeProcessesOrAll) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"late-sender", "--ranks", "4", "--iters", "5"});
  const Outputs off = analyze(dir, anchor, 3, "off");
  const Outputs mixed = analyze(dir, anchor, 3, "0:3");
  const Outputs wrong_size = analyze(dir, anchor, 3, "1:4");
  // Rank 0 prints the progress: its guess (0 of 3) was right in the first run only.
  EXPECT_TRUE(read_early(mixed.result)) << mixed.result.err;
  EXPECT_FALSE(read_early(wrong_size.result)) << wrong_size.result.err;
  expect_same(mixed, off, "right on process 0 only");
  expect_same(wrong_size, off, "wrong process count");
}

// Launcher variables that name no rank of the run (not a number, a rank outside the size, a
// number too large for an int) are no guess: the run reads after MPI_Init, with no message, and
// its results are those of a run without the early read.
TEST(EarlyRead, MalformedGuess_NotTakenSameResults) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "3", "--iters", "4"});
  const Outputs off = analyze(dir, anchor, 3, "off");
  for (const char* guess : {"garbage", "3:3", "-1:3", "0:99999999999", "1:", ":3"}) {
    SCOPED_TRACE(guess);
    const Outputs o = analyze(dir, anchor, 3, guess);
    EXPECT_FALSE(read_early(o.result)) << o.result.err;
    EXPECT_EQ(o.result.err.find("error"), std::string::npos) << o.result.err;
    expect_same(o, off, guess);
  }
}

// A hybrid trace (3 ranks x 2 threads) on 2 processes: the threads are read early too.
TEST(EarlyRead, HybridThreadsReadEarly_SameAsOff) {
  TempDir dir;
  const std::string anchor =
      make_trace(dir, {"hybrid", "--ranks", "3", "--threads", "2", "--iters", "3"});
  const Outputs early = analyze(dir, anchor, 2, "early");
  const Outputs off = analyze(dir, anchor, 2, "off");
  EXPECT_TRUE(read_early(early.result)) << early.result.err;
  expect_same(early, off, "hybrid");
}

/// The single error line of a failing run.
std::string error_line(const RunResult& r) {
  std::vector<std::string> errors;
  for (const std::string& l : lines_of(r.err))
    if (l.find("cpreplay: error:") != std::string::npos) errors.push_back(l);
  EXPECT_EQ(errors.size(), 1u) << r.err;
  return errors.empty() ? std::string() : errors[0];
}

// Damage found while reading early is reported where reading after MPI_Init reports it: the same
// one line, the same exit code, no report. Events (rank 2's file cut in half) and definitions.
TEST(EarlyRead, DamageFoundEarly_SameErrorLineAndExitCode) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "4", "--iters", "4"});
  const std::string evt = dir / "example/traces/2.evt";
  std::filesystem::resize_file(evt, std::filesystem::file_size(evt) / 2);
  std::vector<RunResult> runs;
  for (const char* mode : {"early", "off", "0:4"}) {
    ScopedEnv off("CPREPLAY_NO_EARLY_READ", std::string(mode) == "off" ? "1" : nullptr);
    ScopedEnv hook("CPREPLAY_TEST_EARLY_GUESS", std::string(mode) == "0:4" ? mode : nullptr);
    runs.push_back(run_cpreplay(4, {"-q", "-o", dir / "r.cubex", anchor}));
    EXPECT_FALSE(file_exists(dir / "r.cubex")) << mode;
  }
  const std::string line = error_line(runs[1]);
  EXPECT_NE(line.find("rank 2"), std::string::npos) << line;
  EXPECT_NE(line.find("2.evt"), std::string::npos) << line;
  for (const RunResult& r : runs) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(error_line(r), line);
  }

  const std::string def = dir / "example/traces.def";
  std::filesystem::resize_file(def, std::filesystem::file_size(def) / 2);
  std::vector<RunResult> def_runs;
  for (const char* off_value : {static_cast<const char*>(nullptr), "1"}) {
    ScopedEnv off("CPREPLAY_NO_EARLY_READ", off_value);
    def_runs.push_back(run_cpreplay(4, {"-q", "-o", dir / "r.cubex", anchor}));
  }
  const std::string def_line = error_line(def_runs[1]);
  EXPECT_NE(def_line.find("traces.def"), std::string::npos) << def_line;
  for (const RunResult& r : def_runs) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(error_line(r), def_line);
    EXPECT_FALSE(file_exists(dir / "r.cubex"));
  }
}

/// "cpreplay: MPI: ..." of a -v run: the transport cpreplay chose, or empty.
std::string transport_line(const RunResult& r) {
  for (const std::string& l : lines_of(r.err))
    if (l.rfind("cpreplay: MPI: ", 0) == 0) return l;
  return "";
}

/// Whether Open MPI (at pml_base_verbose 10) opened its network-only `cm` layer.
bool opened_cm(const RunResult& r) {
  return r.err.find("found loaded component cm") != std::string::npos;
}

// All processes on this machine: cpreplay asks Open MPI for the shared-memory layer, Open MPI
// opens no other (its network probes are skipped), and the results are those of a run that
// leaves the choice to Open MPI (CPREPLAY_KEEP_MPI_TRANSPORT=1), which does open `cm`.
TEST(MpiStartup, OneNodeTakesSharedMemory_SameResults) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"late-sender", "--ranks", "3", "--iters", "4"});
  ScopedEnv verbose("OMPI_MCA_pml_base_verbose", "10");
  const Outputs chosen = analyze(dir, anchor, 3, "early", {"-v"});
  if (transport_line(chosen.result).empty() && !opened_cm(chosen.result))
    GTEST_SKIP() << "not Open MPI's launcher: no transport to choose";
  EXPECT_EQ(transport_line(chosen.result),
            "cpreplay: MPI: all 3 processes on one node: Open MPI's shared-memory transport "
            "(pml ob1; set OMPI_MCA_pml or CPREPLAY_KEEP_MPI_TRANSPORT=1 to choose)");
  EXPECT_FALSE(opened_cm(chosen.result)) << chosen.result.err;
  EXPECT_NE(chosen.result.err.find("select: initializing pml component ob1"), std::string::npos)
      << chosen.result.err;
  Outputs kept;
  {
    ScopedEnv keep("CPREPLAY_KEEP_MPI_TRANSPORT", "1");
    kept = analyze(dir, anchor, 3, "early", {"-v"});
  }
  EXPECT_EQ(transport_line(kept.result), "");
  EXPECT_TRUE(opened_cm(kept.result)) << kept.result.err;
  expect_same(chosen, kept, "shared memory chosen against Open MPI's own choice");
}

// A transport the user names (mpirun --mca pml X arrives as OMPI_MCA_pml) is kept: cpreplay says
// nothing and changes nothing.
TEST(MpiStartup, TheUsersChoiceIsKept) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "2", "--iters", "3"});
  ScopedEnv pml("OMPI_MCA_pml", "^ucx");
  ScopedEnv verbose("OMPI_MCA_pml_base_verbose", "10");
  const Outputs o = analyze(dir, anchor, 2, "early", {"-v"});
  EXPECT_EQ(transport_line(o.result), "");
  if (o.result.err.find("components_register") == std::string::npos)
    GTEST_SKIP() << "not Open MPI: no component list to check";
  EXPECT_TRUE(opened_cm(o.result)) << o.result.err;
}

/// "cpreplay: scheduler time slice: ..." of a -v run.
std::string slice_line(const RunResult& r) {
  for (const std::string& l : lines_of(r.err))
    if (l.rfind("cpreplay: scheduler time slice: ", 0) == 0) return l;
  return "";
}

/// Whether this machine grants a thread its own time slice (Linux 6.12 and later, and no seccomp
/// filter in the way): asked on the test's own thread the way cpreplay asks, then reset.
bool kernel_has_task_slices() {
  const bool granted = tools::set_thread_time_slice(100000) == 100000;
  tools::set_thread_time_slice(0);
  return granted;
}

// The main thread asks for 0.1 ms slices (the kernel reads them back; older kernels keep their
// own and the line says so); CPREPLAY_TIME_SLICE_US=0 keeps the kernel's default. Results are
// the same either way.
TEST(MpiStartup, ShortTimeSlices_SameResults) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"late-sender", "--ranks", "3", "--iters", "4"});
  const Outputs short_slices = analyze(dir, anchor, 3, "early", {"-v"});
  EXPECT_EQ(slice_line(short_slices.result),
            kernel_has_task_slices()
                ? "cpreplay: scheduler time slice: 100 us (CPREPLAY_TIME_SLICE_US)"
                : "cpreplay: scheduler time slice: the kernel's default");
  Outputs kernels;
  {
    ScopedEnv slice("CPREPLAY_TIME_SLICE_US", "0");
    kernels = analyze(dir, anchor, 3, "early", {"-v"});
  }
  EXPECT_EQ(slice_line(kernels.result), "cpreplay: scheduler time slice: the kernel's default");
  expect_same(short_slices, kernels, "0.1 ms slices against the kernel's");
}

// A slice outside 100 us .. 100 ms, or not a number: one error line naming the variable, exit
// code 2, no report.
TEST(MpiStartup, BadTimeSlice_OneLineExit2NoReport) {
  TempDir dir;
  const std::string anchor = make_trace(dir, {"example", "--ranks", "2", "--iters", "3"});
  for (const char* bad : {"50", "abc", "100001", "-1"}) {
    ScopedEnv slice("CPREPLAY_TIME_SLICE_US", bad);
    const RunResult r = run_cpreplay(2, {"-o", dir / "r.cubex", anchor});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(error_line(r), std::string("cpreplay: error: CPREPLAY_TIME_SLICE_US '") + bad +
                                 "' must be a whole number of microseconds from 100 to 100000, "
                                 "or 0 for the kernel's default");
    EXPECT_FALSE(file_exists(dir / "r.cubex")) << bad;
  }
}

}  // namespace
}  // namespace cpreplay::testing
