// SPDX-License-Identifier: BSD-3-Clause
// Streams per-rank output to rank 0 in bounded chunks: byte chunks in any order across ranks
// (each rank's own order kept), or sorted records merged into one global order.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <queue>
#include <string>
#include <type_traits>
#include <vector>

#include "replay/world.hpp"

namespace cpreplay::replay {

/// Fills `chunk` (handed over empty) with this rank's next bytes; returns false after the last.
/// A chunk must stay below 2 GiB (MPI's int counts); callers keep it to about a megabyte.
using ChunkProducer = std::function<bool(std::string& chunk)>;
/// Rank 0 receives every chunk of every rank here, each rank's chunks in their order.
using ChunkConsumer = std::function<void(const char* data, std::size_t bytes)>;

/// Every rank produces its chunks while rank 0 consumes them as they come (rank 0 interleaves
/// its own). Each rank holds at most two chunks at a time (one in flight, one being filled), so
/// the formatting runs on all ranks at once and nothing is gathered whole anywhere. `consume`
/// must not throw (a writer records its failure and reports it afterwards): the other ranks
/// would wait for it forever.
/// MPI: collective on world.
void stream_to_root(const World& world, const ChunkProducer& produce, const ChunkConsumer& consume);

namespace detail {
constexpr int kMergeDataTag = 7502;
constexpr int kMergeRequestTag = 7503;
}  // namespace detail

/// Rank 0 sees the records of all ranks in one order: `emit(record, rank)` is called in order of
/// `less` (ties: lower rank first), each rank's `local` being sorted by `less` already. Records
/// travel in chunks of `chunk` records on request, so rank 0 holds one chunk per rank.
/// MPI: collective on world.
template <class T, class Less, class Emit>
void merge_to_root(const World& world, const std::vector<T>& local, Less less, Emit emit,
                   std::size_t chunk = 1024) {
  static_assert(std::is_trivially_copyable_v<T>, "records travel as bytes");
  const int bytes_per_chunk = static_cast<int>(chunk * sizeof(T));
  if (world.rank() != 0) {
    std::size_t sent = 0;
    while (true) {
      const std::size_t n = std::min(chunk, local.size() - sent);
      MPI_Send(local.data() + sent, static_cast<int>(n * sizeof(T)), MPI_BYTE, 0,
               detail::kMergeDataTag, world.comm());
      sent += n;
      if (n < chunk) return;  // a short chunk is the last one
      MPI_Recv(nullptr, 0, MPI_BYTE, 0, detail::kMergeRequestTag, world.comm(), MPI_STATUS_IGNORE);
    }
  }
  const int ranks = world.size();
  std::vector<std::vector<T>> buf(static_cast<std::size_t>(ranks));
  std::vector<std::size_t> pos(static_cast<std::size_t>(ranks), 0);
  std::vector<char> more(static_cast<std::size_t>(ranks), 0);
  std::size_t own_next = 0;
  auto fetch = [&](int r) {  // the next chunk of rank r into buf[r]
    auto& b = buf[static_cast<std::size_t>(r)];
    if (r == 0) {
      const std::size_t n = std::min(chunk, local.size() - own_next);
      b.assign(local.begin() + static_cast<std::ptrdiff_t>(own_next),
               local.begin() + static_cast<std::ptrdiff_t>(own_next + n));
      own_next += n;
    } else {
      b.resize(chunk);
      MPI_Status status;
      MPI_Recv(b.data(), bytes_per_chunk, MPI_BYTE, r, detail::kMergeDataTag, world.comm(),
               &status);
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      b.resize(static_cast<std::size_t>(got) / sizeof(T));
    }
    pos[static_cast<std::size_t>(r)] = 0;
    more[static_cast<std::size_t>(r)] = b.size() == chunk;
  };
  auto later = [&](int a, int b) {  // heap order: the smallest record on top
    const T& x = buf[static_cast<std::size_t>(a)][pos[static_cast<std::size_t>(a)]];
    const T& y = buf[static_cast<std::size_t>(b)][pos[static_cast<std::size_t>(b)]];
    if (less(y, x)) return true;
    if (less(x, y)) return false;
    return a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> heap(later);
  for (int r = 0; r < ranks; ++r) {
    fetch(r);
    if (!buf[static_cast<std::size_t>(r)].empty()) heap.push(r);
  }
  while (!heap.empty()) {
    const int r = heap.top();
    heap.pop();
    const auto ur = static_cast<std::size_t>(r);
    emit(buf[ur][pos[ur]], r);
    if (++pos[ur] == buf[ur].size()) {
      if (!more[ur]) continue;
      if (r != 0) MPI_Send(nullptr, 0, MPI_BYTE, r, detail::kMergeRequestTag, world.comm());
      fetch(r);
      if (buf[ur].empty()) continue;
    }
    heap.push(r);
  }
}

}  // namespace cpreplay::replay
