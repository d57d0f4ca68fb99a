// SPDX-License-Identifier: BSD-3-Clause
// The in-memory OpenMP pass of one rank: thread management, barrier and lock waits, idle threads.
#pragma once

#include <utility>
#include <vector>

#include "analysis/metric_table.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay::analysis {

/// What PEARL's name classification says about a region (scout.hyb recognises OpenMP
/// constructs by name: "!$omp parallel @file:line", ...; conformance-hybrid/README.md).
enum class OmpConstruct : std::uint8_t { None, Parallel, ExplicitBarrier, ImplicitBarrier };
OmpConstruct omp_construct(const Region& region);
/// An explicit or implicit barrier: the constructs whose instances synchronize a thread team.
inline bool is_omp_barrier(OmpConstruct c) {
  return c == OmpConstruct::ExplicitBarrier || c == OmpConstruct::ImplicitBarrier;
}
/// The construct of every call path's region (indexed by call path).
std::vector<OmpConstruct> omp_constructs(const Definitions& defs, const CallTree& tree);

/// One thread's part in one parallel-region instance: its Enter and Leave of the parallel
/// region and its barriers (Enter, Leave) in order (the j-th barrier of every team member is one
/// barrier instance): OmpTeams::barrier(visit, j), j < count. 24 B; the barriers of all visits
/// in one table (a vector per visit cost a heap block each, 16,800 on 4 x 4 threads of 4,200
/// regions).
struct TeamVisit {
  EventIdx enter = kNoEvent;
  EventIdx leave = kNoEvent;
  std::uint32_t count = 0;   ///< its barriers
  std::uint64_t first = 0;   ///< where they are in OmpTeams::barriers
};

/// A rank's parallel-region instances (the master's forks, in order; nested regions are refused
/// when reading) and every thread's visit of each. A thread's events belong to the instance of
/// its ThreadTeam begin, or outside a team to the latest fork at or before them.
struct OmpTeams {
  std::size_t threads = 1;
  std::vector<EventIdx> forks;  ///< the master's ThreadFork events
  std::vector<EventIdx> joins;  ///< the matching ThreadJoin (kNoEvent: none)
  std::vector<TeamVisit> visits;  ///< [instance * threads + thread]; enter kNoEvent: not in it
  /// Every visit's barriers, visit after visit: (Enter, Leave; kNoEvent: no Leave).
  std::vector<std::pair<EventIdx, EventIdx>> barriers;
  const TeamVisit& visit(std::size_t k, std::size_t t) const { return visits[k * threads + t]; }
  /// The j-th barrier of a visit (j < visit.count).
  const std::pair<EventIdx, EventIdx>& barrier(const TeamVisit& v, std::size_t j) const {
    return barriers[v.first + j];
  }
};

/// Builds a rank's OmpTeams (shared by the critical path and the root causes). Throws TraceError
/// (one line naming rank, thread and region) when a team member did not go through the same
/// complete barriers as the master: nothing that pairs barrier instances can follow the team.
OmpTeams omp_teams(const Definitions& defs, const CallTree& tree, const LocalTrace& master,
                   const std::vector<LocalTrace>& workers);

/// One OpenMP wait-state instance of a thread, for the views: a barrier wait (own Enter of the
/// barrier to the team's last Enter) or lock contention (Enter of the acquiring region to the
/// previous holder's release). 32 B.
struct OmpWaitState {
  double wait = 0.0;           ///< seconds, as the metric adds it
  Ticks begin = 0;             ///< when the waiting began
  std::uint32_t callpath = 0;  ///< the barrier's, or the region the lock is acquired in
  std::uint32_t thread = 0;    ///< the waiting thread
  std::uint32_t partner = 0;   ///< the thread waited for: last into the barrier, or the holder
  Metric metric = Metric::OmpIbarrierWait;
};
static_assert(sizeof(OmpWaitState) == 32, "one per OpenMP wait state, kept for the views");

/// One rank's OpenMP wait states, every thread's: sorted by thread, then by begin.
struct OmpWaits {
  std::vector<OmpWaitState> waits;
  std::vector<std::size_t> first;  ///< thread t's are waits[first[t] .. first[t + 1])
  std::size_t count(std::size_t t) const {
    return t + 1 < first.size() ? first[t + 1] - first[t] : 0;
  }
  const OmpWaitState* of(std::size_t t) const { return count(t) ? &waits[first[t]] : nullptr; }
};

/// The profile of one rank of a hybrid trace, all its threads: `time`, `visits` and the time
/// breakdown (profile_pass) on every thread, plus the OpenMP metrics, all as scout.hyb computes
/// them (scalasca-metrics.md, OpenMP; docs/openmp.md):
///  - omp_fork: per thread, Enter of the parallel region - the master's ThreadFork;
///    omp_management: that + (the master's ThreadJoin - the thread's Leave of it); both at the
///    parallel region's call path, whose `time` includes them on every thread (the master's
///    enclosing call path loses them);
///  - omp_ibarrier_wait / omp_ebarrier_wait: the team's last Enter into this barrier instance
///    (the j-th barrier of the team, j counted per thread) - own Enter, at the barrier;
///  - omp_lock_contention_critical / _api: release of the lock's previous acquisition - Enter
///    of the region the acquisition happens in, where positive;
///  - omp_idle_threads / omp_limited_parallelism (the Cube remapper's, docs/openmp.md).
/// sevs[t] is thread t's severity (sevs[0]: the master's, which also gets the MPI passes).
/// With `waits`, also the barrier-wait and lock-contention instances (for --timeline and
/// --overview; ties at a barrier: the lowest thread number is the partner).
/// With `worker_tails`, also per worker thread t ((*worker_tails)[t - 1]) and call path the
/// time scout.hyb's runtime map loses on that worker: in every parallel region, its exclusive
/// time from its last OpenMP synchronization point there (the Enter of its last barrier, else
/// its fork, fork time included) to its Leave of the region (docs/openmp.md, "Impact
/// indicators per thread").
/// Throws TraceError when the threads' OpenMP events do not fit together.
/// MPI: local (all threads of a rank are held by one process).
void openmp_profile_pass(const Definitions& defs, const CallTree& tree, const LocalTrace& master,
                         const std::vector<LocalTrace>& workers,
                         const std::vector<Severity*>& sevs, OmpWaits* waits = nullptr,
                         std::vector<std::vector<double>>* worker_tails = nullptr);

}  // namespace cpreplay::analysis
