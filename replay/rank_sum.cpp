// SPDX-License-Identifier: BSD-3-Clause
// The fixed-order sum over trace ranks: a stack of complete subtrees, merged as siblings meet.
#include "replay/rank_sum.hpp"

#include <algorithm>
#include <cstdint>

namespace cpreplay::replay {
namespace {

constexpr int kTag = 7505;

/// The sum over the trace ranks [start, start + 2^level): a node of the tree, complete.
struct Fragment {
  std::int64_t start;
  int level;
  std::vector<double> values;
};

/// Appends a fragment that follows the last one, merging siblings: the stack then holds the
/// maximal complete subtrees of the ranks pushed so far, left to right, whatever pieces they came
/// in (single ranks or subtrees of another process). Merging is left + right, as the tree says.
void push(std::vector<Fragment>& stack, Fragment f) {
  stack.push_back(std::move(f));
  while (stack.size() >= 2) {
    Fragment& a = stack[stack.size() - 2];
    const Fragment& b = stack.back();
    const std::int64_t width = std::int64_t{1} << a.level;
    if (a.level != b.level || a.start % (2 * width) != 0 || a.start + width != b.start) break;
    for (std::size_t i = 0; i < a.values.size(); ++i) a.values[i] += b.values[i];
    ++a.level;
    stack.pop_back();
  }
}

}  // namespace

std::vector<double> sum_over_ranks(const World& world, const RankBlocks& blocks, std::size_t n,
                                   const RowFill& fill) {
  const int me = world.rank();
  std::vector<Fragment> stack;
  for (Rank r = blocks.first(me); r < blocks.first(me + 1); ++r) {
    Fragment leaf{r, 0, std::vector<double>(n, 0.0)};
    fill(static_cast<std::size_t>(r - blocks.first(me)), leaf.values.data());
    push(stack, std::move(leaf));
  }
  // Processes combine their stacks pairwise: p takes p + d's (the ranks right after its own).
  const std::size_t stride = n + 2;  // start and level travel as doubles (exact below 2^53)
  std::vector<double> wire;
  bool sent = false;
  for (int d = 1; d < world.size() && !sent; d *= 2) {
    if (me % (2 * d) != 0) {
      wire.clear();
      for (const Fragment& f : stack) {
        wire.push_back(static_cast<double>(f.start));
        wire.push_back(static_cast<double>(f.level));
        wire.insert(wire.end(), f.values.begin(), f.values.end());
      }
      MPI_Send(wire.data(), static_cast<int>(wire.size()), MPI_DOUBLE, me - d, kTag, world.comm());
      sent = true;
      continue;
    }
    if (me + d >= world.size()) continue;
    MPI_Status status;
    MPI_Probe(me + d, kTag, world.comm(), &status);
    int count = 0;
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    wire.resize(static_cast<std::size_t>(count));
    MPI_Recv(wire.data(), count, MPI_DOUBLE, me + d, kTag, world.comm(), MPI_STATUS_IGNORE);
    for (std::size_t at = 0; at + stride <= wire.size(); at += stride)
      push(stack, Fragment{static_cast<std::int64_t>(wire[at]), static_cast<int>(wire[at + 1]),
                           std::vector<double>(wire.begin() + static_cast<std::ptrdiff_t>(at + 2),
                                               wire.begin() +
                                                   static_cast<std::ptrdiff_t>(at + stride))});
  }
  // Process 0 now holds the subtrees of every rank; those the last ranks leave incomplete are
  // added right to left (a missing right child adds nothing).
  std::vector<double> total(n, 0.0);
  if (!sent) {
    total = std::move(stack.back().values);
    for (std::size_t j = stack.size() - 1; j-- > 0;)
      for (std::size_t i = 0; i < n; ++i) total[i] = stack[j].values[i] + total[i];
  }
  MPI_Bcast(total.data(), static_cast<int>(n), MPI_DOUBLE, 0, world.comm());
  return total;
}

std::vector<double> sum_over_ranks(const World& world, const RankBlocks& blocks, std::size_t n,
                                   const std::vector<double>& rows) {
  return sum_over_ranks(world, blocks, n, [&](std::size_t i, double* out) {
    std::copy(rows.begin() + static_cast<std::ptrdiff_t>(i * n),
              rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * n), out);
  });
}

}  // namespace cpreplay::replay
