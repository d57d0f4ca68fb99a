// SPDX-License-Identifier: BSD-3-Clause
// Writes small traces with TraceWriter and reads them back with the OTF2 reader C API.
#include "tests/support/trace_writer.hpp"

#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

constexpr std::uint64_t kT0 = TraceWriter::kTimeOffset;  // tick of t = 0
constexpr std::uint64_t kSec = 1'000'000'000ULL;

// ---------------------------------------------------------------- a minimal OTF2 reader

struct LocationDef {
  std::string name;
  OTF2_LocationType type;
  std::uint64_t events;
  OTF2_LocationGroupRef group;
};
struct LocationGroupDef {
  std::string name;
  OTF2_LocationGroupType type;
  OTF2_SystemTreeNodeRef parent;
};
struct SystemTreeNodeDef {
  std::string name;
  std::string cls;
  OTF2_SystemTreeNodeRef parent;
};
struct RegionDef {
  std::string name;
  std::string canonical;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
  std::string file;  // "" if undefined
};
struct GroupDef {
  OTF2_GroupType type;
  OTF2_Paradigm paradigm;
  std::vector<std::uint64_t> members;
};
struct CommDef {
  std::string name;
  OTF2_GroupRef group;
  OTF2_CommRef parent;
};

/// One event as read back; fields a kind does not have stay zero.
struct Ev {
  Ev(std::string k, std::uint64_t t, std::uint32_t r = 0, std::uint32_t p = 0, std::uint32_t g = 0,
     std::uint64_t b = 0, std::uint64_t rcv = 0, std::uint64_t req = 0)
      : kind(std::move(k)), time(t), ref(r), peer(p), tag(g), bytes(b), received(rcv), request(req) {}

  std::string kind;
  std::uint64_t time = 0;
  std::uint32_t ref = 0;   // region, comm of a message/collective, or metric
  std::uint32_t peer = 0;  // receiver, sender or root
  std::uint32_t tag = 0;   // message tag or collective op
  std::uint64_t bytes = 0;
  std::uint64_t received = 0;  // collective bytes received or metric value
  std::uint64_t request = 0;
  std::vector<OTF2_StringRef> args;  // ProgramBegin: name, then arguments
};

struct Trace {
  std::uint64_t resolution = 0, offset = 0, length = 0;
  std::uint64_t number_of_locations = 0;
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_LocationRef, LocationDef> locations;
  std::map<OTF2_LocationGroupRef, LocationGroupDef> location_groups;
  std::map<OTF2_SystemTreeNodeRef, SystemTreeNodeDef> nodes;
  std::map<OTF2_RegionRef, RegionDef> regions;
  std::map<OTF2_GroupRef, GroupDef> groups;
  std::map<OTF2_CommRef, CommDef> comms;
  int metric_members = 0, metric_classes = 0;
  std::map<OTF2_LocationRef, std::vector<Ev>> events;

  std::string str(OTF2_StringRef s) const {
    const auto it = strings.find(s);
    return it == strings.end() ? std::string() : it->second;
  }
};

void ok(OTF2_ErrorCode status, const std::string& what) {
  if (status != OTF2_SUCCESS) {
    throw std::runtime_error(what + ": " + OTF2_Error_GetName(status) + " " +
                             OTF2_Error_GetDescription(status));
  }
}

// Definition callbacks resolve names at once: OTF2 writes (and ours wrote) strings before users.
OTF2_CallbackCode on_clock(void* u, std::uint64_t res, std::uint64_t off, std::uint64_t len,
                           std::uint64_t) {
  auto* t = static_cast<Trace*>(u);
  t->resolution = res;
  t->offset = off;
  t->length = len;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  static_cast<Trace*>(u)->strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                          OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent) {
  auto* t = static_cast<Trace*>(u);
  t->nodes[self] = {t->str(name), t->str(cls), parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef) {
  auto* t = static_cast<Trace*>(u);
  t->location_groups[self] = {t->str(name), type, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType type, std::uint64_t events,
                              OTF2_LocationGroupRef group) {
  auto* t = static_cast<Trace*>(u);
  t->locations[self] = {t->str(name), type, events, group};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name,
                            OTF2_StringRef canonical, OTF2_StringRef, OTF2_RegionRole role,
                            OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef file,
                            std::uint32_t, std::uint32_t) {
  auto* t = static_cast<Trace*>(u);
  t->regions[self] = {t->str(name), t->str(canonical), role, paradigm,
                      file == OTF2_UNDEFINED_STRING ? std::string() : t->str(file)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, std::uint32_t n,
                           const std::uint64_t* members) {
  static_cast<Trace*>(u)->groups[self] = {type, paradigm,
                                          std::vector<std::uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                          OTF2_CommRef parent, OTF2_CommFlag) {
  auto* t = static_cast<Trace*>(u);
  t->comms[self] = {t->str(name), group, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric_member(void* u, OTF2_MetricMemberRef, OTF2_StringRef, OTF2_StringRef,
                                   OTF2_MetricType, OTF2_MetricMode, OTF2_Type, OTF2_Base, int64_t,
                                   OTF2_StringRef) {
  ++static_cast<Trace*>(u)->metric_members;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric_class(void* u, OTF2_MetricRef, uint8_t, const OTF2_MetricMemberRef*,
                                  OTF2_MetricOccurrence, OTF2_RecorderKind) {
  ++static_cast<Trace*>(u)->metric_classes;
  return OTF2_CALLBACK_SUCCESS;
}

void add(void* u, OTF2_LocationRef loc, Ev e) { static_cast<Trace*>(u)->events[loc].push_back(std::move(e)); }

OTF2_CallbackCode ev_program_begin(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList*, OTF2_StringRef name, uint32_t n,
                                   const OTF2_StringRef* args) {
  Ev e{"ProgramBegin", t};
  e.args.push_back(name);
  e.args.insert(e.args.end(), args, args + n);
  add(u, loc, e);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_program_end(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList*, int64_t) {
  add(u, loc, {"ProgramEnd", t});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  add(u, loc, {"Enter", t, region});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  add(u, loc, {"Leave", t, region});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_send(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList*, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                          uint64_t bytes) {
  add(u, loc, {"MpiSend", t, comm, receiver, tag, bytes});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_recv(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList*, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                          uint64_t bytes) {
  add(u, loc, {"MpiRecv", t, comm, sender, tag, bytes});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_isend(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList*, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                           uint64_t bytes, uint64_t request) {
  add(u, loc, {"MpiIsend", t, comm, receiver, tag, bytes, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                                    OTF2_AttributeList*, uint64_t request) {
  add(u, loc, {"MpiIsendComplete", t, 0, 0, 0, 0, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList*, uint64_t request) {
  add(u, loc, {"MpiIrecvRequest", t, 0, 0, 0, 0, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_irecv(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList*, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                           uint64_t bytes, uint64_t request) {
  add(u, loc, {"MpiIrecv", t, comm, sender, tag, bytes, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_test(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList*, uint64_t request) {
  add(u, loc, {"MpiRequestTest", t, 0, 0, 0, 0, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_cancelled(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                               OTF2_AttributeList*, uint64_t request) {
  add(u, loc, {"MpiRequestCancelled", t, 0, 0, 0, 0, 0, request});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_coll_begin(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                                OTF2_AttributeList*) {
  add(u, loc, {"MpiCollectiveBegin", t});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_coll_end(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef comm,
                              uint32_t root, uint64_t sent, uint64_t received) {
  add(u, loc, {"MpiCollectiveEnd", t, comm, root, op, sent, received});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u,
                            OTF2_AttributeList*, OTF2_MetricRef metric, uint8_t n,
                            const OTF2_Type* types, const OTF2_MetricValue* values) {
  Ev e{"Metric", t, metric};
  e.tag = n;
  if (n == 1 && types[0] == OTF2_TYPE_UINT64) e.received = values[0].unsigned_int;
  add(u, loc, e);
  return OTF2_CALLBACK_SUCCESS;
}

/// Reads global definitions, every location's local definitions and events.
Trace read_trace(const std::string& dir) {
  Trace t;
  const std::string anchor = dir + "/traces.otf2";
  OTF2_Reader* rd = OTF2_Reader_Open(anchor.c_str());
  if (rd == nullptr) throw std::runtime_error("cannot open " + anchor);
  ok(OTF2_Reader_SetSerialCollectiveCallbacks(rd), "SetSerialCollectiveCallbacks");
  ok(OTF2_Reader_GetNumberOfLocations(rd, &t.number_of_locations), "GetNumberOfLocations");

  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(rd);
  if (gdr == nullptr) throw std::runtime_error("no global definition reader");
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gcb, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, on_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(gcb, on_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(gcb, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(gcb, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(gcb, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(gcb, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(gcb, on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(gcb, on_metric_class);
  ok(OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, gcb, &t), "RegisterGlobalDefCallbacks");
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  std::uint64_t n = 0;
  ok(OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n), "ReadAllGlobalDefinitions");
  ok(OTF2_Reader_CloseGlobalDefReader(rd, gdr), "CloseGlobalDefReader");

  for (const auto& [loc, def] : t.locations) ok(OTF2_Reader_SelectLocation(rd, loc), "SelectLocation");
  ok(OTF2_Reader_OpenDefFiles(rd), "OpenDefFiles");
  for (const auto& [loc, def] : t.locations) {
    OTF2_DefReader* dr = OTF2_Reader_GetDefReader(rd, loc);
    if (dr == nullptr) throw std::runtime_error("no local definitions for " + std::to_string(loc));
    ok(OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n), "ReadAllLocalDefinitions");
    ok(OTF2_Reader_CloseDefReader(rd, dr), "CloseDefReader");
  }
  ok(OTF2_Reader_CloseDefFiles(rd), "CloseDefFiles");

  ok(OTF2_Reader_OpenEvtFiles(rd), "OpenEvtFiles");
  for (const auto& [loc, def] : t.locations) {
    t.events[loc];  // locations without events still get an entry
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(rd, loc);
    if (er == nullptr) throw std::runtime_error("no event reader for " + std::to_string(loc));
    OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cb, ev_program_begin);
    OTF2_EvtReaderCallbacks_SetProgramEndCallback(cb, ev_program_end);
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_isend_complete);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
    OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cb, ev_test);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, ev_cancelled);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, ev_coll_begin);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_coll_end);
    OTF2_EvtReaderCallbacks_SetMetricCallback(cb, ev_metric);
    ok(OTF2_Reader_RegisterEvtCallbacks(rd, er, cb, &t), "RegisterEvtCallbacks");
    OTF2_EvtReaderCallbacks_Delete(cb);
    ok(OTF2_Reader_ReadAllLocalEvents(rd, er, &n), "ReadAllLocalEvents");
    ok(OTF2_Reader_CloseEvtReader(rd, er), "CloseEvtReader");
  }
  ok(OTF2_Reader_CloseEvtFiles(rd), "CloseEvtFiles");
  ok(OTF2_Reader_Close(rd), "Close");
  return t;
}

std::vector<std::string> kinds(const std::vector<Ev>& evs) {
  std::vector<std::string> k;
  for (const auto& e : evs) k.push_back(e.kind);
  return k;
}

std::vector<std::uint64_t> times(const std::vector<Ev>& evs) {
  std::vector<std::uint64_t> k;
  for (const auto& e : evs) k.push_back(e.time);
  return k;
}

// ---------------------------------------------------------------- fixture

class TraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpreplay-trace-writer-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_, ec);
  }
  std::string dir(const std::string& name) const { return tmp_ + "/" + name; }

  std::string tmp_;
};

/// Rank 0 sends 1024 bytes (tag 7) to rank 1, which posted its receive 0.5 s earlier; then an
/// MPI_Allreduce, all inside main with MPI_Init/MPI_Finalize.
TraceWriter ping(int ranks = 2) {
  TraceWriter w(ranks);
  for (int r = 0; r < ranks; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 1e-6, "main");
    w.init(r, 2e-6, 10e-6);
  }
  w.send(0, 1.0, 1.5, 1, 7, 1024);
  w.recv(1, 0.5, 1.6, 0, 7, 1024);
  for (int r = 0; r < ranks; ++r) {
    w.collective(r, "MPI_Allreduce", 2.0, 2.5, CollOpT::Allreduce, 8, 8);
    w.finalize(r, 3.0, 3.5);
    w.leave(r, 4.0, "main");
    w.program_end(r, 4.0 + 1e-8);
  }
  return w;
}

// ---------------------------------------------------------------- tests

TEST_F(TraceWriterTest, PingPong_ReadBack_DefinitionsFollowScoreP) {
  const TraceWriter w = ping();
  EXPECT_EQ(w.events(0), 15u);
  EXPECT_EQ(w.events(1), 15u);
  w.write(dir("ping"));
  EXPECT_TRUE(std::filesystem::exists(dir("ping") + "/traces.def"));
  EXPECT_TRUE(std::filesystem::exists(dir("ping") + "/traces/0.evt"));
  EXPECT_TRUE(std::filesystem::exists(dir("ping") + "/traces/1.def"));

  const Trace t = read_trace(dir("ping"));
  EXPECT_EQ(t.resolution, 1'000'000'000u);
  EXPECT_EQ(t.offset, kT0 - 10);              // earliest event (ProgramBegin at 0) - 10
  EXPECT_EQ(t.length, 4 * kSec + 10 + 10 + 10);  // to the last ProgramEnd + 10

  EXPECT_EQ(t.number_of_locations, 2u);
  ASSERT_EQ(t.locations.size(), 2u);
  for (OTF2_LocationRef r = 0; r < 2; ++r) {
    const LocationDef& l = t.locations.at(r);
    EXPECT_EQ(l.name, "Master thread");
    EXPECT_EQ(l.type, OTF2_LOCATION_TYPE_CPU_THREAD);
    EXPECT_EQ(l.events, 15u);
    EXPECT_EQ(l.group, r);
  }
  ASSERT_EQ(t.location_groups.size(), 2u);
  EXPECT_EQ(t.location_groups.at(1).name, "MPI Rank 1");
  EXPECT_EQ(t.location_groups.at(1).type, OTF2_LOCATION_GROUP_TYPE_PROCESS);
  EXPECT_EQ(t.location_groups.at(1).parent, 1u);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes.at(0).name, "Linux");
  EXPECT_EQ(t.nodes.at(0).cls, "machine");
  EXPECT_EQ(t.nodes.at(0).parent, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  EXPECT_EQ(t.nodes.at(1).name, "node00");
  EXPECT_EQ(t.nodes.at(1).cls, "node");
  EXPECT_EQ(t.nodes.at(1).parent, 0u);

  ASSERT_EQ(t.regions.size(), 7u);
  const std::vector<std::string> names = {"sim.exe",  "main",          "MPI_Init",    "MPI_Send",
                                          "MPI_Recv", "MPI_Allreduce", "MPI_Finalize"};
  for (OTF2_RegionRef id = 0; id < names.size(); ++id) {
    EXPECT_EQ(t.regions.at(id).name, names[id]);
    EXPECT_EQ(t.regions.at(id).canonical, names[id]);
  }
  EXPECT_EQ(t.regions.at(0).role, OTF2_REGION_ROLE_ARTIFICIAL);
  EXPECT_EQ(t.regions.at(0).paradigm, OTF2_PARADIGM_MEASUREMENT_SYSTEM);
  EXPECT_EQ(t.regions.at(0).file, "");
  EXPECT_EQ(t.regions.at(1).role, OTF2_REGION_ROLE_FUNCTION);
  EXPECT_EQ(t.regions.at(1).paradigm, OTF2_PARADIGM_COMPILER);
  EXPECT_EQ(t.regions.at(1).file, "sim.c");
  EXPECT_EQ(t.regions.at(2).role, OTF2_REGION_ROLE_FUNCTION);
  EXPECT_EQ(t.regions.at(2).paradigm, OTF2_PARADIGM_MPI);
  EXPECT_EQ(t.regions.at(2).file, "MPI");
  EXPECT_EQ(t.regions.at(3).role, OTF2_REGION_ROLE_POINT2POINT);
  EXPECT_EQ(t.regions.at(4).role, OTF2_REGION_ROLE_POINT2POINT);
  EXPECT_EQ(t.regions.at(5).role, OTF2_REGION_ROLE_COLL_ALL2ALL);
  EXPECT_EQ(t.regions.at(6).role, OTF2_REGION_ROLE_FUNCTION);

  ASSERT_EQ(t.groups.size(), 3u);
  EXPECT_EQ(t.groups.at(0).type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  EXPECT_EQ(t.groups.at(0).paradigm, OTF2_PARADIGM_MPI);
  EXPECT_EQ(t.groups.at(0).members, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(t.groups.at(1).type, OTF2_GROUP_TYPE_COMM_GROUP);
  EXPECT_EQ(t.groups.at(1).members, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(t.groups.at(2).type, OTF2_GROUP_TYPE_COMM_SELF);
  EXPECT_TRUE(t.groups.at(2).members.empty());
  ASSERT_EQ(t.comms.size(), 2u);
  EXPECT_EQ(t.comms.at(0).name, "MPI_COMM_WORLD");
  EXPECT_EQ(t.comms.at(0).group, 1u);
  EXPECT_EQ(t.comms.at(0).parent, OTF2_UNDEFINED_COMM);
  EXPECT_EQ(t.comms.at(1).name, "MPI_COMM_SELF");
  EXPECT_EQ(t.comms.at(1).group, 2u);
  EXPECT_EQ(t.metric_members, 0);
  EXPECT_EQ(t.metric_classes, 0);
}

TEST_F(TraceWriterTest, PingPong_ReadBack_EventsKindsTimesAndMessages) {
  ping().write(dir("ping"));
  const Trace t = read_trace(dir("ping"));
  const auto& e0 = t.events.at(0);
  const auto& e1 = t.events.at(1);
  EXPECT_EQ(kinds(e0), (std::vector<std::string>{
                           "ProgramBegin", "Enter", "Enter", "Leave", "Enter", "MpiSend", "Leave",
                           "Enter", "MpiCollectiveBegin", "MpiCollectiveEnd", "Leave", "Enter",
                           "Leave", "Leave", "ProgramEnd"}));
  EXPECT_EQ(times(e0), (std::vector<std::uint64_t>{
                           kT0, kT0 + 1'000, kT0 + 2'000, kT0 + 10'000, kT0 + kSec, kT0 + kSec,
                           kT0 + 1'500'000'000, kT0 + 2 * kSec, kT0 + 2 * kSec,
                           kT0 + 2'500'000'000, kT0 + 2'500'000'000, kT0 + 3 * kSec,
                           kT0 + 3'500'000'000, kT0 + 4 * kSec, kT0 + 4 * kSec + 10}));
  // ProgramBegin names the program region; no arguments.
  ASSERT_EQ(e0[0].args.size(), 1u);
  EXPECT_EQ(t.str(e0[0].args[0]), "sim.exe");
  EXPECT_EQ(e0[1].ref, 1u);  // main
  EXPECT_EQ(e0[4].ref, 3u);  // MPI_Send
  const Ev& send = e0[5];
  EXPECT_EQ(send.peer, 1u);
  EXPECT_EQ(send.ref, 0u);  // MPI_COMM_WORLD
  EXPECT_EQ(send.tag, 7u);
  EXPECT_EQ(send.bytes, 1024u);
  const Ev& end = e0[9];
  EXPECT_EQ(end.tag, static_cast<std::uint32_t>(OTF2_COLLECTIVE_OP_ALLREDUCE));
  EXPECT_EQ(end.ref, 0u);
  EXPECT_EQ(end.peer, OTF2_UNDEFINED_UINT32);
  EXPECT_EQ(end.bytes, 8u);
  EXPECT_EQ(end.received, 8u);

  ASSERT_EQ(e1.size(), 15u);
  EXPECT_EQ(e1[4].kind, "Enter");
  EXPECT_EQ(e1[4].ref, 4u);  // MPI_Recv
  EXPECT_EQ(e1[4].time, kT0 + 500'000'000);
  const Ev& recv = e1[5];
  EXPECT_EQ(recv.kind, "MpiRecv");
  EXPECT_EQ(recv.time, kT0 + 1'600'000'000);
  EXPECT_EQ(recv.peer, 0u);
  EXPECT_EQ(recv.ref, 0u);
  EXPECT_EQ(recv.tag, 7u);
  EXPECT_EQ(recv.bytes, 1024u);
  EXPECT_EQ(e1[6].kind, "Leave");
  EXPECT_EQ(e1[6].time, kT0 + 1'600'000'000);
}

TEST_F(TraceWriterTest, SubCommNodesThreadsMetric_ReadBack_AllDefined) {
  TraceWriter w(4, "app.x");
  const int pair = w.add_comm({3, 1}, "pair");
  EXPECT_EQ(pair, 2);
  w.set_nodes(2);
  w.set_threads_per_process(2);
  w.set_program_arguments({"-n", "3"});
  for (int r = 0; r < 4; ++r) w.program_begin(r, 0.0);
  w.metric(0, 0.25);
  w.send(3, 1.0, 1.1, 1, 5, 64, pair);  // comm-local 1 = world rank 1
  w.recv(1, 1.0, 1.2, 0, 5, 64, pair);  // comm-local 0 = world rank 3
  w.collective(1, "MPI_Bcast", 2.0, 2.1, CollOpT::Bcast, 0, 16, pair, 0);
  w.collective(3, "MPI_Bcast", 2.0, 2.05, CollOpT::Bcast, 16, 16, pair, 0);
  w.enter(0, 1.0, "MPI_Isend");
  w.mpi_isend(0, 1.0, 2, 9, 128, 42);
  w.leave(0, 1.1, "MPI_Isend");
  w.mpi_isend_complete(0, 1.5, 42);
  w.mpi_irecv_request(2, 1.0, 7);
  w.request_test(2, 1.2, 7);
  w.mpi_irecv(2, 1.3, 0, 9, 128, 7);
  w.mpi_irecv_request(2, 1.4, 8);
  w.request_cancelled(2, 1.5, 8);
  for (int r = 0; r < 4; ++r) w.program_end(r, 3.0);
  w.write(dir("sub"));

  const Trace t = read_trace(dir("sub"));
  EXPECT_EQ(t.number_of_locations, 8u);
  ASSERT_EQ(t.locations.size(), 8u);
  for (OTF2_LocationRef r = 0; r < 4; ++r) {
    const OTF2_LocationRef thread = (OTF2_LocationRef{1} << 32) | r;
    ASSERT_EQ(t.locations.count(thread), 1u);
    EXPECT_EQ(t.locations.at(thread).group, r);
    EXPECT_EQ(t.locations.at(thread).type, OTF2_LOCATION_TYPE_CPU_THREAD);
    EXPECT_EQ(t.locations.at(thread).events, 0u);
    EXPECT_TRUE(t.events.at(thread).empty());
    EXPECT_EQ(t.locations.at(r).name, "Master thread");
  }
  EXPECT_EQ(t.groups.at(0).members, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  // Ranks 0,1 on node00 (ref 1), ranks 2,3 on node01 (ref 2).
  EXPECT_EQ(t.nodes.at(2).name, "node01");
  EXPECT_EQ(t.location_groups.at(1).parent, 1u);
  EXPECT_EQ(t.location_groups.at(2).parent, 2u);

  ASSERT_EQ(t.comms.size(), 3u);
  EXPECT_EQ(t.comms.at(2).name, "pair");
  EXPECT_EQ(t.comms.at(2).parent, 0u);
  EXPECT_EQ(t.groups.at(t.comms.at(2).group).type, OTF2_GROUP_TYPE_COMM_GROUP);
  EXPECT_EQ(t.groups.at(t.comms.at(2).group).members, (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(t.metric_members, 1);
  EXPECT_EQ(t.metric_classes, 1);

  EXPECT_EQ(t.regions.at(0).name, "app.x");
  const Ev& begin = t.events.at(2).front();
  ASSERT_EQ(begin.args.size(), 3u);
  EXPECT_EQ(t.str(begin.args[0]), "app.x");
  EXPECT_EQ(t.str(begin.args[1]), "-n");
  EXPECT_EQ(t.str(begin.args[2]), "3");

  const auto& e0 = t.events.at(0);
  EXPECT_EQ(kinds(e0), (std::vector<std::string>{"ProgramBegin", "Metric", "Enter", "MpiIsend",
                                                 "Leave", "MpiIsendComplete", "ProgramEnd"}));
  EXPECT_EQ(e0[1].ref, 0u);
  EXPECT_EQ(e0[1].received, 2 * 250'000'000u);
  EXPECT_EQ(e0[3].peer, 2u);
  EXPECT_EQ(e0[3].tag, 9u);
  EXPECT_EQ(e0[3].bytes, 128u);
  EXPECT_EQ(e0[3].request, 42u);
  EXPECT_EQ(e0[5].request, 42u);
  const auto& e2 = t.events.at(2);
  EXPECT_EQ(kinds(e2), (std::vector<std::string>{"ProgramBegin", "MpiIrecvRequest",
                                                 "MpiRequestTest", "MpiIrecv", "MpiIrecvRequest",
                                                 "MpiRequestCancelled", "ProgramEnd"}));
  EXPECT_EQ(e2[3].peer, 0u);
  EXPECT_EQ(e2[3].request, 7u);
  EXPECT_EQ(e2[3].time, kT0 + 1'300'000'000);
  EXPECT_EQ(e2[5].request, 8u);

  const Ev& send = t.events.at(3)[2];
  EXPECT_EQ(send.kind, "MpiSend");
  EXPECT_EQ(send.ref, 2u);
  EXPECT_EQ(send.peer, 1u);
  const auto& e1 = t.events.at(1);
  EXPECT_EQ(e1[2].kind, "MpiRecv");
  EXPECT_EQ(e1[2].peer, 0u);
  EXPECT_EQ(e1[6].kind, "MpiCollectiveEnd");
  EXPECT_EQ(e1[6].tag, static_cast<std::uint32_t>(OTF2_COLLECTIVE_OP_BCAST));
  EXPECT_EQ(e1[6].ref, 2u);
  EXPECT_EQ(e1[6].peer, 0u);
  EXPECT_EQ(e1[6].bytes, 0u);
  EXPECT_EQ(e1[6].received, 16u);
}

TEST_F(TraceWriterTest, TimeDecreasesOnRank_Throws) {
  TraceWriter w(2);
  w.enter(0, 1.0, "main");
  w.enter(1, 0.5, "main");         // other ranks have their own clocks
  w.region(0, "work", 1.0, 1.0);   // equal times are fine
  EXPECT_THROW(w.leave(0, 0.999, "main"), std::runtime_error);
  EXPECT_THROW(w.send(0, 0.5, 2.0, 1, 0, 8), std::runtime_error);
  EXPECT_EQ(w.events(0), 3u);
  EXPECT_EQ(w.events(1), 1u);
}

TEST_F(TraceWriterTest, InvalidReferences_Throw) {
  TraceWriter w(3);
  EXPECT_THROW(TraceWriter(0), std::runtime_error);
  EXPECT_THROW(w.enter(3, 0.0, "main"), std::runtime_error);
  EXPECT_THROW(w.enter(-1, 0.0, "main"), std::runtime_error);
  EXPECT_THROW(w.mpi_send(0, 0.0, 3, 0, 8), std::runtime_error);      // dest outside world
  EXPECT_THROW(w.mpi_send(0, 0.0, 1, 0, 8, 5), std::runtime_error);   // unknown comm
  EXPECT_THROW(w.mpi_send(0, 0.0, 1, 0, 8, w.self()), std::runtime_error);  // self has rank 0 only
  const int c = w.add_comm({2, 1}, "sub");
  EXPECT_THROW(w.mpi_recv(0, 0.0, 0, 0, 8, c), std::runtime_error);   // rank 0 not in sub
  EXPECT_THROW(w.mpi_recv(1, 0.0, 2, 0, 8, c), std::runtime_error);   // sub has 2 ranks
  EXPECT_THROW(w.coll_end(1, 0.0, CollOpT::Bcast, c, 2, 0, 0), std::runtime_error);
  EXPECT_THROW(w.add_comm({0, 0}, "dup"), std::runtime_error);
  EXPECT_THROW(w.add_comm({3}, "out"), std::runtime_error);
  EXPECT_THROW(w.set_nodes(0), std::runtime_error);
  EXPECT_THROW(w.set_threads_per_process(0), std::runtime_error);
  EXPECT_THROW(w.enter(0, std::nan(""), "main"), std::runtime_error);
  EXPECT_EQ(w.events(0), 0u);
  w.mpi_send(0, 0.0, 0, 0, 8, w.self());
  w.coll_end(2, 0.0, CollOpT::Bcast, c, 1, 0, 0);
  EXPECT_EQ(w.events(0) + w.events(2), 2u);
}

TEST_F(TraceWriterTest, Ticks_SecondsFromStart_OffsetAndRounded) {
  EXPECT_EQ(TraceWriter::to_ticks(0.0), kT0);
  EXPECT_EQ(TraceWriter::to_ticks(1.5), kT0 + 1'500'000'000);
  EXPECT_EQ(TraceWriter::to_ticks(1e-9 * 3.4), kT0 + 3);
  EXPECT_EQ(TraceWriter::to_ticks(-1e-8), kT0 - 10);
}

TEST_F(TraceWriterTest, ExistingDirectory_Replaced) {
  const std::string out = dir("old");
  std::filesystem::create_directories(out + "/traces");
  std::ofstream(out + "/stale.txt") << "x";
  std::ofstream(out + "/traces/9.evt") << "x";
  ping().write(out);
  EXPECT_FALSE(std::filesystem::exists(out + "/stale.txt"));
  EXPECT_FALSE(std::filesystem::exists(out + "/traces/9.evt"));
  EXPECT_EQ(read_trace(out).locations.size(), 2u);
}

TEST_F(TraceWriterTest, TopLevelDirectory_RefusedToReplace) {
  EXPECT_THROW(ping().write("/"), std::runtime_error);
  EXPECT_THROW(ping().write("/tmp"), std::runtime_error);
  EXPECT_THROW(ping().write("/tmp/"), std::runtime_error);
  EXPECT_THROW(ping().write(""), std::runtime_error);
  EXPECT_TRUE(std::filesystem::exists("/tmp"));
}

}  // namespace
