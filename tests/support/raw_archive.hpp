// SPDX-License-Identifier: BSD-3-Clause
// Test-only OTF2 writer whose definitions are plain values, so a test can write any of them wrong.
//
// TraceWriter (trace_writer.hpp) only writes consistent traces. Damaged definitions (an undefined
// id, a reference to nothing, a duplicate, a cycle) are written here through the real OTF2 writer
// API, one field of RawDefs changed from the good default. Header-only: the tests that use it
// link the OTF2 library through cpreplay_testsupport.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cpreplay::testing {

/// The global definitions of a good 2-rank MPI trace, as Score-P writes them: every id and
/// every reference is a field. String ids are positions in `strings`.
struct RawDefs {
  /// Location::events value that stands for "the number of events actually written".
  static constexpr std::uint64_t kWrittenCount = UINT64_MAX - 1;

  struct Node {
    OTF2_SystemTreeNodeRef id;
    OTF2_StringRef name, cls;
    OTF2_SystemTreeNodeRef parent;
  };
  struct LocationGroup {
    OTF2_LocationGroupRef id;
    OTF2_StringRef name;
    OTF2_LocationGroupType type;
    OTF2_SystemTreeNodeRef parent;
    OTF2_LocationGroupRef creator;
  };
  struct Location {
    OTF2_LocationRef id;
    OTF2_StringRef name;
    std::uint64_t events;
    OTF2_LocationGroupRef group;
    OTF2_LocationType type = OTF2_LOCATION_TYPE_CPU_THREAD;
  };
  struct Region {
    OTF2_RegionRef id;
    OTF2_StringRef name, file;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
  };
  struct Group {
    OTF2_GroupRef id;
    OTF2_StringRef name;
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    std::vector<std::uint64_t> members;
  };
  struct Comm {
    OTF2_CommRef id;
    OTF2_StringRef name;
    OTF2_GroupRef group;
    OTF2_CommRef parent;
  };
  struct Attribute {
    OTF2_AttributeRef id;
    OTF2_StringRef name, description;
  };
  struct Parameter {
    OTF2_ParameterRef id;
    OTF2_StringRef name;
  };

  // String ids of the default definitions.
  enum : OTF2_StringRef {
    kEmpty, kExe, kMain, kBarrier, kMpi, kLinux, kMachine, kNode00, kNode, kRank0, kRank1,
    kMaster, kWorld, kSelf, kSend, kRecv, kSimC, kAttr, kParam, kInit, kFinalize
  };

  std::uint64_t resolution = 1'000'000'000;
  std::vector<std::string> strings = {
      "",       "sim.exe", "main",       "MPI_Barrier", "MPI",           "Linux",
      "machine", "node00", "node",       "MPI Rank 0",  "MPI Rank 1",    "Master thread",
      "MPI_COMM_WORLD", "MPI_COMM_SELF", "MPI_Send", "MPI_Recv", "sim.c", "an attribute",
      "a parameter", "MPI_Init", "MPI_Finalize"};
  std::vector<Node> nodes = {{0, kLinux, kMachine, OTF2_UNDEFINED_SYSTEM_TREE_NODE},
                             {1, kNode00, kNode, 0}};
  std::vector<LocationGroup> location_groups = {
      {0, kRank0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP},
      {1, kRank1, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP}};
  std::vector<Location> locations = {{0, kMaster, kWrittenCount, 0},
                                     {1, kMaster, kWrittenCount, 1}};
  /// Region 0 is the program region, 1 main, 2 MPI_Barrier, 3 MPI_Send, 4 MPI_Recv,
  /// 5 MPI_Init, 6 MPI_Finalize.
  std::vector<Region> regions = {
      {0, kExe, OTF2_UNDEFINED_STRING, OTF2_REGION_ROLE_ARTIFICIAL,
       OTF2_PARADIGM_MEASUREMENT_SYSTEM},
      {1, kMain, kSimC, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER},
      {2, kBarrier, kMpi, OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI},
      {3, kSend, kMpi, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
      {4, kRecv, kMpi, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
      {5, kInit, kMpi, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI},
      {6, kFinalize, kMpi, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI}};
  /// Group 0: the MPI locations (rank order); 1: MPI_COMM_WORLD's ranks; 2: COMM_SELF.
  std::vector<Group> groups = {
      {0, kEmpty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, {0, 1}},
      {1, kEmpty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, {0, 1}},
      {2, kEmpty, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, {}}};
  /// Comm 0: MPI_COMM_WORLD, 1: MPI_COMM_SELF.
  std::vector<Comm> comms = {{0, kWorld, 1, OTF2_UNDEFINED_COMM},
                             {1, kSelf, 2, OTF2_UNDEFINED_COMM}};
  std::vector<Attribute> attributes = {{0, kAttr, kEmpty}};
  std::vector<Parameter> parameters = {{0, kParam}};
  /// String records written after `strings`, with any id (a duplicate, OTF2's undefined id).
  std::vector<std::pair<OTF2_StringRef, std::string>> extra_strings;

  /// The same trace with rank 0 alone (for `mpirun -np 1`; events: one_rank_raw_events).
  static RawDefs one_rank() {
    RawDefs d;
    d.location_groups.pop_back();
    d.locations.pop_back();
    d.groups[0].members = {0};
    d.groups[1].members = {0};
    return d;
  }
};

/// Writes the events of one location (the rank's master thread).
using RawEvents = std::function<void(int rank, OTF2_EvtWriter* w)>;

namespace raw_detail {

inline void check(OTF2_ErrorCode status, const std::string& what) {
  if (status != OTF2_SUCCESS)
    throw std::runtime_error("raw_archive: " + what + ": " + OTF2_Error_GetDescription(status));
}

inline OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}

}  // namespace raw_detail

/// Ticks of time t (seconds) in the raw archive's clock (1e9 ticks/s, starting at tick 1000).
inline std::uint64_t raw_ticks(double t) { return 1000 + static_cast<std::uint64_t>(t * 1e9); }

namespace raw_detail {

/// Enter/Leave of a region.
inline void region(OTF2_EvtWriter* w, OTF2_RegionRef id, double t0, double t1) {
  check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(t0), id), "Enter");
  check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(t1), id), "Leave");
}

}  // namespace raw_detail

/// The good events of RawDefs' 2-rank trace: main > MPI_Init, MPI_Barrier on world, rank 0
/// sends 8 bytes (tag 5) to rank 1 in MPI_Send / MPI_Recv, MPI_Finalize. 13 events per rank.
inline void good_raw_events(int rank, OTF2_EvtWriter* w) {
  using raw_detail::check;
  check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.0), 1), "Enter main");
  raw_detail::region(w, 5, 0.0, 0.05);
  check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.1), 2), "Enter MPI_Barrier");
  check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, raw_ticks(0.1)), "CollBegin");
  check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, raw_ticks(0.2), OTF2_COLLECTIVE_OP_BARRIER,
                                        0, OTF2_UNDEFINED_UINT32, 0, 0),
        "CollEnd");
  check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(0.2), 2), "Leave MPI_Barrier");
  if (rank == 0) {
    check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.3), 3), "Enter MPI_Send");
    check(OTF2_EvtWriter_MpiSend(w, nullptr, raw_ticks(0.3), 1, 0, 5, 8), "MpiSend");
    check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(0.4), 3), "Leave MPI_Send");
  } else {
    check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.3), 4), "Enter MPI_Recv");
    check(OTF2_EvtWriter_MpiRecv(w, nullptr, raw_ticks(0.5), 0, 0, 5, 8), "MpiRecv");
    check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(0.5), 4), "Leave MPI_Recv");
  }
  raw_detail::region(w, 6, 0.9, 0.95);
  check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(1.0), 1), "Leave main");
}

/// The events of RawDefs::one_rank(): main > MPI_Init, MPI_Barrier on world, MPI_Finalize.
/// 10 events.
inline void one_rank_raw_events(int, OTF2_EvtWriter* w) {
  using raw_detail::check;
  check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.0), 1), "Enter main");
  raw_detail::region(w, 5, 0.0, 0.05);
  check(OTF2_EvtWriter_Enter(w, nullptr, raw_ticks(0.1), 2), "Enter MPI_Barrier");
  check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, raw_ticks(0.1)), "CollBegin");
  check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, raw_ticks(0.2), OTF2_COLLECTIVE_OP_BARRIER,
                                        0, OTF2_UNDEFINED_UINT32, 0, 0),
        "CollEnd");
  check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(0.2), 2), "Leave MPI_Barrier");
  raw_detail::region(w, 6, 0.9, 0.95);
  check(OTF2_EvtWriter_Leave(w, nullptr, raw_ticks(1.0), 1), "Leave main");
}

/// Writes dir/traces.otf2 (+ traces.def, traces/<location>.evt) with exactly the definitions
/// `defs` (nothing checked) and, for each location of `defs` in a PROCESS group, `events`.
/// Replaces dir if it exists.
inline void write_raw_archive(const std::string& dir, const RawDefs& defs,
                              const RawEvents& events = good_raw_events) {
  using raw_detail::check;
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  OTF2_Archive* archive =
      OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 256 * 1024,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("raw_archive: " + dir + ": OTF2_Archive_Open failed");
  static OTF2_FlushCallbacks flush = {raw_detail::pre_flush, nullptr};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(archive), "OpenEvtFiles");

  // Events first: their counts go into the location definitions.
  std::vector<std::uint64_t> counts;
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const RawDefs::Location& l = defs.locations[i];
    std::uint64_t n = 0;
    if (i < 2 && l.id < 2) {  // the master threads of the two ranks
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, l.id);
      if (!w) throw std::runtime_error("raw_archive: GetEvtWriter failed");
      events(static_cast<int>(l.id), w);
      check(OTF2_EvtWriter_GetNumberOfEvents(w, &n), "GetNumberOfEvents");
      check(OTF2_Archive_CloseEvtWriter(archive, w), "CloseEvtWriter");
    }
    counts.push_back(n);
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "CloseEvtFiles");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("raw_archive: GetGlobalDefWriter failed");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, defs.resolution, 0, raw_ticks(10.0),
                                                  OTF2_UNDEFINED_TIMESTAMP),
        "ClockProperties");
  for (std::size_t i = 0; i < defs.strings.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i),
                                           defs.strings[i].c_str()),
          "String");
  for (const auto& [id, text] : defs.extra_strings)
    check(OTF2_GlobalDefWriter_WriteString(g, id, text.c_str()), "String");
  for (const auto& n : defs.nodes)
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, n.id, n.name, n.cls, n.parent),
          "SystemTreeNode");
  for (const auto& lg : defs.location_groups)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, lg.id, lg.name, lg.type, lg.parent,
                                                  lg.creator),
          "LocationGroup");
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const RawDefs::Location& l = defs.locations[i];
    const std::uint64_t events = l.events == RawDefs::kWrittenCount ? counts[i] : l.events;
    check(OTF2_GlobalDefWriter_WriteLocation(g, l.id, l.name, l.type, events, l.group),
          "Location");
  }
  for (const auto& r : defs.regions)
    check(OTF2_GlobalDefWriter_WriteRegion(g, r.id, r.name, r.name, RawDefs::kEmpty, r.role,
                                           r.paradigm, OTF2_REGION_FLAG_NONE, r.file, 0, 0),
          "Region");
  for (const auto& gr : defs.groups)
    check(OTF2_GlobalDefWriter_WriteGroup(g, gr.id, gr.name, gr.type, gr.paradigm,
                                          OTF2_GROUP_FLAG_NONE,
                                          static_cast<std::uint32_t>(gr.members.size()),
                                          gr.members.data()),
          "Group");
  for (const auto& c : defs.comms)
    check(OTF2_GlobalDefWriter_WriteComm(g, c.id, c.name, c.group, c.parent,
                                         OTF2_COMM_FLAG_NONE),
          "Comm");
  for (const auto& a : defs.attributes)
    check(OTF2_GlobalDefWriter_WriteAttribute(g, a.id, a.name, a.description, OTF2_TYPE_UINT64),
          "Attribute");
  for (const auto& p : defs.parameters)
    check(OTF2_GlobalDefWriter_WriteParameter(g, p.id, p.name, OTF2_PARAMETER_TYPE_INT64),
          "Parameter");
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "CloseGlobalDefWriter");
  check(OTF2_Archive_Close(archive), "Close");
}

}  // namespace cpreplay::testing
