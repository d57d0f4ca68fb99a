// SPDX-License-Identifier: BSD-3-Clause
// Tests that every reference in damaged OTF2 definitions and events is refused with one line.
//
// Each test writes RawDefs' good 2-rank trace with one reference spoiled (through the real OTF2
// writer) and expects a TraceError naming the definitions file (or rank and event) and the fault.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "cpreplay/error.hpp"
#include "io/otf2_reader.hpp"
#include "tests/support/raw_archive.hpp"

namespace cpreplay::testing {
namespace {

namespace fs = std::filesystem;

class Dir {
 public:
  Dir() {
    std::string pattern = (fs::temp_directory_path() / "damaged_defs_test.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string trace() const { return path_ + "/t"; }
  std::string anchor() const { return path_ + "/t/traces.otf2"; }
  std::string def() const { return path_ + "/t/traces.def"; }

 private:
  std::string path_;
};

/// Writes `defs` and returns read_definitions' error ("" if it read them).
std::string definitions_error(const RawDefs& defs) {
  Dir dir;
  write_raw_archive(dir.trace(), defs);
  try {
    (void)io::read_definitions(dir.anchor());
  } catch (const TraceError& e) {
    const std::string what = e.what();
    // Every definitions error names the anchor and the definitions file first.
    const std::string prefix = dir.anchor() + ": global definitions " + dir.def() + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what.substr(what.rfind(prefix, 0) == 0 ? prefix.size() : 0);
  }
  return "";
}

RawDefs good() { return RawDefs{}; }

// ---- the good trace

TEST(DamagedDefinitions, GoodRawTrace_ReadsEveryDefinition) {
  Dir dir;
  write_raw_archive(dir.trace(), good());
  const Definitions defs = io::read_definitions(dir.anchor());
  ASSERT_EQ(defs.ranks(), 2);
  ASSERT_EQ(defs.regions.size(), 7u);
  EXPECT_EQ(defs.regions[2].name, "MPI_Barrier");
  EXPECT_EQ(defs.regions[2].file, "MPI");
  EXPECT_EQ(defs.regions[0].file, "");  // OTF2_UNDEFINED_STRING: no file
  EXPECT_EQ(defs.program_region.value, 0u);
  ASSERT_EQ(defs.system_nodes.size(), 2u);
  EXPECT_EQ(defs.system_nodes[1].name, "node00");
  EXPECT_EQ(defs.system_nodes[1].parent, 0u);
  EXPECT_EQ(defs.processes[1].name, "MPI Rank 1");
  EXPECT_EQ(defs.processes[1].system_node, 1u);
  EXPECT_EQ(defs.processes[1].location_id, 1u);
  EXPECT_EQ(defs.processes[0].events, 13u);
  ASSERT_EQ(defs.comms.size(), 2u);
  EXPECT_EQ(defs.comms[0].name, "MPI_COMM_WORLD");
  EXPECT_EQ(defs.comms[0].members, (std::vector<Rank>{0, 1}));
  EXPECT_TRUE(defs.comms[1].is_self);
  CallTree tree;
  EXPECT_EQ(io::read_events(dir.anchor(), defs, 1, tree).size(), 13u);
}

// ---- regions

// The reported crash (issue 19): a region with id OTF2_UNDEFINED_REGION made the region table
// size id + 1 = 0, and the region was then written far outside it.
TEST(DamagedDefinitions, RegionWithUndefinedId_NamesTheId) {
  RawDefs d = good();
  d.regions[4].id = OTF2_UNDEFINED_REGION;
  EXPECT_EQ(definitions_error(d), "region defined with OTF2's undefined id 4294967295");
}

TEST(DamagedDefinitions, RegionIdBeyondTheFile_OutOfRangeNotAllocated) {
  RawDefs d = good();
  d.regions[4].id = 4'000'000'000u;
  EXPECT_EQ(definitions_error(d),
            "region id 4000000000 is out of range: the file defines 7 regions, numbered 0 to 6");
}

TEST(DamagedDefinitions, RegionDefinedTwice) {
  RawDefs d = good();
  d.regions[4].id = 2;
  EXPECT_EQ(definitions_error(d), "region 2 is defined twice");
}

// ---- strings

TEST(DamagedDefinitions, RegionNamesUndefinedString) {
  RawDefs d = good();
  d.regions[1].name = 99;
  EXPECT_EQ(definitions_error(d), "region 1 names undefined string 99");
}

TEST(DamagedDefinitions, StringDefinedTwice) {
  RawDefs d = good();
  d.extra_strings = {{RawDefs::kMain, "main again"}};
  EXPECT_EQ(definitions_error(d), "string 2 is defined twice");
}

TEST(DamagedDefinitions, StringWithUndefinedId) {
  RawDefs d = good();
  d.extra_strings = {{OTF2_UNDEFINED_STRING, "x"}};
  EXPECT_EQ(definitions_error(d), "string defined with OTF2's undefined id 4294967295");
}

// ---- system-tree nodes

TEST(DamagedDefinitions, SystemTreeNodeNamesUndefinedParent) {
  RawDefs d = good();
  d.nodes[1].parent = 7;
  EXPECT_EQ(definitions_error(d), "system-tree node 1 names undefined parent node 7");
}

TEST(DamagedDefinitions, SystemTreeNodeItsOwnAncestor) {
  RawDefs d = good();
  d.nodes[0].parent = 1;  // 0 -> 1 -> 0
  EXPECT_EQ(definitions_error(d), "system-tree node 0 is its own ancestor");
}

TEST(DamagedDefinitions, SystemTreeNodeItsOwnParent) {
  RawDefs d = good();
  d.nodes[1].parent = 1;
  EXPECT_EQ(definitions_error(d), "system-tree node 1 is its own ancestor");
}

TEST(DamagedDefinitions, SystemTreeNodeNamesUndefinedString) {
  RawDefs d = good();
  d.nodes[0].cls = 1234;
  EXPECT_EQ(definitions_error(d), "system-tree node 0 names undefined string 1234");
}

// ---- location groups

TEST(DamagedDefinitions, LocationGroupNamesUndefinedSystemTreeNode) {
  RawDefs d = good();
  d.location_groups[1].parent = 9;
  EXPECT_EQ(definitions_error(d), "location group 1 names undefined system-tree node 9");
}

TEST(DamagedDefinitions, ProcessWithoutSystemTreeNode) {
  RawDefs d = good();
  d.location_groups[1].parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
  EXPECT_EQ(definitions_error(d), "location group 1 (MPI rank 1) names no system-tree node");
}

TEST(DamagedDefinitions, LocationGroupItsOwnCreator) {
  RawDefs d = good();
  d.location_groups[0].creator = 0;
  EXPECT_EQ(definitions_error(d), "location group 0 is its own creator");
}

TEST(DamagedDefinitions, LocationGroupNamesUndefinedCreator) {
  RawDefs d = good();
  d.location_groups[0].creator = 5;
  EXPECT_EQ(definitions_error(d), "location group 0 names undefined creating location group 5");
}

TEST(DamagedDefinitions, LocationGroupDefinedTwice) {
  RawDefs d = good();
  d.location_groups[1].id = 0;
  EXPECT_EQ(definitions_error(d), "location group 0 is defined twice");
}

// ---- locations

TEST(DamagedDefinitions, LocationNamesUndefinedLocationGroup) {
  RawDefs d = good();
  d.locations[1].group = 5;
  EXPECT_EQ(definitions_error(d), "location 1 names undefined location group 5");
}

// Hybrid traces: only CPU threads are analyzed; any other location of a rank is refused in one
// line naming the rank and the thread (Score-P's id: thread << 32 | rank).
TEST(DamagedDefinitions, AcceleratorLocationOfARank_RefusedNamingRankAndThread) {
  RawDefs d = good();
  d.locations.push_back({(std::uint64_t{1} << 32) | 1, RawDefs::kMaster, 0, 1,
                         OTF2_LOCATION_TYPE_ACCELERATOR_STREAM});
  EXPECT_EQ(definitions_error(d),
            "rank 1, thread 1: location 4294967297 (Master thread) is not a CPU thread (OTF2 "
            "location type 2); cpreplay analyzes MPI ranks and their CPU threads only");
}

TEST(DamagedDefinitions, LocationWithUndefinedId) {
  RawDefs d = good();
  d.locations.push_back({OTF2_UNDEFINED_LOCATION, RawDefs::kMaster, 0, 1});
  EXPECT_EQ(definitions_error(d),
            "location defined with OTF2's undefined id 18446744073709551615");
}

// ---- groups

TEST(DamagedDefinitions, GroupListsUndefinedLocation) {
  RawDefs d = good();
  d.groups[0].members = {0, 7};
  EXPECT_EQ(definitions_error(d), "group 0 lists undefined location 7");
}

TEST(DamagedDefinitions, GroupListsAMemberTwice) {
  RawDefs d = good();
  d.groups[1].members = {1, 1};
  EXPECT_EQ(definitions_error(d), "group 1 lists member 1 twice");
}

TEST(DamagedDefinitions, GroupDefinedTwice) {
  RawDefs d = good();
  d.groups[2].id = 1;
  EXPECT_EQ(definitions_error(d), "group 1 is defined twice");
}

// ---- communicators

TEST(DamagedDefinitions, CommunicatorNamesUndefinedGroup) {
  RawDefs d = good();
  d.comms[0].group = 9;
  EXPECT_EQ(definitions_error(d), "communicator 0 names undefined group 9");
}

TEST(DamagedDefinitions, CommunicatorGroupNotACommunicatorGroup) {
  RawDefs d = good();
  d.groups.push_back({3, RawDefs::kEmpty, OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_MPI, {0}});
  d.comms[0].group = 3;
  EXPECT_EQ(definitions_error(d), "communicator 0's group 3 is not a communicator group");
}

TEST(DamagedDefinitions, CommunicatorNamesRankBeyondTheTrace) {
  RawDefs d = good();
  d.groups[1].members = {0, 5};
  EXPECT_EQ(definitions_error(d),
            "communicator 0 (MPI_COMM_WORLD) names rank 5 but the trace has 2 ranks");
}

TEST(DamagedDefinitions, CommunicatorIdBeyondTheFile) {
  RawDefs d = good();
  d.comms[1].id = 3'000'000'000u;
  EXPECT_EQ(
      definitions_error(d),
      "communicator id 3000000000 is out of range: the file defines 2 communicators, numbered 0 "
      "to 1");
}

TEST(DamagedDefinitions, CommunicatorWithUndefinedId) {
  RawDefs d = good();
  d.comms[1].id = OTF2_UNDEFINED_COMM;
  EXPECT_EQ(definitions_error(d), "communicator defined with OTF2's undefined id 4294967295");
}

TEST(DamagedDefinitions, CommunicatorItsOwnParent) {
  RawDefs d = good();
  d.comms[1].parent = 1;
  EXPECT_EQ(definitions_error(d), "communicator 1 is its own ancestor");
}

TEST(DamagedDefinitions, CommunicatorParentCycle) {
  RawDefs d = good();
  d.comms[0].parent = 1;
  d.comms[1].parent = 0;
  EXPECT_EQ(definitions_error(d), "communicator 0 is its own ancestor");
}

TEST(DamagedDefinitions, CommunicatorNamesUndefinedParent) {
  RawDefs d = good();
  d.comms[1].parent = 6;
  EXPECT_EQ(definitions_error(d), "communicator 1 names undefined parent communicator 6");
}

// ---- attributes and parameters

TEST(DamagedDefinitions, AttributeNamesUndefinedString) {
  RawDefs d = good();
  d.attributes[0].description = 77;
  EXPECT_EQ(definitions_error(d), "attribute 0 names undefined string 77");
}

TEST(DamagedDefinitions, AttributeDefinedTwice) {
  RawDefs d = good();
  d.attributes.push_back({0, RawDefs::kAttr, RawDefs::kEmpty});
  EXPECT_EQ(definitions_error(d), "attribute 0 is defined twice");
}

TEST(DamagedDefinitions, ParameterNamesUndefinedString) {
  RawDefs d = good();
  d.parameters[0].name = 4096;
  EXPECT_EQ(definitions_error(d), "parameter 0 names undefined string 4096");
}

TEST(DamagedDefinitions, ParameterWithUndefinedId) {
  RawDefs d = good();
  d.parameters.push_back({OTF2_UNDEFINED_PARAMETER, RawDefs::kParam});
  EXPECT_EQ(definitions_error(d), "parameter defined with OTF2's undefined id 4294967295");
}

// ---- clock

TEST(DamagedDefinitions, TimerResolutionZero) {
  RawDefs d = good();
  d.resolution = 0;
  EXPECT_EQ(definitions_error(d), "clock properties with a timer resolution of 0 ticks/s");
}

// ---- counts: a damaged event count must not reserve memory the event file cannot fill

TEST(DamagedDefinitions, HugeEventCount_ReservationBoundedByEventFile) {
  Dir dir;
  RawDefs d = good();
  d.locations[0].events = 4'000'000'000u;  // below kNoEvent: it used to be reserved as it is
  write_raw_archive(dir.trace(), d);
  const Definitions defs = io::read_definitions(dir.anchor());
  EXPECT_EQ(defs.processes[0].events, 4'000'000'000u);
  CallTree tree;
  const LocalTrace trace = io::read_events(dir.anchor(), defs, 0, tree);
  EXPECT_EQ(trace.size(), 13u);
  // Without the cap this reserves 4e9 events: 34 GB of address space (ASan and `ulimit -v`
  // refuse it). The event file has a few hundred bytes: at most half as many events (2 bytes
  // each) are reserved.
  const auto evt_size = fs::file_size(dir.trace() + "/traces/0.evt");
  EXPECT_LE(trace.time.bytes_used(), evt_size / 2 * 4 + 64 * 8);
  EXPECT_LT(trace.bytes_used(), 64u * 1024);
}

// ---- events: every reference checked against the definitions, rank and event named

/// Rank 0 of RawDefs' trace with the events `body` writes; returns read_events' error.
std::string events_error(const std::function<void(OTF2_EvtWriter*)>& body, Rank rank = 0) {
  Dir dir;
  write_raw_archive(dir.trace(), good(), [&](int r, OTF2_EvtWriter* w) {
    if (r == rank)
      body(w);
    else
      good_raw_events(r, w);
  });
  const Definitions defs = io::read_definitions(dir.anchor());
  CallTree tree;
  try {
    (void)io::read_events(dir.anchor(), defs, rank, tree);
  } catch (const TraceError& e) {
    const std::string what = e.what();
    const std::string prefix = dir.anchor() + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    return what.substr(what.rfind(prefix, 0) == 0 ? prefix.size() : 0);
  }
  return "";
}

void ok(OTF2_ErrorCode status) { ASSERT_EQ(status, OTF2_SUCCESS); }

/// Enter main, Enter `call` (region id): the events every case below starts with.
void open_call(OTF2_EvtWriter* w, OTF2_RegionRef call) {
  ok(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.0), 1));
  ok(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.1), call));
}

TEST(DamagedEvents, EnterOfRegionBeyondTheDefinitions) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) { open_call(w, 7); }),
            "rank 0, event 1: Enter of undefined region 7");
}

TEST(DamagedEvents, EnterOfUndefinedRegionId) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) { open_call(w, OTF2_UNDEFINED_REGION); }),
            "rank 0, event 1: Enter of undefined region 4294967295");
}

TEST(DamagedEvents, SendOnUndefinedCommunicator) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 3);
              ok(OTF2_EvtWriter_MpiSend(w, nullptr, raw_ticks(0.1), 1, 9, 0, 8));
            }),
            "rank 0, event 2: message on undefined communicator 9");
}

TEST(DamagedEvents, RecvFromPeerOutsideCommunicator) {
  EXPECT_EQ(events_error(
                [](OTF2_EvtWriter* w) {
                  open_call(w, 4);
                  ok(OTF2_EvtWriter_MpiRecv(w, nullptr, raw_ticks(0.2), 2, 0, 0, 8));
                },
                1),
            "rank 1, event 2: message peer 2 outside communicator MPI_COMM_WORLD of size 2");
}

TEST(DamagedEvents, SendToPeerOutsideSelfCommunicator) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 3);
              ok(OTF2_EvtWriter_MpiSend(w, nullptr, raw_ticks(0.1), 1, 1, 0, 8));
            }),
            "rank 0, event 2: message peer 1 outside communicator MPI_COMM_SELF of size 1");
}

TEST(DamagedEvents, CollectiveOnUndefinedCommunicator) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 2);
              ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, raw_ticks(0.1)));
              ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, raw_ticks(0.2),
                                                 OTF2_COLLECTIVE_OP_BARRIER, 4000000000u,
                                                 OTF2_UNDEFINED_UINT32, 0, 0));
            }),
            "rank 0, event 3: collective on undefined communicator 4000000000");
}

TEST(DamagedEvents, CollectiveRootOutsideCommunicator) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 2);
              ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, raw_ticks(0.1)));
              ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, raw_ticks(0.2),
                                                 OTF2_COLLECTIVE_OP_BCAST, 0, 2, 8, 8));
            }),
            "rank 0, event 3: collective root 2 outside communicator MPI_COMM_WORLD of size 2");
}

TEST(DamagedEvents, CollectiveWithUnknownOperation) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 2);
              ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, raw_ticks(0.1)));
              ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, raw_ticks(0.2),
                                                 static_cast<OTF2_CollectiveOp>(200), 0,
                                                 OTF2_UNDEFINED_UINT32, 0, 0));
            }),
            "rank 0, event 3: unknown collective operation 200");
}

TEST(DamagedEvents, IsendCompleteOfUnknownRequest) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 3);
              ok(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, raw_ticks(0.1), 42));
            }),
            "rank 0, event 2: MPI_Isend completion for unknown request 42");
}

TEST(DamagedEvents, IsendReusesPendingRequest) {
  EXPECT_EQ(events_error([](OTF2_EvtWriter* w) {
              open_call(w, 3);
              ok(OTF2_EvtWriter_MpiIsend(w, nullptr, raw_ticks(0.1), 1, 0, 0, 8, 42));
              ok(OTF2_EvtWriter_MpiIsend(w, nullptr, raw_ticks(0.1), 1, 0, 1, 8, 42));
            }),
            "rank 0, event 3: MPI_Isend reuses request 42 before it completed");
}

TEST(DamagedEvents, IrecvRequestReusesPendingRequest) {
  EXPECT_EQ(events_error(
                [](OTF2_EvtWriter* w) {
                  open_call(w, 4);
                  ok(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, raw_ticks(0.1), 7));
                  ok(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, raw_ticks(0.1), 7));
                },
                1),
            "rank 1, event 3: MPI_Irecv reuses request 7 before it completed");
}

}  // namespace
}  // namespace cpreplay::testing
