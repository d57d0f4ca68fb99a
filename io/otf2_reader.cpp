// SPDX-License-Identifier: BSD-3-Clause
// OTF2 reading: with io/otf2_event_decoder and io/otf2_local_definitions, the only code that
// includes <otf2/...>.
#include "io/otf2_reader.hpp"

#include <otf2/otf2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cpreplay/error.hpp"
#include "io/otf2_buffer.hpp"
#include "io/otf2_event_decoder.hpp"
#include "io/request_map.hpp"

namespace cpreplay::io {
namespace {

std::atomic<std::uint64_t> g_direct_reads{0};   // event files decoded by otf2_event_decoder
std::atomic<std::uint64_t> g_library_reads{0};  // event files read by libotf2
std::mutex g_declined_mutex;
std::string g_last_declined;  // why the decoder last declined a file (under g_declined_mutex)
std::uint64_t g_last_cut_at = 0;  // where the last event file read cut short ends (the same)
std::atomic<std::uint64_t> g_direct_defs{0};     // local definition files read directly
std::atomic<std::uint64_t> g_library_defs{0};    // local definition files read by libotf2

// OTF2 prints its own multi-line diagnostics to stderr; we report one line ourselves.
OTF2_ErrorCode quiet_otf2_errors(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                                 const char*, va_list) {
  return code;
}

void silence_otf2() {
  static bool done = false;
  if (!done) {
    OTF2_Error_RegisterCallback(&quiet_otf2_errors, nullptr);
    done = true;
  }
}

/// Throws TraceError if an OTF2 call failed. The message names the file and what we were doing.
void check(OTF2_ErrorCode status, const std::string& anchor, const std::string& what) {
  if (status != OTF2_SUCCESS)
    throw TraceError(anchor + ": " + what + " failed: " + OTF2_Error_GetDescription(status));
}

void check_anchor_path(const std::string& anchor) {
  struct stat st {};
  if (::stat(anchor.c_str(), &st) != 0)
    throw TraceError(anchor + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw TraceError(anchor + ": is a directory; name the OTF2 anchor file, e.g. " + anchor +
                     "/traces.otf2");
}

struct ArchiveCloser {
  void operator()(OTF2_Reader* r) const {
    if (r) OTF2_Reader_Close(r);
  }
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ArchiveCloser>;

ReaderPtr open_archive(const std::string& anchor) {
  silence_otf2();
  check_anchor_path(anchor);
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) throw TraceError(anchor + ": not an OTF2 anchor file (cannot open it as OTF2)");
  ReaderPtr ptr(reader);
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), anchor, "setting up the reader");
  uint8_t major = 0, minor = 0, bugfix = 0;
  if (OTF2_Reader_GetVersion(reader, &major, &minor, &bugfix) != OTF2_SUCCESS || major == 0)
    throw TraceError(anchor + ": not an OTF2 anchor file");
  return ptr;
}

// ---------------------------------------------------------------------------------------------
// Global definitions
//
// Every record is kept as it was read and every reference is checked once all are in (OTF2
// does not order definitions by their references): a damaged file (a job killed while Score-P
// wrote it, a quota hit, a copy cut short) must give one line naming it, never a wild index.

struct RawRegion {
  OTF2_StringRef name, canonical, description, file;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
  uint32_t begin, end;
};
struct RawGroup {
  OTF2_StringRef name;
  OTF2_GroupType type;
  OTF2_Paradigm paradigm;
  std::vector<uint64_t> members;
};
struct RawComm {
  OTF2_StringRef name;
  OTF2_GroupRef group;
  OTF2_CommRef parent;
};
struct RawLocationGroup {
  OTF2_StringRef name;
  OTF2_LocationGroupType type;
  OTF2_SystemTreeNodeRef parent;
  OTF2_LocationGroupRef creator;
};
struct RawLocation {
  OTF2_StringRef name;
  OTF2_LocationType type;
  OTF2_LocationGroupRef group;
  uint64_t events;
};
struct RawNode {
  OTF2_StringRef name, cls;
  OTF2_SystemTreeNodeRef parent;
};
struct RawAttribute {
  OTF2_StringRef name, description;
};

/// Definitions of one kind in file order, with their ids' positions.
template <class Id, class Raw>
struct Table {
  std::vector<std::pair<Id, Raw>> items;
  std::unordered_map<Id, std::size_t> index;

  static constexpr std::size_t kNone = SIZE_MAX;
  std::size_t pos(Id id) const {
    auto it = index.find(id);
    return it == index.end() ? kNone : it->second;
  }
  const Raw* find(Id id) const {
    const std::size_t p = pos(id);
    return p == kNone ? nullptr : &items[p].second;
  }
};

struct DefState {
  std::string anchor;
  std::string file;  ///< the global definitions file, for messages
  Table<OTF2_StringRef, std::string> strings;
  Table<OTF2_RegionRef, RawRegion> regions;
  Table<OTF2_GroupRef, RawGroup> groups;
  Table<OTF2_CommRef, RawComm> comms;
  Table<OTF2_LocationGroupRef, RawLocationGroup> location_groups;
  Table<OTF2_LocationRef, RawLocation> locations;
  Table<OTF2_SystemTreeNodeRef, RawNode> nodes;
  Table<OTF2_AttributeRef, RawAttribute> attributes;
  Table<OTF2_ParameterRef, OTF2_StringRef> parameters;
  Clock clock;
  bool have_clock = false;
  std::exception_ptr error;

  [[noreturn]] void fail(const std::string& what) const {
    throw TraceError(anchor + ": global definitions " + file + ": " + what);
  }

  /// Adds a record; an id given twice, or OTF2's "undefined" value as an id, is damage.
  template <class Id, class Raw>
  void add(Table<Id, Raw>& table, const char* kind, Id id, Id undefined, Raw raw) {
    if (id == undefined)
      fail(std::string(kind) + " defined with OTF2's undefined id " + std::to_string(id));
    if (!table.index.emplace(id, table.items.size()).second)
      fail(std::string(kind) + " " + std::to_string(id) + " is defined twice");
    table.items.emplace_back(id, std::move(raw));
  }

  /// The text of a string reference; OTF2_UNDEFINED_STRING is the empty string, an id that no
  /// String record defines is damage (`whose`: "region 4", ...).
  const std::string& str(OTF2_StringRef ref, const std::string& whose) const {
    static const std::string kEmpty;
    if (ref == OTF2_UNDEFINED_STRING) return kEmpty;
    const std::string* s = strings.find(ref);
    if (!s) fail(whose + " names undefined string " + std::to_string(ref));
    return *s;
  }
};

// Each callback catches everything: no exception may cross OTF2's C frames.
#define CPREPLAY_GUARD(state, body)                \
  try {                                            \
    body;                                          \
  } catch (...) {                                  \
    (state)->error = std::current_exception();     \
    return OTF2_CALLBACK_INTERRUPT;                \
  }                                                \
  return OTF2_CALLBACK_SUCCESS;

OTF2_CallbackCode def_clock(void* ud, uint64_t resolution, uint64_t offset, uint64_t, uint64_t) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, {
    if (s->have_clock) s->fail("clock properties are defined twice");
    if (resolution == 0) s->fail("clock properties with a timer resolution of 0 ticks/s");
    s->clock.ticks_per_second = resolution;
    s->clock.global_offset = offset;
    s->have_clock = true;
  })
}

OTF2_CallbackCode def_string(void* ud, OTF2_StringRef self, const char* string) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->strings, "string", self, OTF2_UNDEFINED_STRING,
                           std::string(string ? string : "")))
}

OTF2_CallbackCode def_node(void* ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                           OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->nodes, "system-tree node", self, OTF2_UNDEFINED_SYSTEM_TREE_NODE,
                           RawNode{name, cls, parent}))
}

OTF2_CallbackCode def_location_group(void* ud, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                     OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                     OTF2_LocationGroupRef creator) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->location_groups, "location group", self,
                           OTF2_UNDEFINED_LOCATION_GROUP,
                           RawLocationGroup{name, type, parent, creator}))
}

OTF2_CallbackCode def_location(void* ud, OTF2_LocationRef self, OTF2_StringRef name,
                               OTF2_LocationType type, uint64_t events,
                               OTF2_LocationGroupRef group) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->locations, "location", self, OTF2_UNDEFINED_LOCATION,
                           RawLocation{name, type, group, events}))
}

OTF2_CallbackCode def_region(void* ud, OTF2_RegionRef self, OTF2_StringRef name,
                             OTF2_StringRef canonical, OTF2_StringRef description,
                             OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag,
                             OTF2_StringRef file, uint32_t begin, uint32_t end) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->regions, "region", self, OTF2_UNDEFINED_REGION,
                           RawRegion{name, canonical, description, file, role, paradigm, begin,
                                     end}))
}

OTF2_CallbackCode def_group(void* ud, OTF2_GroupRef self, OTF2_StringRef name,
                            OTF2_GroupType type, OTF2_Paradigm paradigm, OTF2_GroupFlag,
                            uint32_t n, const uint64_t* members) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, {
    if (n > 0 && !members) s->fail("group " + std::to_string(self) + " has no member list");
    s->add(s->groups, "group", self, OTF2_UNDEFINED_GROUP,
           RawGroup{name, type, paradigm, std::vector<uint64_t>(members, members + n)});
  })
}

OTF2_CallbackCode def_comm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                           OTF2_CommRef parent, OTF2_CommFlag) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->comms, "communicator", self, OTF2_UNDEFINED_COMM,
                           RawComm{name, group, parent}))
}

OTF2_CallbackCode def_attribute(void* ud, OTF2_AttributeRef self, OTF2_StringRef name,
                                OTF2_StringRef description, OTF2_Type) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->attributes, "attribute", self, OTF2_UNDEFINED_ATTRIBUTE,
                           RawAttribute{name, description}))
}

OTF2_CallbackCode def_parameter(void* ud, OTF2_ParameterRef self, OTF2_StringRef name,
                                OTF2_ParameterType) {
  auto* s = static_cast<DefState*>(ud);
  CPREPLAY_GUARD(s, s->add(s->parameters, "parameter", self, OTF2_UNDEFINED_PARAMETER, name))
}

std::string basename_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

constexpr std::size_t kNoParent = SIZE_MAX;

/// Calls `cycle(i)` for an element that is its own ancestor when following `parent_of` (an
/// index or kNoParent). Each element is walked once: O(n).
template <class ParentOf, class Cycle>
void check_no_cycles(std::size_t n, ParentOf parent_of, Cycle cycle) {
  enum : std::uint8_t { kNew, kOnWalk, kEndsAtRoot };
  std::vector<std::uint8_t> state(n, kNew);
  std::vector<std::size_t> walk;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j = i;
    while (j != kNoParent && state[j] == kNew) {
      state[j] = kOnWalk;
      walk.push_back(j);
      j = parent_of(j);
    }
    if (j != kNoParent && state[j] == kOnWalk) cycle(j);
    for (std::size_t k : walk) state[k] = kEndsAtRoot;
    walk.clear();
  }
}

/// Regions and communicators are tables indexed by their OTF2 id. Their ids must number the
/// records 0..n-1 (as Score-P writes them, and as PEARL requires): a table is then never larger
/// than the file's own records, whatever id a damaged file names.
template <class Id, class Raw>
void check_dense(const DefState& s, const Table<Id, Raw>& table, const char* kind,
                 const char* kinds) {
  const std::size_t n = table.items.size();
  for (const auto& item : table.items)
    if (item.first >= n)
      s.fail(std::string(kind) + " id " + std::to_string(item.first) + " is out of range: the " +
             "file defines " + std::to_string(n) + " " + kinds + ", numbered 0 to " +
             std::to_string(n == 0 ? 0 : n - 1));
}

Definitions build_definitions(const std::string& anchor, const DefState& s) {
  Definitions defs;
  defs.anchor_path = anchor;
  if (!s.have_clock) s.fail("no clock properties");
  defs.clock = s.clock;

  for (const auto& [id, a] : s.attributes.items) {
    const std::string whose = "attribute " + std::to_string(id);
    s.str(a.name, whose);
    s.str(a.description, whose);
  }
  for (const auto& [id, name] : s.parameters.items) s.str(name, "parameter " + std::to_string(id));

  // Regions: dense by OTF2 id.
  check_dense(s, s.regions, "region", "regions");
  defs.regions.resize(s.regions.items.size());
  for (const auto& [id, r] : s.regions.items) {
    const std::string whose = "region " + std::to_string(id);
    Region& out = defs.regions[id];
    out.name = s.str(r.name, whose);
    out.canonical_name = s.str(r.canonical, whose);
    out.description = s.str(r.description, whose);
    out.file = s.str(r.file, whose);
    out.begin_line = r.begin;
    out.end_line = r.end;
    out.role = static_cast<RegionRole>(r.role);
    out.paradigm = static_cast<Paradigm>(r.paradigm);
    out.mpi_class = classify_mpi_region(out.file, out.name);
  }

  // System tree: indices in file order; parents defined, and no node its own ancestor.
  const std::size_t n_nodes = s.nodes.items.size();
  std::vector<std::size_t> node_parent(n_nodes, kNoParent);
  for (std::size_t i = 0; i < n_nodes; ++i) {
    const auto& [id, n] = s.nodes.items[i];
    const std::string whose = "system-tree node " + std::to_string(id);
    defs.system_nodes.push_back(
        SystemTreeNode{s.str(n.name, whose), s.str(n.cls, whose), UINT32_MAX});
    if (n.parent == OTF2_UNDEFINED_SYSTEM_TREE_NODE) continue;
    node_parent[i] = s.nodes.pos(n.parent);
    if (node_parent[i] == kNoParent)
      s.fail(whose + " names undefined parent node " + std::to_string(n.parent));
    defs.system_nodes[i].parent = static_cast<std::uint32_t>(node_parent[i]);
  }
  check_no_cycles(n_nodes, [&](std::size_t i) { return node_parent[i]; }, [&](std::size_t i) {
    s.fail("system-tree node " + std::to_string(s.nodes.items[i].first) +
           " is its own ancestor");
  });

  // Location groups: their system-tree node and creating group defined, no creation cycle.
  const std::size_t n_groups = s.location_groups.items.size();
  std::vector<std::size_t> creator(n_groups, kNoParent);
  for (std::size_t i = 0; i < n_groups; ++i) {
    const auto& [id, g] = s.location_groups.items[i];
    const std::string whose = "location group " + std::to_string(id);
    s.str(g.name, whose);
    if (g.parent != OTF2_UNDEFINED_SYSTEM_TREE_NODE && !s.nodes.find(g.parent))
      s.fail(whose + " names undefined system-tree node " + std::to_string(g.parent));
    if (g.creator == OTF2_UNDEFINED_LOCATION_GROUP) continue;
    creator[i] = s.location_groups.pos(g.creator);
    if (creator[i] == kNoParent)
      s.fail(whose + " names undefined creating location group " + std::to_string(g.creator));
  }
  check_no_cycles(n_groups, [&](std::size_t i) { return creator[i]; }, [&](std::size_t i) {
    s.fail("location group " + std::to_string(s.location_groups.items[i].first) +
           " is its own creator");
  });

  for (const auto& [id, l] : s.locations.items) {
    const std::string whose = "location " + std::to_string(id);
    s.str(l.name, whose);
    if (!s.location_groups.find(l.group))
      s.fail(whose + " names undefined location group " + std::to_string(l.group));
  }

  // Processes: location groups of type PROCESS. World rank = position of the process's
  // location in the MPI COMM_LOCATIONS group (Score-P: location group id == rank).
  std::vector<OTF2_LocationGroupRef> process_groups;
  for (const auto& [id, g] : s.location_groups.items)
    if (g.type == OTF2_LOCATION_GROUP_TYPE_PROCESS) process_groups.push_back(id);
  if (process_groups.empty()) s.fail("the trace defines no MPI processes");

  // Groups: every member reference defined, nobody listed twice.
  const RawGroup* comm_locations = nullptr;
  std::unordered_map<OTF2_Paradigm, std::size_t> locations_of_paradigm;  // COMM_LOCATIONS sizes
  for (const auto& [id, g] : s.groups.items) {
    const std::string whose = "group " + std::to_string(id);
    s.str(g.name, whose);
    std::unordered_set<uint64_t> seen;
    for (const uint64_t m : g.members) {
      if (!seen.insert(m).second)
        s.fail(whose + " lists member " + std::to_string(m) + " twice");
      if ((g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS || g.type == OTF2_GROUP_TYPE_LOCATIONS) &&
          !s.locations.find(m))
        s.fail(whose + " lists undefined location " + std::to_string(m));
      if (g.type == OTF2_GROUP_TYPE_REGIONS && m >= s.regions.items.size())
        s.fail(whose + " lists undefined region " + std::to_string(m));
    }
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
      if (!locations_of_paradigm.emplace(g.paradigm, g.members.size()).second)
        s.fail(whose + " is a second COMM_LOCATIONS group of paradigm " +
               std::to_string(g.paradigm));
      if (g.paradigm == OTF2_PARADIGM_MPI || comm_locations == nullptr) comm_locations = &g;
    }
  }

  std::vector<OTF2_LocationGroupRef> rank_group;  // world rank -> location group
  if (comm_locations && comm_locations->members.size() == process_groups.size()) {
    for (uint64_t loc : comm_locations->members) rank_group.push_back(s.locations.find(loc)->group);
  } else {
    rank_group = process_groups;
  }

  defs.processes.resize(rank_group.size());
  std::unordered_map<OTF2_LocationGroupRef, Rank> rank_of_group;
  for (std::size_t r = 0; r < rank_group.size(); ++r)
    rank_of_group[rank_group[r]] = static_cast<Rank>(r);
  for (const auto& [id, g] : s.location_groups.items) {
    auto it = rank_of_group.find(id);
    if (it == rank_of_group.end()) continue;
    Process& p = defs.processes[it->second];
    p.name = s.str(g.name, "location group " + std::to_string(id));
    if (p.name.empty()) p.name = "MPI rank " + std::to_string(it->second);
    // A process without a node is placed on node 0 only when there is no system tree at all
    // (the report then adds "machine unknown").
    if (g.parent == OTF2_UNDEFINED_SYSTEM_TREE_NODE) {
      if (n_nodes > 0)
        s.fail("location group " + std::to_string(id) + " (MPI rank " +
               std::to_string(it->second) + ") names no system-tree node");
      p.system_node = 0;
    } else {
      p.system_node = static_cast<std::uint32_t>(s.nodes.pos(g.parent));
    }
  }
  // Locations of each rank in thread order: Score-P numbers them (thread << 32) | rank, as
  // PEARL reads them, so the smallest id is the master thread. Only CPU threads are analyzed.
  std::vector<std::vector<std::pair<OTF2_LocationRef, const RawLocation*>>> rank_locations(
      defs.processes.size());
  for (const auto& [id, l] : s.locations.items) {
    auto it = rank_of_group.find(l.group);
    if (it == rank_of_group.end()) continue;
    if (l.type != OTF2_LOCATION_TYPE_CPU_THREAD)
      s.fail("rank " + std::to_string(it->second) + ", thread " + std::to_string(id >> 32) +
             ": location " + std::to_string(id) + " (" +
             s.str(l.name, "location " + std::to_string(id)) +
             ") is not a CPU thread (OTF2 location type " + std::to_string(l.type) +
             "); cpreplay analyzes MPI ranks and their CPU threads only");
    rank_locations[static_cast<std::size_t>(it->second)].emplace_back(id, &l);
  }
  for (std::size_t r = 0; r < defs.processes.size(); ++r) {
    auto& locs = rank_locations[r];
    if (locs.empty()) s.fail("MPI rank " + std::to_string(r) + " has no location");
    std::sort(locs.begin(), locs.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    Process& p = defs.processes[r];
    p.locations = static_cast<std::uint32_t>(locs.size());
    p.location_id = locs[0].first;
    p.location_name = s.str(locs[0].second->name, "location " + std::to_string(locs[0].first));
    p.events = locs[0].second->events;
    for (std::size_t t = 1; t < locs.size(); ++t)
      p.workers.push_back(WorkerThread{
          locs[t].first, s.str(locs[t].second->name, "location " + std::to_string(locs[t].first)),
          locs[t].second->events});
  }

  // Communicators: dense by OTF2 id; COMM_GROUP members are world ranks, COMM_SELF groups mean
  // "just me"; parents defined and acyclic.
  check_dense(s, s.comms, "communicator", "communicators");
  defs.comms.resize(s.comms.items.size());
  std::vector<std::size_t> comm_parent(s.comms.items.size(), kNoParent);
  for (const auto& [id, c] : s.comms.items) {
    const std::string whose = "communicator " + std::to_string(id);
    Communicator& out = defs.comms[id];
    out.name = s.str(c.name, whose);
    if (c.parent != OTF2_UNDEFINED_COMM) {
      if (c.parent >= defs.comms.size())
        s.fail(whose + " names undefined parent communicator " + std::to_string(c.parent));
      comm_parent[id] = c.parent;
    }
    const RawGroup* g = s.groups.find(c.group);
    if (!g) s.fail(whose + " names undefined group " + std::to_string(c.group));
    if (g->type == OTF2_GROUP_TYPE_COMM_SELF) {
      out.is_self = true;
    } else if (g->type == OTF2_GROUP_TYPE_COMM_GROUP && g->paradigm != OTF2_PARADIGM_MPI) {
      // Members index that paradigm's COMM_LOCATIONS group (threads of a hybrid trace): checked,
      // but no MPI message or collective can use such a communicator, so it has no ranks.
      auto locs = locations_of_paradigm.find(g->paradigm);
      for (uint64_t m : g->members)
        if (locs == locations_of_paradigm.end() || m >= locs->second)
          s.fail(whose + " (" + out.name + ") names member " + std::to_string(m) +
                 " outside the COMM_LOCATIONS group of its paradigm");
    } else if (g->type == OTF2_GROUP_TYPE_COMM_GROUP) {
      out.members.reserve(g->members.size());
      for (uint64_t m : g->members) {
        if (m >= defs.processes.size())
          s.fail(whose + " (" + out.name + ") names rank " + std::to_string(m) +
                 " but the trace has " + std::to_string(defs.processes.size()) + " ranks");
        out.members.push_back(static_cast<Rank>(m));
      }
    } else {
      s.fail(whose + "'s group " + std::to_string(c.group) + " is not a communicator group");
    }
  }
  check_no_cycles(comm_parent.size(), [&](std::size_t i) { return comm_parent[i]; },
                  [&](std::size_t i) {
                    s.fail("communicator " + std::to_string(i) + " is its own ancestor");
                  });
  return defs;
}

// ---------------------------------------------------------------------------------------------
// Events

struct EventState {
  const Definitions* defs = nullptr;
  const std::string* anchor = nullptr;
  Rank rank = 0;
  int thread = 0;  ///< 0: the master thread
  /// Master thread: the forks read so far (output). Worker thread: the master's forks (input),
  /// whose call paths root the worker's call paths (PEARL hangs them under the fork's).
  std::vector<ForkPoint>* forks_out = nullptr;
  const std::vector<ForkPoint>* forks_in = nullptr;
  bool in_team = false;        ///< between ThreadTeamBegin and ThreadTeamEnd
  CallpathId team_base;        ///< worker: the master's call path at this team's fork
  LocalTrace* trace = nullptr;
  CallTree* tree = nullptr;
  std::vector<EventIdx> open;           // stack of open Enter events
  std::vector<CallpathId> open_paths;   // call path of each open Enter
  RequestMap pending_isend;  // open MPI_Isend requests: their MpiIsend
  RequestMap pending_irecv;  // open MPI_Irecv requests: their MpiIrecvRequest
  EventIdx open_coll = kNoEvent;
  EventIdx open_coll_call = kNoEvent;  ///< the MPI call the open collective began in
  Ticks last_time = 0;
  std::uint64_t decoded = 0;
  bool count_only = false;
  bool partial = false;  ///< keep what was read when the file breaks off
  std::unordered_map<OTF2_StringRef, RegionId> program_regions;
  std::exception_ptr error;

  [[noreturn]] void fail(const std::string& what) const {
    throw TraceError(*anchor + ": rank " + std::to_string(rank) +
                     (thread != 0 ? ", thread " + std::to_string(thread) : std::string()) +
                     ", event " + std::to_string(trace->size()) + ": " + what);
  }

  /// MPI events belong on the master thread (MPI_THREAD_FUNNELED), as scout.hyb requires.
  void require_master(const char* what) const {
    if (thread != 0)
      fail(std::string(what) + " on a worker thread: cpreplay analyzes hybrid traces whose MPI "
           "calls are made by the master thread only (MPI_THREAD_FUNNELED)");
  }

  EventIdx next() const { return static_cast<EventIdx>(trace->size()); }

  /// Appends an event; checks time order and range; returns its index. Inlined into every
  /// callback (one call per event less), the messages built out of line.
  __attribute__((always_inline)) EventIdx add(EventKind k, Ticks t, std::uint32_t ref) {
    // The re-timing replay (what if) computes with signed 64-bit ticks, and the clock
    // correction moves a time by at most the run's length: below 2^62 ticks (146 years at
    // 1 GHz) both stay in range (tests/fuzz/README.md, finding 6).
    if (t < last_time || t >= Ticks{1} << 62) bad_time(t);
    last_time = t;
    const EventIdx i = next();
    trace->push(k, t, ref);
    return i;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_time(Ticks t) const {
    if (t < last_time)
      fail("timestamp goes backwards (" + std::to_string(t) + " < " + std::to_string(last_time) +
           ")");
    fail("timestamp " + std::to_string(t) + " is beyond 2^62 ticks: the event file is damaged");
  }

  void enter(Ticks t, RegionId region) {
    if (region.value >= defs->regions.size())
      fail("Enter of undefined region " + std::to_string(region.value));
    const CallpathId parent =
        !open_paths.empty() ? open_paths.back() : in_team ? team_base : CallpathId{};
    const CallpathId cp = tree->find_or_add(parent, region);
    const EventIdx i = add(EventKind::Enter, t, cp.value);
    open.push_back(i);
    open_paths.push_back(cp);
  }

  void leave(Ticks t, RegionId region) {
    // Found by tests/fuzz: a Leave naming an undefined region read past the region table.
    if (region.value >= defs->regions.size())
      fail("Leave of undefined region " + std::to_string(region.value));
    if (open.empty()) fail("Leave of " + defs->region(region).name + " without a matching Enter");
    const EventIdx e = open.back();
    const RegionId open_region = tree->node(open_paths.back()).region;
    if (open_region != region)
      fail("Leave of " + defs->region(region).name + " while " +
           defs->region(open_region).name + " is open");
    if (open_coll != kNoEvent && open_coll_call == e)
      fail("MPI collective begun in " + defs->region(region).name + " never ended");
    add(EventKind::Leave, t, open_paths.back().value);
    open.pop_back();
    open_paths.pop_back();
  }

  EventIdx mpi_call() const {
    require_master("MPI event");
    if (open.empty()) fail("MPI event outside of any region");
    return open.back();
  }

  /// A message event (Send/Isend/Recv/Irecv) with its side record.
  EventIdx message(EventKind k, Ticks t, uint32_t comm, uint32_t peer, uint32_t tag,
                   uint64_t bytes) {
    require_master("MPI message event");
    if (comm >= defs->comms.size())
      fail("message on undefined communicator " + std::to_string(comm));
    const Communicator& c = defs->comms[comm];
    if (peer >= c.size())
      fail("message peer " + std::to_string(peer) + " outside communicator " + c.name +
           " of size " + std::to_string(c.size()));
    mpi_call();
    P2pRecord rec;
    rec.comm = comm;
    rec.peer = peer;
    rec.tag = tag;
    return add(k, t, trace->add_message(rec, bytes));
  }

  /// A request event (IsendComplete, IrecvRequest, RequestTest, RequestCancelled): `ref` links
  /// it (see LocalTrace::ref).
  EventIdx request(EventKind k, Ticks t, EventIdx ref) {
    mpi_call();
    return add(k, t, ref);
  }
};

#define CPREPLAY_EVT_GUARD(body)                           \
  auto* s = static_cast<EventState*>(ud);                 \
  try {                                                    \
    ++s->decoded;                                          \
    if (!s->count_only) {                                  \
      body;                                                \
    }                                                      \
  } catch (...) {                                          \
    s->error = std::current_exception();                   \
    return OTF2_CALLBACK_INTERRUPT;                        \
  }                                                        \
  return OTF2_CALLBACK_SUCCESS;

OTF2_CallbackCode evt_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                            OTF2_AttributeList*, OTF2_RegionRef region) {
  CPREPLAY_EVT_GUARD(s->enter(t, RegionId{region}))
}

OTF2_CallbackCode evt_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                            OTF2_AttributeList*, OTF2_RegionRef region) {
  CPREPLAY_EVT_GUARD(s->leave(t, RegionId{region}))
}

OTF2_CallbackCode evt_program_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                    OTF2_AttributeList*, OTF2_StringRef name, uint32_t,
                                    const OTF2_StringRef*) {
  CPREPLAY_EVT_GUARD({
    auto it = s->program_regions.find(name);
    if (it != s->program_regions.end() && it->second.valid()) s->enter(t, it->second);
  })
}

OTF2_CallbackCode evt_program_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                  OTF2_AttributeList*, int64_t) {
  CPREPLAY_EVT_GUARD({
    if (s->defs->program_region.valid()) s->leave(t, s->defs->program_region);
  })
}

OTF2_CallbackCode evt_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                           OTF2_AttributeList*, uint32_t receiver, OTF2_CommRef comm,
                           uint32_t tag, uint64_t length) {
  CPREPLAY_EVT_GUARD(s->message(EventKind::Send, t, comm, receiver, tag, length))
}

OTF2_CallbackCode evt_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                            OTF2_AttributeList*, uint32_t receiver, OTF2_CommRef comm,
                            uint32_t tag, uint64_t length, uint64_t request) {
  CPREPLAY_EVT_GUARD({
    if (s->pending_isend.find(request) != kNoEvent)
      s->fail("MPI_Isend reuses request " + std::to_string(request) + " before it completed");
    const EventIdx i = s->message(EventKind::Isend, t, comm, receiver, tag, length);
    s->pending_isend.insert(request, i);
  })
}

OTF2_CallbackCode evt_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                     OTF2_AttributeList*, uint64_t request) {
  CPREPLAY_EVT_GUARD({
    const EventIdx start = s->pending_isend.take(request);
    if (start == kNoEvent)
      s->fail("MPI_Isend completion for unknown request " + std::to_string(request));
    const EventIdx i = s->request(EventKind::IsendComplete, t, start);
    s->trace->p2p.set_partner(s->trace->ref[start], i);
  })
}

OTF2_CallbackCode evt_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                    OTF2_AttributeList*, uint64_t request) {
  CPREPLAY_EVT_GUARD({
    if (s->pending_irecv.find(request) != kNoEvent)
      s->fail("MPI_Irecv reuses request " + std::to_string(request) + " before it completed");
    const EventIdx i = s->request(EventKind::IrecvRequest, t, kNoEvent);
    s->pending_irecv.insert(request, i);
  })
}

OTF2_CallbackCode evt_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                           OTF2_AttributeList*, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                           uint64_t length) {
  CPREPLAY_EVT_GUARD(s->message(EventKind::Recv, t, comm, sender, tag, length))
}

OTF2_CallbackCode evt_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                            OTF2_AttributeList*, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                            uint64_t length, uint64_t request) {
  CPREPLAY_EVT_GUARD({
    const EventIdx i = s->message(EventKind::Irecv, t, comm, sender, tag, length);
    if (const EventIdx start = s->pending_irecv.take(request); start != kNoEvent) {
      s->trace->p2p.set_partner(s->trace->ref[i], start);
      s->trace->ref[start] = i;
    }
  })
}

OTF2_CallbackCode evt_request_test(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                   OTF2_AttributeList*, uint64_t /*request*/) {
  CPREPLAY_EVT_GUARD(s->request(EventKind::RequestTest, t, kNoEvent))
}

OTF2_CallbackCode evt_request_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                        OTF2_AttributeList*, uint64_t request) {
  CPREPLAY_EVT_GUARD({
    // Linked to the cancelled request's start so replay can leave that message out.
    const EventIdx i = s->request(EventKind::RequestCancelled, t, kNoEvent);
    if (const EventIdx start = s->pending_isend.take(request); start != kNoEvent) {
      s->trace->ref[i] = start;
      s->trace->p2p.set_partner(s->trace->ref[start], i);
    } else if (const EventIdx begun = s->pending_irecv.take(request); begun != kNoEvent) {
      s->trace->ref[i] = begun;
      s->trace->ref[begun] = i;
    }
  })
}

OTF2_CallbackCode evt_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                 OTF2_AttributeList*) {
  CPREPLAY_EVT_GUARD({
    s->require_master("MPI collective event");
    if (s->open_coll != kNoEvent) s->fail("nested MPI collective begin");
    s->open_coll_call = s->mpi_call();
    const auto slot = static_cast<std::uint32_t>(s->trace->coll.size());
    s->trace->coll.push_back(CollRecord{});
    s->open_coll = s->add(EventKind::CollBegin, t, slot);
    s->trace->coll[slot].begin = s->open_coll;
  })
}

OTF2_CallbackCode evt_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                               OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef comm,
                               uint32_t root, uint64_t sent, uint64_t received) {
  CPREPLAY_EVT_GUARD({
    s->require_master("MPI collective event");
    if (s->open_coll == kNoEvent) s->fail("MPI collective end without a begin");
    if (comm >= s->defs->comms.size())
      s->fail("collective on undefined communicator " + std::to_string(comm));
    const Communicator& c = s->defs->comms[comm];
    if (root != OTF2_UNDEFINED_UINT32 && root >= c.size())
      s->fail("collective root " + std::to_string(root) + " outside communicator " + c.name +
              " of size " + std::to_string(c.size()));
    if (op > OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE)
      s->fail("unknown collective operation " + std::to_string(op));
    // The collective reductions carry the root's byte counts as doubles (replay/collectives.cpp):
    // exact below 2^53, and near 2^64 the way back to an integer is undefined (tests/fuzz/
    // README.md, finding 8). 2^53 bytes are 8 PiB in one collective call.
    if (std::max(sent, received) >= std::uint64_t{1} << 53)
      s->fail("collective byte count " + std::to_string(std::max(sent, received)) +
              " is beyond 2^53: the event file is damaged");
    const std::uint32_t slot = s->trace->ref[s->open_coll];
    CollRecord& rec = s->trace->coll[slot];
    rec.op = static_cast<CollOp>(op);
    rec.comm = comm;
    rec.root = root;
    s->trace->set_coll_bytes(slot, sent, received);
    s->add(EventKind::CollEnd, t, slot);
    s->open_coll = kNoEvent;
  })
}

OTF2_CallbackCode evt_thread_fork(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                  OTF2_AttributeList*, OTF2_Paradigm, uint32_t requested) {
  CPREPLAY_EVT_GUARD({
    if (s->thread != 0) s->fail("OpenMP fork on a worker thread (nested parallelism is not "
                                "supported)");
    if (s->in_team) s->fail("OpenMP fork inside a parallel region (nested parallelism is not "
                            "supported)");
    const CallpathId at = s->open_paths.empty() ? CallpathId{} : s->open_paths.back();
    s->add(EventKind::ThreadFork, t, requested);
    if (s->forks_out) s->forks_out->push_back(ForkPoint{t, at});
  })
}

OTF2_CallbackCode evt_thread_join(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                  OTF2_AttributeList*, OTF2_Paradigm) {
  CPREPLAY_EVT_GUARD({
    if (s->thread != 0) s->fail("OpenMP join on a worker thread");
    s->add(EventKind::ThreadJoin, t, 0);
  })
}

OTF2_CallbackCode evt_team_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                 OTF2_AttributeList*, OTF2_CommRef) {
  CPREPLAY_EVT_GUARD({
    if (s->in_team) s->fail("thread team begins inside a thread team (nested parallelism is "
                            "not supported)");
    if (s->thread != 0) {
      // The team belongs to the master's latest fork at or before its begin.
      const std::vector<ForkPoint>& forks = *s->forks_in;
      auto it = std::upper_bound(forks.begin(), forks.end(), t,
                                 [](Ticks x, const ForkPoint& f) { return x < f.time; });
      if (it == forks.begin())
        s->fail("thread team begins before any OpenMP fork of the master thread");
      if (!s->open.empty())
        s->fail("thread team begins while " +
                s->defs->region(s->tree->node(s->open_paths.back()).region).name + " is open");
      s->team_base = std::prev(it)->path;
    }
    s->in_team = true;
    s->add(EventKind::ThreadTeam, t, 0);
  })
}

OTF2_CallbackCode evt_team_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                               OTF2_AttributeList*, OTF2_CommRef) {
  CPREPLAY_EVT_GUARD({
    if (!s->in_team) s->fail("thread team ends without a begin");
    if (s->thread != 0 && !s->open.empty())
      s->fail("thread team ends while " +
              s->defs->region(s->tree->node(s->open_paths.back()).region).name + " is open");
    s->in_team = false;
    s->add(EventKind::ThreadTeam, t, 1);
  })
}

void lock_event(EventState* s, Ticks t, OTF2_Paradigm model, uint32_t lock, uint32_t order,
                bool acquire) {
  if (s->open.empty()) s->fail("lock event outside of any region");
  const auto slot = static_cast<std::uint32_t>(s->trace->locks.size());
  s->trace->locks.push_back(LockRecord{lock, order, acquire, model == OTF2_PARADIGM_OPENMP});
  s->add(EventKind::ThreadLock, t, slot);
}

OTF2_CallbackCode evt_acquire_lock(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                   OTF2_AttributeList*, OTF2_Paradigm model, uint32_t lock,
                                   uint32_t order) {
  CPREPLAY_EVT_GUARD(lock_event(s, t, model, lock, order, true))
}

OTF2_CallbackCode evt_release_lock(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* ud,
                                   OTF2_AttributeList*, OTF2_Paradigm model, uint32_t lock,
                                   uint32_t order) {
  CPREPLAY_EVT_GUARD(lock_event(s, t, model, lock, order, false))
}

struct CallbacksDeleter {
  void operator()(OTF2_EvtReaderCallbacks* c) const { OTF2_EvtReaderCallbacks_Delete(c); }
};

std::string rank_file(const std::string& anchor, std::uint64_t location, const char* ext) {
  std::string dir = anchor;
  const auto dot = dir.rfind(".otf2");
  if (dot != std::string::npos && dot + 5 == dir.size()) dir.resize(dot);
  return dir + "/" + std::to_string(location) + ext;
}

/// OTF2 id of a thread's location (thread 0: the master).
OTF2_LocationRef location_of(const Definitions& defs, Rank rank, int thread) {
  const Process& p = defs.processes[static_cast<std::size_t>(rank)];
  return thread == 0 ? p.location_id : p.workers.at(static_cast<std::size_t>(thread - 1)).location_id;
}

struct DefCallbacksDeleter {
  void operator()(OTF2_DefReaderCallbacks* c) const { OTF2_DefReaderCallbacks_Delete(c); }
};

OTF2_CallbackCode def_mapping_table(void* ud, OTF2_MappingType type, const OTF2_IdMap* map) {
  static_cast<LocalEventDefinitions*>(ud)->add_mapping(type, map);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_clock_offset(void* ud, OTF2_TimeStamp time, int64_t offset, double) {
  static_cast<LocalEventDefinitions*>(ud)->add_clock_offset(time, offset);
  return OTF2_CALLBACK_SUCCESS;
}

/// Whether CPREPLAY_TEST_OTF2_LIBRARY_EVENTS asks for libotf2 (tests compare the two paths).
bool library_events_asked() {
  const char* force = std::getenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS");
  return force && *force && std::strcmp(force, "0") != 0;
}

/// pin_environment's value: -1 unpinned, else whether the library was asked for.
std::atomic<int> pinned_library_events{-1};

/// The direct decoder reads the files of archives whose anchor ends in ".otf2" (where
/// rank_file names the files libotf2 opens), unless the test switch asks for the library (as
/// pinned, or read now when unpinned).
bool direct_decoding_allowed(const std::string& anchor) {
  const int pinned = pinned_library_events.load(std::memory_order_acquire);
  if (pinned < 0 ? library_events_asked() : pinned == 1) return false;
  return anchor.size() > 5 && anchor.compare(anchor.size() - 5, 5, ".otf2") == 0;
}

/// The direct decoder reads uncompressed POSIX archives only; their chunk sizes.
bool plain_archive(OTF2_Reader* r, uint64_t& chunk_events, uint64_t& chunk_defs) {
  OTF2_FileSubstrate substrate = OTF2_SUBSTRATE_UNDEFINED;
  OTF2_Compression compression = OTF2_COMPRESSION_UNDEFINED;
  return OTF2_Reader_GetFileSubstrate(r, &substrate) == OTF2_SUCCESS &&
         substrate == OTF2_SUBSTRATE_POSIX &&
         OTF2_Reader_GetCompression(r, &compression) == OTF2_SUCCESS &&
         compression == OTF2_COMPRESSION_NONE &&
         OTF2_Reader_GetChunkSize(r, &chunk_events, &chunk_defs) == OTF2_SUCCESS;
}

/// " are cut short (they end ..., at N bytes)" if the definition file `def` was cut short
/// (otf2_buffer::definitions_cut: libotf2 would read past its end), else "".
std::string cut_short(const std::string& def, std::uint64_t chunk_size) {
  const std::string where = otf2_buffer::definitions_cut(def, chunk_size);
  if (where.empty()) return "";
  struct stat st {};
  ::stat(def.c_str(), &st);
  return " are cut short (they end " + where + ", at " + std::to_string(st.st_size) + " bytes)";
}

/// The callbacks every event goes to, whichever reader decodes it: the direct decoder calls
/// them, and read_location registers the same ones with libotf2 (with_library).
EventCallbacks event_callbacks() {
  EventCallbacks c;
  c.enter = evt_enter;
  c.leave = evt_leave;
  c.program_begin = evt_program_begin;
  c.program_end = evt_program_end;
  c.mpi_send = evt_send;
  c.mpi_isend = evt_isend;
  c.mpi_isend_complete = evt_isend_complete;
  c.mpi_irecv_request = evt_irecv_request;
  c.mpi_recv = evt_recv;
  c.mpi_irecv = evt_irecv;
  c.mpi_request_test = evt_request_test;
  c.mpi_request_cancelled = evt_request_cancelled;
  c.mpi_collective_begin = evt_coll_begin;
  c.mpi_collective_end = evt_coll_end;
  c.thread_fork = evt_thread_fork;
  c.thread_join = evt_thread_join;
  c.thread_team_begin = evt_team_begin;
  c.thread_team_end = evt_team_end;
  c.thread_acquire_lock = evt_acquire_lock;
  c.thread_release_lock = evt_release_lock;
  return c;
}

/// Registers `e` with libotf2's callbacks `c`.
void with_library(const EventCallbacks& e, OTF2_EvtReaderCallbacks* c) {
  OTF2_EvtReaderCallbacks_SetEnterCallback(c, e.enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(c, e.leave);
  OTF2_EvtReaderCallbacks_SetProgramBeginCallback(c, e.program_begin);
  OTF2_EvtReaderCallbacks_SetProgramEndCallback(c, e.program_end);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(c, e.mpi_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c, e.mpi_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c, e.mpi_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c, e.mpi_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c, e.mpi_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c, e.mpi_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(c, e.mpi_request_test);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c, e.mpi_request_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(c, e.mpi_collective_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c, e.mpi_collective_end);
  OTF2_EvtReaderCallbacks_SetThreadForkCallback(c, e.thread_fork);
  OTF2_EvtReaderCallbacks_SetThreadJoinCallback(c, e.thread_join);
  OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(c, e.thread_team_begin);
  OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(c, e.thread_team_end);
  OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(c, e.thread_acquire_lock);
  OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(c, e.thread_release_lock);
}

std::uint64_t read_location(const std::string& anchor, const Definitions& defs, Rank rank,
                            EventState& state) {
  if (rank < 0 || rank >= defs.ranks())
    throw TraceError(anchor + ": the trace has no MPI rank " + std::to_string(rank));
  const int thread = state.thread;
  const OTF2_LocationRef loc = location_of(defs, rank, thread);
  const std::string where =
      "rank " + std::to_string(rank) + (thread != 0 ? ", thread " + std::to_string(thread) : "");
  struct stat st0 {};
  // A worker thread that recorded nothing may have no event file (Score-P writes none).
  if (thread != 0 && defs.processes[rank].workers[thread - 1].events == 0 &&
      ::stat(rank_file(anchor, loc, ".evt").c_str(), &st0) != 0)
    return 0;
  ReaderPtr reader = open_archive(anchor);
  OTF2_Reader* r = reader.get();
  check(OTF2_Reader_SelectLocation(r, loc), anchor, where + ": selecting its location");

  // Local definitions carry the mapping tables and clock offsets OTF2 applies to the events
  // (Score-P writes one .def per location; a missing one only means neither). The direct
  // decoder reads them itself when they hold nothing else; otherwise libotf2 reads them and
  // hands the decoder a copy through the definition callbacks.
  uint64_t chunk_events = 0, chunk_defs = 0;
  const bool plain = plain_archive(r, chunk_events, chunk_defs);
  const bool direct = direct_decoding_allowed(anchor) && plain;
  LocalEventDefinitions local;
  const std::string def = rank_file(anchor, loc, ".def");
  struct stat st {};
  const bool have_def = ::stat(def.c_str(), &st) == 0;
  bool library_has_defs = !have_def;
  auto library_reads_defs = [&](LocalEventDefinitions* capture) {
    if (plain)
      if (const std::string cut = cut_short(def, chunk_defs); !cut.empty())
        throw TraceError(anchor + ": " + where + ": local definitions " + def + cut);
    check(OTF2_Reader_OpenDefFiles(r), anchor, where + ": opening local definitions");
    if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, loc)) {
      std::unique_ptr<OTF2_DefReaderCallbacks, DefCallbacksDeleter> dcbs(
          OTF2_DefReaderCallbacks_New());
      if (capture) {
        OTF2_DefReaderCallbacks_SetMappingTableCallback(dcbs.get(), def_mapping_table);
        OTF2_DefReaderCallbacks_SetClockOffsetCallback(dcbs.get(), def_clock_offset);
        check(OTF2_Reader_RegisterDefCallbacks(r, dr, dcbs.get(), capture), anchor,
              where + ": registering");
      }
      uint64_t n = 0;
      check(OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n), anchor,
            where + ": reading local definitions " + def);
      OTF2_Reader_CloseDefReader(r, dr);
    }
    OTF2_Reader_CloseDefFiles(r);
    library_has_defs = true;
    ++g_library_defs;
  };
  if (have_def) {
    if (direct && read_local_definitions(def, chunk_defs, local)) {
      ++g_direct_defs;
    } else {
      local = LocalEventDefinitions();
      library_reads_defs(direct ? &local : nullptr);
    }
  }

  const std::string evt = rank_file(anchor, loc, ".evt");
  if (::stat(evt.c_str(), &st) != 0)
    throw TraceError(anchor + ": " + where + ": event file " + evt + " is missing");
  if (::access(evt.c_str(), R_OK) != 0)
    throw TraceError(anchor + ": " + where + ": event file " + evt + ": " + std::strerror(errno));

  if (direct) {
    // What the decoder's callbacks change, as it was before: if the decoder stops at something
    // it does not take, the events before it are undone and libotf2 reads the file from its
    // start (the call paths they added to the rank's tree stay: libotf2's callbacks for the same
    // events find them again, in the same order).
    const EventState before = state;
    const LocalTrace trace_before = *state.trace;
    const std::size_t forks_before = state.forks_out ? state.forks_out->size() : 0;
    const DecodeResult d =
        decode_event_file(evt, chunk_events, loc, local, event_callbacks(), &state);
    if (!d.taken && d.called_back) {
      state = before;
      *state.trace = trace_before;
      if (state.forks_out) state.forks_out->resize(forks_before);
    }
    if (d.taken) {
      ++g_direct_reads;
      if (state.error) std::rethrow_exception(state.error);
      state.trace->records = std::max<std::uint64_t>(d.records, state.decoded);
      if (!d.cut.empty()) {
        {
          const std::lock_guard<std::mutex> lock(g_declined_mutex);
          g_last_cut_at = d.cut_at;
        }
        // --partial: the events before the cut are what the rank wrote before it died.
        if (state.partial && state.decoded > 0) {
          state.trace->incomplete = true;
          return state.decoded;
        }
        throw TraceError(anchor + ": " + where + ": event file " + evt + " is cut short after " +
                         std::to_string(state.decoded) + " events (it ends " + d.cut + ", at " +
                         std::to_string(st.st_size) + " bytes" +
                         (state.decoded > 0 ? "; --partial analyzes the events before the cut)"
                                            : ")"));
      }
      return state.decoded;
    }
    const std::lock_guard<std::mutex> lock(g_declined_mutex);
    g_last_declined = evt + ": " + d.not_taken;
  }
  // libotf2 applies the local definitions itself: it reads them if the decoder did.
  if (!library_has_defs) library_reads_defs(nullptr);
  ++g_library_reads;
  check(OTF2_Reader_OpenEvtFiles(r), anchor, where + ": opening event files");
  // OTF2 reads the first chunk here: an empty or overwritten file fails before any event.
  OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, loc);
  if (!er)
    throw TraceError(anchor + ": " + where + ": event file " + evt +
                     " is damaged or truncated after 0 events (no OTF2 event chunk at its start)");

  std::unique_ptr<OTF2_EvtReaderCallbacks, CallbacksDeleter> cbs(OTF2_EvtReaderCallbacks_New());
  auto* c = cbs.get();
  with_library(event_callbacks(), c);
  check(OTF2_Reader_RegisterEvtCallbacks(r, er, c, &state), anchor, where + ": registering");

  uint64_t n = 0;
  const OTF2_ErrorCode status = OTF2_Reader_ReadAllLocalEvents(r, er, &n);
  if (state.error) std::rethrow_exception(state.error);
  if (status != OTF2_SUCCESS && state.partial && state.decoded > 0) {
    // --partial: the events before the damage are what the rank recorded before it died.
    state.trace->incomplete = true;
    state.trace->records = std::max<std::uint64_t>(n, state.decoded);
    return state.decoded;
  }
  if (status != OTF2_SUCCESS)
    throw TraceError(anchor + ": " + where + ": event file " + evt +
                     " is damaged or truncated after " + std::to_string(state.decoded) +
                     " events (" + OTF2_Error_GetDescription(status) + ")");
  state.trace->records = std::max<std::uint64_t>(n, state.decoded);
  OTF2_Reader_CloseEvtReader(r, er);
  OTF2_Reader_CloseEvtFiles(r);
  return state.decoded;
}

}  // namespace

void pin_environment() {
  pinned_library_events.store(library_events_asked() ? 1 : 0, std::memory_order_release);
}

void unpin_environment() { pinned_library_events.store(-1, std::memory_order_release); }

EventReadCounts event_read_counts() {
  const std::lock_guard<std::mutex> lock(g_declined_mutex);
  return EventReadCounts{g_direct_reads.load(), g_library_reads.load(), g_last_declined,
                         g_direct_defs.load(), g_library_defs.load(), g_last_cut_at};
}

Definitions read_definitions(const std::string& anchor) {
  ReaderPtr reader = open_archive(anchor);
  std::string def = anchor;  // the global definitions file next to the anchor
  const auto dot = def.rfind(".otf2");
  if (dot != std::string::npos && dot + 5 == def.size()) def.resize(dot);
  def += ".def";
  // libotf2 reads past the end of a file cut short: stale definitions ("string 0 is defined
  // twice") or a damage report instead of the truncation.
  uint64_t chunk_events = 0, chunk_defs = 0;
  if (plain_archive(reader.get(), chunk_events, chunk_defs))
    if (const std::string cut = cut_short(def, chunk_defs); !cut.empty())
      throw TraceError(anchor + ": global definitions " + def + cut);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader.get());
  if (!gdr) {
    struct stat st {};
    if (::stat(def.c_str(), &st) != 0)
      throw TraceError(anchor + ": global definitions " + def + ": " + std::strerror(errno));
    throw TraceError(anchor + ": global definitions " + def +
                     " are damaged (OTF2 cannot read their first chunk)");
  }
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, def_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, def_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cbs, def_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, def_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, def_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, def_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, def_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, def_comm);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cbs, def_attribute);
  OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cbs, def_parameter);
  DefState state;
  state.anchor = anchor;
  state.file = def;
  const OTF2_ErrorCode reg =
      OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gdr, cbs, &state);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  check(reg, anchor, "registering definition callbacks");
  uint64_t n = 0;
  const OTF2_ErrorCode status = OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), gdr, &n);
  if (state.error) std::rethrow_exception(state.error);
  if (status != OTF2_SUCCESS)
    throw TraceError(anchor + ": global definitions " + def + " are damaged (" +
                     OTF2_Error_GetDescription(status) + ")");
  Definitions defs = build_definitions(anchor, state);

  // The program region: Score-P names it after the executable (role ARTIFICIAL); its
  // canonical name is the full path that ProgramBegin carries.
  for (std::uint32_t i = 0; i < defs.regions.size(); ++i) {
    const Region& r = defs.regions[i];
    if (r.role == RegionRole::Artificial && r.paradigm == Paradigm::Measurement &&
        r.name != "MEASUREMENT OFF" && r.name != "TRACE BUFFER FLUSH" && r.name != "TRACING" &&
        r.name != "THREADS" && !r.name.empty()) {
      defs.program_region = RegionId{i};
      break;
    }
  }
  // ProgramBegin names the executable (often with its path): remember every string that can.
  if (defs.program_region.valid()) {
    const Region& pr = defs.region(defs.program_region);
    for (const auto& [id, text] : state.strings.items)
      if (!text.empty() && (text == pr.canonical_name || text == pr.name ||
                            basename_of(text) == pr.name))
        defs.program_name_strings.push_back(id);
  }
  return defs;
}

namespace {

LocalTrace read_thread(const std::string& anchor, const Definitions& defs, Rank rank, int thread,
                       CallTree& tree, bool partial, std::vector<ForkPoint>* forks_out,
                       const std::vector<ForkPoint>* forks_in) {
  LocalTrace trace;
  trace.rank = rank;
  trace.thread = thread;
  EventState state;
  state.defs = &defs;
  state.anchor = &anchor;
  state.rank = rank;
  state.thread = thread;
  state.forks_out = forks_out;
  state.forks_in = forks_in;
  state.trace = &trace;
  state.tree = &tree;
  for (std::uint64_t id : defs.program_name_strings)
    state.program_regions[static_cast<OTF2_StringRef>(id)] = defs.program_region;
  state.partial = partial;
  // The location definition counts its records: enough room for every event, no regrowth. A
  // damaged count must not reserve gigabytes: an event record takes at least 2 bytes of the
  // event file (its type and its length), so the file's size bounds the reservation.
  std::uint64_t expected = 0;
  if (rank >= 0 && rank < defs.ranks()) {
    const Process& p = defs.processes[rank];
    expected = thread == 0 ? p.events : p.workers.at(static_cast<std::size_t>(thread - 1)).events;
  }
  if (expected > 0) {
    struct stat st {};
    const std::string evt = rank_file(anchor, location_of(defs, rank, thread), ".evt");
    const std::uint64_t room =
        ::stat(evt.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) / 2 : 0;
    expected = std::min(expected, room);
  }
  if (expected > 0 && expected < kNoEvent) {
    trace.time.reserve(expected);
    trace.kind.reserve(expected);
    trace.ref.reserve(expected);
  }
  read_location(anchor, defs, rank, state);
  trace.p2p.finish_reading();
  trace.region_of_path.resize(tree.size());
  for (std::uint32_t c = 0; c < tree.size(); ++c)
    trace.region_of_path[c] = tree.node(CallpathId{c}).region.value;
  if (!state.open.empty() || state.in_team) {
    if (partial) {
      trace.incomplete = true;
      return trace;
    }
    const std::string what =
        state.open.empty() ? std::string("a thread team")
                           : defs.region(tree.node(state.open_paths.back()).region).name;
    throw IncompleteTraceError(anchor + ": rank " + std::to_string(rank) +
                               (thread != 0 ? ", thread " + std::to_string(thread) : "") +
                               ": events end after " + std::to_string(trace.size()) +
                               " events with " + what +
                               " still open (the rank stopped mid-run; --partial analyzes the "
                               "run up to there)");
  }
  return trace;
}

}  // namespace

LocalTrace read_events(const std::string& anchor, const Definitions& defs, Rank rank,
                       CallTree& tree, bool partial, std::vector<ForkPoint>* forks) {
  return read_thread(anchor, defs, rank, 0, tree, partial, forks, nullptr);
}

LocalTrace read_worker_events(const std::string& anchor, const Definitions& defs, Rank rank,
                              int thread, CallTree& tree, const std::vector<ForkPoint>& forks,
                              bool partial) {
  if (rank < 0 || rank >= defs.ranks() || thread < 1 ||
      static_cast<std::size_t>(thread) > defs.processes[rank].workers.size())
    throw TraceError(anchor + ": the trace has no thread " + std::to_string(thread) +
                     " of MPI rank " + std::to_string(rank));
  return read_thread(anchor, defs, rank, thread, tree, partial, nullptr, &forks);
}

std::uint64_t decode_events_only(const std::string& anchor, const Definitions& defs, Rank rank) {
  LocalTrace trace;
  CallTree tree;
  EventState state;
  state.defs = &defs;
  state.anchor = &anchor;
  state.rank = rank;
  state.trace = &trace;
  state.tree = &tree;
  state.count_only = true;
  std::uint64_t n = read_location(anchor, defs, rank, state);
  if (rank >= 0 && rank < defs.ranks())
    for (std::size_t t = 1; t <= defs.processes[rank].workers.size(); ++t) {
      state.thread = static_cast<int>(t);
      n += read_location(anchor, defs, rank, state);
    }
  return n;
}

}  // namespace cpreplay::io
