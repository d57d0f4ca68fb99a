// SPDX-License-Identifier: BSD-3-Clause
// Preprocessing shared by all passes: the unified call tree.
#pragma once

#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// Merges the rank-local call trees (local[i] belongs to shard.traces[i]) into one global tree
/// that is identical on every process, numbered in depth-first preorder (siblings in order of
/// first appearance, rank 0 first), and rewrites the call paths of the shard's Enter/Leave
/// events from local to global ids. The tree does not depend on the number of processes.
/// Post-INVARIANT: a node's parent has a smaller id; ids are preorder positions.
/// MPI: collective on world.
CallTree unify_call_trees(const World& world, const std::vector<CallTree>& local, Shard& shard);

/// What --partial cut off.
struct PartialCut {
  bool applied = false;          ///< some rank's events stop mid-run
  Ticks cut_time = 0;            ///< every rank is analyzed up to here
  Rank first_to_stop = 0;        ///< the rank whose events end first (ties: lower rank)
  int incomplete_ranks = 0;      ///< ranks whose events stop mid-run
  std::uint64_t events_cut = 0;  ///< events after the cut, all ranks
  std::uint64_t regions_closed = 0;  ///< regions left open at the cut, closed there
};

/// --partial: when a rank's events stop mid-run, cuts every rank's events at the earliest
/// last timestamp over all ranks (the latest point where every rank still has events) and
/// closes the regions still open there with Leave events at the cut. Links that point past the
/// cut are dropped. Does nothing when every rank is complete.
/// Hybrid traces: a rank is incomplete if any of its threads is, and ends where its master ends
/// (a worker's last event says nothing about when the process stopped); its threads are cut at
/// the same time. In a parallel region the cut falls into, every thread
/// keeps only the barriers all of the team entered (`barrier_region[region]`: an OpenMP
/// barrier), so the team's barrier instances still pair up.
/// MPI: collective on world.
PartialCut cut_to_common_end(const World& world, Shard& shard,
                             const std::vector<bool>& barrier_region = {});

/// The same merge without MPI, for tests: trees[r] belongs to traces[r].
CallTree unify_call_trees_serial(const std::vector<CallTree>& trees,
                                 std::vector<LocalTrace*> traces);

}  // namespace cpreplay::replay
