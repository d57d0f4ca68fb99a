// SPDX-License-Identifier: BSD-3-Clause
// Call-tree unification over ranks (allgather of every rank's local tree, same merge everywhere).
#include "replay/preprocess.hpp"

#include <algorithm>
#include <cstdint>
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

/// Builds the global preorder tree from all flattened trees; returns per-rank local->global maps.
CallTree merge(const std::vector<Flat>& flats, std::vector<std::vector<std::uint32_t>>& maps) {
  CallTree merged;  // creation order
  maps.assign(flats.size(), {});
  for (std::size_t r = 0; r < flats.size(); ++r) {
    const Flat& f = flats[r];
    auto& map = maps[r];
    map.resize(f.size() / 2);
    for (std::size_t i = 0; i < map.size(); ++i) {
      const std::uint32_t parent = f[2 * i];
      const CallpathId gp = parent == CallpathId::kInvalid ? CallpathId{} : CallpathId{map[parent]};
      map[i] = merged.find_or_add(gp, RegionId{f[2 * i + 1]}).value;
    }
  }
  // Renumber in preorder.
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
  std::vector<std::uint32_t> renum(merged.size());
  CallTree result;
  for (std::uint32_t pos = 0; pos < order.size(); ++pos) {
    const auto& node = merged.node(CallpathId{order[pos]});
    renum[order[pos]] = pos;
    const CallpathId parent = node.parent.valid() ? CallpathId{renum[node.parent.value]}
                                                  : CallpathId{};
    result.find_or_add(parent, node.region);
  }
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

CallTree unify_call_trees(const World& world, const CallTree& local, LocalTrace& trace) {
  const Flat mine = flatten(local);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(world.size());
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, world.comm());
  std::vector<int> displs(world.size(), 0);
  for (int r = 1; r < world.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  Flat all(static_cast<std::size_t>(displs.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                 MPI_UINT32_T, world.comm());
  std::vector<Flat> flats(world.size());
  for (int r = 0; r < world.size(); ++r)
    flats[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  std::vector<std::vector<std::uint32_t>> maps;
  CallTree global = merge(flats, maps);
  rewrite(trace, maps[world.rank()], global);
  return global;
}

PartialCut cut_to_common_end(const World& world, LocalTrace& trace) {
  PartialCut cut;
  int incomplete = trace.incomplete ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &incomplete, 1, MPI_INT, MPI_SUM, world.comm());
  cut.incomplete_ranks = incomplete;
  if (incomplete == 0) return cut;
  cut.applied = true;

  // The cut: the earliest last timestamp over all ranks, and whose it is.
  struct {
    double time;
    int rank;
  } mine{trace.size() ? static_cast<double>(trace.time.back()) : 0.0, world.rank()}, first{};
  MPI_Allreduce(&mine, &first, 1, MPI_DOUBLE_INT, MPI_MINLOC, world.comm());
  Ticks last = trace.size() ? trace.time.back() : 0;
  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_UINT64_T, MPI_MIN, world.comm());
  cut.cut_time = last;
  cut.first_to_stop = first.rank;

  const std::size_t keep = trace.time.upper_bound(cut.cut_time);
  std::uint64_t dropped = trace.size() - keep;
  trace.truncate(keep);
  std::vector<EventIdx> open;
  for (EventIdx i = 0; i < keep; ++i) {
    if (trace.kind[i] == EventKind::Enter) open.push_back(i);
    if (trace.kind[i] == EventKind::Leave && !open.empty()) open.pop_back();
  }
  std::uint64_t closed = open.size();
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    trace.push(EventKind::Leave, cut.cut_time, trace.ref[*it]);
  std::uint64_t counts[2] = {dropped, closed};
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
