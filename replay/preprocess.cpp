// SPDX-License-Identifier: BSD-3-Clause
// Call-tree unification over ranks: pairwise merges up a binomial tree to rank 0, which numbers
// the union in preorder and broadcasts it; each rank then maps its own call paths.
#include "replay/preprocess.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace cpreplay::replay {
namespace {

using Flat = std::vector<std::uint32_t>;  // (parent, region) pairs in local id order

Flat flatten(const CallTree& tree) {
  Flat flat;
  flat.reserve(tree.size() * 2);
  for (const auto& n : tree.nodes()) {
    flat.push_back(n.parent.value);
    flat.push_back(n.region.value);
  }
  return flat;
}

/// Adds a flattened tree's call paths to `merged` (creation order: new ones after the ones it
/// has, in the flattened tree's order); returns the flattened tree's ids in `merged`.
std::vector<std::uint32_t> add_flat(CallTree& merged, const Flat& f) {
  std::vector<std::uint32_t> map(f.size() / 2);
  for (std::size_t i = 0; i < map.size(); ++i) {
    const std::uint32_t parent = f[2 * i];
    const CallpathId gp = parent == CallpathId::kInvalid ? CallpathId{} : CallpathId{map[parent]};
    map[i] = merged.find_or_add(gp, RegionId{f[2 * i + 1]}).value;
  }
  return map;
}

/// The same tree numbered in preorder (children in creation order); renum[old id] = new id.
CallTree preorder(const CallTree& merged, std::vector<std::uint32_t>& renum) {
  const auto children = merged.children();
  std::vector<std::uint32_t> order;
  order.reserve(merged.size());
  std::vector<std::uint32_t> stack;
  for (std::uint32_t i = merged.size(); i-- > 0;)
    if (!merged.node(CallpathId{i}).parent.valid()) stack.push_back(i);
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (auto it = children[n].rbegin(); it != children[n].rend(); ++it) stack.push_back(*it);
  }
  renum.assign(merged.size(), 0);
  CallTree result;
  for (std::uint32_t pos = 0; pos < order.size(); ++pos) {
    const auto& node = merged.node(CallpathId{order[pos]});
    renum[order[pos]] = pos;
    const CallpathId parent = node.parent.valid() ? CallpathId{renum[node.parent.value]}
                                                  : CallpathId{};
    result.find_or_add(parent, node.region);
  }
  return result;
}

/// Builds the global preorder tree from all flattened trees; returns per-rank local->global maps.
CallTree merge(const std::vector<Flat>& flats, std::vector<std::vector<std::uint32_t>>& maps) {
  CallTree merged;  // creation order
  maps.clear();
  for (const Flat& f : flats) maps.push_back(add_flat(merged, f));
  std::vector<std::uint32_t> renum;
  CallTree result = preorder(merged, renum);
  for (auto& map : maps)
    for (auto& id : map) id = renum[id];
  return result;
}

/// Local to global call path ids in the Enter/Leave events, and the regions of the global ids.
void rewrite(LocalTrace& trace, const std::vector<std::uint32_t>& map, const CallTree& global) {
  for (EventIdx e = 0; e < trace.size(); ++e)
    if (trace.is_enter_or_leave(e)) trace.ref[e] = map[trace.ref[e]];
  trace.region_of_path.resize(global.size());
  for (std::uint32_t c = 0; c < global.size(); ++c)
    trace.region_of_path[c] = global.node(CallpathId{c}).region.value;
}

}  // namespace

CallTree unify_call_trees(const World& world, const std::vector<CallTree>& local, Shard& shard) {
  // Binomial-tree reduction: at distance d, a process that is a multiple of 2d takes in the tree
  // of process + d (covering the ranks after its own), so process 0 ends with the call paths of
  // all ranks in the order a merge of rank 0, 1, 2, ... would create them (a process first
  // merges its own ranks in rank order). Each process holds at most the union, never P trees.
  const int me = world.rank(), n = world.size();
  CallTree merged;
  for (const CallTree& tree : local) add_flat(merged, flatten(tree));
  for (int d = 1; d < n; d *= 2) {
    if (me % (2 * d) != 0) {
      const Flat mine = flatten(merged);
      const int count = static_cast<int>(mine.size());
      MPI_Send(&count, 1, MPI_INT, me - d, 0, world.comm());
      MPI_Send(mine.data(), count, MPI_UINT32_T, me - d, 1, world.comm());
      break;
    }
    if (me + d >= n) continue;
    int count = 0;
    MPI_Recv(&count, 1, MPI_INT, me + d, 0, world.comm(), MPI_STATUS_IGNORE);
    Flat theirs(static_cast<std::size_t>(count));
    MPI_Recv(theirs.data(), count, MPI_UINT32_T, me + d, 1, world.comm(), MPI_STATUS_IGNORE);
    add_flat(merged, theirs);
  }
  // Process 0 numbers the union in preorder and hands it to everybody.
  Flat global_flat;
  if (me == 0) {
    std::vector<std::uint32_t> renum;
    global_flat = flatten(preorder(merged, renum));
  }
  world.broadcast(global_flat);
  CallTree global;
  add_flat(global, global_flat);
  // Every local call path is in the union: looking it up adds nothing.
  for (std::size_t i = 0; i < shard.traces.size(); ++i) {
    const std::vector<std::uint32_t> map = add_flat(global, flatten(local[i]));
    rewrite(shard.traces[i], map, global);
    // A rank's threads share its local tree (their call paths hang below the master's).
    if (i < shard.workers.size())
      for (LocalTrace& worker : shard.workers[i]) rewrite(worker, map, global);
  }
  return global;
}

namespace {

/// The regions still open at the end of `trace`, closed with Leave events at `at`; returns how
/// many.
std::uint64_t close_open_regions(LocalTrace& trace, Ticks at) {
  std::vector<EventIdx> open;
  for (EventIdx i = 0; i < trace.size(); ++i) {
    if (trace.kind[i] == EventKind::Enter) open.push_back(i);
    if (trace.kind[i] == EventKind::Leave && !open.empty()) open.pop_back();
  }
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    trace.push(EventKind::Leave, at, trace.ref[*it]);
  return open.size();
}

/// Hybrid: the parallel region the cut falls into (the master's last fork without its join):
/// every thread of its team is cut back to the barriers all of them entered. Returns the events
/// dropped.
std::uint64_t align_cut_team(LocalTrace& master, std::vector<LocalTrace>& workers,
                             const std::vector<bool>& barrier_region) {
  EventIdx fork = kNoEvent;
  for (EventIdx e = 0; e < master.size(); ++e) {
    if (master.kind[e] == EventKind::ThreadFork) fork = e;
    if (master.kind[e] == EventKind::ThreadJoin) fork = kNoEvent;
  }
  if (fork == kNoEvent) return 0;
  const Ticks from = master.time[fork];
  auto is_barrier_enter = [&](const LocalTrace& t, EventIdx e) {
    if (t.kind[e] != EventKind::Enter) return false;
    const std::uint32_t region = t.region_of_path.at(t.ref[e]);
    return region < barrier_region.size() && barrier_region[region];
  };
  // Per thread: its events of this instance begin at the first event after the fork (the
  // master: after the fork itself); the barrier Enters among them, in order.
  std::vector<LocalTrace*> team{&master};
  for (LocalTrace& w : workers) team.push_back(&w);
  std::vector<std::vector<EventIdx>> enters(team.size());
  std::size_t common = SIZE_MAX;
  for (std::size_t t = 0; t < team.size(); ++t) {
    const LocalTrace& tr = *team[t];
    const EventIdx first =
        t == 0 ? fork + 1 : static_cast<EventIdx>(from > 0 ? tr.time.upper_bound(from - 1) : 0);
    bool in_team = t == 0;
    for (EventIdx e = first; e < tr.size(); ++e) {
      in_team = in_team || tr.kind[e] == EventKind::ThreadTeam || tr.kind[e] == EventKind::Enter;
      if (is_barrier_enter(tr, e)) enters[t].push_back(e);
    }
    if (in_team) common = std::min(common, enters[t].size());
  }
  if (common == SIZE_MAX) return 0;
  std::uint64_t dropped = 0;
  for (std::size_t t = 0; t < team.size(); ++t)
    if (enters[t].size() > common) {
      const EventIdx keep = enters[t][common];
      dropped += team[t]->size() - keep;
      team[t]->truncate(keep);
    }
  return dropped;
}

}  // namespace

PartialCut cut_to_common_end(const World& world, Shard& shard,
                             const std::vector<bool>& barrier_region) {
  PartialCut cut;
  const bool threads = !shard.workers.empty();
  auto worker_incomplete = [&](std::size_t i) {
    if (!threads) return false;
    for (const LocalTrace& w : shard.workers[i])
      if (w.incomplete) return true;
    return false;
  };
  int incomplete = 0;
  for (std::size_t i = 0; i < shard.traces.size(); ++i)
    incomplete += shard.traces[i].incomplete || worker_incomplete(i) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &incomplete, 1, MPI_INT, MPI_SUM, world.comm());
  cut.incomplete_ranks = incomplete;
  if (incomplete == 0) return cut;
  cut.applied = true;

  // The cut: the earliest last timestamp over all ranks, and whose it is (ties: the lower
  // rank, as MINLOC decides between processes). A rank ends with its master: a worker's last
  // event says nothing about when the process stopped (it may be busy in a region or idle).
  struct {
    double time;
    int rank;
  } mine{0.0, -1}, first{};
  Ticks last = ~Ticks{0};
  for (std::size_t i = 0; i < shard.traces.size(); ++i) {
    const LocalTrace& t = shard.traces[i];
    const Ticks end = t.size() ? t.time.back() : 0;
    const double as_double = static_cast<double>(end);
    if (mine.rank < 0 || as_double < mine.time) mine = {as_double, t.rank};
    last = std::min(last, end);
  }
  MPI_Allreduce(&mine, &first, 1, MPI_DOUBLE_INT, MPI_MINLOC, world.comm());
  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_UINT64_T, MPI_MIN, world.comm());
  cut.cut_time = last;
  cut.first_to_stop = first.rank;

  std::uint64_t counts[2] = {0, 0};  // events dropped, regions closed
  auto cut_at_time = [&](LocalTrace& trace) {
    const std::size_t keep = trace.time.upper_bound(cut.cut_time);
    counts[0] += trace.size() - keep;
    trace.truncate(keep);
  };
  for (std::size_t i = 0; i < shard.traces.size(); ++i) {
    cut_at_time(shard.traces[i]);
    if (threads && !shard.workers[i].empty()) {
      for (LocalTrace& w : shard.workers[i]) cut_at_time(w);
      counts[0] += align_cut_team(shard.traces[i], shard.workers[i], barrier_region);
      for (LocalTrace& w : shard.workers[i]) counts[1] += close_open_regions(w, cut.cut_time);
    }
    counts[1] += close_open_regions(shard.traces[i], cut.cut_time);
  }
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, world.comm());
  cut.events_cut = counts[0];
  cut.regions_closed = counts[1];
  return cut;
}

CallTree unify_call_trees_serial(const std::vector<CallTree>& trees,
                                 std::vector<LocalTrace*> traces) {
  std::vector<Flat> flats;
  for (const auto& t : trees) flats.push_back(flatten(t));
  std::vector<std::vector<std::uint32_t>> maps;
  CallTree global = merge(flats, maps);
  for (std::size_t r = 0; r < traces.size(); ++r)
    if (traces[r]) rewrite(*traces[r], maps[r], global);
  return global;
}

}  // namespace cpreplay::replay
