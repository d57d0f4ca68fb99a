// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the communication-free pass on in-memory traces (no files, no MPI).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "analysis/metric_table.hpp"
#include "analysis/profile.hpp"

namespace cpreplay::analysis {
namespace {

/// A one-rank in-memory trace: regions by name, Enter/Leave at integer seconds.
class Builder {
 public:
  Builder() {
    defs_.clock.ticks_per_second = 1;
    for (const auto& [name, file, role, paradigm] :
         std::vector<std::tuple<std::string, std::string, RegionRole, Paradigm>>{
             {"prog", "", RegionRole::Artificial, Paradigm::Measurement},
             {"main", "a.c", RegionRole::Function, Paradigm::Compiler},
             {"work", "a.c", RegionRole::Function, Paradigm::Compiler},
             {"MPI_Send", "MPI", RegionRole::Point2Point, Paradigm::Mpi},
             {"MPI_Barrier", "MPI", RegionRole::Barrier, Paradigm::Mpi},
             {"MPI_Init", "MPI", RegionRole::Function, Paradigm::Mpi},
             {"TRACE BUFFER FLUSH", "", RegionRole::Artificial, Paradigm::Measurement}}) {
      Region r;
      r.name = name;
      r.file = file;
      r.role = role;
      r.paradigm = paradigm;
      r.mpi_class = classify_mpi_region(file, name);
      defs_.regions.push_back(r);
    }
  }
  RegionId id(const std::string& name) const {
    for (std::uint32_t i = 0; i < defs_.regions.size(); ++i)
      if (defs_.regions[i].name == name) return RegionId{i};
    throw std::logic_error(name);
  }
  void enter(Ticks t, const std::string& name) {
    const CallpathId parent = stack_.empty() ? CallpathId{} : paths_.back();
    const CallpathId cp = tree_.find_or_add(parent, id(name));
    trace_.push(EventKind::Enter, t, cp.value);
    stack_.push_back(static_cast<EventIdx>(trace_.size() - 1));
    paths_.push_back(cp);
  }
  void leave(Ticks t) {
    const EventIdx e = stack_.back();
    trace_.push(EventKind::Leave, t, trace_.ref[e]);
    stack_.pop_back();
    paths_.pop_back();
  }
  void send(Ticks t, std::uint64_t bytes) {
    trace_.push(EventKind::Send, t, trace_.add_message(P2pRecord{}, bytes));
  }
  /// CollBegin + CollEnd of one collective with the given byte counts.
  void collective(Ticks t, std::uint64_t sent, std::uint64_t received) {
    const auto slot = static_cast<std::uint32_t>(trace_.coll.size());
    trace_.coll.push_back(CollRecord{});
    trace_.push(EventKind::CollBegin, t, slot);
    trace_.coll[slot].begin = static_cast<EventIdx>(trace_.size() - 1);
    trace_.set_coll_bytes(slot, sent, received);
    trace_.push(EventKind::CollEnd, t, slot);
  }
  std::uint32_t path(const std::vector<std::string>& names) {
    CallpathId cp;
    for (const auto& n : names) cp = tree_.find_or_add(cp, id(n));
    return cp.value;
  }
  Definitions defs_;
  CallTree tree_;
  LocalTrace trace_;
  std::vector<EventIdx> stack_;
  std::vector<CallpathId> paths_;
};

// Message lengths of 4 GiB and more leave the 32-bit record field and still count exactly.
TEST(ProfilePass, MessagesOf4GiBAndMore_CountTheirExactBytes) {
  Builder b;
  b.enter(0, "prog");
  b.enter(1, "MPI_Send");
  b.send(1, 6'000'000'000ULL);
  b.send(2, 4'294'967'294ULL);  // the largest length the record holds itself
  b.send(3, 0);
  b.leave(4);
  b.leave(5);
  Severity sev(b.tree_.size());
  profile_pass(b.defs_, b.tree_, b.trace_, sev);
  const auto send = b.path({"prog", "MPI_Send"});
  EXPECT_EQ(b.trace_.long_messages.size(), 1u);
  EXPECT_EQ(b.trace_.bytes_of(2), 6'000'000'000ULL);
  EXPECT_DOUBLE_EQ(sev.at(Metric::BytesSent, send), 10'294'967'294.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::CommsSend, send), 2.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::SyncsSend, send), 1.0);
  b.trace_.truncate(3);  // the long message stays, the others go
  EXPECT_EQ(b.trace_.p2p.size(), 1u);
  EXPECT_EQ(b.trace_.bytes_of(2), 6'000'000'000ULL);
  b.trace_.truncate(2);
  EXPECT_TRUE(b.trace_.long_messages.empty());
}

// Collective byte counts of 4 GiB and more likewise (a large MPI_Alltoall on one rank).
TEST(ProfilePass, CollectiveBytesOf4GiBAndMore_CountExactly) {
  Builder b;
  b.enter(0, "prog");
  b.enter(1, "MPI_Barrier");
  b.collective(1, 5'000'000'000ULL, 7);
  b.collective(2, 0, 4'294'967'296ULL);
  b.collective(3, 0, 0);
  b.leave(4);
  b.leave(5);
  Severity sev(b.tree_.size());
  profile_pass(b.defs_, b.tree_, b.trace_, sev);
  const auto barrier = b.path({"prog", "MPI_Barrier"});
  EXPECT_EQ(b.trace_.long_coll_bytes.size(), 2u);
  EXPECT_EQ(b.trace_.coll_sent(3), 5'000'000'000ULL);  // the first CollEnd
  EXPECT_EQ(b.trace_.coll_received(3), 7u);
  EXPECT_EQ(b.trace_.coll_received(5), 4'294'967'296ULL);
  EXPECT_DOUBLE_EQ(sev.at(Metric::BytesCout, barrier), 5'000'000'000.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::BytesCin, barrier), 4'294'967'303.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::CommsCxch, barrier), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::CommsCdst, barrier), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::SyncsColl, barrier), 1.0);
  b.trace_.truncate(5);  // cut after the second CollBegin: its record stays
  EXPECT_EQ(b.trace_.coll.size(), 2u);
  EXPECT_EQ(b.trace_.long_coll_bytes.size(), 2u);
  b.trace_.truncate(4);  // cut before it: the record and its long count go
  EXPECT_EQ(b.trace_.coll.size(), 1u);
  EXPECT_EQ(b.trace_.long_coll_bytes.size(), 1u);
  EXPECT_EQ(b.trace_.coll_sent(2), 5'000'000'000ULL);
}

// prog [0,10] > main [1,9] > {work [2,5] > MPI_Send [3,4] (64 B), work [5,7], MPI_Barrier [7,8]}
TEST(ProfilePass, NestedRegions_ExclusiveTimeVisitsAndBreakdown) {
  Builder b;
  b.enter(0, "prog");
  b.enter(1, "main");
  b.enter(2, "work");
  b.enter(3, "MPI_Send");
  b.send(3, 64);
  b.leave(4);
  b.leave(5);
  b.enter(5, "work");
  b.leave(7);
  b.enter(7, "MPI_Barrier");
  b.leave(8);
  b.leave(9);
  b.leave(10);
  Severity sev(b.tree_.size());
  profile_pass(b.defs_, b.tree_, b.trace_, sev);
  const auto prog = b.path({"prog"}), main = b.path({"prog", "main"}),
             work = b.path({"prog", "main", "work"}),
             send = b.path({"prog", "main", "work", "MPI_Send"}),
             barrier = b.path({"prog", "main", "MPI_Barrier"});
  EXPECT_DOUBLE_EQ(sev.at(Metric::Time, prog), 2.0);     // [0,1] + [9,10]
  EXPECT_DOUBLE_EQ(sev.at(Metric::Time, main), 2.0);     // [1,2] + [8,9]
  EXPECT_DOUBLE_EQ(sev.at(Metric::Time, work), 4.0);     // 3 - 1 + 2
  EXPECT_DOUBLE_EQ(sev.at(Metric::Time, send), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Time, barrier), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Visits, work), 2.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Visits, send), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Comp, work), 4.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Mpi, send), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::MpiPoint2point, send), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::MpiSyncCollective, barrier), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Comp, barrier), 0.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::CommsSend, send), 1.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::BytesSent, send), 64.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::SyncsSend, send), 0.0);

  // Inclusive along the call tree, as the report stores `time`.
  const auto incl = inclusive_along_call_tree(b.tree_, sev.row(Metric::Time));
  EXPECT_DOUBLE_EQ(incl[prog], 10.0);
  EXPECT_DOUBLE_EQ(incl[main], 8.0);
  EXPECT_DOUBLE_EQ(incl[work], 5.0);
}

TEST(ProfilePass, TraceBufferFlush_IsOverheadNotExecution) {
  Builder b;
  b.enter(0, "prog");
  b.enter(1, "TRACE BUFFER FLUSH");
  b.leave(3);
  b.leave(4);
  Severity sev(b.tree_.size());
  profile_pass(b.defs_, b.tree_, b.trace_, sev);
  const auto flush = b.path({"prog", "TRACE BUFFER FLUSH"});
  EXPECT_DOUBLE_EQ(sev.at(Metric::Overhead, flush), 2.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Execution, flush), 0.0);
}

TEST(MetricTree, SumChildren_ParentsHoldTheirFullAmount) {
  Severity sev(2);
  sev.at(Metric::SyncsSend, 1) = 2;
  sev.at(Metric::SyncsRecv, 1) = 3;
  sev.at(Metric::SyncsColl, 0) = 4;
  sev.at(Metric::BytesSent, 1) = 100;
  sev.at(Metric::BytesCin, 1) = 5;
  finalize_metric_tree(sev);
  EXPECT_DOUBLE_EQ(sev.at(Metric::SyncsP2p, 1), 5.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Syncs, 1), 5.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Syncs, 0), 4.0);
  EXPECT_DOUBLE_EQ(sev.at(Metric::Bytes, 1), 105.0);
}

// The ticks the what-if replay's balance statistics start from: each activity (the time
// between two events) to the innermost open region, whatever the events in between; a region
// open at the end up to the last event (the seconds leave it out); visits per Enter.
// prog [0, ...): main [1, ...): work [2,5] (a send at 3), work [6,8], MPI_Send [9,10], then
// work entered at 11 and open when the trace ends at 14 (a send at 12).
// main: (1,2] + (5,6] + (8,9] + (10,11] = 4; work: 3 + 2 + (11,14] = 8; MPI_Send 1; prog
// (0,1] = 1; the events before prog's Enter and after nothing: none.
TEST(Profile, ExclusiveTicks_ActivitiesByInnermostOpenRegion_OpenRegionUpToTheEnd) {
  Builder b;
  b.enter(0, "prog");
  b.enter(1, "main");
  b.enter(2, "work");
  b.send(3, 8);
  b.leave(5);
  b.enter(6, "work");
  b.leave(8);
  b.enter(9, "MPI_Send");
  b.leave(10);
  b.enter(11, "work");
  b.send(12, 8);
  b.send(14, 8);
  Severity sev(b.tree_.size());
  CallpathTicks ticks;
  profile_pass(b.defs_, b.tree_, b.trace_, sev, nullptr, true, &ticks);
  const std::uint32_t prog = b.path({"prog"}), main = b.path({"prog", "main"}),
                      work = b.path({"prog", "main", "work"}),
                      send = b.path({"prog", "main", "MPI_Send"});
  ASSERT_EQ(ticks.exclusive.size(), b.tree_.size());
  ASSERT_EQ(ticks.visits.size(), b.tree_.size());
  EXPECT_EQ(ticks.exclusive[prog], 1);
  EXPECT_EQ(ticks.exclusive[main], 4);
  EXPECT_EQ(ticks.exclusive[work], 8);
  EXPECT_EQ(ticks.exclusive[send], 1);
  EXPECT_EQ(ticks.visits[prog], 1u);
  EXPECT_EQ(ticks.visits[main], 1u);
  EXPECT_EQ(ticks.visits[work], 3u);
  EXPECT_EQ(ticks.visits[send], 1u);
  // The seconds are as without the ticks: closed visits only (work's two, 3 + 2 s).
  Severity plain(b.tree_.size());
  profile_pass(b.defs_, b.tree_, b.trace_, plain);
  EXPECT_EQ(sev.at(Metric::Time, work), plain.at(Metric::Time, work));
  EXPECT_DOUBLE_EQ(plain.at(Metric::Time, work), 5.0);
}

TEST(MetricTable, ParentsPrecedeChildrenAndNamesAreUnique) {
  const auto& table = metric_table();
  ASSERT_EQ(table.size(), kMetricCount);
  std::set<std::string> seen;
  for (const auto& m : table) {
    EXPECT_TRUE(seen.insert(m.uniq_name).second) << m.uniq_name;
    if (m.parent != Metric::Count) {
      EXPECT_TRUE(seen.count(metric_info(m.parent).uniq_name));
    }
  }
  EXPECT_STREQ(metric_info(Metric::MpiLatesenderWo).uniq_name, "mpi_latesender_wo");
  EXPECT_EQ(metric_info(Metric::MpiLatesenderWo).parent, Metric::MpiLatesender);
  EXPECT_EQ(metric_info(Metric::CriticalPathImbalance).parent, Metric::CriticalPath);
  EXPECT_TRUE(metric_info(Metric::Time).inclusive);
  EXPECT_FALSE(metric_info(Metric::Visits).inclusive);
}

}  // namespace
}  // namespace cpreplay::analysis
