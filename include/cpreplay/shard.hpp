// SPDX-License-Identifier: BSD-3-Clause
// Which analysis process holds which trace ranks (contiguous blocks), and the block one holds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpreplay/events.hpp"
#include "cpreplay/types.hpp"

namespace cpreplay {

/// N trace ranks on M analysis processes (1 <= M <= N) in contiguous blocks: with N = q*M + s,
/// the first s processes hold q+1 ranks, the others q (docs/replay-engine.md §1). Everything is
/// O(1) arithmetic, so no process needs a table of owners.
class RankBlocks {
 public:
  RankBlocks() = default;
  /// Precondition: 1 <= processes <= ranks.
  RankBlocks(int ranks, int processes)
      : ranks_(ranks), processes_(processes), q_(ranks / processes), s_(ranks % processes) {}

  int ranks() const { return ranks_; }
  int processes() const { return processes_; }
  /// The first trace rank of process p (p == processes(): ranks()).
  Rank first(int p) const { return p * q_ + std::min(p, s_); }
  /// How many trace ranks process p holds.
  int count(int p) const { return q_ + (p < s_ ? 1 : 0); }
  /// The process that holds trace rank r.
  int owner(Rank r) const {
    if (processes_ == ranks_) return r;  // one rank each (M = N): no division per record
    const Rank big = s_ * (q_ + 1);  // ranks held by the processes with one rank more
    return r < big ? r / (q_ + 1) : s_ + (r - big) / q_;
  }

 private:
  int ranks_ = 1;
  int processes_ = 1;
  int q_ = 1;
  int s_ = 0;
};

/// The trace ranks one analysis process holds, with their events: traces[i] is trace rank
/// first() + i. Pure-MPI traces have one location per rank, so a rank's LocalTrace is its only
/// location (docs/replay-engine.md §2).
struct Shard {
  RankBlocks blocks;
  int process = 0;  ///< this process's rank among the analysis processes
  std::vector<LocalTrace> traces;
  /// Hybrid traces: workers[i] holds threads 1, 2, ... of trace rank first() + i (all threads
  /// of a rank are held by the same process, docs/replay-engine.md §1). Empty for pure MPI.
  std::vector<std::vector<LocalTrace>> workers;

  Shard() = default;
  Shard(RankBlocks b, int p) : blocks(b), process(p) {}
  Rank first() const { return blocks.first(process); }
  Rank last() const { return blocks.first(process + 1); }  ///< one past the last rank held
  std::size_t size() const { return static_cast<std::size_t>(last() - first()); }
  bool holds(Rank r) const { return r >= first() && r < last(); }
  /// Position of trace rank r (which this process holds) in `traces`.
  std::size_t index(Rank r) const { return static_cast<std::size_t>(r - first()); }
  LocalTrace& of(Rank r) { return traces[index(r)]; }
  const LocalTrace& of(Rank r) const { return traces[index(r)]; }
  /// Events held, all ranks of the shard.
  std::uint64_t events() const {
    std::uint64_t n = 0;
    for (const LocalTrace& t : traces) n += t.size();
    for (const auto& threads : workers)
      for (const LocalTrace& t : threads) n += t.size();
    return n;
  }
};

}  // namespace cpreplay
