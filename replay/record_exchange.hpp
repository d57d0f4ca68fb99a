// SPDX-License-Identifier: BSD-3-Clause
// Rounds of byte records addressed to trace ranks: what the backward replay ships (docs/replay-engine.md §3).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "cpreplay/shard.hpp"
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

/// Records between trace ranks, posted during a round and delivered by exchange() (docs/
/// replay-engine.md §3). Records are framed by (source rank, destination rank) and grouped by
/// destination process: one block per process per round, whatever the number of ranks it holds;
/// records to a rank of this process never touch MPI. A rank's received records come grouped
/// by source rank in rank order, each source's in posting order, so what a rank sees depends
/// neither on timing nor on the number of processes.
class RecordExchange {
 public:
  RecordExchange(const World& world, const RankBlocks& blocks);
  /// A buffer to append this round's records from held rank `source` to rank `dest` to. The
  /// records appended to it belong to (source, dest) until the next call of to().
  std::vector<char>& to(Rank source, Rank dest);
  bool outbox_empty() const;
  /// Sends everything posted, receives everything posted to the held ranks (cleared each
  /// round). MPI: collective on world.
  void exchange();
  /// The same, and `flags` (two bits per process) are ORed over all processes into `any`: they
  /// ride with the block sizes, so a round needs no reduction of its own.
  /// MPI: collective on world.
  void exchange(const int flags[2], int any[2]);
  /// Calls f(source, data, bytes) for this round's records to held rank `dest`: sources in
  /// rank order, each source's records in posting order (one or more calls per source).
  template <class F>
  void for_each_from(Rank dest, F&& f) const {
    const auto& list = inbox_[static_cast<std::size_t>(dest - first_)];
    for (const Frame& fr : list) f(fr.source, in_.data() + fr.offset, fr.bytes);
  }

 private:
  /// A frame's head on the wire.
  struct Head {
    Rank source;
    Rank dest;
    std::uint32_t bytes;
  };
  /// A received frame: its records are in_[offset, offset + bytes).
  struct Frame {
    Rank source;
    std::size_t offset;
    std::size_t bytes;
  };
  /// Ends the open frame of the block to process p (writes its length).
  void close(std::size_t p);

  const World& world_;
  RankBlocks blocks_;
  Rank first_;  ///< the first held rank
  std::vector<std::vector<char>> out_;  ///< per destination process
  std::vector<std::size_t> open_;       ///< per process: offset of the open frame's head
  std::vector<char> in_;                ///< this round's received bytes (frames)
  std::vector<std::vector<Frame>> inbox_;  ///< per held rank: its frames, by source
};

}  // namespace cpreplay::replay
