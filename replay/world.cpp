// SPDX-License-Identifier: BSD-3-Clause
// MPI world wrapper: failure agreement and rank-0 progress.
#include "replay/world.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace cpreplay::replay {

World::World(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  const char* victim = std::getenv("CPREPLAY_TEST_KILL_RANK");
  if (victim && *victim && std::atoi(victim) == rank_) {
    const char* step = std::getenv("CPREPLAY_TEST_KILL_STEP");
    test_kill_step_ = step ? std::atoi(step) : 0;
    if (test_kill_step_ <= 0) std::raise(SIGKILL);
  }
}

void World::count_step_for_test() const {
  if (++test_steps_ == test_kill_step_) std::raise(SIGKILL);
}

bool World::any(bool flag) const {
  int local = flag ? 1 : 0;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, comm_);
  return global != 0;
}

void World::broadcast_bytes(void* data, std::uint64_t bytes) const {
  constexpr std::uint64_t kPiece = 1u << 30;  // MPI counts are ints
  for (std::uint64_t at = 0; at < bytes; at += kPiece)
    MPI_Bcast(static_cast<char*>(data) + at, static_cast<int>(std::min(kPiece, bytes - at)),
              MPI_BYTE, 0, comm_);
}

int World::first_failing(bool failed, bool peer_failed, bool* peers) const {
  // One reduction: a failed rank's own number, below size() for "some rank only stopped",
  // below size() + 1 for "nothing happened".
  int local = failed ? rank_ : (peer_failed ? size_ : size_ + 1);
  int global = size_ + 1;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, comm_);
  if (peers != nullptr) *peers = global == size_;
  return std::min(global, size_);
}

Progress::~Progress() {
  if (open_) {
    std::fprintf(stderr, " failed\n");
    std::fflush(stderr);
  }
}

void Progress::begin(const std::string& phase) {
  phase_start_ = Clock::now();
  if (enabled_) {
    if (open_) std::fprintf(stderr, "\n");
    std::fprintf(stderr, "cpreplay: %-10s ...", phase.c_str());
    std::fflush(stderr);
    open_ = true;
  }
}

void Progress::end(const std::string& detail) {
  end(detail, std::chrono::duration<double>(Clock::now() - phase_start_).count());
}

void Progress::end(const std::string& detail, double seconds) {
  if (!enabled_) return;
  open_ = false;
  std::fprintf(stderr, " %.3f s%s%s\n", seconds, detail.empty() ? "" : "  ", detail.c_str());
}

void Progress::add_earlier(double seconds) {
  start_ -= std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double Progress::seconds_since_start() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace cpreplay::replay
