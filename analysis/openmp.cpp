// SPDX-License-Identifier: BSD-3-Clause
// OpenMP metrics of one rank, computed in memory over its thread locations (docs/openmp.md).
#include "analysis/openmp.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "analysis/profile.hpp"
#include "cpreplay/error.hpp"

namespace cpreplay::analysis {

OmpConstruct omp_construct(const Region& region) {
  // PEARL's classify_omp: the name up to " @file:line".
  std::string name = region.name;
  const auto at = name.find(" @");
  if (at != std::string::npos) name.resize(at);
  if (name == "!$omp parallel") return OmpConstruct::Parallel;
  if (name == "!$omp barrier") return OmpConstruct::ExplicitBarrier;
  if (name == "!$omp implicit barrier" || name == "!$omp ibarrier")
    return OmpConstruct::ImplicitBarrier;
  return OmpConstruct::None;
}

std::vector<OmpConstruct> omp_constructs(const Definitions& defs, const CallTree& tree) {
  std::vector<OmpConstruct> construct(tree.size());
  for (std::uint32_t c = 0; c < tree.size(); ++c)
    construct[c] = omp_construct(defs.region(tree.node(CallpathId{c}).region));
  return construct;
}

namespace {

/// One parallel-region instance: the master's fork and join.
struct Instance {
  Ticks fork = 0;
  Ticks join = 0;
  std::uint32_t parallel_path = UINT32_MAX;  ///< the master's parallel-region call path
};

/// One thread's visit of a barrier inside a team.
struct BarrierVisit {
  std::uint32_t instance;
  std::uint32_t seq;     ///< j-th barrier of this thread in the instance
  std::uint32_t thread;
  std::uint32_t path;
  Ticks enter;
};

struct Acquisition {
  std::uint32_t thread;
  std::uint32_t path;   ///< call path of the region the lock is acquired in
  std::uint32_t lock;
  std::uint32_t order;
  Ticks enter;          ///< Enter of that region
};

[[noreturn]] void fail(const Definitions& defs, const LocalTrace& t, EventIdx e,
                       const std::string& what) {
  throw TraceError(defs.anchor_path + ": rank " + std::to_string(t.rank) +
                   (t.thread != 0 ? ", thread " + std::to_string(t.thread) : std::string()) +
                   ", event " + std::to_string(e) + ": " + what);
}

/// The master's forks and joins, in order (no nesting: the reader refuses it).
std::vector<Instance> instances_of(const Definitions& defs, const LocalTrace& master) {
  std::vector<Instance> out;
  bool open = false;
  for (EventIdx e = 0; e < master.size(); ++e) {
    const EventKind k = master.kind[e];
    if (k == EventKind::ThreadFork) {
      if (open) fail(defs, master, e, "OpenMP fork before the previous fork's join");
      out.push_back(Instance{master.time[e], master.time[e], UINT32_MAX});
      open = true;
    } else if (k == EventKind::ThreadJoin) {
      if (!open) fail(defs, master, e, "OpenMP join without a fork");
      out.back().join = master.time[e];
      open = false;
    }
  }
  if (open && !out.empty()) out.back().join = master.time.back();
  return out;
}

/// The instance whose fork is the latest at or before t (none: UINT32_MAX).
std::uint32_t instance_at(const std::vector<Instance>& inst, Ticks t) {
  auto it = std::upper_bound(inst.begin(), inst.end(), t,
                             [](Ticks x, const Instance& i) { return x < i.fork; });
  return it == inst.begin() ? UINT32_MAX : static_cast<std::uint32_t>(it - inst.begin() - 1);
}

}  // namespace

OmpTeams omp_teams(const Definitions& defs, const CallTree& tree, const LocalTrace& master,
                   const std::vector<LocalTrace>& workers) {
  OmpTeams teams;
  teams.threads = workers.size() + 1;
  const std::vector<OmpConstruct> construct = omp_constructs(defs, tree);
  for (EventIdx e = 0; e < master.size(); ++e) {
    if (master.kind[e] == EventKind::ThreadFork) {
      teams.forks.push_back(e);
      teams.joins.push_back(kNoEvent);
    } else if (master.kind[e] == EventKind::ThreadJoin && !teams.joins.empty()) {
      teams.joins.back() = e;
    }
  }
  teams.visits.resize(teams.forks.size() * teams.threads);
  // The instance whose fork is the latest at or before t (as the OpenMP pass assigns teams).
  auto instance_at = [&](Ticks t) -> std::size_t {
    std::size_t lo = 0, hi = teams.forks.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (master.time[teams.forks[mid]] <= t) lo = mid + 1; else hi = mid;
    }
    return lo == 0 ? SIZE_MAX : lo - 1;
  };
  // Two walks over every thread's events: the first counts each visit's barriers, the second
  // stores them in one table, visit after visit.
  for (int walk = 0; walk < 2; ++walk) {
    if (walk == 1) {
      std::uint64_t at = 0;
      for (TeamVisit& v : teams.visits) {
        v.first = at;
        at += v.count;
        v.count = 0;  // counted again as they are stored
      }
      teams.barriers.resize(at);
    }
    for (std::size_t t = 0; t < teams.threads; ++t) {
      const LocalTrace& tr = t == 0 ? master : workers[t - 1];
      std::size_t team = SIZE_MAX;
      for (EventIdx e = 0; e < tr.size(); ++e) {
        const EventKind k = tr.kind[e];
        if (k == EventKind::ThreadTeam) {
          team = tr.ref[e] == 0 ? instance_at(tr.time[e]) : SIZE_MAX;
          continue;
        }
        if (k != EventKind::Enter && k != EventKind::Leave) continue;
        const OmpConstruct c = construct[tr.ref[e]];
        if (c == OmpConstruct::None) continue;
        const std::size_t inst = team != SIZE_MAX ? team : instance_at(tr.time[e]);
        if (inst == SIZE_MAX) continue;
        TeamVisit& v = teams.visits[inst * teams.threads + t];
        if (c == OmpConstruct::Parallel) {
          if (walk == 0) (k == EventKind::Enter ? v.enter : v.leave) = e;
        } else if (k == EventKind::Enter) {
          if (walk == 1) teams.barriers[v.first + v.count] = {e, kNoEvent};
          ++v.count;
        } else if (walk == 1 && v.count > 0) {
          teams.barriers[v.first + v.count - 1].second = e;
        }
      }
    }
  }
  // Every team member must have gone through the master's barriers (the j-th barrier of each
  // is one instance), checked for every region.
  for (std::size_t k = 0; k < teams.forks.size(); ++k) {
    const TeamVisit* team = &teams.visits[k * teams.threads];
    const std::size_t barriers = team[0].count;
    for (std::size_t t = 0; t < teams.threads; ++t) {
      if (team[t].enter == kNoEvent) continue;
      bool closed = team[t].leave != kNoEvent && team[t].count == barriers;
      for (std::size_t j = 0; j < team[t].count; ++j)
        closed = closed && teams.barrier(team[t], j).second != kNoEvent;
      if (!closed)
        throw TraceError(defs.anchor_path + ": rank " + std::to_string(master.rank) +
                         ", thread " + std::to_string(t) + ": parallel region " +
                         std::to_string(k + 1) + " has " + std::to_string(team[t].count) +
                         " complete barriers on this thread but " + std::to_string(barriers) +
                         " on the master (the critical path cannot follow the team)");
    }
  }
  return teams;
}

void openmp_profile_pass(const Definitions& defs, const CallTree& tree, const LocalTrace& master,
                         const std::vector<LocalTrace>& workers,
                         const std::vector<Severity*>& sevs, OmpWaits* waits,
                         std::vector<std::vector<double>>* worker_tails) {
  const Clock& clock = defs.clock;
  const std::size_t threads = workers.size() + 1;
  const std::size_t paths = tree.size();
  auto thread_trace = [&](std::size_t t) -> const LocalTrace& {
    return t == 0 ? master : workers[t - 1];
  };
  const std::vector<OmpConstruct> construct = omp_constructs(defs, tree);
  std::vector<bool> in_parallel(paths, false);  // the call path is (below) a parallel region
  for (std::uint32_t c = 0; c < paths; ++c) {
    const auto& node = tree.node(CallpathId{c});
    in_parallel[c] = construct[c] == OmpConstruct::Parallel ||
                     (node.parent.valid() && in_parallel[node.parent.value]);
  }

  std::vector<Instance> inst = instances_of(defs, master);
  // Which threads took part in which instance (limited parallelism: the others did not).
  std::vector<std::uint8_t> took_part(inst.size() * threads, 0);
  std::vector<std::vector<double>> management(threads, std::vector<double>(paths, 0.0));
  std::vector<BarrierVisit> barriers;
  std::vector<Acquisition> acquisitions;
  struct Release {
    Ticks time;
    std::uint32_t thread;
  };
  std::unordered_map<std::uint64_t, Release> releases;  // (lock, order) -> its release

  if (worker_tails) worker_tails->assign(workers.size(), std::vector<double>(paths, 0.0));
  for (std::size_t t = 0; t < threads; ++t) {
    const LocalTrace& trace = thread_trace(t);
    Severity& sev = *sevs[t];
    std::vector<EventIdx> open;  // open Enter events
    std::uint32_t team = UINT32_MAX, seq = 0;
    // A worker's tail of a parallel region (docs/openmp.md, "Impact indicators per thread"):
    // its exclusive time per call path since its last OpenMP synchronization point there (the
    // Enter of its last barrier, else its fork), until the region's Leave. Only where the tail
    // starts is noted (and the open regions there); the region's Leave walks its few events.
    const bool tails = worker_tails != nullptr && t > 0;
    bool in_tail = false;
    EventIdx tail_start = 0;
    double tail_fork = 0.0;  // the fork time, where the tail starts at the fork
    std::vector<EventIdx> tail_open;
    for (EventIdx e = 0; e < trace.size(); ++e) {
      const Ticks time = trace.time[e];
      switch (trace.kind[e]) {
        case EventKind::ThreadTeam:
          if (trace.ref[e] == 0) {
            team = instance_at(inst, time);
            if (team == UINT32_MAX)
              fail(defs, trace, e, "thread team begins before any OpenMP fork of the master");
            took_part[team * threads + t] = 1;
            seq = 0;
          } else {
            team = UINT32_MAX;
          }
          break;
        case EventKind::Enter: {
          open.push_back(e);
          const std::uint32_t cp = trace.ref[e];
          if (construct[cp] == OmpConstruct::Parallel) {
            const std::uint32_t k = team != UINT32_MAX ? team : instance_at(inst, time);
            if (k == UINT32_MAX) fail(defs, trace, e, "parallel region entered without a fork");
            if (t == 0) inst[k].parallel_path = cp;
            // scout's OMP_MGMT_FORK: from the fork to this thread's Enter.
            const double idle = time > inst[k].fork ? clock.span(inst[k].fork, time) : 0.0;
            sev.add(Metric::OmpFork, cp, idle);
            management[t][cp] += idle;
            if (tails) {  // the fork is a synchronization point; its fork time follows it
              in_tail = true;
              tail_start = e;
              tail_fork = idle;
              tail_open = open;
            }
          } else if (is_omp_barrier(construct[cp]) && team != UINT32_MAX) {
            barriers.push_back(BarrierVisit{team, seq++, static_cast<std::uint32_t>(t), cp, time});
            if (tails && in_tail) {  // what came before is kept; the tail starts again here
              tail_start = e;
              tail_fork = 0.0;
              tail_open = open;
            }
          }
          break;
        }
        case EventKind::Leave: {
          const std::uint32_t cp = trace.ref[e];
          open.pop_back();
          if (construct[cp] != OmpConstruct::Parallel) break;
          if (in_tail) {  // the tail's exclusive time per call path, from its start to here
            std::vector<double>& lost = (*worker_tails)[t - 1];
            if (tail_fork != 0.0) lost[trace.ref[tail_start]] += tail_fork;  // the region's Enter
            Ticks from = trace.time[tail_start];
            for (EventIdx k = tail_start + 1; k <= e; ++k) {
              if (trace.time[k] > from && !tail_open.empty()) {
                lost[trace.ref[tail_open.back()]] += clock.span(from, trace.time[k]);
                from = trace.time[k];
              }
              if (trace.kind[k] == EventKind::Enter) tail_open.push_back(k);
              else if (trace.kind[k] == EventKind::Leave && !tail_open.empty()) tail_open.pop_back();
            }
            in_tail = false;
          }
          const std::uint32_t k = team != UINT32_MAX ? team : instance_at(inst, time);
          if (k == UINT32_MAX) break;
          // scout's OMP_MGMT_JOIN: from this thread's Leave to the master's join.
          if (inst[k].join > time) management[t][cp] += clock.span(time, inst[k].join);
          break;
        }
        case EventKind::ThreadLock: {
          const LockRecord& lock = trace.locks[trace.ref[e]];
          if (!lock.openmp) break;
          const std::uint64_t key = (std::uint64_t{lock.lock} << 32) | lock.order;
          if (!lock.acquire) {
            releases[key] = Release{time, static_cast<std::uint32_t>(t)};
          } else if (!open.empty()) {
            acquisitions.push_back(Acquisition{static_cast<std::uint32_t>(t),
                                               trace.ref[open.back()], lock.lock, lock.order,
                                               trace.time[open.back()]});
          }
          break;
        }
        default:
          break;
      }
    }
  }

  // Barrier waits: the j-th barrier of every team member is one barrier instance.
  std::sort(barriers.begin(), barriers.end(), [](const BarrierVisit& a, const BarrierVisit& b) {
    return a.instance != b.instance ? a.instance < b.instance : a.seq < b.seq;
  });
  for (std::size_t i = 0; i < barriers.size();) {
    std::size_t j = i;
    Ticks last = 0;
    while (j < barriers.size() && barriers[j].instance == barriers[i].instance &&
           barriers[j].seq == barriers[i].seq)
      last = std::max(last, barriers[j++].enter);
    std::uint32_t latest = UINT32_MAX;  // the lowest thread number among the last arrivals
    for (std::size_t v = i; v < j; ++v)
      if (barriers[v].enter == last) latest = std::min(latest, barriers[v].thread);
    for (std::size_t v = i; v < j; ++v) {
      const BarrierVisit& b = barriers[v];
      if (last <= b.enter) continue;
      const Metric m = construct[b.path] == OmpConstruct::ExplicitBarrier ? Metric::OmpEbarrierWait
                                                                           : Metric::OmpIbarrierWait;
      const double wait = clock.span(b.enter, last);
      sevs[b.thread]->add(m, b.path, wait);
      if (waits)
        waits->waits.push_back(OmpWaitState{wait, b.enter, b.path, b.thread, latest, m});
    }
    i = j;
  }

  // Lock contention: the previous acquisition's release - Enter of the acquiring region
  // (scout's LockTracking; the first acquisition of a lock never waits).
  for (const Acquisition& a : acquisitions) {
    if (a.order <= 1) continue;
    auto it = releases.find((std::uint64_t{a.lock} << 32) | (a.order - 1));
    if (it == releases.end() || it->second.time <= a.enter) continue;
    const Region& region = defs.region(tree.node(CallpathId{a.path}).region);
    if (region.paradigm != Paradigm::OpenMP) continue;
    const bool critical =
        region.role == RegionRole::Critical || region.role == RegionRole::CriticalSblock;
    const Metric m =
        critical ? Metric::OmpLockContentionCritical : Metric::OmpLockContentionApi;
    const double wait = clock.span(a.enter, it->second.time);
    sevs[a.thread]->add(m, a.path, wait);
    if (waits)
      waits->waits.push_back(OmpWaitState{wait, a.enter, a.path, a.thread, it->second.thread, m});
  }
  if (waits) {
    // Per thread in time order, as the views read them (stable: ties keep the barrier first).
    std::stable_sort(waits->waits.begin(), waits->waits.end(),
                     [](const OmpWaitState& a, const OmpWaitState& b) {
                       return a.thread != b.thread ? a.thread < b.thread : a.begin < b.begin;
                     });
    waits->first.assign(threads + 1, 0);
    for (const OmpWaitState& w : waits->waits) ++waits->first[w.thread + 1];
    for (std::size_t t = 0; t < threads; ++t) waits->first[t + 1] += waits->first[t];
  }

  // time, visits and the breakdown, with management moved into the parallel regions.
  for (std::size_t t = 0; t < threads; ++t) {
    profile_pass(defs, tree, thread_trace(t), *sevs[t], &management[t], t == 0);
    for (std::uint32_t c = 0; c < paths; ++c)
      sevs[t]->add(Metric::OmpManagement, c, management[t][c]);
  }

  // Idle threads (docs/openmp.md): while the master runs outside parallel regions every worker
  // is idle for the master's time there; a worker left out of a team is idle from the fork to
  // the join (limited parallelism). As Cube's remapper does for Scalasca, the idle time is
  // also added to the worker's `time` (CPU allocation time: `time` includes its child
  // omp_idle_threads, `execution` does not), so no metric shows less than its children.
  std::vector<double> master_time(sevs[0]->row(Metric::Time), sevs[0]->row(Metric::Time) + paths);
  for (std::size_t t = 1; t < threads; ++t) {
    for (std::uint32_t c = 0; c < paths; ++c)
      if (!in_parallel[c] && master_time[c] != 0.0) {
        sevs[t]->add(Metric::OmpIdleThreads, c, master_time[c]);
        sevs[t]->add(Metric::Time, c, master_time[c]);
      }
    for (std::size_t k = 0; k < inst.size(); ++k) {
      if (took_part[k * threads + t] || inst[k].parallel_path == UINT32_MAX) continue;
      const double idle = clock.span(inst[k].fork, inst[k].join);
      sevs[t]->add(Metric::OmpIdleThreads, inst[k].parallel_path, idle);
      sevs[t]->add(Metric::OmpLimitedParallelism, inst[k].parallel_path, idle);
      sevs[t]->add(Metric::Time, inst[k].parallel_path, idle);
    }
  }
}

}  // namespace cpreplay::analysis
