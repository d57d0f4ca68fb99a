// SPDX-License-Identifier: BSD-3-Clause
// Rounds of byte records addressed to ranks: what the backward replay ships (docs/replay-engine.md §3).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "replay/world.hpp"

namespace cpreplay::replay {

/// Appends plain values to a byte buffer.
class RecordWriter {
 public:
  explicit RecordWriter(std::vector<char>& out) : out_(out) {}
  template <class T>
  void put(const T& v) {
    const char* bytes = reinterpret_cast<const char*>(&v);
    out_.insert(out_.end(), bytes, bytes + sizeof(T));  // appends without zero-filling first
  }

 private:
  std::vector<char>& out_;
};

/// Reads plain values back in the order they were put.
class RecordReader {
 public:
  RecordReader(const char* data, std::size_t size) : p_(data), end_(data + size) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  bool done() const { return p_ >= end_; }

 private:
  const char* p_;
  const char* end_;
};

/// Records for other ranks, posted during a round and delivered by exchange(). Records to this
/// rank itself never touch MPI. Received records come grouped by source rank in rank order, each
/// source's in posting order, so what a rank sees never depends on timing.
class RecordExchange {
 public:
  explicit RecordExchange(const World& world);
  /// A buffer to append this round's records for `dest` to.
  std::vector<char>& to(int dest) { return out_[dest]; }
  bool outbox_empty() const;
  /// Sends everything posted, receives everything posted to this rank (cleared each round).
  /// MPI: collective on world.
  void exchange();
  /// The same, and `flags` (two bits per rank) are ORed over all ranks into `any`: they ride
  /// with the record counts, so a round needs no reduction of its own.
  /// MPI: collective on world.
  void exchange(const int flags[2], int any[2]);
  /// This round's received bytes from `source`.
  const std::vector<char>& from(int source) const { return in_[source]; }

 private:
  const World& world_;
  std::vector<std::vector<char>> out_;
  std::vector<std::vector<char>> in_;
};

}  // namespace cpreplay::replay
