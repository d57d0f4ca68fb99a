// SPDX-License-Identifier: BSD-3-Clause
// Reading the trace while MPI starts: MPI_Init mostly waits (for the launcher, for network
// probes), so a thread reads the definitions and this process's ranks meanwhile
// (docs/replay-engine.md §8).
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/shard.hpp"
#include "tools/pipeline.hpp"

namespace cpreplay::tools {

/// The events of the ranks `shard` holds (every thread of a hybrid rank after its master),
/// with one local call tree per rank; what the pipeline's events stage reads, early or not.
void read_shard(const Settings& settings, const Definitions& defs, Shard& shard,
                std::vector<CallTree>& local_trees);

/// What an early read produced for one process. An error is kept, not thrown: the pipeline
/// rethrows it at the stage that would have read (so every rank still stops at the same
/// boundary, with the same message).
struct EarlyTrace {
  using Clock = std::chrono::steady_clock;
  Definitions defs;
  std::exception_ptr definitions_error;
  bool events_read = false;  ///< false: the definitions failed, or more processes than ranks
  Shard shard;
  std::vector<CallTree> local_trees;
  std::exception_ptr events_error;
  Clock::time_point start, definitions_end, end;
};

/// Starts the read in a thread of its own, before MPI_Init, when the launcher's environment
/// names this process's rank and the process count (Open MPI, MPICH/Intel MPI, MVAPICH, Slurm);
/// otherwise does nothing. After MPI_Init, take() checks the guess against MPI's own rank and
/// size: a wrong guess costs the time of the read, never a wrong answer. The thread makes no
/// MPI calls (MPI_THREAD_FUNNELED). Test hook: CPREPLAY_TEST_EARLY_GUESS=RANK:SIZE replaces the
/// environment's guess; CPREPLAY_NO_EARLY_READ=1 turns the early read off.
class EarlyRead {
 public:
  EarlyRead() = default;
  ~EarlyRead();
  EarlyRead(const EarlyRead&) = delete;
  EarlyRead& operator=(const EarlyRead&) = delete;

  void start(const Settings& settings);
  /// Waits for the read; its result when it was made for (rank, size), else nullptr.
  std::unique_ptr<EarlyTrace> take(int rank, int size);

 private:
  std::thread thread_;
  int rank_ = -1;
  int size_ = -1;
  std::unique_ptr<EarlyTrace> result_;
};

}  // namespace cpreplay::tools
