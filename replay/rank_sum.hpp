// SPDX-License-Identifier: BSD-3-Clause
// Sums of per-trace-rank rows in one fixed order over the trace ranks, whatever the number of
// processes that hold them: the results are bit-identical for every M (docs/replay-engine.md §7).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// Writes the row of the i-th rank of this process's shard (n values) to `out` (zeroed).
using RowFill = std::function<void(std::size_t i, double* out)>;

/// The element-wise sum over all trace ranks of their rows of n doubles, on every process.
/// Floating-point sums depend on their order, so the order is fixed by the trace ranks alone:
/// a binary tree over them (0+1, 2+3, then (0+1)+(2+3), ...; a last odd part is added on the
/// right), which a process computes for the subtrees inside its block and which the processes
/// complete pairwise up a binomial tree. A process holds O(log N) rows at a time.
/// MPI: collective on world.
std::vector<double> sum_over_ranks(const World& world, const RankBlocks& blocks, std::size_t n,
                                   const RowFill& fill);

/// The same for rows already laid out one after another, shard rank by shard rank.
std::vector<double> sum_over_ranks(const World& world, const RankBlocks& blocks, std::size_t n,
                                   const std::vector<double>& rows);

}  // namespace cpreplay::replay
