// SPDX-License-Identifier: BSD-3-Clause
// Pointer jumping over a list spread over ranks, in rounds of all-to-all exchanges.
#include "replay/pointer_jump.hpp"

#include <climits>
#include <cstring>
#include <utility>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {
namespace detail {

std::vector<std::size_t> offsets(const std::vector<int>& counts) {
  std::vector<std::size_t> at(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r)
    at[r + 1] = at[r] + static_cast<std::size_t>(counts[r]);
  return at;
}

void exchange_counts(const World& world, const std::vector<int>& send_counts,
                     std::vector<int>& recv_counts, int flag, std::vector<int>& flags) {
  const std::size_t p = static_cast<std::size_t>(world.size());
  // The flag rides along with every count: one all-to-all instead of an extra allreduce.
  std::vector<int> out(2 * p), in(2 * p);
  for (std::size_t r = 0; r < p; ++r) {
    out[2 * r] = send_counts[r];
    out[2 * r + 1] = flag;
  }
  MPI_Alltoall(out.data(), 2, MPI_INT, in.data(), 2, MPI_INT, world.comm());
  recv_counts.resize(p);
  flags.resize(p);
  for (std::size_t r = 0; r < p; ++r) {
    recv_counts[r] = in[2 * r];
    flags[r] = in[2 * r + 1];
  }
}

void exchange_records(const World& world, const void* send, const std::vector<int>& send_counts,
                      void* recv, const std::vector<int>& recv_counts, std::size_t record_bytes) {
  // Counts in records, not bytes: MPI's int counts then hold 2^31 records per exchange. The
  // callers keep below that (fewer than 2^31 nodes or queries in all, checked up front), so the
  // check below cannot fire on one rank alone and leave the others waiting.
  const std::vector<std::size_t> out_at = offsets(send_counts);
  const std::vector<std::size_t> in_at = offsets(recv_counts);
  if (out_at.back() > static_cast<std::size_t>(INT_MAX) ||
      in_at.back() > static_cast<std::size_t>(INT_MAX))
    throw ReplayError("backward replay: more than 2^31 records in one exchange");
  std::vector<int> send_displs(send_counts.size()), recv_displs(recv_counts.size());
  for (std::size_t r = 0; r < send_counts.size(); ++r) {
    send_displs[r] = static_cast<int>(out_at[r]);
    recv_displs[r] = static_cast<int>(in_at[r]);
  }
  // Records between co-located ranks never touch MPI: this process's own block is copied.
  const auto me = static_cast<std::size_t>(world.rank());
  if (send_counts[me] > 0)
    std::memcpy(static_cast<char*>(recv) + in_at[me] * record_bytes,
                static_cast<const char*>(send) + out_at[me] * record_bytes,
                static_cast<std::size_t>(send_counts[me]) * record_bytes);
  std::vector<int> mpi_send = send_counts, mpi_recv = recv_counts;
  mpi_send[me] = 0;
  mpi_recv[me] = 0;
  if (world.size() == 1) return;
  MPI_Datatype record;
  MPI_Type_contiguous(static_cast<int>(record_bytes), MPI_BYTE, &record);
  MPI_Type_commit(&record);
  MPI_Alltoallv(send, mpi_send.data(), send_displs.data(), record, recv, mpi_recv.data(),
                recv_displs.data(), record, world.comm());
  MPI_Type_free(&record);
}

}  // namespace detail

namespace {

/// A node asks the node it jumps to for that node's jump; `mark` (kOffList: none) tells the
/// asked node its position when the asker is already ranked.
struct JumpRequest {
  std::uint32_t index;
  std::uint32_t mark;
};

enum : int { kMarks = 1, kCycle = 2 };

/// A NodeRef as an 8-byte record: its rank in the first 4 bytes, its index in the next 4.
std::uint64_t pack(const NodeRef& r) {
  std::uint64_t w = 0;
  std::memcpy(reinterpret_cast<char*>(&w), &r.rank, 4);
  std::memcpy(reinterpret_cast<char*>(&w) + 4, &r.index, 4);
  return w;
}

NodeRef unpack(std::uint64_t w) {
  NodeRef r;
  std::memcpy(&r.rank, reinterpret_cast<const char*>(&w), 4);
  std::memcpy(&r.index, reinterpret_cast<const char*>(&w) + 4, 4);
  return r;
}

}  // namespace

ListRanking rank_list(const World& world, std::vector<NodeRef> next, NodeRef head,
                      const std::function<std::string(std::uint32_t)>& cycle_error) {
  const std::size_t n = next.size();
  const std::size_t p = static_cast<std::size_t>(world.size());
  ListRanking result;
  result.position.assign(n, kOffList);
  if (head.none()) return result;
  if (head.rank == world.rank()) result.position[head.index] = 0;

  std::vector<NodeRef> jump = std::move(next);  // J_k: 2^k steps ahead (none: beyond the end)
  std::vector<int> send_counts(p), recv_counts, flags;
  // Two buffers of 8-byte records, not four: a round's requests go out of `asked` and its
  // replies come back into it; the requests come into `asking` and its answers go out of it,
  // each answer in place of the request it answers (about 1 MB less at the critical path's
  // peak on a 1.4 M-event rank).
  static_assert(sizeof(JumpRequest) == sizeof(std::uint64_t), "8-byte records");
  std::vector<std::uint64_t> asked, asking;
  std::int64_t cycle_at = -1;  // a node this rank saw reached twice
  for (std::uint64_t step = 1;; step *= 2) {
    // Requests of the nodes that still jump somewhere, grouped by the rank they ask.
    std::fill(send_counts.begin(), send_counts.end(), 0);
    bool marks = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (jump[i].none()) continue;
      ++send_counts[jump[i].rank];
      marks |= result.position[i] != kOffList;
    }
    detail::exchange_counts(world, send_counts, recv_counts,
                            (marks ? kMarks : 0) | (cycle_at >= 0 ? kCycle : 0), flags);
    bool any_marks = false;
    int cycle_rank = -1;
    for (std::size_t r = 0; r < p; ++r) {
      any_marks |= (flags[r] & kMarks) != 0;
      if ((flags[r] & kCycle) != 0 && cycle_rank < 0) cycle_rank = static_cast<int>(r);
    }
    if (cycle_rank >= 0) {
      if (cycle_rank == world.rank())
        throw ReplayError(cycle_error(static_cast<std::uint32_t>(cycle_at)));
      throw PeerFailed();
    }
    // Every ranked node has no jump left: the list is shorter than `step`, all of it ranked.
    if (!any_marks) break;
    if (step > (std::uint64_t{1} << 31)) break;  // unreachable: the head would be seen twice
    ++result.rounds;

    std::vector<std::size_t> at = detail::offsets(send_counts);
    asked.resize(at.back());
    for (std::size_t i = 0; i < n; ++i) {
      if (jump[i].none()) continue;
      const std::uint32_t pos = result.position[i];
      const JumpRequest q{jump[i].index,
                          pos == kOffList ? kOffList : static_cast<std::uint32_t>(pos + step)};
      std::memcpy(&asked[at[jump[i].rank]++], &q, sizeof q);
    }
    const std::vector<std::size_t> in_at = detail::offsets(recv_counts);
    asking.resize(in_at.back());
    detail::exchange_records(world, asked.data(), send_counts, asking.data(), recv_counts,
                             sizeof(JumpRequest));
    // Answers use this round's jumps (J_k), so the asker gets J_k o J_k; marks only touch
    // positions, which this round's requests have already read.
    for (std::size_t k = 0; k < asking.size(); ++k) {
      JumpRequest q;
      std::memcpy(&q, &asking[k], sizeof q);
      asking[k] = pack(jump[q.index]);
      if (q.mark == kOffList) continue;
      if (result.position[q.index] != kOffList) {
        if (cycle_at < 0) cycle_at = q.index;
      } else {
        result.position[q.index] = q.mark;
      }
    }
    detail::exchange_records(world, asking.data(), recv_counts, asked.data(), send_counts,
                             sizeof(NodeRef));
    at = detail::offsets(send_counts);
    for (std::size_t i = 0; i < n; ++i)
      if (!jump[i].none()) jump[i] = unpack(asked[at[jump[i].rank]++]);
  }
  return result;
}

}  // namespace cpreplay::replay
