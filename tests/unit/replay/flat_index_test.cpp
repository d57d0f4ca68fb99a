// SPDX-License-Identifier: BSD-3-Clause
// FlatIndex against std::map under insertions, replacements and erasures that force probe runs.
#include "replay/flat_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

namespace cpreplay::replay {
namespace {

TEST(FlatIndex, EmptyFindsNothing) {
  FlatIndex index;
  EXPECT_EQ(index.find(0), FlatIndex::kNone);
  EXPECT_FALSE(index.contains(42));
  index.erase(42);  // no-op
  EXPECT_TRUE(index.empty());
}

TEST(FlatIndex, SetReplaceErase) {
  FlatIndex index;
  index.set(7, 70);
  index.set(7, 71);  // replaces
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.find(7), 71u);
  bool inserted = true;
  std::uint32_t* v = index.find_or_insert(7, 0, inserted);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*v, 71u);
  *v = 72;
  EXPECT_EQ(index.find(7), 72u);
  v = index.find_or_insert(8, 80, inserted);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*v, 80u);
  index.erase(7);
  EXPECT_EQ(index.find(7), FlatIndex::kNone);
  EXPECT_EQ(index.find(8), 80u);
  EXPECT_EQ(index.size(), 1u);
}

// Keys that are multiples of a large power of two collide in few home slots, so erasing from
// the middle of long probe runs exercises the backward shift.
TEST(FlatIndex, MatchesMapUnderRandomOperations) {
  FlatIndex index;
  std::map<std::uint64_t, std::uint32_t> ref;
  std::mt19937_64 rng(11);
  for (int op = 0; op < 200000; ++op) {
    const std::uint64_t key = (rng() % 3000) << (op % 2 == 0 ? 0 : 40);
    switch (rng() % 3) {
      case 0:
      case 1: {
        const auto value = static_cast<std::uint32_t>(rng() % 1000000);
        index.set(key, value);
        ref[key] = value;
        break;
      }
      default:
        index.erase(key);
        ref.erase(key);
    }
    if (op % 997 == 0) {
      ASSERT_EQ(index.size(), ref.size()) << "after operation " << op;
      for (const auto& [k, v] : ref) ASSERT_EQ(index.find(k), v) << "key " << k;
    }
  }
  std::size_t seen = 0;
  index.for_each([&](std::uint64_t k, std::uint32_t v) {
    ++seen;
    EXPECT_EQ(ref.at(k), v);
  });
  EXPECT_EQ(seen, ref.size());
}

}  // namespace
}  // namespace cpreplay::replay
