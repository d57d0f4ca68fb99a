// SPDX-License-Identifier: BSD-3-Clause
// List ranking over processes by pointer jumping: which nodes of a distributed linked list lie on
// the list from a given head, and at which position, in O(log length) rounds of batched exchanges.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cpreplay/types.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// A node of a list spread over processes: index `index` of process `rank`'s node array (a
/// process numbers the nodes of all the trace ranks it holds).
struct NodeRef {
  Rank rank = -1;  ///< the process; -1: no node (the end of the list)
  std::uint32_t index = 0;
  bool none() const { return rank < 0; }
  friend bool operator==(const NodeRef& a, const NodeRef& b) {
    return a.rank == b.rank && (a.rank < 0 || a.index == b.index);
  }
};

/// Position of a node that is not on the list.
inline constexpr std::uint32_t kOffList = 0xFFFFFFFFu;

struct ListRanking {
  /// Per local node: its distance from the head (the head is 0), or kOffList.
  std::vector<std::uint32_t> position;
  std::uint32_t rounds = 0;  ///< doubling rounds that carried marks (the same on every rank)
};

/// Marks the list that starts at `head` (the same on every rank; none(): an empty list). `next`
/// holds the successor of each of this rank's nodes (none(): the list ends there); many nodes may
/// share a successor, only the chain from the head is ranked. Round k doubles the jump of every
/// node (J_{k+1} = J_k o J_k: each node asks the node it jumps to for that node's jump) and every
/// node at position p < 2^k marks its jump target with p + 2^k, so after ceil(log2 L) rounds the
/// L nodes from the head are marked, each with its exact position. Per round: one all-to-all of
/// counts (which also tells every rank whether anybody still marks) and two of records.
/// Memory: `next` becomes the jump table (pass it moved), 4 B (position) per node, plus one
/// round's requests and replies (16 B per node that asks, 16 B per node asked).
/// Precondition: fewer than 2^31 nodes on all ranks together (the caller checks; it keeps every
/// exchange within MPI's int counts and every position within 32 bits).
/// Throws ReplayError (on the rank holding the node, PeerFailed elsewhere) if the chain from the
/// head runs into a cycle: a node is reached at two positions. `cycle_error(index)` is the
/// message, for that node.
/// MPI: collective on world.
ListRanking rank_list(const World& world, std::vector<NodeRef> next, NodeRef head,
                      const std::function<std::string(std::uint32_t)>& cycle_error);

namespace detail {

/// Exchanges per-destination record counts; each rank also contributes `flag`, and gets every
/// rank's flag back (flags[r]). MPI: collective on world.
void exchange_counts(const World& world, const std::vector<int>& send_counts,
                     std::vector<int>& recv_counts, int flag, std::vector<int>& flags);
/// Sends `send` (records of `record_bytes` each, grouped by destination process in rank order,
/// send_counts[d] for process d) and receives recv_counts[s] records from each process s into
/// `recv`, grouped by source in rank order; the block a process addresses to itself is copied
/// in memory. MPI: collective on world.
void exchange_records(const World& world, const void* send, const std::vector<int>& send_counts,
                      void* recv, const std::vector<int>& recv_counts, std::size_t record_bytes);
/// Offsets of each rank's group in a buffer grouped by rank.
std::vector<std::size_t> offsets(const std::vector<int>& counts);

}  // namespace detail

/// One batched request and reply: for i < n, query make(i) goes to rank dest(i), which answers
/// it with answer(source, query) (a Reply); take(i, reply) then runs for every i in order. One
/// all-to-all of counts and two of records, whatever n is. An exception thrown by `answer` on
/// some rank is agreed on (World::agree) before the replies, so every rank stops together.
/// Records are PODs; fewer than 2^31 queries on all ranks together. MPI: collective on world.
template <class Query, class Reply, class Dest, class Make, class Answer, class Take>
void ask_each(const World& world, std::size_t n, Dest&& dest, Make&& make, Answer&& answer,
              Take&& take) {
  const int p = world.size();
  std::vector<int> send_counts(static_cast<std::size_t>(p), 0), recv_counts, flags;
  for (std::size_t i = 0; i < n; ++i) ++send_counts[dest(i)];
  std::vector<std::size_t> at = detail::offsets(send_counts);
  std::vector<Query> out(n);
  for (std::size_t i = 0; i < n; ++i) out[at[dest(i)]++] = make(i);
  detail::exchange_counts(world, send_counts, recv_counts, 0, flags);
  const std::vector<std::size_t> in_at = detail::offsets(recv_counts);
  std::vector<Query> in(in_at.back());
  detail::exchange_records(world, out.data(), send_counts, in.data(), recv_counts, sizeof(Query));
  std::vector<Query>().swap(out);
  std::vector<Reply> answers(in.size());
  world.agree([&] {
    for (int s = 0; s < p; ++s)
      for (std::size_t k = in_at[s]; k < in_at[s + 1]; ++k) answers[k] = answer(Rank{s}, in[k]);
  });
  std::vector<Query>().swap(in);
  std::vector<Reply> replies(n);
  detail::exchange_records(world, answers.data(), recv_counts, replies.data(), send_counts,
                           sizeof(Reply));
  std::vector<Reply>().swap(answers);
  at = detail::offsets(send_counts);
  for (std::size_t i = 0; i < n; ++i) take(i, replies[at[dest(i)]++]);
}

/// One batched one-way exchange: for every i < n with dest(i) >= 0, record make(i) goes to rank
/// dest(i), which hands it to receive(source, record), sources in rank order and each source's
/// records in i order; fewer than 2^31 records on all ranks together. MPI: collective on world.
template <class Record, class Dest, class Make, class Receive>
void send_each(const World& world, std::size_t n, Dest&& dest, Make&& make, Receive&& receive) {
  const int p = world.size();
  std::vector<int> send_counts(static_cast<std::size_t>(p), 0), recv_counts, flags;
  for (std::size_t i = 0; i < n; ++i)
    if (dest(i) >= 0) ++send_counts[dest(i)];
  std::vector<std::size_t> at = detail::offsets(send_counts);
  std::vector<Record> out(at.back());
  for (std::size_t i = 0; i < n; ++i)
    if (dest(i) >= 0) out[at[dest(i)]++] = make(i);
  detail::exchange_counts(world, send_counts, recv_counts, 0, flags);
  const std::vector<std::size_t> in_at = detail::offsets(recv_counts);
  std::vector<Record> in(in_at.back());
  detail::exchange_records(world, out.data(), send_counts, in.data(), recv_counts,
                           sizeof(Record));
  std::vector<Record>().swap(out);
  for (int s = 0; s < p; ++s)
    for (std::size_t k = in_at[s]; k < in_at[s + 1]; ++k) receive(Rank{s}, in[k]);
}

/// send_each in slices of at most `slice_bytes` of records per process at a time, so that the
/// exchange's two buffers stay small however many records there are (one note per matched
/// message: MBs on a long run, at what-if's peak). Records i < n go in slices [0, k), [k, 2k),
/// ...; every process runs as many slices as the one with the most records (one all-reduce
/// agrees on it). Each source's records arrive in i order, but the sources interleave slice by
/// slice: only for receivers that do not depend on the order across sources.
/// MPI: collective on world.
template <class Record, class Dest, class Make, class Receive>
void send_each_sliced(const World& world, std::size_t n, std::size_t slice_bytes, Dest&& dest,
                      Make&& make, Receive&& receive) {
  const std::size_t per = slice_bytes / sizeof(Record) > 0 ? slice_bytes / sizeof(Record) : 1;
  unsigned long long slices = (n + per - 1) / per;
  MPI_Allreduce(MPI_IN_PLACE, &slices, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, world.comm());
  // Each record's destination asked once (send_each asks twice; the callers look it up in
  // their tables per record), kept for a slice at a time.
  std::vector<int> to;
  for (unsigned long long s = 0; s < slices; ++s) {
    const std::size_t lo = std::min<std::size_t>(n, static_cast<std::size_t>(s) * per);
    const std::size_t hi = std::min(n, lo + per);
    to.resize(hi - lo);
    for (std::size_t i = lo; i < hi; ++i) to[i - lo] = dest(i);
    send_each<Record>(
        world, hi - lo, [&](std::size_t i) { return to[i]; },
        [&](std::size_t i) { return make(lo + i); }, receive);
  }
}

}  // namespace cpreplay::replay
