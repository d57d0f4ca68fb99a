// SPDX-License-Identifier: BSD-3-Clause
// Windowed MAXLOC reductions of collective begin/end times per communicator.
#include "replay/collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>

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

bool member_of(const Communicator& c, Rank me, int& local) {
  if (c.is_self) {
    local = 0;
    return true;
  }
  for (std::size_t i = 0; i < c.members.size(); ++i)
    if (c.members[i] == me) {
      local = static_cast<int>(i);
      return true;
    }
  return false;
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

CollInstance CollectiveTable::instance(const Definitions& defs, const LocalTrace& trace,
                                      std::uint32_t comm, std::uint32_t k) const {
  const EventIdx end = ends[comm][k];
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

CollectiveTable reduce_collectives(const World& world, const Definitions& defs,
                                   const LocalTrace& trace, std::size_t window,
                                   bool tolerate_missing, const TimingSink& sink) {
  window = std::max<std::size_t>(window, 1);
  const Rank me = world.rank();
  // Times travel as doubles of ticks since the clock's global offset: exact below 2^53 ticks.
  const Ticks base = defs.clock.global_offset;
  auto as_double = [&](Ticks t) { return static_cast<double>(static_cast<std::int64_t>(t - base)); };
  auto as_ticks = [&](double d) { return base + static_cast<Ticks>(static_cast<std::int64_t>(d)); };

  CollectiveTable table;
  const std::uint32_t ncomms = static_cast<std::uint32_t>(defs.comms.size());
  table.init_finalize_comm = ncomms;
  table.ends.resize(ncomms + 1);

  // 1. The local instances in event order, by communicator.
  for (EventIdx e = 0; e < trace.size(); ++e) {
    const EventKind k = trace.kind[e];
    if (k == EventKind::CollEnd) {
      table.ends[trace.coll[trace.ref[e]].comm].push_back(e);
    } else if (k == EventKind::Leave) {
      const MpiClass cls = defs.region(trace.region_of(e)).mpi_class;
      if (cls == MpiClass::Init || cls == MpiClass::Finalize) table.ends[ncomms].push_back(e);
    }
  }

  // 2. Members must agree on the number of instances per communicator.
  std::vector<long long> lo(ncomms + 1), hi(ncomms + 1), glo(ncomms + 1), ghi(ncomms + 1);
  std::vector<int> local_rank(ncomms + 1, -1);
  for (std::uint32_t c = 0; c <= ncomms; ++c) {
    int local = me;
    const bool member = c == ncomms || member_of(defs.comms[c], me, local);
    local_rank[c] = member ? local : -1;
    const long long n = static_cast<long long>(table.ends[c].size());
    lo[c] = member ? n : std::numeric_limits<long long>::max();
    hi[c] = member ? n : -1;
    if (!member && n > 0) lo[c] = -1;  // collectives on a communicator we are not part of
    // One MPI_COMM_SELF definition stands for a different communicator on every rank, so the
    // ranks' counts need not agree (a rank may reduce over MPI_COMM_SELF alone).
    if (c < ncomms && defs.comms[c].is_self) {
      lo[c] = std::numeric_limits<long long>::max();
      hi[c] = -1;
    }
  }
  MPI_Allreduce(lo.data(), glo.data(), ncomms + 1, MPI_LONG_LONG, MPI_MIN, world.comm());
  MPI_Allreduce(hi.data(), ghi.data(), ncomms + 1, MPI_LONG_LONG, MPI_MAX, world.comm());
  for (std::uint32_t c = 0; c <= ncomms; ++c)
    if (tolerate_missing && ghi[c] >= 0 && glo[c] >= 0 && glo[c] != ghi[c]) {
      // --partial: instances that not every member reached are left out.
      auto& list = table.ends[c];
      if (static_cast<long long>(list.size()) > glo[c]) {
        table.dropped += list.size() - static_cast<std::size_t>(glo[c]);
        list.resize(static_cast<std::size_t>(glo[c]));
      }
    } else if (ghi[c] >= 0 && glo[c] != ghi[c]) {
      // Every rank sees the same glo/ghi and takes this branch: name the lowest rank with the
      // fewest instances (a rank that stopped early), or one outside the communicator.
      int mine = lo[c] == glo[c] ? me : world.size();
      int culprit = world.size();
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

  if (!sink) {
    table.timing.resize(ncomms + 1);
    for (std::uint32_t c = 0; c <= ncomms; ++c) table.timing[c].resize(table.ends[c].size());
  }
  // Timings of the current window: handed to the sink, or copied into the table.
  std::vector<CollInstance> win_inst;
  std::vector<CollTiming> win_time;
  auto instance = [&](std::uint32_t c, std::size_t k) {
    return table.instance(defs, trace, c, static_cast<std::uint32_t>(k));
  };
  auto deliver = [&](std::uint32_t c, std::size_t first) {
    if (!sink) {
      std::copy(win_time.begin(), win_time.end(), table.timing[c].begin() + first);
      return;
    }
    win_inst.resize(win_time.size());
    for (std::size_t j = 0; j < win_time.size(); ++j) win_inst[j] = instance(c, first + j);
    sink(win_inst.data(), win_time.data(), win_time.size());
  };

  // 3. Per communicator, windows of instances: one MAXLOC array reduction (stage 1), one for
  //    the partial-overlap earliest end (stage 2), and a scan where the window has scans.
  std::string error;
  MPI_Group world_group;
  MPI_Comm_group(world.comm(), &world_group);
  for (std::uint32_t c = 0; c <= ncomms; ++c) {
    if (local_rank[c] < 0 || table.ends[c].empty()) continue;
    const bool pseudo = c == ncomms;
    const Communicator* comm = pseudo ? nullptr : &defs.comms[c];
    const std::uint32_t size = pseudo ? static_cast<std::uint32_t>(world.size()) : comm->size();
    const auto& list = table.ends[c];
    if (size <= 1) {
      for (std::size_t first = 0; first < list.size(); first += window) {
        const std::size_t n = std::min(window, list.size() - first);
        win_time.assign(n, CollTiming{});
        for (std::size_t j = 0; j < n; ++j) {
          CollTiming& t = win_time[j];
          const CollInstance inst = instance(c, first + j);
          t.comm_size = 1;
          t.latest_begin = t.root_begin = t.latest_sender_begin = t.scan_latest_begin =
              trace.time[inst.begin];
          t.earliest_end = t.syncpoint_earliest_end = trace.time[inst.end];
          t.latest_rank = t.latest_sender = t.root = me;
        }
        deliver(c, first);
      }
      continue;
    }
    MPI_Comm mpi_comm = world.comm();
    bool owned = false;
    if (!pseudo) {
      bool is_world = comm->members.size() == static_cast<std::size_t>(world.size());
      for (std::size_t i = 0; is_world && i < comm->members.size(); ++i)
        is_world = comm->members[i] == static_cast<Rank>(i);
      if (!is_world) {
        MPI_Group group;
        MPI_Group_incl(world_group, static_cast<int>(comm->members.size()), comm->members.data(),
                       &group);
        MPI_Comm_create_group(world.comm(), group, static_cast<int>(c % 32768), &mpi_comm);
        MPI_Group_free(&group);
        owned = true;
      }
    }
    const int my_local = local_rank[c];
    auto world_of = [&](int local) { return pseudo ? local : comm->members[local]; };

    std::vector<DoubleInt> in, out, in2, out2;
    std::vector<double> scan_in, scan_out;
    for (std::size_t first = 0; first < list.size(); first += window) {
      const std::size_t n = std::min(window, list.size() - first);
      in.assign(n * kSlots, DoubleInt{kNone, my_local});
      for (std::size_t j = 0; j < n; ++j) {
        const CollInstance inst = instance(c, first + j);
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
        DoubleInt* s = &in[j * kSlots];
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
      }
      out.resize(in.size());
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE_INT,
                    MPI_MAXLOC, mpi_comm);

      // Stage 2: earliest end among the partial-overlap synchronization points.
      in2.assign(n, DoubleInt{kNone, my_local});
      bool any_scan = false;
      for (std::size_t j = 0; j < n; ++j) {
        const CollInstance inst = instance(c, first + j);
        const DoubleInt* s = &out[j * kSlots];
        if (s[kOp].value != -s[kNegOp].value && error.empty())
          error = defs.anchor_path + ": rank " + std::to_string(me) + ", event " +
                  std::to_string(inst.end) + ": the members of " +
                  (pseudo ? std::string("MPI_COMM_WORLD") : comm->name) +
                  " disagree on which collective operation instance " +
                  std::to_string(inst.index) + " is";
        if (static_cast<int>(s[kOp].value) == static_cast<int>(CollOp::Scan) ||
            static_cast<int>(s[kOp].value) == static_cast<int>(CollOp::Exscan))
          any_scan = true;
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
        if (one_to_n) {
          const bool root = s[kRootBegin].value > kNone && s[kRootBegin].rank == my_local;
          if (!root && received > 0 && s[kRootBegin].value > kNone && b < s[kRootBegin].value)
            in2[j].value = -as_double(trace.time[inst.end]);
        } else if (latest_sender || (received > 0 && has_sender && b < s[kSenderBegin].value)) {
          in2[j].value = -as_double(trace.time[inst.end]);
        }
      }
      out2.resize(n);
      MPI_Allreduce(in2.data(), out2.data(), static_cast<int>(n), MPI_DOUBLE_INT, MPI_MAXLOC,
                    mpi_comm);
      if (any_scan) {
        scan_in.assign(n, kNone);
        for (std::size_t j = 0; j < n; ++j) scan_in[j] = in[j * kSlots + kSenderBegin].value;
        scan_out.resize(n);
        MPI_Scan(scan_in.data(), scan_out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX,
                 mpi_comm);
      }

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
        if (any_scan && scan_out[j] > kNone) {
          t.scan_has_sender = true;
          t.scan_latest_begin = as_ticks(scan_out[j]);
        }
      }
      deliver(c, first);
    }
    if (owned) MPI_Comm_free(&mpi_comm);
  }
  MPI_Group_free(&world_group);
  if (!error.empty()) throw ReplayError(error);
  return table;
}

}  // namespace cpreplay::replay
