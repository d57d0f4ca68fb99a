// SPDX-License-Identifier: BSD-3-Clause
// Global trace definitions (regions, system tree, communicators) known identically on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpreplay/types.hpp"

namespace cpreplay {

/// Region role, as PEARL names them (the strings go into the Cube report).
enum class RegionRole : std::uint8_t {
  Unknown, Function, Wrapper, Loop, Code, Parallel, Sections, Section, Workshare, Single,
  SingleSblock, Master, Critical, CriticalSblock, Atomic, Barrier, ImplicitBarrier, Flush,
  Ordered, OrderedSblock, Task, TaskCreate, TaskWait, Coll1ToN /*one2all*/, CollNTo1 /*all2one*/,
  CollNToN /*all2all*/, CollOther, FileIo, Point2Point, Rma, Data, Artificial, ThreadCreate,
  ThreadWait, TaskUntied, Allocate, Deallocate, Reallocate, FileIoMetadata
};

/// Region paradigm, as PEARL names them.
enum class Paradigm : std::uint8_t {
  Unknown, User, Compiler, OpenMP, Mpi, Cuda, Measurement, Pthread, Hmpp, Ompss, Hardware, Gaspi,
  Upc, Shmem, Wintherad, Qtthread, AceThread, TbbThread, OpenAcc, OpenCl, Mtapi, Sampling, None,
  Hip, Kokkos, Io
};

const char* role_name(RegionRole role);
const char* paradigm_name(Paradigm paradigm);

/// What scout's name classification (scalasca-metrics.md §2.3) says about an MPI region.
enum class MpiClass : std::uint8_t {
  None,         ///< not an MPI region (source file is not "MPI")
  Init,         ///< MPI_Init, MPI_Init_thread
  Finalize,     ///< MPI_Finalize
  Send,         ///< blocking MPI_Send / MPI_Ssend: the only completions with Late Receiver
  OtherSend,    ///< MPI_Bsend, MPI_Rsend, MPI_Isend, ... (a send, but no Late Receiver)
  SendRecv,     ///< MPI_Sendrecv*
  Recv,         ///< MPI_Recv, MPI_Irecv, ...
  WaitSingle,   ///< MPI_Wait, MPI_Waitany
  WaitMulti,    ///< MPI_Waitall, MPI_Waitsome
  Test,         ///< MPI_Test, MPI_Testany, MPI_Testall, MPI_Testsome
  Other         ///< any other MPI region (collectives, management, ...)
};

struct Region {
  std::string name;            ///< display name
  std::string canonical_name;  ///< mangled name
  std::string description;
  std::string file;            ///< source file; "MPI" marks Score-P's MPI wrappers
  std::uint32_t begin_line = 0;
  std::uint32_t end_line = 0;
  RegionRole role = RegionRole::Unknown;
  Paradigm paradigm = Paradigm::Unknown;
  MpiClass mpi_class = MpiClass::None;
  bool is_mpi() const { return mpi_class != MpiClass::None; }
};

struct SystemTreeNode {
  std::string name;
  std::string class_name;
  std::uint32_t parent = UINT32_MAX;  ///< index into Definitions::system_nodes, or none
};

/// A worker thread of a hybrid MPI+OpenMP process (thread number >= 1).
struct WorkerThread {
  std::uint64_t location_id = 0;  ///< OTF2 id, Score-P's (thread << 32) | rank
  std::string name;               ///< e.g. "OMP thread 2"
  std::uint64_t events = 0;       ///< records of the location (an upper bound of its events)
};

/// One MPI process (OTF2 location group of type PROCESS); its index is the world rank.
struct Process {
  std::string name;                 ///< e.g. "MPI Rank 3"
  std::uint32_t system_node = 0;    ///< index into Definitions::system_nodes
  std::uint64_t location_id = 0;    ///< OTF2 id of its master thread (thread 0)
  std::string location_name;        ///< e.g. "Master thread"
  std::uint32_t locations = 0;      ///< CPU-thread locations: 1 + workers.size()
  std::uint64_t events = 0;         ///< records of the master thread (an upper bound of its events)
  /// Threads 1, 2, ... in thread-number order (docs/replay-engine.md §1); empty for pure MPI.
  std::vector<WorkerThread> workers;
};

/// A communicator: the world ranks of its members, indexed by communicator-local rank.
struct Communicator {
  std::string name;
  std::vector<Rank> members;
  bool is_self = false;  ///< MPI_COMM_SELF-like: every process alone
  /// Local rank -> world rank; for self communicators the caller's own rank.
  Rank world_rank(std::uint32_t local, Rank me) const {
    return is_self ? me : members.at(local);
  }
  std::uint32_t size() const { return is_self ? 1u : static_cast<std::uint32_t>(members.size()); }
};

/// Everything the global definitions file says that the analysis needs.
struct Definitions {
  std::string anchor_path;  ///< the file the user named; used in error messages
  Clock clock;
  std::vector<Region> regions;  ///< indexed by RegionId
  std::vector<SystemTreeNode> system_nodes;
  std::vector<Process> processes;  ///< indexed by world rank
  std::vector<Communicator> comms;  ///< indexed by CommId
  RegionId program_region;  ///< the region Score-P names after the executable, if any
  std::vector<std::uint64_t> program_name_strings;  ///< trace string ids naming the program

  const Region& region(RegionId id) const { return regions[id.value]; }
  int ranks() const { return static_cast<int>(processes.size()); }
  /// True when some rank has more than one thread (a hybrid MPI+OpenMP trace).
  bool hybrid() const {
    for (const Process& p : processes)
      if (!p.workers.empty()) return true;
    return false;
  }
};

/// Definitions as bytes and back, for handing them from the rank that read them to the others.
/// decode_definitions throws std::runtime_error on a truncated or overlong encoding.
std::string encode_definitions(const Definitions& defs);
Definitions decode_definitions(const std::string& bytes);

/// Fills Region::mpi_class from the region's file and name (scalasca-metrics.md §2.3).
MpiClass classify_mpi_region(const std::string& file, const std::string& name);

}  // namespace cpreplay
