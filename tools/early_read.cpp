// SPDX-License-Identifier: BSD-3-Clause
// Reading the trace while MPI starts (see early_read.hpp).
#include "tools/early_read.hpp"

#include <malloc.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "io/otf2_reader.hpp"
#include "replay/memory.hpp"
#include "tools/mpi_startup.hpp"

namespace cpreplay::tools {
namespace {

/// This process's rank and the process count as the launcher announces them, or false.
bool guess_rank(int& rank, int& size) {
  if (const char* hook = std::getenv("CPREPLAY_TEST_EARLY_GUESS")) {
    const std::string h = hook;
    const std::size_t colon = h.find(':');
    return colon != std::string::npos && whole_number(h.substr(0, colon).c_str(), rank) &&
           whole_number(h.substr(colon + 1).c_str(), size) && rank < size;
  }
  // The first pair the environment has both halves of; mpirun inside a Slurm job sets its
  // own variables, which come first.
  static const char* const kPairs[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"},
                                          {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
                                          {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& pair : kPairs)
    if (whole_number(std::getenv(pair[0]), rank) && whole_number(std::getenv(pair[1]), size) &&
        rank < size)
      return true;
  return false;
}

std::unique_ptr<EarlyTrace> read_early(const Settings& settings, int rank, int size) {
  auto t = std::make_unique<EarlyTrace>();
  t->start = EarlyTrace::Clock::now();
  try {
    t->defs = io::read_definitions(settings.anchor);
  } catch (...) {
    t->definitions_error = std::current_exception();
  }
  t->definitions_end = EarlyTrace::Clock::now();
  // More processes than ranks is refused by the pipeline; nothing to read for it.
  if (!t->definitions_error && size <= t->defs.ranks()) {
    t->shard = Shard(RankBlocks(t->defs.ranks(), size), rank);
    t->events_read = true;
    try {
      read_shard(settings, t->defs, t->shard, t->local_trees);
    } catch (...) {
      t->events_error = std::current_exception();
    }
  }
  // The OTF2 readers' buffers go back now, not after MPI_Init has added its own memory on top.
  replay::release_free_memory();
  t->end = EarlyTrace::Clock::now();
  return t;
}

}  // namespace

void read_shard(const Settings& settings, const Definitions& defs, Shard& shard,
                std::vector<CallTree>& local_trees) {
  const bool hybrid = defs.hybrid();
  shard.traces.resize(shard.size());
  local_trees.resize(shard.size());
  if (hybrid) shard.workers.resize(shard.size());
  for (Rank r = shard.first(); r < shard.last(); ++r) {
    const std::size_t i = shard.index(r);
    std::vector<io::ForkPoint> forks;
    shard.of(r) = io::read_events(settings.anchor, defs, r, local_trees[i], settings.partial,
                                  hybrid ? &forks : nullptr);
    // The rank's threads, after its master (their call paths hang below the forks).
    const int threads = static_cast<int>(defs.processes[r].workers.size());
    // Reserved: a LocalTrace's move may throw (its deques), so a vector that grows copies every
    // thread's events read so far (and frees them, leaving holes).
    if (threads > 0) shard.workers[i].reserve(static_cast<std::size_t>(threads));
    for (int t = 1; t <= threads; ++t)
      shard.workers[i].push_back(io::read_worker_events(settings.anchor, defs, r, t,
                                                        local_trees[i], forks, settings.partial));
    if (threads > 0) {
      // The master's map of call paths to regions must cover its threads' paths too.
      shard.of(r).region_of_path = shard.workers[i].back().region_of_path;
    }
  }
}

EarlyRead::~EarlyRead() {
  if (thread_.joinable()) thread_.join();
}

void EarlyRead::start(const Settings& settings) {
  const char* off = std::getenv("CPREPLAY_NO_EARLY_READ");
  if (off != nullptr && std::string(off) == "1") return;
  int rank = 0, size = 0;
  if (!guess_rank(rank, size)) return;
  rank_ = rank;
  size_ = size;
#ifdef M_ARENA_MAX
  // One heap for both threads (glibc would give the reading thread an arena of its own, whose
  // freed memory the later stages could not reuse: 2 MB more at the peak, measured).
  mallopt(M_ARENA_MAX, 1);
#endif
  // The thread must not read the environment: MPI_Init changes it meanwhile.
  io::pin_environment();
  try {
    thread_ = std::thread([this, settings, rank, size] {
      try {
        result_ = read_early(settings, rank, size);
      } catch (...) {
        result_.reset();  // out of memory before the read began: the pipeline reads as usual
      }
    });
  } catch (...) {
    rank_ = size_ = -1;  // no thread to be had: the pipeline reads as usual
  }
}

std::unique_ptr<EarlyTrace> EarlyRead::take(int rank, int size) {
  if (thread_.joinable()) thread_.join();
  if (rank != rank_ || size != size_) result_.reset();
  return std::move(result_);
}

}  // namespace cpreplay::tools
