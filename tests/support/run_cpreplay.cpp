// SPDX-License-Identifier: BSD-3-Clause
// fork/exec with captured output and a timeout, for MPI end-to-end tests.
#include "tests/support/run_cpreplay.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef CPREPLAY_MPIEXEC
#define CPREPLAY_MPIEXEC "mpirun"
#endif
#ifndef CPREPLAY_EXE
#define CPREPLAY_EXE "cpreplay"
#endif

namespace cpreplay::testing {

RunResult run_command(const std::vector<std::string>& argv, int timeout_seconds) {
  RunResult result;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return result;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool open_out = true, open_err = true, timed_out = false;
  char buf[4096];
  while (open_out || open_err) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > timeout_seconds) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, 200) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        fds[i].fd = -1;
        (i == 0 ? open_out : open_err) = false;
      } else {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_pipe[0]);
  close(err_pipe[0]);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (timed_out)
    result.exit_code = 124;
  else if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  return result;
}

RunResult run_cpreplay(int np, const std::vector<std::string>& args, int timeout_seconds) {
  std::vector<std::string> argv = {CPREPLAY_MPIEXEC, "--oversubscribe", "-np",
                                   std::to_string(np), CPREPLAY_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, timeout_seconds);
}

RunResult run_mktrace(const std::vector<std::string>& args) {
#ifndef CPREPLAY_MKTRACE
#define CPREPLAY_MKTRACE "cpreplay-mktrace"
#endif
  std::vector<std::string> argv = {CPREPLAY_MKTRACE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, 120);
}

std::string make_trace(const TempDir& dir, const std::vector<std::string>& args) {
  if (args.empty()) throw std::runtime_error("make_trace: no trace kind given");
  std::vector<std::string> a = args;
  a.insert(a.begin() + 1, dir / args[0]);
  const RunResult r = run_mktrace(a);
  if (r.exit_code != 0)
    throw std::runtime_error("cpreplay-mktrace " + args[0] + " failed: " + r.err);
  return dir / (args[0] + "/traces.otf2");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/cpreplay-test-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  // CPREPLAY_KEEP_TEST_DIRS=1 keeps the traces and reports a test wrote, to look at or to run
  // another analyzer on (its path is printed).
  if (const char* keep = std::getenv("CPREPLAY_KEEP_TEST_DIRS"); keep && *keep && *keep != '0') {
    std::fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    names.push_back(entry.path().filename().string());
  return names;
}

}  // namespace cpreplay::testing
