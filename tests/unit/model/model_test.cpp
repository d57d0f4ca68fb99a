// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the trace model: call tree, MPI region classification, names, unification.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/large_vector.hpp"
#include "replay/preprocess.hpp"

namespace cpreplay {
namespace {

TEST(CallTree, SameRegionUnderDifferentParents_GivesDistinctPaths) {
  CallTree t;
  const CallpathId root = t.find_or_add(CallpathId{}, RegionId{0});
  const CallpathId a = t.find_or_add(root, RegionId{1});
  const CallpathId b = t.find_or_add(root, RegionId{2});
  const CallpathId a_under_b = t.find_or_add(b, RegionId{1});
  EXPECT_EQ(t.find_or_add(root, RegionId{1}), a);  // found again, not added
  EXPECT_NE(a, a_under_b);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.node(a_under_b).parent, b);
  const auto kids = t.children();
  EXPECT_EQ(kids[root.value], (std::vector<std::uint32_t>{a.value, b.value}));
}

// More (parent, region) pairs than the lookup keeps recent ones, looked up in random order
// (slots shared and replaced): every answer is the call path its first lookup created, and
// copies answer as the original does.
TEST(CallTree, FindOrAdd_ManyPairsInAnyOrder_KeepTheirFirstIds) {
  CallTree t;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> first;
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t parent = t.size() == 0 ? UINT32_MAX : rng() % t.size();
    const std::uint32_t region = rng() % 40;
    const CallpathId id = t.find_or_add(
        parent == UINT32_MAX ? CallpathId{} : CallpathId{parent}, RegionId{region});
    const auto [it, fresh] = first.emplace(std::make_pair(parent, region), id.value);
    ASSERT_EQ(id.value, it->second) << "lookup " << i;
    if (fresh) {
      ASSERT_EQ(id.value + 1, t.size());
    }
  }
  const CallTree copy = t;
  CallTree again = copy;
  for (const auto& [key, id] : first)
    ASSERT_EQ(again.find_or_add(key.first == UINT32_MAX ? CallpathId{} : CallpathId{key.first},
                                RegionId{key.second})
                  .value,
              id);
  EXPECT_EQ(again.size(), t.size());
}

TEST(ClassifyMpiRegion, NamesAsScoutClassifiesThem) {
  EXPECT_EQ(classify_mpi_region("sim.c", "MPI_Send"), MpiClass::None);  // not an MPI wrapper
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Init"), MpiClass::Init);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Init_thread"), MpiClass::Init);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Finalize"), MpiClass::Finalize);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Send"), MpiClass::Send);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Ssend"), MpiClass::Send);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Bsend"), MpiClass::OtherSend);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Isend"), MpiClass::OtherSend);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Sendrecv"), MpiClass::SendRecv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Sendrecv_replace"), MpiClass::SendRecv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Recv"), MpiClass::Recv);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Wait"), MpiClass::WaitSingle);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitany"), MpiClass::WaitSingle);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitall"), MpiClass::WaitMulti);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Waitsome"), MpiClass::WaitMulti);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Testall"), MpiClass::Test);
  EXPECT_EQ(classify_mpi_region("MPI", "MPI_Barrier"), MpiClass::Other);
}

TEST(RoleAndParadigmNames, ArePearlStrings) {
  EXPECT_STREQ(role_name(RegionRole::Point2Point), "point2point");
  EXPECT_STREQ(role_name(RegionRole::Barrier), "barrier");
  EXPECT_STREQ(role_name(RegionRole::Coll1ToN), "one2all");
  EXPECT_STREQ(role_name(RegionRole::CollOther), "other collective");
  EXPECT_STREQ(paradigm_name(Paradigm::Mpi), "mpi");
  EXPECT_STREQ(paradigm_name(Paradigm::Measurement), "measurement");
}

TEST(Clock, SpanUsesTheIntegerDifference) {
  Clock c;
  c.global_offset = 1000;
  c.ticks_per_second = 1'000'000'000;
  EXPECT_DOUBLE_EQ(c.seconds(1000 + 2'500'000'000ULL), 2.5);
  EXPECT_DOUBLE_EQ(c.span(1'000'000'000'123ULL, 1'000'000'000'623ULL), 5e-7);
}

// Offsets beyond 32 bits, times before their block's base, and whole-rank shifts round-trip.
TEST(TimeColumn, KeepsEveryTimestampExactly) {
  TimeColumn t;
  std::vector<Ticks> expect;
  Ticks now = 1'000'000'000'000ULL;
  for (int i = 0; i < 10000; ++i) {
    now += (i % 3000 == 2999) ? 7'000'000'000ULL : 17;  // some gaps need the side map
    t.push_back(now);
    expect.push_back(now);
  }
  for (std::size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(t[i], expect[i]) << i;
  t.set(4096, expect[4096] - 5);  // before its block's base
  t.set(4097, expect[4097] + (Ticks{1} << 40));
  t.set(4097, expect[4097]);  // back into 32 bits
  EXPECT_EQ(t[4096], expect[4096] - 5);
  EXPECT_EQ(t[4097], expect[4097]);
  t.shift_all(-1'000'000);
  EXPECT_EQ(t[0], expect[0] - 1'000'000);
  EXPECT_EQ(t[2999], expect[2999] - 1'000'000);
  EXPECT_EQ(t[4096], expect[4096] - 5 - 1'000'000);
  EXPECT_EQ(t.upper_bound(expect[5000] - 1'000'000), 5001u);
  t.truncate(4097);
  EXPECT_EQ(t.size(), 4097u);
  EXPECT_EQ(t.back(), expect[4096] - 5 - 1'000'000);
  t.push_back(expect[4096]);
  EXPECT_EQ(t[4097], expect[4096]);
}

// One event every 10 ms at 1 GHz ticks (100 s in all): no block of 256 spans 2^32 ticks, so no
// timestamp needs the side map, and the column takes 4 B per event plus 8 B per block.
TEST(TimeColumn, SparseEventsStayInFourBytes) {
  TimeColumn t;
  t.reserve(10000);
  for (Ticks i = 0; i < 10000; ++i) t.push_back(5'000'000'000ULL + i * 10'000'000ULL);
  EXPECT_EQ(t.bytes_used(), 10000u * 4 + 40u * 8);
  EXPECT_EQ(t[9999], 5'000'000'000ULL + 9999 * 10'000'000ULL);
}

TEST(KindColumn, CountAgreesWithDecodingEveryEvent) {
  // Every pair of kinds, over columns of even and odd length (the last byte half empty) with
  // every kind in every position, Enter (kind 0) included.
  std::mt19937 rng(7);
  for (std::size_t n : {0u, 1u, 2u, 3u, 16u, 255u, 256u, 1001u}) {
    KindColumn col;
    for (std::size_t i = 0; i < n; ++i)
      col.push_back(
          static_cast<EventKind>(rng() % (static_cast<unsigned>(EventKind::ThreadLock) + 1)));
    for (unsigned a = 0; a <= static_cast<unsigned>(EventKind::ThreadLock); ++a)
      for (unsigned b = a; b <= static_cast<unsigned>(EventKind::ThreadLock); ++b) {
        std::size_t want = 0;
        for (EventIdx i = 0; i < n; ++i)
          want += static_cast<unsigned>(col[i]) == a || static_cast<unsigned>(col[i]) == b;
        EXPECT_EQ(col.count(static_cast<EventKind>(a), static_cast<EventKind>(b)), want)
            << n << " events, kinds " << a << " and " << b;
      }
  }
  KindColumn enters;
  for (int i = 0; i < 3; ++i) enters.push_back(EventKind::Enter);
  EXPECT_EQ(enters.count(EventKind::Enter, EventKind::Enter), 3u);  // not the empty half
}

TEST(KindColumn, NextOfStopsWhereDecodingEveryEventStops) {
  // Sets of one to three kinds (Enter, kind 0, among them: an odd column's empty half is no
  // event), from every start, over columns of even and odd length.
  std::mt19937 rng(11);
  const unsigned kinds = static_cast<unsigned>(EventKind::ThreadLock) + 1;
  for (std::size_t n : {0u, 1u, 2u, 5u, 64u, 333u}) {
    KindColumn col;
    for (std::size_t i = 0; i < n; ++i) col.push_back(static_cast<EventKind>(rng() % kinds));
    for (int trial = 0; trial < 40; ++trial) {
      std::uint32_t mask = 0;
      for (int j = 0; j <= trial % 3; ++j) mask |= 1u << (rng() % kinds);
      if (trial == 0) mask = 1u;  // Enter alone
      const KindColumn::KindSet set = KindColumn::kind_set(mask);
      for (std::size_t from = 0; from <= n + 1; ++from) {
        std::size_t want = from;
        const auto in = [&](std::size_t i) {
          return (mask >> static_cast<unsigned>(col[static_cast<EventIdx>(i)])) & 1u;
        };
        while (want < n && !in(want)) ++want;
        want = std::min(want, n);
        EXPECT_EQ(col.next_of(from, set), want)
            << n << " events, mask " << mask << " from " << from;
      }
    }
  }
}

// A main loop of 3,000 iterations (each a closed region of 0-3 nested calls, some 300 events
// deep at times, and events directly in main between them): call_of of every non-Enter/Leave
// event equals the innermost open Enter a stack gives, looked up forwards, backwards, strided and
// again forwards (the cache and the marks every 256 events both answer; the backward order is
// the critical path's, which scanned back to main's Enter every time before the marks).
TEST(LocalTrace, CallOf_LongMainLoopAnyOrder_MatchesTheStack) {
  LocalTrace t;
  std::vector<EventIdx> want;  // per event: the innermost open Enter before it (or kNoEvent)
  std::vector<EventIdx> stack;
  std::uint32_t rng = 12345;
  auto next = [&] { return rng = rng * 1103515245u + 12345u, (rng >> 16) & 0x7fff; };
  auto push = [&](EventKind k) {
    const auto e = static_cast<EventIdx>(t.size());
    want.push_back(stack.empty() ? kNoEvent : stack.back());
    t.push(k, e, 0);
    if (k == EventKind::Enter) stack.push_back(e);
    if (k == EventKind::Leave) stack.pop_back();
  };
  push(EventKind::Enter);  // main
  for (int it = 0; it < 3000; ++it) {
    push(EventKind::RequestTest);  // directly in main
    const int depth = static_cast<int>(next() % 4);
    const int inner = next() % 50 == 0 ? 300 : static_cast<int>(next() % 6);
    for (int d = 0; d < depth; ++d) push(EventKind::Enter);
    for (int j = 0; j < inner; ++j) push(j % 7 == 3 ? EventKind::ThreadFork : EventKind::RequestTest);
    for (int d = 0; d < depth; ++d) {
      push(EventKind::Leave);
      if (next() % 3 == 0) push(EventKind::RequestTest);  // between Leaves: in the parent
    }
  }
  push(EventKind::Leave);
  t.push(EventKind::RequestTest, static_cast<Ticks>(t.size()), 0);  // after main: no call
  want.push_back(kNoEvent);
  const auto n = static_cast<EventIdx>(t.size());
  ASSERT_GT(n, 20000u);
  auto check = [&](EventIdx e) {
    if (t.is_enter_or_leave(e)) return;
    ASSERT_EQ(t.call_of(e), want[e]) << "event " << e;
  };
  for (EventIdx e = 0; e < n; ++e) check(e);
  for (EventIdx e = n; e-- > 0;) check(e);
  for (EventIdx s = 0; s < 97; ++s)
    for (EventIdx e = s; e < n; e += 97) check(e);
  for (EventIdx e = 0; e < n; ++e) check(e);
}

// main { MPI_Waitall { 3 completions } user { MPI_Send { send } } }: calls and Leaves are found
// by scanning, in event order and out of it, and a cut keeps no link past its end.
TEST(LocalTrace, CallsAndLinksAreDerived) {
  LocalTrace t;
  t.push(EventKind::Enter, 0, 0);              // 0 main
  t.push(EventKind::Enter, 1, 1);              // 1 MPI_Waitall
  t.push(EventKind::IsendComplete, 2, kNoEvent);  // 2
  t.push(EventKind::IsendComplete, 3, kNoEvent);  // 3
  t.push(EventKind::IrecvRequest, 4, kNoEvent);   // 4
  t.push(EventKind::Leave, 5, 1);              // 5
  t.push(EventKind::Enter, 6, 2);              // 6 user
  t.push(EventKind::Enter, 7, 3);              // 7 MPI_Send
  P2pRecord rec;
  rec.partner = 10;
  t.p2p.push_back(rec);
  t.push(EventKind::Isend, 8, 0);              // 8
  t.push(EventKind::Leave, 9, 3);              // 9
  t.push(EventKind::Leave, 10, 2);             // 10
  t.push(EventKind::RequestTest, 11, kNoEvent);  // 11, directly in main
  t.push(EventKind::Leave, 12, 0);             // 12
  t.region_of_path = {5, 6, 7, 8};
  EXPECT_EQ(t.call_of(2), 1u);
  EXPECT_EQ(t.call_of(3), 1u);
  EXPECT_EQ(t.call_of(8), 7u);
  EXPECT_EQ(t.call_of(4), 1u);  // answered from the cache
  EXPECT_EQ(t.call_of(11), 0u);  // skips the closed regions user and MPI_Send
  EXPECT_EQ(t.leave_of(1), 5u);
  EXPECT_EQ(t.leave_of(0), 12u);
  EXPECT_EQ(t.leave_of(6), 10u);
  EXPECT_EQ(t.enter_of(10), 6u);
  EXPECT_EQ(t.enter_of(12), 0u);
  EXPECT_EQ(t.callpath_of(8), 3u);
  EXPECT_EQ(t.region_of(7), RegionId{8});
  t.truncate(9);
  EXPECT_EQ(t.size(), 9u);
  EXPECT_EQ(t.message(8).partner, kNoEvent);  // its completion was cut off
  EXPECT_EQ(t.leave_of(7), kNoEvent);
  EXPECT_EQ(t.call_of(8), 7u);
}

// Rank 0 calls main/{a,b}, rank 1 calls main/{b,c}: the merged tree has main, a, b, c with
// preorder ids, rank 0's nodes first, and both ranks' Enter events are rewritten to global ids.
TEST(MessageRecords, RecordsShareTheirChannelsAndKeepEveryField) {
  MessageRecords m;
  auto rec = [](std::uint32_t comm, std::uint32_t peer, std::uint32_t tag, EventIdx partner,
                std::uint32_t length) {
    P2pRecord r;
    r.comm = comm;
    r.peer = peer;
    r.tag = tag;
    r.partner = partner;
    r.length = length;
    return r;
  };
  // Two neighbours, alternating, with one other tag: three channels for six records.
  EXPECT_EQ(m.push_back(rec(0, 1, 7, 100, 64)), 0u);
  EXPECT_EQ(m.push_back(rec(0, 3, 7, 101, 64)), 1u);
  EXPECT_EQ(m.push_back(rec(0, 1, 7, kNoEvent, 128)), 2u);
  EXPECT_EQ(m.push_back(rec(0, 3, 7, 103, 0)), 3u);
  EXPECT_EQ(m.push_back(rec(0, 1, 8, 104, P2pRecord::kLongMessage)), 4u);
  EXPECT_EQ(m.push_back(rec(2, 1, 7, 105, 64)), 5u);
  EXPECT_EQ(m.size(), 6u);
  EXPECT_EQ(m.channels(), 4u);  // (0,1,7) (0,3,7) (0,1,8) (2,1,7)
  const P2pRecord r2 = m[2];
  EXPECT_EQ(r2.comm, 0u);
  EXPECT_EQ(r2.peer, 1u);
  EXPECT_EQ(r2.tag, 7u);
  EXPECT_EQ(r2.partner, kNoEvent);
  EXPECT_EQ(r2.length, 128u);
  EXPECT_EQ(m[4].tag, 8u);
  EXPECT_EQ(m[4].length, P2pRecord::kLongMessage);
  EXPECT_EQ(m[5].comm, 2u);
  m.set_partner(2, 42);
  EXPECT_EQ(m[2].partner, 42u);
  EXPECT_EQ(m[3].partner, 103u);  // the others keep theirs
  m.resize(3);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].peer, 3u);
}

TEST(MessageRecords, AfterReadingTheLookupGoesAndEveryRecordStillDecodes) {
  MessageRecords m;
  auto rec = [](std::uint32_t peer, std::uint32_t tag, EventIdx partner) {
    P2pRecord r;
    r.comm = 0;
    r.peer = peer;
    r.tag = tag;
    r.partner = partner;
    r.length = 8 * tag;
    return r;
  };
  m.push_back(rec(1, 7, 10));
  m.push_back(rec(2, 7, 11));
  m.push_back(rec(1, 7, 12));
  EXPECT_EQ(m.channels(), 2u);
  m.finish_reading();
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.channels(), 2u);
  EXPECT_EQ(m[1].peer, 2u);
  EXPECT_EQ(m[2].partner, 12u);
  EXPECT_EQ(m[2].length, 56u);
  // Appended afterwards: right, on a channel of its own (the old ones are not looked up).
  EXPECT_EQ(m.push_back(rec(1, 7, 13)), 3u);
  EXPECT_EQ(m.push_back(rec(1, 7, 14)), 4u);
  EXPECT_EQ(m.channels(), 3u);
  EXPECT_EQ(m[3].peer, 1u);
  EXPECT_EQ(m[3].tag, 7u);
  EXPECT_EQ(m[4].partner, 14u);
  EXPECT_EQ(m[0].partner, 10u);
}

TEST(MessageRecords, BeyondTheIndexedChannelsEveryRecordStillDecodes) {
  // A tag per message: more distinct channels than the lookup map holds.
  MessageRecords m;
  const std::uint32_t n = static_cast<std::uint32_t>(MessageRecords::kIndexedChannels) + 100;
  for (std::uint32_t i = 0; i < n; ++i) {
    P2pRecord r;
    r.comm = 1;
    r.peer = i % 5;
    r.tag = i;
    r.partner = i + 1;
    r.length = i * 2;
    m.push_back(r);
  }
  // A channel seen early is found again; one seen after the map filled up is appended anew.
  P2pRecord again;
  again.comm = 1;
  again.peer = 3;
  again.tag = 3;
  m.push_back(again);
  EXPECT_EQ(m.channels(), n);
  P2pRecord late;
  late.comm = 1;
  late.peer = (n - 1) % 5;
  late.tag = n - 1;
  m.push_back(late);
  m.push_back(again);
  EXPECT_EQ(m.channels(), n + 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    const P2pRecord r = m[i];
    ASSERT_EQ(r.comm, 1u);
    ASSERT_EQ(r.peer, i % 5);
    ASSERT_EQ(r.tag, i);
    ASSERT_EQ(r.partner, i + 1);
    ASSERT_EQ(r.length, i * 2);
  }
  EXPECT_EQ(m[n].tag, 3u);
  EXPECT_EQ(m[n + 1].tag, n - 1);
  EXPECT_EQ(m[n + 2].peer, 3u);
}

TEST(UnifyCallTrees, TwoRanks_MergedInPreorderAndColumnsRewritten) {
  std::vector<CallTree> trees(2);
  LocalTrace t0, t1;
  const RegionId prog{0}, main{1}, a{2}, b{3}, c{4};
  auto add = [](CallTree& tree, LocalTrace& trace, std::vector<RegionId> path) {
    CallpathId cp;
    for (RegionId r : path) cp = tree.find_or_add(cp, r);
    trace.push(EventKind::Enter, 0, cp.value);
  };
  add(trees[0], t0, {prog, main, a});
  add(trees[0], t0, {prog, main, b});
  add(trees[1], t1, {prog, main, c});  // rank 1 sees c before b
  add(trees[1], t1, {prog, main, b});
  const CallTree g = replay::unify_call_trees_serial(trees, {&t0, &t1});
  ASSERT_EQ(g.size(), 5u);
  // Preorder: prog, main, a, b, c (siblings in order of first appearance, rank 0 first).
  EXPECT_EQ(g.node(CallpathId{2}).region, a);
  EXPECT_EQ(g.node(CallpathId{3}).region, b);
  EXPECT_EQ(g.node(CallpathId{4}).region, c);
  EXPECT_EQ(std::vector<std::uint32_t>(t0.ref.begin(), t0.ref.end()), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(std::vector<std::uint32_t>(t1.ref.begin(), t1.ref.end()), (std::vector<std::uint32_t>{4, 3}));
  EXPECT_EQ(t1.region_of(1), b);
  EXPECT_EQ(t1.callpath_of(0), 4u);
  for (std::uint32_t i = 1; i < g.size(); ++i)
    EXPECT_LT(g.node(CallpathId{i}).parent.value, i);
}

// Column buffers of 4 MB and more are their own 2 MiB-aligned mappings (huge pages where the
// kernel has them); smaller ones come from the heap. Growth across the threshold keeps every
// value, and a vector of a million events' refs round-trips exactly.
TEST(LargeVector, LargeBlocksAreHugePageAlignedAndKeepTheirValues) {
  LargeVector<std::uint32_t> v;
  for (std::uint32_t i = 0; i < 1000; ++i) v.push_back(i * 7u);
  EXPECT_LT(v.capacity() * sizeof(std::uint32_t), kLargeBytes);
  v.reserve(kLargeBytes / sizeof(std::uint32_t) + 1);  // now a mapping of its own
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % (std::uintptr_t{2} << 20), 0u);
  for (std::uint32_t i = 1000; i < 3000000; ++i) v.push_back(i * 7u);  // grows once more
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % (std::uintptr_t{2} << 20), 0u);
  ASSERT_EQ(v.size(), 3000000u);
  for (std::uint32_t i = 0; i < 3000000; ++i) ASSERT_EQ(v[i], i * 7u) << i;
  LargeVector<std::uint32_t> copy = v;
  EXPECT_TRUE(copy == v);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(copy[2999999], 2999999u * 7u);
}

}  // namespace
}  // namespace cpreplay
