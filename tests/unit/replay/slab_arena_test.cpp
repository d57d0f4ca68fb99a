// SPDX-License-Identifier: BSD-3-Clause
// SlabArena / SlabDeque: blocks off the heap, slabs handed back as soon as they are empty, and a
// deque over them that keeps its values through growth, moves, swaps and copies.
#include "replay/memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace cpreplay::replay {
namespace {

struct Point {  // the size of a synchronization point
  std::uint32_t event;
  std::uint32_t rest[8];
};

TEST(SlabArena, CarvesInOrderAndUnmapsEmptySlabs) {
  SlabArena arena;
  EXPECT_EQ(arena.mapped(), 0u);
  std::vector<void*> blocks;
  // 2.5 slabs of 512-byte blocks.
  const std::size_t per_slab = SlabArena::kSlabBytes / 512;
  for (std::size_t i = 0; i < per_slab * 5 / 2; ++i) blocks.push_back(arena.allocate(512, 8));
  EXPECT_EQ(arena.mapped(), 3 * SlabArena::kSlabBytes);
  for (std::size_t i = 1; i < per_slab; ++i)  // consecutive within a slab
    EXPECT_EQ(static_cast<char*>(blocks[i]), static_cast<char*>(blocks[i - 1]) + 512);
  // Freeing the first slab's blocks front to back hands it back at its last block.
  for (std::size_t i = 0; i + 1 < per_slab; ++i) arena.deallocate(blocks[i], 512);
  EXPECT_EQ(arena.mapped(), 3 * SlabArena::kSlabBytes);
  arena.deallocate(blocks[per_slab - 1], 512);
  EXPECT_EQ(arena.mapped(), 2 * SlabArena::kSlabBytes);
  // A request larger than a slab gets a mapping of its own, gone when freed; carving goes on
  // in the current slab.
  void* big = arena.allocate(3 * SlabArena::kSlabBytes + 1, 8);
  EXPECT_EQ(arena.mapped(), 2 * SlabArena::kSlabBytes + 3 * SlabArena::kSlabBytes + 4096);
  void* next = arena.allocate(512, 8);
  EXPECT_EQ(static_cast<char*>(next), static_cast<char*>(blocks.back()) + 512);
  arena.deallocate(big, 3 * SlabArena::kSlabBytes + 1);
  EXPECT_EQ(arena.mapped(), 2 * SlabArena::kSlabBytes);
  // Alignment is honoured.
  void* odd = arena.allocate(3, 1);
  void* aligned = arena.allocate(16, 16);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 16, 0u);
  arena.deallocate(odd, 3);
  arena.deallocate(aligned, 16);
}

TEST(SlabArena, FirstBytesFromTheHeapThenSlabs) {
  SlabArena arena(4096);
  std::vector<void*> small;
  for (int i = 0; i < 8; ++i) small.push_back(arena.allocate(512, 8));  // 4 KiB: the heap part
  EXPECT_EQ(arena.mapped(), 0u);
  void* slabbed = arena.allocate(512, 8);
  EXPECT_EQ(arena.mapped(), SlabArena::kSlabBytes);
  void* later = arena.allocate(16, 8);  // once past the heap part, always slabs
  EXPECT_EQ(static_cast<char*>(later), static_cast<char*>(slabbed) + 512);
  for (void* p : small) arena.deallocate(p, 512);  // back to the heap; the slab stays
  EXPECT_EQ(arena.mapped(), SlabArena::kSlabBytes);
  arena.deallocate(later, 16);
  arena.deallocate(slabbed, 512);
}

TEST(SlabDeque, KeepsValuesThroughGrowthMovesSwapsAndCopies) {
  SlabDeque<Point> d;
  const std::uint32_t n = 200000;  // 7 MB: several slabs, a map that grows
  for (std::uint32_t i = 0; i < n; ++i) d.push_back(Point{i, {i * 3}});
  EXPECT_GE(d.get_allocator().arena().mapped(), n * sizeof(Point));
  SlabDeque<Point> moved = std::move(d);
  ASSERT_EQ(moved.size(), n);
  for (std::uint32_t i = 0; i < n; i += 997) EXPECT_EQ(moved[i].rest[0], i * 3);
  SlabDeque<Point> copy = moved;  // a fresh arena of its own
  EXPECT_NE(copy.get_allocator(), moved.get_allocator());
  // Taken from the front (as the root-cause phase moves its points): the slabs go as they empty.
  const std::size_t full = moved.get_allocator().arena().mapped();
  for (std::uint32_t i = 0; i < n / 2; ++i) {
    EXPECT_EQ(moved.front().event, i);
    moved.pop_front();
  }
  // 3.6 MB of points taken: three whole slabs are back (the fourth still holds the rest's blocks).
  EXPECT_LE(moved.get_allocator().arena().mapped(), full - 3 * SlabArena::kSlabBytes);
  SlabDeque<Point>().swap(moved);
  EXPECT_TRUE(moved.empty());
  ASSERT_EQ(copy.size(), n);
  EXPECT_EQ(copy.back().event, n - 1);
  EXPECT_EQ(copy[n / 2].rest[0], n / 2 * 3);
}

}  // namespace
}  // namespace cpreplay::replay
