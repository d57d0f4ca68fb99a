// SPDX-License-Identifier: BSD-3-Clause
// The reader's table of open non-blocking requests (io/request_map.hpp): exact answers for a
// hand-made sequence, and against std::unordered_map over a long random mix of opens and
// closes in a small id space (long probe runs, growth, closes in the middle of a run).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "io/request_map.hpp"

namespace {

using cpreplay::EventIdx;
using cpreplay::kNoEvent;
using cpreplay::io::RequestMap;

TEST(RequestMap, OpensFindsAndClosesRequests) {
  RequestMap m;
  EXPECT_EQ(m.find(7), kNoEvent);
  EXPECT_TRUE(m.insert(7, 100));
  EXPECT_TRUE(m.insert(0, 5));                      // id 0 is an id like any other
  EXPECT_TRUE(m.insert(UINT64_MAX, 0));             // so is the largest; event 0 is a value
  EXPECT_FALSE(m.insert(7, 200));                   // open already: unchanged
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.find(7), 100u);
  EXPECT_EQ(m.find(0), 5u);
  EXPECT_EQ(m.find(UINT64_MAX), 0u);
  EXPECT_EQ(m.take(7), 100u);
  EXPECT_EQ(m.take(7), kNoEvent);                   // closed
  EXPECT_EQ(m.find(7), kNoEvent);
  EXPECT_TRUE(m.insert(7, 300));                    // an id is reused after its completion
  EXPECT_EQ(m.take(7), 300u);
  EXPECT_EQ(m.take(0), 5u);
  EXPECT_EQ(m.take(UINT64_MAX), 0u);
  EXPECT_EQ(m.size(), 0u);
}

TEST(RequestMap, ManyOpenAtOnceGrowAndStayFound) {
  RequestMap m;
  // Consecutive ids, as Score-P numbers its requests, 5,000 open at once (the table grows
  // from 16 slots), then closed in an order unlike the opens'.
  for (std::uint64_t id = 1; id <= 5000; ++id)
    ASSERT_TRUE(m.insert(id, static_cast<EventIdx>(10 * id)));
  EXPECT_EQ(m.size(), 5000u);
  for (std::uint64_t id = 2; id <= 5000; id += 2) ASSERT_EQ(m.take(id), EventIdx(10 * id));
  for (std::uint64_t id = 1; id <= 5000; id += 2) ASSERT_EQ(m.find(id), EventIdx(10 * id));
  for (std::int64_t id = 4999; id >= 1; id -= 2)
    ASSERT_EQ(m.take(static_cast<std::uint64_t>(id)), static_cast<EventIdx>(10 * id));
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find(1), kNoEvent);
}

TEST(RequestMap, SameAnswersAsAnUnorderedMapOverRandomOpensAndCloses) {
  RequestMap m;
  std::unordered_map<std::uint64_t, EventIdx> ref;
  std::mt19937_64 rng(20261129);
  // 96 ids (some far apart, some adjacent) for up to 96 open requests: long probe runs in a
  // table of 128-256 slots, so closes shift entries in the middle of runs.
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 64; ++i) ids.push_back(i);
  for (std::uint64_t i = 0; i < 32; ++i) ids.push_back(rng());
  EventIdx next = 0;
  for (int step = 0; step < 200000; ++step) {
    const std::uint64_t id = ids[rng() % ids.size()];
    const auto it = ref.find(id);
    switch (rng() % 3) {
      case 0: {  // open
        const bool fresh = it == ref.end();
        ASSERT_EQ(m.insert(id, next), fresh) << "step " << step;
        if (fresh) ref.emplace(id, next);
        ++next;
        break;
      }
      case 1:  // close
        ASSERT_EQ(m.take(id), it == ref.end() ? kNoEvent : it->second) << "step " << step;
        if (it != ref.end()) ref.erase(it);
        break;
      default:  // look up
        ASSERT_EQ(m.find(id), it == ref.end() ? kNoEvent : it->second) << "step " << step;
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (const std::uint64_t id : ids) {
    const auto it = ref.find(id);
    EXPECT_EQ(m.find(id), it == ref.end() ? kNoEvent : it->second);
  }
}

}  // namespace
