// SPDX-License-Identifier: BSD-3-Clause
// Test-only builder that collects MPI events in memory and writes them as a Score-P-style OTF2 archive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cpreplay::testing {

/// The collective operation recorded in an MpiCollectiveEnd (maps 1:1 to OTF2_CollectiveOp).
enum class CollOpT {
  Barrier,
  Bcast,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Alltoallw,
  Allreduce,
  Reduce,
  ReduceScatter,
  Scan,
  Exscan,
  ReduceScatterBlock
};

/// Builds an OTF2 trace of a simulated MPI program with the conventions of Score-P and of
/// ../shared/tools/simtrace.py: clock of 1e9 ticks/s, system tree `Linux`/machine -> `node00`/node,
/// one PROCESS location group `MPI Rank r` per rank holding one CPU_THREAD location
/// `Master thread`, the MPI paradigm, MPI regions classified by name (source file "MPI"), user
/// regions (file "sim.c", paradigm COMPILER), the program region named after the executable
/// (ARTIFICIAL, MEASUREMENT_SYSTEM), MPI_COMM_WORLD and MPI_COMM_SELF, sub-communicators with
/// parent MPI_COMM_WORLD.
///
/// Definition ids written: region 0 is the program region, other regions follow in order of first
/// use; comm 0 = MPI_COMM_WORLD, 1 = MPI_COMM_SELF, 2.. = add_comm() in call order; group 0 =
/// COMM_LOCATIONS (master threads in rank order), 1 = world, 2 = COMM_SELF, 3.. = sub-comms.
/// Location ids follow Score-P (`(thread << 32) | rank`): rank r's master thread is r.
///
/// Times are seconds from trace start and are stored as `llround(t * 1e9) + kTimeOffset` ticks.
/// The writer checks references (ranks, comms, peers, roots) and that time never decreases on a
/// rank, but not nesting: unbalanced traces can be built on purpose for error-path tests.
/// Every method throws std::runtime_error on misuse.
// MT: Externally Synchronized. MPI: none (serial test helper).
class TraceWriter {
 public:
  /// Ticks added to every timestamp, so that a trace does not start at tick 0 (as in simtrace).
  static constexpr std::uint64_t kTimeOffset = 1'000'000'000'000ULL;
  /// Timer resolution of the written clock properties (ticks per second).
  static constexpr std::uint64_t kTicksPerSecond = 1'000'000'000ULL;

  explicit TraceWriter(int ranks, std::string executable = "sim.exe");

  int ranks() const { return ranks_; }
  const std::string& executable() const { return executable_; }

  /// Communicator handles (= OTF2 comm refs): 0 = MPI_COMM_WORLD, 1 = MPI_COMM_SELF.
  int world() const { return 0; }
  int self() const { return 1; }
  /// Defines a sub-communicator of world; its comm-local rank i is world rank world_members[i].
  /// Returns its handle (2, 3, ...).
  int add_comm(const std::vector<int>& world_members, const std::string& name);
  /// Spreads the ranks over `nodes` system-tree nodes node00, node01, ...: rank r on r*nodes/P.
  void set_nodes(int nodes);
  /// Total CPU_THREAD locations per process, master included (default 1). Thread t >= 1 of rank r
  /// is location `(t << 32) | r`, named `OMP thread t`; it has the events given with the
  /// thread_* and omp_* calls below (none by default).
  void set_threads_per_process(int n);
  /// Arguments recorded in every ProgramBegin (program name = executable).
  void set_program_arguments(std::vector<std::string> args);
  /// A badly synchronized clock: every timestamp of rank r is written `seconds` later.
  void set_clock_skew(int r, double seconds);
  /// A rank that died mid-run: only the first `fraction` of rank r's events are written.
  void set_truncation(int r, double fraction);

  // ---- low-level events on rank r (time order per rank; peers and roots are comm-local) ----
  void program_begin(int r, double t);
  /// exit status 0, as simtrace writes it.
  void program_end(int r, double t);
  /// Regions are defined on first use by name and classified like Score-P (see file comment).
  void enter(int r, double t, const std::string& region);
  void leave(int r, double t, const std::string& region);
  void mpi_send(int r, double t, int dest, int tag, std::uint64_t bytes, int comm = 0);
  void mpi_recv(int r, double t, int src, int tag, std::uint64_t bytes, int comm = 0);
  void mpi_isend(int r, double t, int dest, int tag, std::uint64_t bytes, std::uint64_t request,
                 int comm = 0);
  void mpi_isend_complete(int r, double t, std::uint64_t request);
  void mpi_irecv_request(int r, double t, std::uint64_t request);
  void mpi_irecv(int r, double t, int src, int tag, std::uint64_t bytes, std::uint64_t request,
                 int comm = 0);
  void request_test(int r, double t, std::uint64_t request);
  void request_cancelled(int r, double t, std::uint64_t request);
  void coll_begin(int r, double t);
  /// root is comm-local; -1 writes OTF2_UNDEFINED_UINT32 (no root). Bytes as sent/received by r.
  void coll_end(int r, double t, CollOpT op, int comm, int root, std::uint64_t sent,
                std::uint64_t received);
  /// A hardware-counter Metric event (one UINT64 value). The first call defines, as Score-P does
  /// for PAPI counters, metric member 0 `PAPI_TOT_CYC` and a SYNCHRONOUS_STRICT metric class 0
  /// that the events reference. Readers are expected to skip these events.
  void metric(int r, double t);

  // ---- OpenMP (Score-P's OPARI2 conventions, ../shared/conformance-hybrid/README.md) ----
  // Regions named "!$omp parallel @f:l", "!$omp for @f:l", "!$omp barrier @f:l",
  // "!$omp implicit barrier @f:l", "!$omp critical @f:l", "!$omp critical sblock @f:l" get the
  // OPENMP paradigm and the matching role, "omp_*_lock" the OPENMP paradigm. Thread 0 is the
  // master (the same events as enter()/leave()). Team events name MPI_COMM_WORLD as their
  // thread team (readers ignore it).
  void thread_enter(int r, int thread, double t, const std::string& region);
  void thread_leave(int r, int thread, double t, const std::string& region);
  /// ThreadFork (paradigm OPENMP) and ThreadJoin on rank r's master thread.
  void omp_fork(int r, double t, int threads);
  void omp_join(int r, double t);
  void omp_team_begin(int r, int thread, double t);
  void omp_team_end(int r, int thread, double t);
  /// ThreadAcquireLock / ThreadReleaseLock (paradigm OPENMP); orders count from 1 per lock.
  void omp_acquire_lock(int r, int thread, double t, std::uint32_t lock, std::uint32_t order);
  void omp_release_lock(int r, int thread, double t, std::uint32_t lock, std::uint32_t order);
  /// An MPI_Send event on a worker thread (for the refusal tests).
  void thread_mpi_send(int r, int thread, double t, int dest, int tag, std::uint64_t bytes);

  // ---- composites, Score-P style ----
  /// Enter t0, Leave t1.
  void region(int r, const std::string& name, double t0, double t1);
  /// Enter t0, MpiSend t0, Leave t1.
  void send(int r, double t0, double t1, int dest, int tag, std::uint64_t bytes, int comm = 0,
            const std::string& call = "MPI_Send");
  /// Enter t0, MpiRecv t1, Leave t1.
  void recv(int r, double t0, double t1, int src, int tag, std::uint64_t bytes, int comm = 0,
            const std::string& call = "MPI_Recv");
  /// Enter t0, MpiCollectiveBegin t0, MpiCollectiveEnd t1, Leave t1.
  void collective(int r, const std::string& call, double t0, double t1, CollOpT op,
                  std::uint64_t sent, std::uint64_t received, int comm = 0, int root = -1);
  /// Enter/Leave MPI_Init: no collective events, like Score-P.
  void init(int r, double t0, double t1);
  /// Enter/Leave MPI_Finalize: no collective events, like Score-P.
  void finalize(int r, double t0, double t1);

  /// Writes dir/traces.otf2, dir/traces.def and dir/traces/<location>.{evt,def}. Removes dir
  /// first if it exists (refuses `/` and top-level directories such as `/tmp`).
  void write(const std::string& dir) const;

  /// Events recorded so far on rank r's master thread.
  std::size_t events(int r) const;
  /// Events recorded so far on all ranks.
  std::size_t total_events() const;
  /// Tick value stored for time t (seconds from trace start).
  static std::uint64_t to_ticks(double t);

 private:
  enum class Kind : std::uint8_t {
    ProgramBegin,
    ProgramEnd,
    Enter,
    Leave,
    MpiSend,
    MpiRecv,
    MpiIsend,
    MpiIsendComplete,
    MpiIrecvRequest,
    MpiIrecv,
    RequestTest,
    RequestCancelled,
    CollBegin,
    CollEnd,
    Metric,
    ThreadFork,
    ThreadJoin,
    TeamBegin,
    TeamEnd,
    AcquireLock,
    ReleaseLock
  };

  /// One recorded event; fields unused by a kind stay zero.
  struct Event {
    std::uint64_t time = 0;      // ticks
    Kind kind = Kind::Enter;
    std::uint32_t ref = 0;       // region or comm ref
    std::uint32_t peer = 0;      // comm-local peer or collective root
    std::uint32_t tag = 0;       // message tag or OTF2 collective op
    std::uint64_t bytes = 0;     // message length or bytes sent
    std::uint64_t received = 0;  // collective bytes received or metric value
    std::uint64_t request = 0;
  };

  struct Comm {
    std::string name;
    std::vector<int> members;  // world ranks, index = comm-local rank
  };

  void push(int r, Event e);
  void push_thread(int r, int thread, Event e);
  void check_rank(int r, const char* what) const;
  void check_peer(int r, int comm, int peer, const char* what) const;
  std::uint32_t region_ref(const std::string& name);
  std::size_t comm_size(int comm) const;

  int ranks_;
  std::string executable_;
  std::vector<std::string> arguments_;
  int nodes_ = 1;
  int threads_ = 1;
  std::vector<std::string> regions_;  // index = region ref; 0 = program region
  std::unordered_map<std::string, std::uint32_t> region_ids_;
  std::vector<Comm> comms_;           // index = comm ref
  std::vector<std::vector<Event>> events_;  // per rank (master thread)
  std::vector<std::vector<std::vector<Event>>> thread_events_;  // [rank][thread - 1]
  bool has_metric_ = false;
  std::vector<std::int64_t> skew_;      // ticks added per rank at write time
  std::vector<double> keep_fraction_;   // events kept per rank at write time
};

}  // namespace cpreplay::testing
