// SPDX-License-Identifier: BSD-3-Clause
// Preprocessing shared by all passes: the unified call tree.
#pragma once

#include "cpreplay/events.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// Merges the rank-local call trees into one global tree that is identical on every rank,
/// numbered in depth-first preorder (siblings in order of first appearance, rank 0 first), and
/// rewrites trace.callpath from local to global ids.
/// Post-INVARIANT: a node's parent has a smaller id; ids are preorder positions.
/// MPI: collective on world.
CallTree unify_call_trees(const World& world, const CallTree& local, LocalTrace& trace);

/// The same merge without MPI, for tests: trees[r] belongs to traces[r].
CallTree unify_call_trees_serial(const std::vector<CallTree>& trees,
                                 std::vector<LocalTrace*> traces);

}  // namespace cpreplay::replay
