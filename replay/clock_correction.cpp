// SPDX-License-Identifier: BSD-3-Clause
// Constant-offset clock correction by a difference-constraint system (Bellman-Ford).
#include "replay/clock_correction.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

namespace cpreplay::replay {
namespace {

struct Edge {
  std::int64_t src;     ///< the rank whose event must come first
  std::int64_t weight;  ///< t_dst - t_src in ticks: o_src - o_dst <= weight
};

std::int64_t diff(Ticks later, Ticks earlier) {
  return static_cast<std::int64_t>(later - earlier);
}

/// The begin this rank's end of a collective instance must not precede, and whose it is:
/// exactly where the wait-state pass counts a collective clock violation, so a trace without
/// violations gets no constraint from its collectives.
bool must_follow(const Definitions& defs, const LocalTrace& trace, const CollInstance& inst,
                 const CollTiming& t, Rank me, Rank& src, Ticks& begin) {
  return analyzed(defs, trace, inst) && clock_condition(trace, inst, t, me, src, begin);
}

}  // namespace

ClockCorrection correct_clocks(const World& world, const Definitions& defs, Shard& shard,
                               const std::vector<MessageTable>& messages,
                               const std::vector<CollectiveTable>& collectives) {
  // Per held rank, the tightest constraint per source rank (the destination is that rank), as
  // (src, dst, weight) triples in rank order.
  std::vector<std::int64_t> mine;
  for (std::size_t i = 0; i < shard.size(); ++i) {
    const LocalTrace& trace = shard.traces[i];
    const Rank me = trace.rank;
    std::map<std::int64_t, std::int64_t> tightest;
    auto add = [&](Rank src, Ticks src_time, Ticks my_time) {
      if (src == me) return;
      const std::int64_t w = diff(my_time, src_time);
      auto [it, fresh] = tightest.emplace(src, w);
      if (!fresh) it->second = std::min(it->second, w);
    };
    const MessageTable& m = messages[i];
    for (std::size_t k = 0; k < m.recv_events.size(); ++k)
      add(peer_rank(defs, trace, m.recv_events[k]), m.sends[k].time, trace.time[m.recv_events[k]]);
    const CollectiveTable& coll = collectives[i];
    for (std::size_t c = 0; c < coll.ends.size(); ++c)
      for (std::uint32_t k = 0; k < coll.ends[c].size(); ++k) {
        Rank src = 0;
        Ticks begin = 0;
        if (must_follow(defs, trace, coll.instance(defs, trace, c, k), coll.timing[c][k], me, src,
                        begin))
          add(src, begin, trace.time[coll.ends[c][k]]);
      }
    for (const auto& [src, w] : tightest) {
      mine.push_back(src);
      mine.push_back(me);
      mine.push_back(w);
    }
  }

  // Gather the triples on process 0, in rank order (processes hold consecutive ranks).
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(world.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.comm());
  std::vector<int> displs(world.size(), 0);
  int total = 0;
  for (int r = 0; r < world.size(); ++r) {
    displs[r] = total;
    total += world.rank() == 0 ? counts[r] : 0;
  }
  std::vector<std::int64_t> all(world.rank() == 0 ? total : 0);
  MPI_Gatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
              MPI_INT64_T, 0, world.comm());

  // Bellman-Ford with a virtual source (all offsets <= 0): o_src <= o_dst + weight.
  const int ranks = defs.ranks();
  std::vector<std::int64_t> offset(ranks, 0);
  std::int64_t consistent = 1;
  if (world.rank() == 0) {
    bool changed = true;
    for (int pass = 0; pass <= ranks && changed; ++pass) {
      changed = false;
      for (std::size_t k = 0; k + 2 < all.size(); k += 3) {
        const std::int64_t src = all[k], dst = all[k + 1], w = all[k + 2];
        if (offset[dst] + w < offset[src]) {
          offset[src] = offset[dst] + w;
          changed = true;
        }
      }
      if (changed && pass == ranks) consistent = 0;
    }
    if (!consistent) std::fill(offset.begin(), offset.end(), 0);
  }
  offset.push_back(consistent);
  MPI_Bcast(offset.data(), static_cast<int>(offset.size()), MPI_INT64_T, 0, world.comm());

  ClockCorrection result;
  result.consistent = offset.back() != 0;
  std::uint64_t moved = 0;
  for (LocalTrace& trace : shard.traces) {
    trace.time.shift_all(offset[trace.rank]);
    if (offset[trace.rank] != 0) moved += trace.size();
  }
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  result.moved_events = moved;
  std::int64_t most = 0;
  for (int r = 0; r < ranks; ++r) {
    most = std::max(most, -offset[r]);
    if (offset[r] != 0) ++result.moved_ranks;
  }
  result.max_shift = static_cast<double>(most) / static_cast<double>(defs.clock.ticks_per_second);
  return result;
}

std::uint64_t forward_jumps(const World& world, const Definitions& defs, Shard& shard,
                            const std::vector<MessageTable>& messages,
                            const std::vector<CollectiveTable>& collectives, double& max_jump) {
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < shard.size(); ++i) {
    LocalTrace& trace = shard.traces[i];
    const MessageTable& m = messages[i];
    const CollectiveTable& coll = collectives[i];
    // The earliest time each constrained event may have.
    std::vector<std::pair<EventIdx, Ticks>> floor;
    for (std::size_t k = 0; k < m.recv_events.size(); ++k)
      if (const Ticks sent = m.sends[k].time; sent > trace.time[m.recv_events[k]])
        floor.push_back({m.recv_events[k], sent});  // RemoteSend is packed: pair takes references
    for (std::size_t c = 0; c < coll.ends.size(); ++c)
      for (std::uint32_t k = 0; k < coll.ends[c].size(); ++k) {
        const CollInstance inst = coll.instance(defs, trace, c, k);
        Rank src = 0;
        Ticks begin = 0;
        if (must_follow(defs, trace, inst, coll.timing[c][k], trace.rank, src, begin) &&
            begin > trace.time[inst.end])
          floor.push_back({inst.end, begin});
      }
    std::sort(floor.begin(), floor.end());
    Ticks shift = 0;
    std::size_t k = 0;
    for (EventIdx e = 0; e < trace.size(); ++e) {
      for (; k < floor.size() && floor[k].first == e; ++k)
        if (floor[k].second > trace.time[e] + shift) shift = floor[k].second - trace.time[e];
      if (shift > 0) {
        trace.time.set(e, trace.time[e] + shift);
        ++moved;
      }
    }
    max_jump = std::max(max_jump, static_cast<double>(shift) /
                                      static_cast<double>(defs.clock.ticks_per_second));
  }
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  return moved;
}

std::vector<Ticks> master_times(const LocalTrace& master) {
  std::vector<Ticks> out(master.size());
  for (EventIdx e = 0; e < master.size(); ++e) out[e] = master.time[e];
  return out;
}

std::uint64_t shift_threads_with_master(const std::vector<Ticks>& master_before,
                                        const LocalTrace& master,
                                        std::vector<LocalTrace>& workers) {
  std::uint64_t moved = 0;
  if (master_before.empty()) return 0;
  for (LocalTrace& w : workers) {
    // Both walk forward in time: the master's latest event at or before each worker event.
    std::size_t m = 0;
    for (EventIdx e = 0; e < w.size(); ++e) {
      const Ticks t = w.time[e];
      while (m + 1 < master_before.size() && master_before[m + 1] <= t) ++m;
      const auto shift = static_cast<std::int64_t>(master.time[static_cast<EventIdx>(m)] -
                                                   master_before[m]);
      if (shift == 0) continue;
      w.time.set(e, static_cast<Ticks>(static_cast<std::int64_t>(t) + shift));
      ++moved;
    }
  }
  return moved;
}

}  // namespace cpreplay::replay
