// SPDX-License-Identifier: BSD-3-Clause
// The MPI side of the engine: rank/size, collective failure agreement, progress on rank 0.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>

namespace cpreplay::replay {

/// Thrown on ranks whose own step succeeded while another rank failed: they stop quietly.
class PeerFailed : public std::exception {
 public:
  const char* what() const noexcept override { return "another rank failed"; }
};

/// Wraps MPI_COMM_WORLD for the analysis.
class World {
 public:
  explicit World(MPI_Comm comm = MPI_COMM_WORLD);
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }

  /// Runs a local step; then all ranks agree whether any failed. The lowest failing rank
  /// rethrows its own exception (one message, not one per rank), the others throw PeerFailed,
  /// so every rank stops at the same boundary.
  /// MPI: collective on world.
  template <class F>
  void agree(F&& step) const {
    if (test_kill_step_ > 0) count_step_for_test();
    std::exception_ptr error;
    // PeerFailed from the step: a nested agree() (or a collective helper) has already chosen
    // another rank's error. That rank must report it here too, not the lowest rank that was
    // only told to stop (which would end the run with no message at all).
    bool peer = false;
    try {
      step();
    } catch (const PeerFailed&) {
      peer = true;
    } catch (...) {
      error = std::current_exception();
    }
    bool peers = false;
    const int first = first_failing(error != nullptr, peer, &peers);
    if (first < size_) {
      if (first == rank_) std::rethrow_exception(error);
      throw PeerFailed();
    }
    if (peers) throw PeerFailed();
  }

  /// The lowest rank whose flag is set, or size() if none: that rank reports the error. Ranks
  /// that only stop because another failed pass `peer_failed` instead: they never report, and
  /// `*peers` (if given) is set on every rank when no rank failed but some stopped.
  /// MPI: collective on world.
  int first_failing(bool failed, bool peer_failed = false, bool* peers = nullptr) const;
  /// Rank 0's `bytes` bytes at `data` to everybody, in pieces MPI's int counts can hold.
  void broadcast_bytes(void* data, std::uint64_t bytes) const;

  /// True on every rank if `flag` is true on some rank. MPI: collective on world.
  bool any(bool flag) const;
  /// Rank 0's contents replace everybody else's: a std::string or a std::vector of PODs.
  /// MPI: collective on world.
  template <class Container>
  void broadcast(Container& data) const {
    std::uint64_t size = data.size();
    MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm_);
    data.resize(size);
    broadcast_bytes(data.data(), size * sizeof(data[0]));
  }

 private:
  /// Test hook (tests/e2e/robustness_test.cpp), read from the environment once:
  /// CPREPLAY_TEST_KILL_RANK=R makes rank R die by SIGKILL, as a node failure or the OOM killer
  /// would end it: in the constructor, or with CPREPLAY_TEST_KILL_STEP=N at the start of its
  /// N-th agree() step, when the other ranks are mid-analysis.
  void count_step_for_test() const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int test_kill_step_ = 0;      ///< 0: no test kill pending
  mutable int test_steps_ = 0;  ///< agree() steps begun, counted only when a kill is pending
};

/// Prints phase progress on rank 0 unless quiet.
class Progress {
 public:
  Progress(const World& world, bool quiet) : enabled_(!quiet && world.rank() == 0) {}
  /// A phase still open here was cut short by an exception: its line is ended with "failed", so
  /// the error line that tools/ prints next starts on a line of its own.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void begin(const std::string& phase);
  void end(const std::string& detail = "");
  /// Ends the phase with a duration measured elsewhere (a phase run before MPI started).
  void end(const std::string& detail, double seconds);
  /// Counts `seconds` of work done before this object existed into seconds_since_start().
  void add_earlier(double seconds);
  double seconds_since_start() const;

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool open_ = false;  ///< begin() printed a line that end() has not finished yet
  Clock::time_point start_ = Clock::now();
  Clock::time_point phase_start_ = Clock::now();
};

}  // namespace cpreplay::replay
