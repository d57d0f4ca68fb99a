// SPDX-License-Identifier: BSD-3-Clause
// Writes the events collected by TraceWriter as an OTF2 archive with the OTF2 writer C API.
#include "tests/support/trace_writer.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace cpreplay::testing {

namespace {

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error("TraceWriter: " + message);
}

/// Throws with the OTF2 error name and description unless status is OTF2_SUCCESS.
void check(OTF2_ErrorCode status, const std::string& dir, const std::string& what) {
  if (status == OTF2_SUCCESS) return;
  fail(dir + ": " + what + " failed: " + OTF2_Error_GetName(status) + " (" +
       OTF2_Error_GetDescription(status) + ")");
}

// Every buffer is written to its file; no BufferFlush records (post-flush callback is null),
// as with the python writer that produced the conformance traces.
OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }

OTF2_FlushCallbacks flush_callbacks = {pre_flush, nullptr};

/// Score-P's role of an MPI function, as simtrace.py's ROLES table (unknown names: FUNCTION).
OTF2_RegionRole mpi_role(const std::string& name) {
  static const std::unordered_map<std::string, OTF2_RegionRole> roles = {
      {"MPI_Send", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Ssend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Bsend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Rsend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Recv", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Isend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Issend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Ibsend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Irsend", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Sendrecv", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Sendrecv_replace", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Send_init", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Ssend_init", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Bsend_init", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Rsend_init", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Recv_init", OTF2_REGION_ROLE_POINT2POINT},
      {"MPI_Barrier", OTF2_REGION_ROLE_BARRIER},
      {"MPI_Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"MPI_Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"MPI_Scatterv", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE},
      {"MPI_Gather", OTF2_REGION_ROLE_COLL_ALL2ONE},
      {"MPI_Gatherv", OTF2_REGION_ROLE_COLL_ALL2ONE},
      {"MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Alltoallv", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Alltoallw", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Allgather", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Allgatherv", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Reduce_scatter", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Reduce_scatter_block", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"MPI_Scan", OTF2_REGION_ROLE_COLL_OTHER},
      {"MPI_Exscan", OTF2_REGION_ROLE_COLL_OTHER},
  };
  const auto it = roles.find(name);
  if (it == roles.end()) return OTF2_REGION_ROLE_FUNCTION;
  return it->second;
}

OTF2_CollectiveOp otf2_op(CollOpT op) {
  switch (op) {
    case CollOpT::Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case CollOpT::Bcast: return OTF2_COLLECTIVE_OP_BCAST;
    case CollOpT::Gather: return OTF2_COLLECTIVE_OP_GATHER;
    case CollOpT::Gatherv: return OTF2_COLLECTIVE_OP_GATHERV;
    case CollOpT::Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
    case CollOpT::Scatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
    case CollOpT::Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case CollOpT::Allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case CollOpT::Alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case CollOpT::Alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case CollOpT::Alltoallw: return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case CollOpT::Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case CollOpT::Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case CollOpT::ReduceScatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case CollOpT::Scan: return OTF2_COLLECTIVE_OP_SCAN;
    case CollOpT::Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
    case CollOpT::ReduceScatterBlock: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
  }
  fail("unknown collective operation " + std::to_string(static_cast<int>(op)));
}

/// Global string definitions: ids in order of first use, each written before its first user.
class StringTable {
 public:
  OTF2_StringRef ref(const std::string& s) {
    const auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<OTF2_StringRef>(strings_.size());
    ids_.emplace(s, id);
    strings_.push_back(s);
    return id;
  }
  /// Writes the strings interned since the last call.
  void flush(OTF2_GlobalDefWriter* w, const std::string& dir) {
    for (; written_ < strings_.size(); ++written_) {
      check(OTF2_GlobalDefWriter_WriteString(w, static_cast<OTF2_StringRef>(written_),
                                             strings_[written_].c_str()),
            dir, "writing string definition \"" + strings_[written_] + "\"");
    }
  }

 private:
  std::unordered_map<std::string, OTF2_StringRef> ids_;
  std::vector<std::string> strings_;
  std::size_t written_ = 0;
};

/// Closes the archive if write() leaves early; the success path closes it explicitly.
struct ArchiveGuard {
  OTF2_Archive* archive = nullptr;
  ~ArchiveGuard() {
    if (archive != nullptr) OTF2_Archive_Close(archive);
  }
};

/// Score-P's location id of thread `thread` of rank `rank`.
std::uint64_t location_id(int rank, int thread) {
  return (static_cast<std::uint64_t>(thread) << 32) | static_cast<std::uint64_t>(rank);
}

/// The directory to replace, refusing paths whose removal would be a disaster.
std::filesystem::path checked_output_dir(const std::string& dir) {
  if (dir.empty()) fail("empty output directory");
  std::filesystem::path p = std::filesystem::absolute(dir).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();  // trailing '/'
  if (p == p.root_path() || p.parent_path() == p.root_path()) {
    fail("refusing to replace top-level directory " + p.string());
  }
  return p;
}

}  // namespace

TraceWriter::TraceWriter(int ranks, std::string executable)
    : ranks_(ranks), executable_(std::move(executable)) {
  if (ranks < 1) fail("number of ranks must be at least 1, got " + std::to_string(ranks));
  if (executable_.empty()) fail("empty executable name");
  regions_.push_back(executable_);
  region_ids_.emplace(executable_, 0);
  comms_.push_back({"MPI_COMM_WORLD", {}});
  for (int r = 0; r < ranks; ++r) comms_[0].members.push_back(r);
  comms_.push_back({"MPI_COMM_SELF", {}});
  events_.resize(static_cast<std::size_t>(ranks));
}

int TraceWriter::add_comm(const std::vector<int>& world_members, const std::string& name) {
  if (name.empty()) fail("communicator needs a name");
  if (world_members.empty()) fail("communicator " + name + " has no members");
  std::vector<bool> seen(static_cast<std::size_t>(ranks_), false);
  for (int m : world_members) {
    if (m < 0 || m >= ranks_) {
      fail("communicator " + name + ": member " + std::to_string(m) + " is not a rank of " +
           std::to_string(ranks_));
    }
    if (seen[static_cast<std::size_t>(m)]) {
      fail("communicator " + name + ": rank " + std::to_string(m) + " listed twice");
    }
    seen[static_cast<std::size_t>(m)] = true;
  }
  comms_.push_back({name, world_members});
  return static_cast<int>(comms_.size()) - 1;
}

void TraceWriter::set_nodes(int nodes) {
  if (nodes < 1 || nodes > ranks_) {
    fail("number of nodes must be in 1.." + std::to_string(ranks_) + ", got " +
         std::to_string(nodes));
  }
  nodes_ = nodes;
}

void TraceWriter::set_threads_per_process(int n) {
  if (n < 1) fail("threads per process must be at least 1, got " + std::to_string(n));
  threads_ = n;
}

void TraceWriter::set_program_arguments(std::vector<std::string> args) {
  arguments_ = std::move(args);
}

std::uint64_t TraceWriter::to_ticks(double t) {
  // |t| below 1e6 s keeps llround exact and the sum far from overflow.
  if (!std::isfinite(t) || std::fabs(t) > 1e6) fail("invalid time " + std::to_string(t) + " s");
  const long long ticks = std::llround(t * static_cast<double>(kTicksPerSecond)) +
                          static_cast<long long>(kTimeOffset);
  if (ticks < 1000) fail("time " + std::to_string(t) + " s lies before the clock's origin");
  return static_cast<std::uint64_t>(ticks);
}

void TraceWriter::check_rank(int r, const char* what) const {
  if (r < 0 || r >= ranks_) {
    fail(std::string(what) + ": rank " + std::to_string(r) + " out of range 0.." +
         std::to_string(ranks_ - 1));
  }
}

std::size_t TraceWriter::comm_size(int comm) const {
  if (comm == self()) return 1;
  return comms_[static_cast<std::size_t>(comm)].members.size();
}

void TraceWriter::check_peer(int r, int comm, int peer, const char* what) const {
  if (comm < 0 || comm >= static_cast<int>(comms_.size())) {
    fail(std::string(what) + " on rank " + std::to_string(r) + ": unknown communicator " +
         std::to_string(comm));
  }
  const auto& c = comms_[static_cast<std::size_t>(comm)];
  if (comm != self() && std::find(c.members.begin(), c.members.end(), r) == c.members.end()) {
    fail(std::string(what) + ": rank " + std::to_string(r) + " is not a member of " + c.name);
  }
  if (peer < 0 || static_cast<std::size_t>(peer) >= comm_size(comm)) {
    fail(std::string(what) + " on rank " + std::to_string(r) + ": comm-local rank " +
         std::to_string(peer) + " out of range for " + c.name + " (size " +
         std::to_string(comm_size(comm)) + ")");
  }
}

void TraceWriter::push_thread(int r, int thread, Event e) {
  check_rank(r, "thread event");
  if (thread < 0 || thread >= threads_)
    fail("thread " + std::to_string(thread) + " out of range 0.." + std::to_string(threads_ - 1));
  if (thread == 0) return push(r, e);
  thread_events_.resize(static_cast<std::size_t>(ranks_));
  auto& threads = thread_events_[static_cast<std::size_t>(r)];
  threads.resize(static_cast<std::size_t>(threads_ - 1));
  auto& list = threads[static_cast<std::size_t>(thread - 1)];
  if (!list.empty() && e.time < list.back().time)
    fail("rank " + std::to_string(r) + ", thread " + std::to_string(thread) + ": time goes back");
  list.push_back(e);
}

void TraceWriter::thread_enter(int r, int thread, double t, const std::string& region) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::Enter;
  e.ref = region_ref(region);
  push_thread(r, thread, e);
}

void TraceWriter::thread_leave(int r, int thread, double t, const std::string& region) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::Leave;
  e.ref = region_ref(region);
  push_thread(r, thread, e);
}

void TraceWriter::omp_fork(int r, double t, int threads) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::ThreadFork;
  e.peer = static_cast<std::uint32_t>(threads);
  push_thread(r, 0, e);
}

void TraceWriter::omp_join(int r, double t) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::ThreadJoin;
  push_thread(r, 0, e);
}

void TraceWriter::omp_team_begin(int r, int thread, double t) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::TeamBegin;
  push_thread(r, thread, e);
}

void TraceWriter::omp_team_end(int r, int thread, double t) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::TeamEnd;
  push_thread(r, thread, e);
}

void TraceWriter::omp_acquire_lock(int r, int thread, double t, std::uint32_t lock,
                                   std::uint32_t order) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::AcquireLock;
  e.ref = lock;
  e.tag = order;
  push_thread(r, thread, e);
}

void TraceWriter::omp_release_lock(int r, int thread, double t, std::uint32_t lock,
                                   std::uint32_t order) {
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::ReleaseLock;
  e.ref = lock;
  e.tag = order;
  push_thread(r, thread, e);
}

void TraceWriter::thread_mpi_send(int r, int thread, double t, int dest, int tag,
                                  std::uint64_t bytes) {
  check_peer(r, world(), dest, "thread_mpi_send");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiSend;
  e.ref = static_cast<std::uint32_t>(world());
  e.peer = static_cast<std::uint32_t>(dest);
  e.tag = static_cast<std::uint32_t>(tag);
  e.bytes = bytes;
  push_thread(r, thread, e);
}

void TraceWriter::push(int r, Event e) {
  auto& list = events_[static_cast<std::size_t>(r)];
  if (!list.empty() && e.time < list.back().time) {
    fail("rank " + std::to_string(r) + ", event " + std::to_string(list.size()) + ": time " +
         std::to_string(e.time) + " ticks is before the previous event's " +
         std::to_string(list.back().time));
  }
  list.push_back(e);
}

std::uint32_t TraceWriter::region_ref(const std::string& name) {
  if (name.empty()) fail("empty region name");
  const auto it = region_ids_.find(name);
  if (it != region_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(regions_.size());
  regions_.push_back(name);
  region_ids_.emplace(name, id);
  return id;
}

void TraceWriter::program_begin(int r, double t) {
  check_rank(r, "program_begin");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::ProgramBegin;
  push(r, e);
}

void TraceWriter::program_end(int r, double t) {
  check_rank(r, "program_end");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::ProgramEnd;
  push(r, e);
}

void TraceWriter::enter(int r, double t, const std::string& region) {
  check_rank(r, "enter");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::Enter;
  e.ref = region_ref(region);
  push(r, e);
}

void TraceWriter::leave(int r, double t, const std::string& region) {
  check_rank(r, "leave");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::Leave;
  e.ref = region_ref(region);
  push(r, e);
}

void TraceWriter::mpi_send(int r, double t, int dest, int tag, std::uint64_t bytes, int comm) {
  check_rank(r, "mpi_send");
  check_peer(r, comm, dest, "mpi_send");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiSend;
  e.ref = static_cast<std::uint32_t>(comm);
  e.peer = static_cast<std::uint32_t>(dest);
  e.tag = static_cast<std::uint32_t>(tag);
  e.bytes = bytes;
  push(r, e);
}

void TraceWriter::mpi_recv(int r, double t, int src, int tag, std::uint64_t bytes, int comm) {
  check_rank(r, "mpi_recv");
  check_peer(r, comm, src, "mpi_recv");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiRecv;
  e.ref = static_cast<std::uint32_t>(comm);
  e.peer = static_cast<std::uint32_t>(src);
  e.tag = static_cast<std::uint32_t>(tag);
  e.bytes = bytes;
  push(r, e);
}

void TraceWriter::mpi_isend(int r, double t, int dest, int tag, std::uint64_t bytes,
                            std::uint64_t request, int comm) {
  check_rank(r, "mpi_isend");
  check_peer(r, comm, dest, "mpi_isend");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiIsend;
  e.ref = static_cast<std::uint32_t>(comm);
  e.peer = static_cast<std::uint32_t>(dest);
  e.tag = static_cast<std::uint32_t>(tag);
  e.bytes = bytes;
  e.request = request;
  push(r, e);
}

void TraceWriter::mpi_isend_complete(int r, double t, std::uint64_t request) {
  check_rank(r, "mpi_isend_complete");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiIsendComplete;
  e.request = request;
  push(r, e);
}

void TraceWriter::mpi_irecv_request(int r, double t, std::uint64_t request) {
  check_rank(r, "mpi_irecv_request");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiIrecvRequest;
  e.request = request;
  push(r, e);
}

void TraceWriter::mpi_irecv(int r, double t, int src, int tag, std::uint64_t bytes,
                            std::uint64_t request, int comm) {
  check_rank(r, "mpi_irecv");
  check_peer(r, comm, src, "mpi_irecv");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::MpiIrecv;
  e.ref = static_cast<std::uint32_t>(comm);
  e.peer = static_cast<std::uint32_t>(src);
  e.tag = static_cast<std::uint32_t>(tag);
  e.bytes = bytes;
  e.request = request;
  push(r, e);
}

void TraceWriter::request_test(int r, double t, std::uint64_t request) {
  check_rank(r, "request_test");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::RequestTest;
  e.request = request;
  push(r, e);
}

void TraceWriter::request_cancelled(int r, double t, std::uint64_t request) {
  check_rank(r, "request_cancelled");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::RequestCancelled;
  e.request = request;
  push(r, e);
}

void TraceWriter::coll_begin(int r, double t) {
  check_rank(r, "coll_begin");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::CollBegin;
  push(r, e);
}

void TraceWriter::coll_end(int r, double t, CollOpT op, int comm, int root, std::uint64_t sent,
                           std::uint64_t received) {
  check_rank(r, "coll_end");
  check_peer(r, comm, root < 0 ? 0 : root, "coll_end");
  if (root < -1) fail("coll_end on rank " + std::to_string(r) + ": invalid root " + std::to_string(root));
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::CollEnd;
  e.ref = static_cast<std::uint32_t>(comm);
  e.peer = root < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<std::uint32_t>(root);
  e.tag = static_cast<std::uint32_t>(otf2_op(op));
  e.bytes = sent;
  e.received = received;
  push(r, e);
}

void TraceWriter::metric(int r, double t) {
  check_rank(r, "metric");
  Event e;
  e.time = to_ticks(t);
  e.kind = Kind::Metric;
  // A monotonically growing cycle counter: 2 cycles per tick since the trace's origin.
  e.received = 2 * (e.time > kTimeOffset ? e.time - kTimeOffset : 0);
  push(r, e);
  has_metric_ = true;
}

void TraceWriter::region(int r, const std::string& name, double t0, double t1) {
  enter(r, t0, name);
  leave(r, t1, name);
}

void TraceWriter::send(int r, double t0, double t1, int dest, int tag, std::uint64_t bytes,
                       int comm, const std::string& call) {
  enter(r, t0, call);
  mpi_send(r, t0, dest, tag, bytes, comm);
  leave(r, t1, call);
}

void TraceWriter::recv(int r, double t0, double t1, int src, int tag, std::uint64_t bytes,
                       int comm, const std::string& call) {
  enter(r, t0, call);
  mpi_recv(r, t1, src, tag, bytes, comm);
  leave(r, t1, call);
}

void TraceWriter::collective(int r, const std::string& call, double t0, double t1, CollOpT op,
                             std::uint64_t sent, std::uint64_t received, int comm, int root) {
  enter(r, t0, call);
  coll_begin(r, t0);
  coll_end(r, t1, op, comm, root, sent, received);
  leave(r, t1, call);
}

void TraceWriter::init(int r, double t0, double t1) { region(r, "MPI_Init", t0, t1); }

void TraceWriter::finalize(int r, double t0, double t1) { region(r, "MPI_Finalize", t0, t1); }

std::size_t TraceWriter::events(int r) const {
  check_rank(r, "events");
  return events_[static_cast<std::size_t>(r)].size();
}

std::size_t TraceWriter::total_events() const {
  std::size_t n = 0;
  for (const auto& list : events_) n += list.size();
  for (const auto& rank : thread_events_)
    for (const auto& list : rank) n += list.size();
  return n;
}

void TraceWriter::set_clock_skew(int r, double seconds) {
  check_rank(r, "set_clock_skew");
  skew_.resize(static_cast<std::size_t>(ranks_), 0);
  skew_[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(std::llround(seconds * kTicksPerSecond));
}

void TraceWriter::set_truncation(int r, double fraction) {
  check_rank(r, "set_truncation");
  keep_fraction_.resize(static_cast<std::size_t>(ranks_), 1.0);
  keep_fraction_[static_cast<std::size_t>(r)] = std::min(1.0, std::max(0.0, fraction));
}

void TraceWriter::write(const std::string& dir_arg) const {
  namespace fs = std::filesystem;
  const fs::path path = checked_output_dir(dir_arg);
  const std::string dir = path.string();
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) fail(dir + ": cannot remove the old directory: " + ec.message());
  fs::create_directories(path, ec);
  if (ec) fail(dir + ": cannot create the directory: " + ec.message());

  ArchiveGuard guard;
  // Score-P's chunk sizes (see ../shared/traces): 1 MiB for events, 256 KiB for definitions.
  // Every reader allocates one chunk per file it opens, so this also sets the per-rank fixed cost.
  guard.archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE,
                                    1024 * 1024 /* event chunk */, 256 * 1024 /* def chunk */,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (guard.archive == nullptr) fail(dir + ": OTF2_Archive_Open failed");
  OTF2_Archive* archive = guard.archive;
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr), dir,
        "OTF2_Archive_SetFlushCallbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), dir,
        "OTF2_Archive_SetSerialCollectiveCallbacks");
  check(OTF2_Archive_SetCreator(archive, "cpreplay TraceWriter"), dir, "OTF2_Archive_SetCreator");
  check(OTF2_Archive_OpenEvtFiles(archive), dir, "OTF2_Archive_OpenEvtFiles");
  check(OTF2_Archive_OpenDefFiles(archive), dir, "OTF2_Archive_OpenDefFiles");

  // Strings referenced by events must have their ids before the events are written.
  StringTable strings;
  strings.ref("");
  const OTF2_StringRef program_name = strings.ref(executable_);
  const OTF2_StringRef mpi_name = strings.ref("MPI");
  std::vector<OTF2_StringRef> arguments;
  for (const auto& a : arguments_) arguments.push_back(strings.ref(a));

  // ---- events and (empty) local definitions, one location at a time ----
  std::vector<std::uint64_t> event_counts(static_cast<std::size_t>(ranks_), 0);
  std::vector<std::uint64_t> thread_counts(static_cast<std::size_t>(ranks_ * threads_), 0);
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t last = 0;
  for (int thread = 0; thread < threads_; ++thread) {
    for (int r = 0; r < ranks_; ++r) {
      const std::uint64_t loc = location_id(r, thread);
      const std::string where = "location " + std::to_string(loc);
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc);
      if (w == nullptr) fail(dir + ": OTF2_Archive_GetEvtWriter for " + where + " failed");
      static const std::vector<Event> kNone;
      const std::vector<Event>& list =
          thread == 0 ? events_[static_cast<std::size_t>(r)]
          : static_cast<std::size_t>(r) < thread_events_.size() &&
                  thread_events_[static_cast<std::size_t>(r)].size() >=
                      static_cast<std::size_t>(thread)
              ? thread_events_[static_cast<std::size_t>(r)][static_cast<std::size_t>(thread - 1)]
              : kNone;
      if (thread == 0 || !list.empty()) {
        std::size_t index = 0;
        const std::size_t keep =
            keep_fraction_.empty() || thread != 0
                ? list.size()
                : static_cast<std::size_t>(static_cast<double>(list.size()) *
                                           keep_fraction_[static_cast<std::size_t>(r)]);
        for (std::size_t k = 0; k < keep; ++k) {
          Event e = list[k];
          if (!skew_.empty()) e.time += skew_[static_cast<std::size_t>(r)];
          const std::string what = where + ", event " + std::to_string(index++);
          first = std::min(first, e.time);
          last = std::max(last, e.time);
          switch (e.kind) {
            case Kind::ProgramBegin:
              check(OTF2_EvtWriter_ProgramBegin(w, nullptr, e.time, program_name,
                                                static_cast<std::uint32_t>(arguments.size()),
                                                arguments.empty() ? nullptr : arguments.data()),
                    dir, what + ": ProgramBegin");
              break;
            case Kind::ProgramEnd:
              check(OTF2_EvtWriter_ProgramEnd(w, nullptr, e.time, 0), dir, what + ": ProgramEnd");
              break;
            case Kind::Enter:
              check(OTF2_EvtWriter_Enter(w, nullptr, e.time, e.ref), dir, what + ": Enter");
              break;
            case Kind::Leave:
              check(OTF2_EvtWriter_Leave(w, nullptr, e.time, e.ref), dir, what + ": Leave");
              break;
            case Kind::MpiSend:
              check(OTF2_EvtWriter_MpiSend(w, nullptr, e.time, e.peer, e.ref, e.tag, e.bytes),
                    dir, what + ": MpiSend");
              break;
            case Kind::MpiRecv:
              check(OTF2_EvtWriter_MpiRecv(w, nullptr, e.time, e.peer, e.ref, e.tag, e.bytes),
                    dir, what + ": MpiRecv");
              break;
            case Kind::MpiIsend:
              check(OTF2_EvtWriter_MpiIsend(w, nullptr, e.time, e.peer, e.ref, e.tag, e.bytes,
                                            e.request),
                    dir, what + ": MpiIsend");
              break;
            case Kind::MpiIsendComplete:
              check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, e.time, e.request), dir,
                    what + ": MpiIsendComplete");
              break;
            case Kind::MpiIrecvRequest:
              check(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, e.time, e.request), dir,
                    what + ": MpiIrecvRequest");
              break;
            case Kind::MpiIrecv:
              check(OTF2_EvtWriter_MpiIrecv(w, nullptr, e.time, e.peer, e.ref, e.tag, e.bytes,
                                            e.request),
                    dir, what + ": MpiIrecv");
              break;
            case Kind::RequestTest:
              check(OTF2_EvtWriter_MpiRequestTest(w, nullptr, e.time, e.request), dir,
                    what + ": MpiRequestTest");
              break;
            case Kind::RequestCancelled:
              check(OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, e.time, e.request), dir,
                    what + ": MpiRequestCancelled");
              break;
            case Kind::CollBegin:
              check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, e.time), dir,
                    what + ": MpiCollectiveBegin");
              break;
            case Kind::CollEnd:
              check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, e.time,
                                                    static_cast<OTF2_CollectiveOp>(e.tag), e.ref,
                                                    e.peer, e.bytes, e.received),
                    dir, what + ": MpiCollectiveEnd");
              break;
            case Kind::Metric: {
              const OTF2_Type type = OTF2_TYPE_UINT64;
              OTF2_MetricValue value;
              value.unsigned_int = e.received;
              check(OTF2_EvtWriter_Metric(w, nullptr, e.time, 0, 1, &type, &value), dir,
                    what + ": Metric");
              break;
            }
            case Kind::ThreadFork:
              check(OTF2_EvtWriter_ThreadFork(w, nullptr, e.time, OTF2_PARADIGM_OPENMP, e.peer),
                    dir, what + ": ThreadFork");
              break;
            case Kind::ThreadJoin:
              check(OTF2_EvtWriter_ThreadJoin(w, nullptr, e.time, OTF2_PARADIGM_OPENMP), dir,
                    what + ": ThreadJoin");
              break;
            case Kind::TeamBegin:
              check(OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, e.time, 0), dir,
                    what + ": ThreadTeamBegin");
              break;
            case Kind::TeamEnd:
              check(OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, e.time, 0), dir,
                    what + ": ThreadTeamEnd");
              break;
            case Kind::AcquireLock:
              check(OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, e.time, OTF2_PARADIGM_OPENMP,
                                                     e.ref, e.tag),
                    dir, what + ": ThreadAcquireLock");
              break;
            case Kind::ReleaseLock:
              check(OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, e.time, OTF2_PARADIGM_OPENMP,
                                                     e.ref, e.tag),
                    dir, what + ": ThreadReleaseLock");
              break;
          }
        }
        std::uint64_t n = 0;
        check(OTF2_EvtWriter_GetNumberOfEvents(w, &n), dir,
              where + ": OTF2_EvtWriter_GetNumberOfEvents");
        if (n != keep) {
          fail(dir + ": " + where + ": OTF2 counted " + std::to_string(n) + " events, expected " +
               std::to_string(keep));
        }
        if (thread == 0) event_counts[static_cast<std::size_t>(r)] = n;
        else thread_counts[static_cast<std::size_t>(r) * threads_ + thread] = n;
      }
      // Score-P writes a local definition file per location; ours is empty (no mappings or
      // clock offsets), like the python writer's.
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, loc);
      if (d == nullptr) fail(dir + ": OTF2_Archive_GetDefWriter for " + where + " failed");
      check(OTF2_Archive_CloseDefWriter(archive, d), dir, where + ": OTF2_Archive_CloseDefWriter");
      check(OTF2_Archive_CloseEvtWriter(archive, w), dir, where + ": OTF2_Archive_CloseEvtWriter");
    }
  }
  check(OTF2_Archive_CloseEvtFiles(archive), dir, "OTF2_Archive_CloseEvtFiles");
  check(OTF2_Archive_CloseDefFiles(archive), dir, "OTF2_Archive_CloseDefFiles");

  // ---- global definitions ----
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (g == nullptr) fail(dir + ": OTF2_Archive_GetGlobalDefWriter failed");
  if (first > last) {  // no events at all
    first = kTimeOffset;
    last = kTimeOffset;
  }
  // The clock window starts 10 ticks before the first event and ends 10 after the last one.
  const std::uint64_t global_offset = first - 10;
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, kTicksPerSecond, global_offset,
                                                  last + 10 - global_offset,
                                                  OTF2_UNDEFINED_TIMESTAMP),
        dir, "writing ClockProperties");
  strings.flush(g, dir);
  check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi_name,
                                           OTF2_PARADIGM_CLASS_PROCESS),
        dir, "writing Paradigm MPI");

  const OTF2_StringRef machine_name = strings.ref("Linux");
  const OTF2_StringRef machine_class = strings.ref("machine");
  strings.flush(g, dir);
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine_name, machine_class,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        dir, "writing SystemTreeNode Linux");
  for (int n = 0; n < nodes_; ++n) {
    char host[32];
    std::snprintf(host, sizeof host, "node%02d", n);
    const OTF2_StringRef name = strings.ref(host);
    const OTF2_StringRef cls = strings.ref("node");
    strings.flush(g, dir);
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, static_cast<OTF2_SystemTreeNodeRef>(n + 1),
                                                   name, cls, 0),
          dir, std::string("writing SystemTreeNode ") + host);
  }

  for (int r = 0; r < ranks_; ++r) {
    const OTF2_StringRef name = strings.ref("MPI Rank " + std::to_string(r));
    strings.flush(g, dir);
    const auto node = static_cast<OTF2_SystemTreeNodeRef>(
        1 + static_cast<long long>(r) * nodes_ / ranks_);
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), name,
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, node,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          dir, "writing LocationGroup of rank " + std::to_string(r));
  }
  for (int thread = 0; thread < threads_; ++thread) {
    const OTF2_StringRef name =
        strings.ref(thread == 0 ? std::string("Master thread") : "OMP thread " + std::to_string(thread));
    strings.flush(g, dir);
    for (int r = 0; r < ranks_; ++r) {
      const std::uint64_t count = thread == 0
                                      ? event_counts[static_cast<std::size_t>(r)]
                                      : thread_counts[static_cast<std::size_t>(r) * threads_ + thread];
      check(OTF2_GlobalDefWriter_WriteLocation(g, location_id(r, thread), name,
                                               OTF2_LOCATION_TYPE_CPU_THREAD, count,
                                               static_cast<OTF2_LocationGroupRef>(r)),
            dir, "writing Location " + std::to_string(location_id(r, thread)));
    }
  }

  for (std::size_t id = 0; id < regions_.size(); ++id) {
    const std::string& name = regions_[id];
    const OTF2_StringRef name_ref = strings.ref(name);
    OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
    OTF2_Paradigm paradigm = OTF2_PARADIGM_COMPILER;
    OTF2_StringRef file = OTF2_UNDEFINED_STRING;
    if (id == 0) {  // Score-P names the program region after the executable
      role = OTF2_REGION_ROLE_ARTIFICIAL;
      paradigm = OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    } else if (name.rfind("!$omp ", 0) == 0 || name.rfind("omp_", 0) == 0) {
      paradigm = OTF2_PARADIGM_OPENMP;
      file = strings.ref("hybrid.c");
      const std::string construct = name.substr(0, name.find(" @"));
      if (construct == "!$omp parallel") role = OTF2_REGION_ROLE_PARALLEL;
      else if (construct == "!$omp for") role = OTF2_REGION_ROLE_LOOP;
      else if (construct == "!$omp barrier") role = OTF2_REGION_ROLE_BARRIER;
      else if (construct == "!$omp implicit barrier") role = OTF2_REGION_ROLE_IMPLICIT_BARRIER;
      else if (construct == "!$omp critical") role = OTF2_REGION_ROLE_CRITICAL;
      else if (construct == "!$omp critical sblock") role = OTF2_REGION_ROLE_CRITICAL_SBLOCK;
    } else if (name.rfind("MPI_", 0) == 0) {
      role = mpi_role(name);
      paradigm = OTF2_PARADIGM_MPI;
      file = mpi_name;
    } else {
      file = strings.ref("sim.c");
    }
    const OTF2_StringRef empty = strings.ref("");
    strings.flush(g, dir);
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(id), name_ref, name_ref,
                                           empty, role, paradigm, OTF2_REGION_FLAG_NONE, file, 0,
                                           0),
          dir, "writing Region " + name);
  }

  const OTF2_StringRef empty = strings.ref("");
  std::vector<std::uint64_t> members;
  for (int r = 0; r < ranks_; ++r) members.push_back(location_id(r, 0));
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        static_cast<std::uint32_t>(members.size()), members.data()),
        dir, "writing Group COMM_LOCATIONS");
  members.clear();
  for (int r = 0; r < ranks_; ++r) members.push_back(static_cast<std::uint64_t>(r));
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE,
                                        static_cast<std::uint32_t>(members.size()), members.data()),
        dir, "writing Group of MPI_COMM_WORLD");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 2, empty, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, 0, nullptr),
        dir, "writing Group COMM_SELF");
  for (std::size_t c = 2; c < comms_.size(); ++c) {
    members.assign(comms_[c].members.begin(), comms_[c].members.end());
    check(OTF2_GlobalDefWriter_WriteGroup(g, static_cast<OTF2_GroupRef>(c + 1), empty,
                                          OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE,
                                          static_cast<std::uint32_t>(members.size()),
                                          members.data()),
          dir, "writing Group of " + comms_[c].name);
  }

  if (has_metric_) {  // one PAPI counter, defined like Score-P's
    const OTF2_StringRef name = strings.ref("PAPI_TOT_CYC");
    const OTF2_StringRef description = strings.ref("Total cycles");
    const OTF2_StringRef unit = strings.ref("#");
    strings.flush(g, dir);
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, name, description, OTF2_METRIC_TYPE_PAPI,
                                                 OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                                 OTF2_BASE_DECIMAL, 0, unit),
          dir, "writing MetricMember PAPI_TOT_CYC");
    const OTF2_MetricMemberRef member = 0;
    check(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                                OTF2_RECORDER_KIND_CPU),
          dir, "writing MetricClass");
  }

  for (std::size_t c = 0; c < comms_.size(); ++c) {
    const OTF2_StringRef name = strings.ref(comms_[c].name);
    strings.flush(g, dir);
    const auto group = static_cast<OTF2_GroupRef>(c + 1);  // world 1, self 2, sub-comms 3..
    const OTF2_CommRef parent = c < 2 ? OTF2_UNDEFINED_COMM : 0;
    check(OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(c), name, group, parent,
                                         OTF2_COMM_FLAG_NONE),
          dir, "writing Comm " + comms_[c].name);
  }

  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), dir, "OTF2_Archive_CloseGlobalDefWriter");
  guard.archive = nullptr;
  check(OTF2_Archive_Close(archive), dir, "OTF2_Archive_Close");
}

}  // namespace cpreplay::testing
