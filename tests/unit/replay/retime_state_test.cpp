// SPDX-License-Identifier: BSD-3-Clause
// The re-timing replay's compact tables: EventBits' select and next (the inverse of rank, and
// the walk over set bits) and latest_bit_before, NearTimes and Gaps (4-byte values, the rare far one exact),
// RankColumn and PathColumn (1-byte codes while there are few distinct values), popcount64 and
// FlatMap (the records' inbox) against the standard library, slack_ticks against the double
// comparison it replaces, LastCall against a stack of open regions.
#include "replay/retime_state.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

namespace cpreplay::replay::detail::retiming {
namespace {

TEST(EventBits, Popcount64CountsEveryBitPattern) {
  std::mt19937_64 gen(11);
  const std::uint64_t edges[] = {0,
                                 1,
                                 ~std::uint64_t{0},
                                 std::uint64_t{1} << 63,
                                 0x5555555555555555ull,
                                 0xAAAAAAAAAAAAAAAAull,
                                 0xFF00FF00FF00FF00ull};
  for (std::uint64_t x : edges)
    EXPECT_EQ(popcount64(x), static_cast<std::uint32_t>(__builtin_popcountll(x))) << x;
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t x = gen() & gen();  // sparse and dense words
    ASSERT_EQ(popcount64(x), static_cast<std::uint32_t>(__builtin_popcountll(x))) << x;
  }
}

TEST(SlackTicks, IntegerComparisonAgreesWithTheDoubleOne) {
  // v <= slack_ticks(limit) exactly when double(v) <= limit: limits with and without
  // fractions, beyond 2^53 (where doubles are spaced wider than a tick), negative. (The pass
  // runs only with a limit >= 0; a NaN limit is not one.)
  const double limits[] = {0.0,  0.5,        1.0,          22120.43,      1e9 + 0.25,
                           0x1p53, 0x1p53 + 2.0, 0x1p60 + 512.0, 0x1p62,       -0.5,
                           -3.0, 0x1p63,     std::numeric_limits<double>::infinity()};
  std::mt19937_64 gen(3);
  for (const double limit : limits) {
    const Clk s = slack_ticks(limit);
    std::vector<Clk> probes = {std::numeric_limits<Clk>::min(), std::numeric_limits<Clk>::max(), 0,
                               -1, 1};
    if (s != std::numeric_limits<Clk>::min() && s != std::numeric_limits<Clk>::max())
      for (Clk d = -1100; d <= 1100; ++d) probes.push_back(s + d);
    for (int i = 0; i < 2000; ++i) probes.push_back(static_cast<Clk>(gen()));
    for (const Clk v : probes)
      ASSERT_EQ(v <= s, static_cast<double>(v) <= limit) << "limit " << limit << " v " << v;
  }
}

TEST(FlatMap, InsertFindEraseAgreeWithAnUnorderedMap) {
  // Keys as the replay makes them (key_of: kind, partner, event): runs of consecutive events
  // from several partners and kinds, which share low bits and land in neighbouring slots,
  // inserted, found and erased in a random order while the table grows and wraps around.
  std::mt19937_64 gen(5);
  FlatMap map;
  std::unordered_map<std::uint64_t, Clk> ref;
  std::vector<std::uint64_t> keys;
  for (std::uint32_t partner = 0; partner < 6; ++partner)
    for (std::uint32_t e = 1000; e < 1600; ++e)
      keys.push_back(key_of(partner % 2 == 0 ? kLsF : kLrB, partner, e));
  for (std::uint32_t e = 0; e < 300; ++e) keys.push_back(key_of(kDownF, 7, 0xFFFFFFFFu - e));
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t key = keys[gen() % keys.size()];
      const Clk value = static_cast<Clk>(gen() % 1000000) - 500000;
      const int op = static_cast<int>(gen() % 3);
      if (op == 0) {
        ASSERT_EQ(map.insert(key, value), ref.count(key) == 0);
        ref[key] = value;
      } else if (op == 1) {
        map.erase(key);
        ref.erase(key);
      } else {
        Clk got = 0;
        const auto it = ref.find(key);
        ASSERT_EQ(map.find(key, got), it != ref.end());
        if (it != ref.end()) {
          ASSERT_EQ(got, it->second);
        }
      }
      ASSERT_EQ(map.size(), ref.size());
    }
    for (const std::uint64_t key : keys) {
      Clk got = 0;
      const auto it = ref.find(key);
      ASSERT_EQ(map.find(key, got), it != ref.end()) << key;
      if (it != ref.end()) {
        ASSERT_EQ(got, it->second);
      }
    }
  }
  map.clear();
  Clk got = 0;
  EXPECT_FALSE(map.find(keys.front(), got));
  EXPECT_EQ(map.size(), 0u);
}

TEST(EventBits, SelectInvertsRankAndNextWalksTheSetBits) {
  // Set bits in the first word, across word boundaries, a run of empty words, the last event.
  const std::vector<EventIdx> set = {0, 5, 63, 64, 65, 127, 128, 700, 701, 1000, 4095};
  EventBits bits;
  bits.resize(4096);
  for (const EventIdx e : set) bits.set(e);
  bits.finish();
  for (std::uint32_t i = 0; i < set.size(); ++i) {
    EXPECT_EQ(bits.select(i), set[i]) << i;
    EXPECT_EQ(bits.rank(set[i]), i);
  }
  // Out of order (the hint goes back) and again in order.
  EXPECT_EQ(bits.select(9), 1000u);
  EXPECT_EQ(bits.select(2), 63u);
  EXPECT_EQ(bits.select(0), 0u);
  EXPECT_EQ(bits.select(7), 700u);
  std::vector<EventIdx> walked;
  for (EventIdx e = bits.next(0); e != kNoEvent; e = bits.next(e + 1)) walked.push_back(e);
  EXPECT_EQ(walked, set);
  EXPECT_EQ(bits.next(129), 700u);
  EXPECT_EQ(bits.next(4096), kNoEvent);
  EventBits none;
  EXPECT_EQ(none.next(0), kNoEvent);
}

TEST(EventBits, LatestBitBeforeIsTheLastSetBitStrictlyBefore) {
  // The profiled clock's hops between threads: the latest hop strictly before an event, by its
  // index (a bit per hopping event; never resized: no hops at all).
  EventBits bits;
  EXPECT_EQ(latest_bit_before(bits, 0), UINT32_MAX);
  EXPECT_EQ(latest_bit_before(bits, 500), UINT32_MAX);
  bits.resize(300);
  for (const EventIdx e : {3u, 64u, 200u, 299u}) bits.set(e);
  bits.finish();
  EXPECT_EQ(latest_bit_before(bits, 0), UINT32_MAX);
  EXPECT_EQ(latest_bit_before(bits, 3), UINT32_MAX);  // strictly before
  EXPECT_EQ(latest_bit_before(bits, 4), 0u);
  EXPECT_EQ(latest_bit_before(bits, 64), 0u);
  EXPECT_EQ(latest_bit_before(bits, 65), 1u);
  EXPECT_EQ(latest_bit_before(bits, 299), 2u);
  EXPECT_EQ(latest_bit_before(bits, 300), 3u);  // the location's end
  EXPECT_EQ(bits.select(latest_bit_before(bits, 250)), 200u);
}

TEST(EventBits, SelectAgreesWithAScanAtRandom) {
  std::mt19937 gen(3);
  std::bernoulli_distribution dense(0.3), sparse(0.002);
  EventBits bits;
  const std::size_t n = 200000;
  bits.resize(n);
  std::vector<EventIdx> set;
  for (EventIdx e = 0; e < n; ++e)
    if ((e / 10000) % 2 == 0 ? dense(gen) : sparse(gen)) {
      bits.set(e);
      set.push_back(e);
    }
  bits.finish();
  for (std::uint32_t i = 0; i < set.size(); ++i) ASSERT_EQ(bits.select(i), set[i]) << i;
  std::uniform_int_distribution<std::uint32_t> any(0, static_cast<std::uint32_t>(set.size() - 1));
  for (int k = 0; k < 10000; ++k) {
    const std::uint32_t i = any(gen);
    ASSERT_EQ(bits.select(i), set[i]) << i;
  }
}

TEST(NearTimes, KeepsNearDistancesInFourBytesAndFarOnesExactly) {
  NearTimes t;
  const Ticks at = Ticks{1} << 40;
  // Before, after (a skewed clock: negative distance), at the 31-bit edges, and far both ways.
  const std::int32_t before = t.encode(1, at, at - 1000);
  const std::int32_t after = t.encode(2, at, at + 5);
  const std::int32_t edge = t.encode(3, at, at - std::numeric_limits<std::int32_t>::max());
  const std::int32_t low_edge =
      t.encode(4, at, at + (Ticks{1} << 31) - 1);  // distance -(2^31 - 1): still near
  const std::int32_t far_before = t.encode(5, at, at - (Ticks{1} << 31));
  const std::int32_t far_after = t.encode(6, at, at + (Ticks{1} << 31));
  EXPECT_EQ(before, 1000);
  EXPECT_EQ(after, -5);
  EXPECT_EQ(edge, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(low_edge, -std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(far_before, NearTimes::kFar);
  EXPECT_EQ(far_after, NearTimes::kFar);
  EXPECT_EQ(t.decode(1, at, before), at - 1000);
  EXPECT_EQ(t.decode(2, at, after), at + 5);
  EXPECT_EQ(t.decode(3, at, edge), at - std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(t.decode(4, at, low_edge), at + (Ticks{1} << 31) - 1);
  EXPECT_EQ(t.decode(5, at, far_before), at - (Ticks{1} << 31));
  EXPECT_EQ(t.decode(6, at, far_after), at + (Ticks{1} << 31));
  // Two far ready times of one event: the later one counts.
  EXPECT_EQ(t.encode(7, at, at - (Ticks{1} << 35)), NearTimes::kFar);
  EXPECT_EQ(t.encode(7, at, at - (Ticks{1} << 33)), NearTimes::kFar);
  EXPECT_EQ(t.decode(7, at, NearTimes::kFar), at - (Ticks{1} << 33));
}

TEST(Gaps, KeepsEveryCompletionTimeExactly) {
  Gaps g;
  const std::vector<Clk> values = {0,
                                   1,
                                   -1,
                                   123456,
                                   std::numeric_limits<std::int32_t>::max(),
                                   std::numeric_limits<std::int32_t>::min() + Clk{1},
                                   std::numeric_limits<std::int32_t>::min(),  // the marker: far
                                   Clk{1} << 31,
                                   -(Clk{1} << 40),
                                   Clk{1} << 50,
                                   42};
  g.reserve(values.size());
  for (const Clk v : values) g.push_back(v);
  ASSERT_EQ(g.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(g[i], values[i]) << i;
}

TEST(RankColumn, OneByteForAFewPartnersFourFromThe256thOn) {
  RankColumn few;
  const std::vector<Rank> ring = {3, 1, 3, 1, 7, 3, 100000, 1};
  for (const Rank r : ring) few.push_back(r);
  few.finish();
  ASSERT_EQ(few.size(), ring.size());
  for (std::size_t i = 0; i < ring.size(); ++i) EXPECT_EQ(few[i], ring[i]) << i;
  // 300 distinct partners, each twice: the column widens at the 256th and keeps every value.
  RankColumn many;
  std::vector<Rank> all;
  for (int k = 0; k < 2; ++k)
    for (Rank r = 0; r < 300; ++r) {
      const Rank v = (r * 7919) % 1000003;
      all.push_back(v);
      many.push_back(v);
    }
  many.finish();
  ASSERT_EQ(many.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(many[i], all[i]) << i;
  // Exactly 255 distinct partners still fit the table.
  RankColumn edge;
  for (Rank r = 0; r < 255; ++r) edge.push_back(254 - r);
  edge.push_back(0);
  edge.finish();
  ASSERT_EQ(edge.size(), 256u);
  for (Rank r = 0; r < 255; ++r) EXPECT_EQ(edge[static_cast<std::size_t>(r)], 254 - r);
  EXPECT_EQ(edge[255], 0);
}

TEST(PathColumn, CallPathsOfOpenMPEventsInOneByteCodes) {
  // A thread's OpenMP events name few call paths (its parallel regions and barriers), and
  // "none" (UINT32_MAX) among them; a column with more than 255 of them widens and keeps all.
  PathColumn few;
  const std::vector<std::uint32_t> paths = {UINT32_MAX, 12, 40, 12, UINT32_MAX, 0, 40};
  for (const std::uint32_t p : paths) few.push_back(p);
  few.finish();
  ASSERT_EQ(few.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(few[i], paths[i]) << i;
  PathColumn many;
  std::vector<std::uint32_t> all;
  for (std::uint32_t p = 0; p < 400; ++p) {
    const std::uint32_t v = p % 3 == 0 ? UINT32_MAX : p * 1000;
    all.push_back(v);
    many.push_back(v);
  }
  many.finish();
  ASSERT_EQ(many.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(many[i], all[i]) << i;
}

// LastCall answers call_of for events in event order, without its scan inside a call no region
// opens in: multi-wait calls with several completions, an MPI call with a region inside it
// (where the answer must come from call_of), a call never closed (the trace's last), events
// directly in main between calls. Checked against a stack over every event, and where the
// events skip some (only a call's completions asked, as the preparation asks).
TEST(LastCall, AnswersCallOfInEventOrder) {
  LocalTrace t;
  std::vector<EventIdx> want;  // per event: the innermost open Enter before it (or kNoEvent)
  std::vector<EventIdx> stack;
  auto push = [&](EventKind k) {
    const auto e = static_cast<EventIdx>(t.size());
    want.push_back(stack.empty() ? kNoEvent : stack.back());
    t.push(k, e, 0);
    if (k == EventKind::Enter) stack.push_back(e);
    if (k == EventKind::Leave) stack.pop_back();
  };
  push(EventKind::RequestTest);  // before main: no call
  push(EventKind::Enter);        // main
  for (int it = 0; it < 200; ++it) {
    push(EventKind::Enter);  // a multi-wait: 1-5 completions
    for (int j = 0; j <= it % 5; ++j) push(it % 2 ? EventKind::IsendComplete : EventKind::Irecv);
    push(EventKind::Leave);
    push(EventKind::RequestTest);  // directly in main
    if (it % 7 == 3) {             // a call with a region inside: completions before and after
      push(EventKind::Enter);
      push(EventKind::Irecv);
      push(EventKind::Enter);
      push(EventKind::Irecv);
      push(EventKind::Leave);
      push(EventKind::IsendComplete);
      push(EventKind::Leave);
    }
  }
  push(EventKind::Enter);  // a call never closed
  push(EventKind::Irecv);
  push(EventKind::IsendComplete);
  const auto n = static_cast<EventIdx>(t.size());
  LastCall every;
  for (EventIdx e = 0; e < n; ++e) {
    if (t.is_enter_or_leave(e)) continue;
    ASSERT_EQ(every.of(t, e), want[e]) << "event " << e;
  }
  LastCall completions;
  for (EventIdx e = 0; e < n; ++e) {
    if (t.kind[e] != EventKind::Irecv && t.kind[e] != EventKind::IsendComplete) continue;
    ASSERT_EQ(completions.of(t, e), want[e]) << "event " << e;
  }
  // The last call's Leave: kNoEvent while it is open.
  EXPECT_EQ(completions.leave, kNoEvent);
  EXPECT_TRUE(completions.flat);
}

}  // namespace
}  // namespace cpreplay::replay::detail::retiming
