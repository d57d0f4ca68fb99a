// SPDX-License-Identifier: BSD-3-Clause
// Runs the cpreplay executable under mpirun from a test and captures what it printed.
#pragma once

#include <string>
#include <vector>

namespace cpreplay::testing {

struct RunResult {
  int exit_code = -1;   ///< exit status, or 128+signal, or -1 if it could not start
  std::string out;      ///< stdout
  std::string err;      ///< stderr
  double seconds = 0.0; ///< wall time
};

/// Runs `mpirun --oversubscribe -np NP cpreplay ARGS...` with the paths compiled into the test
/// (CPREPLAY_MPIEXEC, CPREPLAY_EXE) and a timeout in seconds (the process group is killed then,
/// and exit_code is 124).
RunResult run_cpreplay(int np, const std::vector<std::string>& args, int timeout_seconds = 120);

/// Runs `cpreplay-mktrace ARGS...` (the project's scenario trace generator).
RunResult run_mktrace(const std::vector<std::string>& args);

/// Any command, same capture and timeout rules.
RunResult run_command(const std::vector<std::string>& argv, int timeout_seconds = 120);

/// A fresh directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// `cpreplay-mktrace KIND DIR/KIND OPTIONS...` for args = {KIND, OPTIONS...}; returns the
/// trace's anchor, DIR/KIND/traces.otf2. Throws std::runtime_error with the generator's stderr
/// when it fails (gtest reports the test as failed).
std::string make_trace(const TempDir& dir, const std::vector<std::string>& args);

bool file_exists(const std::string& path);
/// A file's bytes (empty when it cannot be read).
std::string read_file(const std::string& path);
/// The lines of a text, without their newlines.
std::vector<std::string> lines_of(const std::string& text);
/// Lists the files of a directory (names only), for "no report left behind" checks.
std::vector<std::string> list_dir(const std::string& path);

}  // namespace cpreplay::testing
