// SPDX-License-Identifier: BSD-3-Clause
// Windowed MAXLOC reductions of collective begin/end times per communicator.
#include "replay/collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {
namespace {

constexpr double kNone = -1e300;  // "not a candidate" in MAX reductions

struct DoubleInt {
  double value;
  int rank;
};

/// Slots of the stage-1 MAXLOC array per instance.
enum Slot : int { kBegin, kNegEnd, kSenderBegin, kRootBegin, kRootSent, kRootRecv, kOp, kNegOp,
                  kSlots };

/// For scans: per held member m (comm-local order) and instance j of the window, the latest
/// sender begin over the members up to m in comm-local order (kNone: none sent).
/// `sender_begin` holds each held member's own, [m][j]. One host: in memory. Hosts that each hold
/// one run of consecutive members (in comm-local order, as `comm` orders them): local prefixes
/// and one MPI_Exscan. Otherwise the scan instances' values are gathered (O(comm size) each).
/// MPI: collective on `comm` (MPI_COMM_NULL: local).
std::vector<double> scan_senders(MPI_Comm comm, bool runs, std::uint32_t size,
                                 const std::vector<int>& locals, std::size_t n,
                                 const std::vector<double>& sender_begin) {
  const std::size_t held = locals.size();
  auto value = [&](std::size_t m, std::size_t j) { return sender_begin[m * n + j]; };
  std::vector<double> result(held * n, kNone);
  if (comm == MPI_COMM_NULL || runs) {
    std::vector<double> prefix(n, kNone);
    if (comm != MPI_COMM_NULL) {
      std::vector<double> total(n, kNone);
      for (std::size_t m = 0; m < held; ++m)
        for (std::size_t j = 0; j < n; ++j) total[j] = std::max(total[j], value(m, j));
      MPI_Exscan(total.data(), prefix.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX, comm);
      int at = 0;
      MPI_Comm_rank(comm, &at);
      if (at == 0) std::fill(prefix.begin(), prefix.end(), kNone);  // undefined there
    }
    for (std::size_t m = 0; m < held; ++m)
      for (std::size_t j = 0; j < n; ++j) {
        prefix[j] = std::max(prefix[j], value(m, j));
        result[m * n + j] = prefix[j];
      }
    return result;
  }
  // Members of several hosts interleave: every host learns every member's value.
  std::vector<double> mine;
  for (std::size_t m = 0; m < held; ++m) {
    mine.push_back(locals[m]);
    for (std::size_t j = 0; j < n; ++j) mine.push_back(value(m, j));
  }
  int hosts = 0;
  MPI_Comm_size(comm, &hosts);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(hosts)), displs(static_cast<std::size_t>(hosts), 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int h = 1; h < hosts; ++h) displs[h] = displs[h - 1] + counts[h - 1];
  std::vector<double> all(static_cast<std::size_t>(displs.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, comm);
  std::vector<double> by_local(static_cast<std::size_t>(size) * n, kNone);
  for (std::size_t at = 0; at + n + 1 <= all.size(); at += n + 1)
    std::copy(all.begin() + static_cast<std::ptrdiff_t>(at + 1),
              all.begin() + static_cast<std::ptrdiff_t>(at + 1 + n),
              by_local.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(all[at]) * n));
  for (std::size_t k = 1; k < size; ++k)
    for (std::size_t j = 0; j < n; ++j)
      by_local[k * n + j] = std::max(by_local[k * n + j], by_local[(k - 1) * n + j]);
  for (std::size_t m = 0; m < held; ++m)
    std::copy(by_local.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(locals[m]) * n),
              by_local.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(locals[m] + 1) * n),
              result.begin() + static_cast<std::ptrdiff_t>(m * n));
  return result;
}

}  // namespace

CollKind kind_of(CollOp op) {
  switch (op) {
    case CollOp::Barrier: return CollKind::Barrier;
    case CollOp::Bcast: case CollOp::Scatter: case CollOp::Scatterv: return CollKind::OneToN;
    case CollOp::Gather: case CollOp::Gatherv: case CollOp::Reduce: return CollKind::NToOne;
    case CollOp::Allgather: case CollOp::Allgatherv: case CollOp::Alltoall:
    case CollOp::Allreduce: case CollOp::ReduceScatter: case CollOp::ReduceScatterBlock:
      return CollKind::NxN;
    case CollOp::Scan: case CollOp::Exscan: return CollKind::Scan;
    default: return CollKind::Unanalyzed;
  }
}

std::ptrdiff_t CollectiveTable::slot(std::uint32_t comm) const {
  const auto it = std::lower_bound(comms.begin(), comms.end(), comm);
  return it != comms.end() && *it == comm ? it - comms.begin() : -1;
}

const std::vector<EventIdx>& CollectiveTable::on(std::uint32_t comm) const {
  static const std::vector<EventIdx> kNone;
  const std::ptrdiff_t s = slot(comm);
  return s < 0 ? kNone : ends[static_cast<std::size_t>(s)];
}

CollInstance CollectiveTable::instance(const Definitions& defs, const LocalTrace& trace,
                                      std::size_t s, std::uint32_t k) const {
  const std::uint32_t comm = comms[s];
  const EventIdx end = ends[s][k];
  if (trace.kind[end] == EventKind::CollEnd) {
    const CollRecord& rec = trace.coll[trace.ref[end]];
    return CollInstance{rec.begin, end, comm, k, kind_of(rec.op)};
  }
  const bool init = defs.region(trace.region_of(end)).mpi_class == MpiClass::Init;
  return CollInstance{trace.enter_of(end), end, comm, k,
                      init ? CollKind::Init : CollKind::Finalize};
}

bool analyzed(const Definitions& defs, const LocalTrace& trace, const CollInstance& inst) {
  if (trace.kind[inst.end] != EventKind::CollEnd) return true;  // MPI_Init/MPI_Finalize
  const std::string& name = defs.region(RegionId{trace.region_of_path[trace.callpath_of(inst.end)]}).name;
  return !(name.size() > 5 && name.compare(0, 5, "MPI_I") == 0);
}

bool clock_condition(const LocalTrace& trace, const CollInstance& inst, const CollTiming& t,
                     Rank me, Rank& src, Ticks& latest) {
  if (t.comm_size <= 1) return false;
  std::uint64_t sent = 0, received = 0;
  if (trace.kind[inst.end] == EventKind::CollEnd) {
    sent = trace.coll_sent(inst.end);
    received = trace.coll_received(inst.end);
  }
  switch (inst.kind) {
    case CollKind::Barrier: case CollKind::Init: case CollKind::Finalize:
      src = t.latest_rank;
      latest = t.latest_begin;
      return true;
    case CollKind::NxN:
      if (sent == 0 && received == 0) return false;
      if (t.earliest_end > t.latest_begin) {
        src = t.latest_rank;
        latest = t.latest_begin;
        return true;
      }
      if (!t.has_sender) return false;
      src = t.latest_sender;
      latest = t.latest_sender_begin;
      return t.latest_sender == me || (received > 0 && trace.time[inst.begin] < latest);
    case CollKind::OneToN:
      src = t.root;
      latest = t.root_begin;
      return t.root_sent > 0;
    case CollKind::NToOne:
      src = t.latest_sender;
      latest = t.latest_sender_begin;
      return t.has_sender && t.root_received > 0 && me == t.root;
    default:
      return false;
  }
}

std::size_t CollectiveTable::size() const {
  std::size_t n = 0;
  for (const auto& list : ends) n += list.size();
  return n;
}

std::vector<CollectiveTable> reduce_collectives(const World& world, const Definitions& defs,
                                                const Shard& shard, std::size_t window,
                                                bool tolerate_missing, const TimingSink& sink) {
  window = std::max<std::size_t>(window, 1);
  const std::size_t held = shard.size();
  // Times travel as doubles of ticks since the clock's global offset: exact below 2^53 ticks.
  const Ticks base = defs.clock.global_offset;
  auto as_double = [&](Ticks t) { return static_cast<double>(static_cast<std::int64_t>(t - base)); };
  auto as_ticks = [&](double d) { return base + static_cast<Ticks>(static_cast<std::int64_t>(d)); };

  const std::uint32_t ncomms = static_cast<std::uint32_t>(defs.comms.size());
  std::vector<CollectiveTable> tables(held);
  // 1. The local instances of each held rank in event order, by communicator (only the
  //    communicators it has instances on).
  {
    std::vector<std::pair<std::uint32_t, EventIdx>> found;  // (communicator, end event)
    for (std::size_t i = 0; i < held; ++i) {
      const LocalTrace& trace = shard.traces[i];
      CollectiveTable& table = tables[i];
      table.init_finalize_comm = ncomms;
      found.clear();
      // Per call path: MPI_Init's or MPI_Finalize's (a byte per call path, not a region lookup
      // per Leave of this pass over every event).
      std::vector<std::uint8_t> init_exit(trace.region_of_path.size(), 0);
      for (std::size_t cp = 0; cp < init_exit.size(); ++cp) {
        const MpiClass cls = defs.region(RegionId{trace.region_of_path[cp]}).mpi_class;
        init_exit[cp] = cls == MpiClass::Init || cls == MpiClass::Finalize ? 1 : 0;
      }
      // Only CollEnds and Leaves matter: the others are passed a byte (two events) at a time.
      const KindColumn::KindSet ends =
          KindColumn::kind_set(1u << static_cast<unsigned>(EventKind::CollEnd) |
                               1u << static_cast<unsigned>(EventKind::Leave));
      for (auto e = static_cast<EventIdx>(trace.kind.next_of(0, ends)); e < trace.size();
           e = static_cast<EventIdx>(trace.kind.next_of(e + std::size_t{1}, ends))) {
        const EventKind k = trace.kind[e];
        if (k == EventKind::CollEnd) {
          found.emplace_back(trace.coll[trace.ref[e]].comm, e);
        } else if (k == EventKind::Leave && init_exit[trace.ref[e]]) {
          found.emplace_back(ncomms, e);
        }
      }
      std::stable_sort(found.begin(), found.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [c, e] : found) {
        if (table.comms.empty() || table.comms.back() != c) {
          table.comms.push_back(c);
          table.ends.emplace_back();
        }
        table.ends.back().push_back(e);
      }
    }
  }
  // The held members of each communicator with their comm-local ranks, in comm-local order,
  // from one pass over the member lists: nothing here grows with ranks x communicators.
  // MPI_COMM_SELF stands for a different communicator on every rank: no members listed.
  std::vector<std::vector<std::pair<std::size_t, int>>> held_members(ncomms + 1);
  for (std::uint32_t c = 0; c < ncomms; ++c) {
    const Communicator& comm = defs.comms[c];
    if (comm.is_self) continue;
    for (std::size_t k = 0; k < comm.members.size(); ++k)
      if (shard.holds(comm.members[k]))
        held_members[c].emplace_back(shard.index(comm.members[k]), static_cast<int>(k));
  }
  for (std::size_t i = 0; i < held; ++i)
    held_members[ncomms].emplace_back(i, shard.first() + static_cast<Rank>(i));
  std::vector<std::vector<std::size_t>> held_sorted(ncomms + 1);  // the same, by held index
  for (std::uint32_t c = 0; c <= ncomms; ++c) {
    for (const auto& [i, local] : held_members[c]) held_sorted[c].push_back(i);
    std::sort(held_sorted[c].begin(), held_sorted[c].end());
  }
  auto is_member = [&](std::size_t i, std::uint32_t c) {
    return std::binary_search(held_sorted[c].begin(), held_sorted[c].end(), i);
  };

  // 2. Members must agree on the number of instances per communicator.
  // lo: fewest instances of a member (-1: a non-member has some); hi: most of a member.
  auto lo_of = [&](std::size_t i, std::uint32_t c) {
    const long long n = static_cast<long long>(tables[i].on(c).size());
    if (c < ncomms && defs.comms[c].is_self) return std::numeric_limits<long long>::max();
    if (!is_member(i, c)) return n > 0 ? -1LL : std::numeric_limits<long long>::max();
    return n;
  };
  std::vector<long long> lo(ncomms + 1, std::numeric_limits<long long>::max()), hi(ncomms + 1, -1),
      glo(ncomms + 1), ghi(ncomms + 1);
  for (std::uint32_t c = 0; c <= ncomms; ++c)
    for (const auto& [i, local] : held_members[c]) {
      const long long n = static_cast<long long>(tables[i].on(c).size());
      lo[c] = std::min(lo[c], n);
      hi[c] = std::max(hi[c], n);
    }
  for (std::size_t i = 0; i < held; ++i)
    for (std::uint32_t c : tables[i].comms)  // collectives on a communicator we are not part of
      if (c < ncomms && !defs.comms[c].is_self && !is_member(i, c)) lo[c] = -1;
  MPI_Allreduce(lo.data(), glo.data(), ncomms + 1, MPI_LONG_LONG, MPI_MIN, world.comm());
  MPI_Allreduce(hi.data(), ghi.data(), ncomms + 1, MPI_LONG_LONG, MPI_MAX, world.comm());
  for (std::uint32_t c = 0; c <= ncomms; ++c)
    if (tolerate_missing && ghi[c] >= 0 && glo[c] >= 0 && glo[c] != ghi[c]) {
      // --partial: instances that not every member reached are left out.
      for (CollectiveTable& table : tables) {
        const std::ptrdiff_t at = table.slot(c);
        if (at < 0) continue;
        auto& list = table.ends[static_cast<std::size_t>(at)];
        if (static_cast<long long>(list.size()) > glo[c]) {
          table.dropped += list.size() - static_cast<std::size_t>(glo[c]);
          list.resize(static_cast<std::size_t>(glo[c]));
        }
      }
    } else if (ghi[c] >= 0 && glo[c] != ghi[c]) {
      // Every process sees the same glo/ghi and takes this branch: name the lowest rank with
      // the fewest instances (a rank that stopped early), or one outside the communicator.
      int mine = defs.ranks();
      for (std::size_t i = 0; i < held && mine == defs.ranks(); ++i)
        if (lo_of(i, c) == glo[c]) mine = shard.first() + static_cast<Rank>(i);
      int culprit = defs.ranks();
      MPI_Allreduce(&mine, &culprit, 1, MPI_INT, MPI_MIN, world.comm());
      const std::string comm = c == ncomms ? std::string("MPI_COMM_WORLD (MPI_Init/MPI_Finalize)")
                                           : "communicator " + defs.comms[c].name;
      const std::string who = "rank " + std::to_string(culprit);
      if (glo[c] < 0)
        throw ReplayError(defs.anchor_path + ": " + who + " recorded collective operations on " +
                          comm + " but is not a member of it");
      throw ReplayError(defs.anchor_path + ": the ranks of " + comm +
                        " recorded different numbers of collective operations (" +
                        std::to_string(glo[c]) + " to " + std::to_string(ghi[c]) + "); " + who +
                        " has only " + std::to_string(glo[c]) +
                        (c == ncomms ? " (no MPI_Finalize: the rank did not finish"
                                     : " (the rank stopped early") +
                        "; --partial analyzes the run up to there)");
    }

  if (!sink)
    for (CollectiveTable& table : tables) {
      table.timing.resize(table.ends.size());
      for (std::size_t k = 0; k < table.ends.size(); ++k)
        table.timing[k].resize(table.ends[k].size());
    }
  // Timings of the current window for one held rank: handed to the sink, or copied into its
  // table.
  std::vector<CollInstance> win_inst;
  std::vector<CollTiming> win_time;
  auto instance = [&](std::size_t i, std::uint32_t c, std::size_t k) {
    return tables[i].instance(defs, shard.traces[i], static_cast<std::size_t>(tables[i].slot(c)),
                              static_cast<std::uint32_t>(k));
  };
  auto deliver = [&](std::size_t i, std::uint32_t c, std::size_t first) {
    if (!sink) {
      std::copy(win_time.begin(), win_time.end(),
                tables[i].timing[static_cast<std::size_t>(tables[i].slot(c))].begin() + first);
      return;
    }
    win_inst.resize(win_time.size());
    for (std::size_t j = 0; j < win_time.size(); ++j) win_inst[j] = instance(i, c, first + j);
    sink(i, win_inst.data(), win_time.data(), win_time.size());
  };

  // 3. Per communicator, windows of instances: one MAXLOC array reduction (stage 1), one for
  //    the partial-overlap earliest end (stage 2), and a scan where the window has scans. Held
  //    members are reduced in memory first; the processes that hold members then reduce over a
  //    communicator of their own (docs/replay-engine.md §4). MAXLOC keeps the larger value and,
  //    on ties, the lower comm-local rank, wherever the members are: the results are exact and
  //    the same for every number of processes.
  std::string error;
  MPI_Group world_group;
  MPI_Comm_group(world.comm(), &world_group);
  std::vector<std::size_t> members;  // held members of c with instances, in comm-local order
  std::vector<int> locals;           // their comm-local ranks
  for (std::uint32_t c = 0; c <= ncomms; ++c) {
    members.clear();
    locals.clear();
    if (c < ncomms && defs.comms[c].is_self) {
      for (std::size_t i = 0; i < held; ++i)
        if (!tables[i].on(c).empty()) {
          members.push_back(i);
          locals.push_back(0);
        }
    } else {
      for (const auto& [i, local] : held_members[c])
        if (!tables[i].on(c).empty()) {
          members.push_back(i);
          locals.push_back(local);
        }
    }
    if (members.empty()) continue;
    const bool pseudo = c == ncomms;
    const Communicator* comm = pseudo ? nullptr : &defs.comms[c];
    const std::uint32_t size =
        pseudo ? static_cast<std::uint32_t>(defs.ranks()) : comm->size();
    const std::size_t count = tables[members[0]].on(c).size();
    if (size <= 1) {
      for (std::size_t i : members) {
        const LocalTrace& trace = shard.traces[i];
        const auto& list = tables[i].on(c);
        for (std::size_t first = 0; first < list.size(); first += window) {
          const std::size_t n = std::min(window, list.size() - first);
          win_time.assign(n, CollTiming{});
          for (std::size_t j = 0; j < n; ++j) {
            CollTiming& t = win_time[j];
            const CollInstance inst = instance(i, c, first + j);
            t.comm_size = 1;
            t.latest_begin = t.root_begin = t.latest_sender_begin = t.scan_latest_begin =
                trace.time[inst.begin];
            t.earliest_end = t.syncpoint_earliest_end = trace.time[inst.end];
            t.latest_rank = t.latest_sender = t.root = trace.rank;
          }
          deliver(i, c, first);
        }
      }
      continue;
    }
    // The processes holding members, in the order of their first member: MPI_Scan over them
    // then follows comm-local order wherever each holds a contiguous run of members.
    std::vector<int> hosts;
    bool runs = true;  // every host's members are contiguous in comm-local order
    {
      int prev = -1;
      std::vector<char> seen(static_cast<std::size_t>(world.size()), 0);
      for (std::uint32_t k = 0; k < size; ++k) {
        const Rank r = pseudo ? static_cast<Rank>(k) : comm->members[k];
        const int p = shard.blocks.owner(r);
        if (p == prev) continue;
        if (seen[static_cast<std::size_t>(p)]) {
          runs = false;
        } else {
          seen[static_cast<std::size_t>(p)] = 1;
          hosts.push_back(p);
        }
        prev = p;
      }
    }
    MPI_Comm mpi_comm = MPI_COMM_NULL;
    bool owned = false;
    if (hosts.size() > 1) {
      bool is_world = hosts.size() == static_cast<std::size_t>(world.size());
      for (std::size_t k = 0; is_world && k < hosts.size(); ++k)
        is_world = hosts[k] == static_cast<int>(k);
      if (is_world) {
        mpi_comm = world.comm();
      } else {
        MPI_Group group;
        MPI_Group_incl(world_group, static_cast<int>(hosts.size()), hosts.data(), &group);
        MPI_Comm_create_group(world.comm(), group, static_cast<int>(c % 32768), &mpi_comm);
        MPI_Group_free(&group);
        owned = true;
      }
    }
    auto world_of = [&](int local) { return pseudo ? local : comm->members[local]; };
    auto maxloc = [](DoubleInt& into, const DoubleInt& v) {
      if (v.value > into.value || (v.value == into.value && v.rank < into.rank)) into = v;
    };

    std::vector<DoubleInt> in, out, in2, out2;
    std::vector<double> scan_in, scan_out;
    std::vector<double> sender_begin;  // [m][j]: for scans
    // Instances per reduction: the window, or fewer where one process holds many ranks (its
    // scan values are kept per held member), and at most kReductionInstances (the MAXLOC
    // arrays, 128 B per instance each way, stay at 256 KiB; with 4,096 they were what-if's
    // peak; the whole reference run took as long either way). The same on every process: all
    // hold at most blocks.count(0) ranks.
    constexpr std::size_t kReductionInstances = 1024;
    const std::size_t per_window = std::min(
        {window, kReductionInstances,
         std::max<std::size_t>(1, (std::size_t{1} << 20) /
                                      static_cast<std::size_t>(shard.blocks.count(0)))});
    for (std::size_t first = 0; first < count; first += per_window) {
      const std::size_t n = std::min(per_window, count - first);
      // Stage 1: this process's members pre-reduced, then all hosts.
      in.assign(n * kSlots, DoubleInt{kNone, std::numeric_limits<int>::max()});
      sender_begin.assign(members.size() * n, kNone);
      for (std::size_t m = 0; m < members.size(); ++m) {
        const std::size_t i = members[m];
        const LocalTrace& trace = shard.traces[i];
        const int my_local = locals[m];
        for (std::size_t j = 0; j < n; ++j) {
          const CollInstance inst = instance(i, c, first + j);
          const double b = as_double(trace.time[inst.begin]);
          const double x = as_double(trace.time[inst.end]);
          std::uint64_t sent = 0, received = 0;
          std::uint32_t root = UINT32_MAX;
          int op = static_cast<int>(inst.kind) + 100;
          if (trace.kind[inst.end] == EventKind::CollEnd) {
            const CollRecord& rec = trace.coll[trace.ref[inst.end]];
            sent = trace.coll_sent(inst.end);
            received = trace.coll_received(inst.end);
            root = rec.root;
            op = static_cast<int>(rec.op);
          }
          DoubleInt s[kSlots];
          for (int k = 0; k < kSlots; ++k) s[k] = DoubleInt{kNone, my_local};
          s[kBegin].value = b;
          s[kNegEnd].value = -x;
          if (sent > 0) s[kSenderBegin].value = b;
          if (root == static_cast<std::uint32_t>(my_local)) {
            s[kRootBegin].value = b;
            s[kRootSent].value = static_cast<double>(sent);
            s[kRootRecv].value = static_cast<double>(received);
          }
          s[kOp].value = op;
          s[kNegOp].value = -op;
          for (int k = 0; k < kSlots; ++k) maxloc(in[j * kSlots + k], s[k]);
          sender_begin[m * n + j] = s[kSenderBegin].value;
        }
      }
      out = in;
      if (mpi_comm != MPI_COMM_NULL)
        MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE_INT,
                      MPI_MAXLOC, mpi_comm);

      // Stage 2: earliest end among the partial-overlap synchronization points.
      in2.assign(n, DoubleInt{kNone, std::numeric_limits<int>::max()});
      bool any_scan = false;
      for (std::size_t j = 0; j < n; ++j) {
        const DoubleInt* s = &out[j * kSlots];
        if (static_cast<int>(s[kOp].value) == static_cast<int>(CollOp::Scan) ||
            static_cast<int>(s[kOp].value) == static_cast<int>(CollOp::Exscan))
          any_scan = true;
      }
      for (std::size_t m = 0; m < members.size(); ++m) {
        const std::size_t i = members[m];
        const LocalTrace& trace = shard.traces[i];
        const int my_local = locals[m];
        for (std::size_t j = 0; j < n; ++j) {
          const CollInstance inst = instance(i, c, first + j);
          const DoubleInt* s = &out[j * kSlots];
          if (s[kOp].value != -s[kNegOp].value && error.empty())
            error = defs.anchor_path + ": rank " + std::to_string(trace.rank) + ", event " +
                    std::to_string(inst.end) + ": the members of " +
                    (pseudo ? std::string("MPI_COMM_WORLD") : comm->name) +
                    " disagree on which collective operation instance " +
                    std::to_string(inst.index) + " is";
          std::uint64_t received = 0;
          if (trace.kind[inst.end] == EventKind::CollEnd)
            received = trace.coll_received(inst.end);
          const double b = as_double(trace.time[inst.begin]);
          const bool has_sender = s[kSenderBegin].value > kNone;
          const bool latest_sender = has_sender && s[kSenderBegin].rank == my_local;
          // 1-to-N: the waiters (they received, and began before the root); their earliest end
          // is the instance's E, and whether there is any tells the root it synchronized.
          const bool one_to_n = kind_of(static_cast<CollOp>(static_cast<int>(s[kOp].value))) ==
                                CollKind::OneToN;
          DoubleInt v{kNone, my_local};
          if (one_to_n) {
            const bool root = s[kRootBegin].value > kNone && s[kRootBegin].rank == my_local;
            if (!root && received > 0 && s[kRootBegin].value > kNone && b < s[kRootBegin].value)
              v.value = -as_double(trace.time[inst.end]);
          } else if (latest_sender || (received > 0 && has_sender && b < s[kSenderBegin].value)) {
            v.value = -as_double(trace.time[inst.end]);
          }
          maxloc(in2[j], v);
        }
      }
      out2 = in2;
      if (mpi_comm != MPI_COMM_NULL)
        MPI_Allreduce(in2.data(), out2.data(), static_cast<int>(n), MPI_DOUBLE_INT, MPI_MAXLOC,
                      mpi_comm);
      // Scans: each member needs the latest sender begin over the members up to itself in
      // comm-local order (member_scan[m][j]).
      std::vector<double> member_scan;
      if (any_scan)
        member_scan = scan_senders(mpi_comm, runs, size, locals, n, sender_begin);

      for (std::size_t m = 0; m < members.size(); ++m) {
        win_time.assign(n, CollTiming{});
        for (std::size_t j = 0; j < n; ++j) {
          const DoubleInt* s = &out[j * kSlots];
          CollTiming& t = win_time[j];
          t.comm_size = size;
          t.latest_begin = as_ticks(s[kBegin].value);
          t.latest_rank = world_of(s[kBegin].rank);
          t.earliest_end = as_ticks(-s[kNegEnd].value);
          t.has_sender = s[kSenderBegin].value > kNone;
          if (t.has_sender) {
            t.latest_sender_begin = as_ticks(s[kSenderBegin].value);
            t.latest_sender = world_of(s[kSenderBegin].rank);
          }
          if (s[kRootBegin].value > kNone) {
            t.root_begin = as_ticks(s[kRootBegin].value);
            t.root = world_of(s[kRootBegin].rank);
            t.root_sent = static_cast<std::uint64_t>(s[kRootSent].value);
            t.root_received = static_cast<std::uint64_t>(s[kRootRecv].value);
          }
          if (out2[j].value > kNone) {
            t.syncpoint_earliest_end = as_ticks(-out2[j].value);
            t.has_syncpoints = true;
          }
          if (any_scan && member_scan[m * n + j] > kNone) {
            t.scan_has_sender = true;
            t.scan_latest_begin = as_ticks(member_scan[m * n + j]);
          }
        }
        deliver(members[m], c, first);
      }
    }
    if (owned) MPI_Comm_free(&mpi_comm);
  }
  MPI_Group_free(&world_group);
  if (!error.empty()) throw ReplayError(error);
  return tables;
}

}  // namespace cpreplay::replay
