// SPDX-License-Identifier: BSD-3-Clause
// Time, visits, the MPI time breakdown and the partner-free counters.
#include "analysis/profile.hpp"

#include <regex>
#include <string>
#include <unordered_set>
#include <utility>

namespace cpreplay::analysis {
namespace {

bool in(const std::string& name, const std::unordered_set<std::string>& set) {
  return set.count(name) != 0;
}

const std::unordered_set<std::string>& init_exit_names() {
  static const std::unordered_set<std::string> s = {
      "MPI_Init", "MPI_Init_thread", "MPI_Initialized", "MPI_Finalize", "MPI_Finalized"};
  return s;
}

const std::unordered_set<std::string>& mgmt_comm_names() {
  static const std::unordered_set<std::string> s = [] {
    std::unordered_set<std::string> v;
    for (const char* n : {"coords", "create", "get", "map", "rank", "shift", "sub"})
      v.insert(std::string("MPI_Cart_") + n);
    for (const char* n :
         {"accept", "compare", "connect", "create", "create_group", "create_keyval",
          "delete_attr", "disconnect", "dup", "dup_with_info", "free", "free_keyval", "get_attr",
          "get_info", "get_name", "get_parent", "group", "idup", "join", "rank", "remote_group",
          "remote_size", "set_attr", "set_info", "set_name", "size", "spawn", "spawn_multiple",
          "split", "split_type", "test_inter"})
      v.insert(std::string("MPI_Comm_") + n);
    for (const char* n : {"create", "create_adjacent", "neighbors", "neighbors_count"})
      v.insert(std::string("MPI_Dist_graph_") + n);
    for (const char* n : {"create", "get", "map", "neighbors", "neighbors_count"})
      v.insert(std::string("MPI_Graph_") + n);
    for (const char* n :
         {"MPI_Cartdim_get", "MPI_Dims_create", "MPI_Graphdims_get", "MPI_Intercomm_create",
          "MPI_Intercomm_merge", "MPI_Topo_test", "MPI_Open_port", "MPI_Close_port",
          "MPI_Lookup_name", "MPI_Publish_name", "MPI_Unpublish_name"})
      v.insert(n);
    return v;
  }();
  return s;
}

const std::unordered_set<std::string>& mgmt_file_names() {
  static const std::unordered_set<std::string> s = [] {
    std::unordered_set<std::string> v;
    for (const char* n :
         {"close", "delete", "get_amode", "get_atomicity", "get_byte_offset", "get_group",
          "get_info", "get_position", "get_position_shared", "get_size", "get_type_extent",
          "get_view", "open", "preallocate", "seek", "seek_shared", "set_atomicity", "set_info",
          "set_size", "set_view", "sync"})
      v.insert(std::string("MPI_File_") + n);
    return v;
  }();
  return s;
}

bool is_mpi_io(const std::string& name) {
  static const std::regex individual("MPI_File_i?(read|write)(_at|_shared)?");
  static const std::regex collective(
      "MPI_File_(iread|iwrite)_(all|at_all)|MPI_File_(read|write)_(all|at_all|ordered)(_begin|_end)?");
  return std::regex_match(name, individual) || std::regex_match(name, collective);
}

bool is_wait_or_test(const std::string& name) {
  static const std::regex re("MPI_(Test|Wait)(all|any|some)?");
  return std::regex_match(name, re);
}

/// Which breakdown metrics a region's exclusive time goes to (scalasca-metrics.md §3.3).
struct Masks {
  bool overhead = false, mpi = false, init_exit = false, mgmt_comm = false, mgmt_file = false,
       sync_collective = false, point2point = false, collective = false, io = false;
  /// The OpenMP metric an OpenMP region's time goes to (scout.spec's omp_sync_* and omp_flush
  /// masks), Metric::Count for none (its time is computation).
  Metric omp = Metric::Count;
};

bool is_omp_lock_api(const std::string& name) {
  static const std::regex re("omp_(destroy|init|set|test|unset)(_nest)?_lock");
  return std::regex_match(name, re);
}

Masks masks_of(const Region& r) {
  Masks m;
  if ((r.paradigm == Paradigm::Measurement &&
       (r.name == "TRACE BUFFER FLUSH" || r.name == "TRACING")) ||
      ((r.paradigm == Paradigm::OpenCl || r.paradigm == Paradigm::Cuda) &&
       r.name == "BUFFER FLUSH")) {
    m.overhead = true;
    return m;
  }
  if (r.paradigm == Paradigm::OpenMP) {
    switch (r.role) {
      case RegionRole::Barrier: m.omp = Metric::OmpEbarrier; break;
      case RegionRole::ImplicitBarrier: m.omp = Metric::OmpIbarrier; break;
      case RegionRole::Atomic: case RegionRole::Critical: m.omp = Metric::OmpCritical; break;
      case RegionRole::Ordered: m.omp = Metric::OmpOrdered; break;
      case RegionRole::TaskWait: m.omp = Metric::OmpTaskwait; break;
      case RegionRole::Flush: m.omp = Metric::OmpFlush; break;
      default: break;
    }
    if (is_omp_lock_api(r.name)) m.omp = Metric::OmpLockApi;
    return m;
  }
  if (r.paradigm != Paradigm::Mpi || r.name == "PARALLEL") return m;
  m.mpi = true;
  m.init_exit = in(r.name, init_exit_names());
  m.mgmt_comm = in(r.name, mgmt_comm_names());
  m.mgmt_file = in(r.name, mgmt_file_names());
  m.sync_collective = r.role == RegionRole::Barrier;
  m.point2point = r.role == RegionRole::Point2Point || is_wait_or_test(r.name);
  m.collective = r.role == RegionRole::Coll1ToN || r.role == RegionRole::CollNTo1 ||
                 r.role == RegionRole::CollNToN || r.role == RegionRole::CollOther;
  m.io = is_mpi_io(r.name);
  return m;
}

}  // namespace

std::vector<double> exclusive_time(const Definitions& defs, const CallTree& tree,
                                   const LocalTrace& trace, std::vector<std::int64_t>* ticks) {
  const Clock& clock = defs.clock;
  std::vector<double> excl(tree.size(), 0.0);
  std::vector<Ticks> entered;  // Enter times of the open regions
  std::uint32_t inner = UINT32_MAX;  // the innermost open region's call path (for the ticks)
  if (ticks != nullptr) ticks->assign(tree.size(), 0);
  for (EventIdx i = 0; i < trace.size(); ++i) {
    const EventKind k = trace.kind[i];
    if (k == EventKind::Enter) {
      entered.push_back(trace.time[i]);
      if (ticks != nullptr) inner = trace.ref[i];
      continue;
    }
    if (k != EventKind::Leave) continue;
    const Ticks t = trace.time[i];
    const Ticks enter = entered.back();
    entered.pop_back();
    const double d = clock.span(enter, t);
    const std::uint32_t cp = trace.ref[i];
    excl[cp] += d;
    // A worker thread's outermost region hangs below the master's call path at the fork,
    // which the worker never entered: nothing to take it from.
    const CallpathId parent = tree.node(CallpathId{cp}).parent;
    const bool inside = parent.valid() && !entered.empty();
    if (inside) excl[parent.value] -= d;
    if (ticks != nullptr) {
      inner = inside ? parent.value : UINT32_MAX;
      // A visit's span goes to its call path and out of the region open around it, whose call
      // path is the parent (integers, exact in any order).
      const auto span = static_cast<std::int64_t>(t - enter);
      (*ticks)[cp] += span;
      if (inside) (*ticks)[parent.value] -= span;
    }
  }
  // Regions open at the end count in the ticks up to the last event (the seconds leave them out):
  // the innermost one's call path, then its parents'.
  if (ticks != nullptr && !entered.empty()) {
    const Ticks last = trace.time[static_cast<EventIdx>(trace.size() - 1)];
    std::uint32_t cp = inner;
    for (std::size_t j = entered.size(); j-- > 0 && cp != UINT32_MAX;) {
      const auto span = static_cast<std::int64_t>(last - entered[j]);
      (*ticks)[cp] += span;
      const CallpathId parent = tree.node(CallpathId{cp}).parent;
      cp = parent.valid() ? parent.value : UINT32_MAX;
      if (j > 0 && cp != UINT32_MAX) (*ticks)[cp] -= span;
    }
  }
  return excl;
}

void profile_pass(const Definitions& defs, const CallTree& tree, const LocalTrace& trace,
                  Severity& sev, const std::vector<double>* omp_management, bool master_thread,
                  CallpathTicks* ticks) {
  std::vector<double> excl =
      exclusive_time(defs, tree, trace, ticks != nullptr ? &ticks->exclusive : nullptr);
  if (omp_management)
    for (std::uint32_t c = 0; c < tree.size(); ++c) {
      const double m = (*omp_management)[c];
      if (m == 0.0) continue;
      excl[c] += m;
      const CallpathId parent = tree.node(CallpathId{c}).parent;
      if (master_thread && parent.valid()) excl[parent.value] -= m;
    }
  for (std::uint32_t c = 0; c < tree.size(); ++c) {
    const double t = excl[c];
    sev.add(Metric::Time, c, t);
    const Masks m = masks_of(defs.region(tree.node(CallpathId{c}).region));
    if (m.overhead) {
      sev.add(Metric::Overhead, c, t);
      continue;
    }
    sev.add(Metric::Execution, c, t);
    if (omp_management && m.omp != Metric::Count) {  // hybrid reports only
      sev.add(m.omp, c, t);
      continue;
    }
    if (!m.mpi) {
      // Management is OpenMP time (omp_management), not computation.
      sev.add(Metric::Comp, c, omp_management ? t - (*omp_management)[c] : t);
      continue;
    }
    sev.add(Metric::Mpi, c, t);
    if (m.init_exit) sev.add(Metric::MpiInitExit, c, t);
    if (m.mgmt_comm) sev.add(Metric::MpiMgmtComm, c, t);
    if (m.mgmt_file) sev.add(Metric::MpiMgmtFile, c, t);
    if (m.init_exit || m.mgmt_comm || m.mgmt_file) sev.add(Metric::MpiManagement, c, t);
    if (m.sync_collective) sev.add(Metric::MpiSyncCollective, c, t);
    if (m.point2point) sev.add(Metric::MpiPoint2point, c, t);
    if (m.collective) sev.add(Metric::MpiCollective, c, t);
    if (m.io) sev.add(Metric::MpiIo, c, t);
  }

  // Visits are counted per call path and added once (integer counts: the same doubles as one
  // 1.0 per Enter). Sends and collective ends credit their MPI call's call path (call_of: a read
  // trace is properly nested); a worker thread's team begin and end lie outside of any region.
  // Only those kinds are decoded: the others are passed a byte (two events) at a time.
  const auto bit = [](EventKind k) { return 1u << static_cast<unsigned>(k); };
  const KindColumn::KindSet counted = KindColumn::kind_set(
      bit(EventKind::Enter) | bit(EventKind::Send) | bit(EventKind::Isend) |
      bit(EventKind::CollEnd));
  std::vector<std::uint64_t> visits(tree.size(), 0);
  for (std::size_t at = trace.kind.next_of(0, counted); at < trace.size();
       at = trace.kind.next_of(at + 1, counted)) {
    const auto i = static_cast<EventIdx>(at);
    const EventKind k = trace.kind[i];
    if (k == EventKind::Enter) {
      ++visits[trace.ref[i]];
      continue;
    }
    const EventIdx call = trace.call_of(i);
    if (call == kNoEvent) continue;
    const std::uint32_t cp = trace.ref[call];
    if (k == EventKind::CollEnd) {
      const std::uint64_t sent = trace.coll_sent(i), received = trace.coll_received(i);
      const bool s = sent > 0, r = received > 0;
      sev.add(s && r ? Metric::CommsCxch
                     : s ? Metric::CommsCsrc : r ? Metric::CommsCdst : Metric::SyncsColl,
              cp, 1.0);
      sev.add(Metric::BytesCout, cp, static_cast<double>(sent));
      sev.add(Metric::BytesCin, cp, static_cast<double>(received));
    } else {
      // Every send-type event counts, cancelled ones included (§6).
      const std::uint64_t bytes = trace.bytes_of(i);
      sev.add(bytes == 0 ? Metric::SyncsSend : Metric::CommsSend, cp, 1.0);
      sev.add(Metric::BytesSent, cp, static_cast<double>(bytes));
    }
  }
  for (std::uint32_t c = 0; c < tree.size(); ++c)
    if (visits[c] > 0) sev.add(Metric::Visits, c, static_cast<double>(visits[c]));
  if (ticks != nullptr) ticks->visits = std::move(visits);
}

void drop_mpi_only_on_non_mpi(const Definitions& defs, const CallTree& tree, Severity& sev) {
  for (const auto& info : metric_table()) {
    if (!is_mpi_only(info.id)) continue;
    double* row = sev.row(info.id);
    for (std::uint32_t c = 0; c < tree.size(); ++c)
      if (!defs.region(tree.node(CallpathId{c}).region).is_mpi()) row[c] = 0.0;
  }
}

std::vector<double> inclusive_along_call_tree(const CallTree& tree, const double* exclusive) {
  // Ids are preorder positions, so a reverse sweep adds every child before its parent is read.
  std::vector<double> incl(exclusive, exclusive + tree.size());
  for (std::uint32_t c = static_cast<std::uint32_t>(tree.size()); c-- > 0;) {
    const CallpathId parent = tree.node(CallpathId{c}).parent;
    if (parent.valid()) incl[parent.value] += incl[c];
  }
  return incl;
}

}  // namespace cpreplay::analysis
