// SPDX-License-Identifier: BSD-3-Clause
// Rounds of byte records addressed to trace ranks: what the backward replay ships (docs/replay-engine.md §3).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// A growable byte buffer whose append is a bounds check and a memcpy, inlined: records are
/// built field by field, a few bytes at a time (vector<char>::insert took 11 % of the
/// root-cause phase). Keeps its capacity when cleared.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&&) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&&) noexcept = default;

  /// Appends n bytes left for the caller to fill; returns where they start.
  char* extend(std::size_t n) {
    if (n > capacity_ - size_) grow(size_ + n);
    char* at = data_.get() + size_;
    size_ += n;
    return at;
  }
  void append(const void* p, std::size_t n) { std::memcpy(extend(n), p, n); }
  /// Room for n bytes in all, allocated exactly (no doubling).
  void reserve(std::size_t n) {
    if (n > capacity_) grow_exactly(n);
  }
  /// Sets the size to n; bytes beyond the old size are left as they are (not zeroed).
  void resize(std::size_t n) {
    if (n > capacity_) grow(n);
    size_ = n;
  }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  /// Empties the buffer and gives its memory back.
  void release() {
    data_.reset();
    size_ = 0;
    capacity_ = 0;
  }
  void swap(ByteBuffer& o) noexcept {
    data_.swap(o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

 private:
  void grow(std::size_t at_least);
  void grow_exactly(std::size_t n);
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

/// Appends plain values to a byte buffer.
class RecordWriter {
 public:
  explicit RecordWriter(ByteBuffer& out) : out_(out) {}
  template <class T>
  void put(const T& v) {
    out_.append(&v, sizeof(T));
  }
  /// Room for n bytes, to be filled with put_at (one bounds check for a whole record).
  char* extend(std::size_t n) { return out_.extend(n); }
  template <class T>
  static char* put_at(char* at, const T& v) {
    std::memcpy(at, &v, sizeof(T));
    return at + sizeof(T);
  }

 private:
  ByteBuffer& out_;
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
  ByteBuffer& to(Rank source, Rank dest);
  bool outbox_empty() const;
  /// Sends everything posted, receives everything posted to the held ranks (cleared each
  /// round). MPI: collective on world.
  void exchange();
  /// The same, and `flags` (two bits per process) are ORed over all processes into `any`: they
  /// ride at the head of every block, so a round needs no reduction of its own.
  /// MPI: collective on world.
  void exchange(const int flags[2], int any[2]);
  /// Gives back the memory of the last round's blocks (kept for the next round otherwise):
  /// after a round much larger than the ones to come, once its records have been read and
  /// before anything is posted for the next one.
  void release_buffers();
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
  /// A received block (this process's own first, then by source process): in_[offset, ...).
  struct Block {
    std::size_t offset;
    std::size_t bytes;
  };
  /// Every block starts with the sending process's two flags (int each).
  static constexpr std::size_t kPrefix = 2 * sizeof(int);
  /// Ends the open frame of the block to process p (writes its length).
  void close(std::size_t p);
  /// Empties a block to a process, but for the room of its flags.
  static void clear_block(ByteBuffer& out);
  /// Up to this many processes a round is one message per pair, its size found by a matched
  /// probe: one synchronization per round instead of two (docs/replay-engine.md §3). Beyond,
  /// the sizes go first in an all-to-all, whose MPI algorithm scales with the process count,
  /// and only blocks with records follow.
  static constexpr int kProbedUpTo = 32;
  void exchange_probed();
  void exchange_sized(int any[2]);

  const World& world_;
  RankBlocks blocks_;
  Rank first_;  ///< the first held rank
  std::vector<ByteBuffer> out_;  ///< per destination process
  std::vector<std::size_t> open_;       ///< per process: offset of the open frame's head
  std::vector<std::pair<Rank, Rank>> open_pair_;  ///< ...and its source and destination
  ByteBuffer in_;                       ///< this round's received bytes (frames)
  std::vector<MPI_Request> requests_;   ///< a round's sends and receives
  std::vector<MPI_Message> messages_;   ///< per source process: its block, probed
  std::vector<Block> received_;         ///< this round's blocks in in_
  /// Test hook CPREPLAY_TEST_EXCHANGE_SIZED: the sized exchange at every process count.
  bool sized_ = false;
  std::vector<std::vector<Frame>> inbox_;  ///< per held rank: its frames, by source
};

}  // namespace cpreplay::replay
