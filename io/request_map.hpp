// SPDX-License-Identifier: BSD-3-Clause
// The non-blocking requests a location has open while its events are read: OTF2's request id
// (any 64-bit value) -> the event that began the request (MpiIsend, MpiIrecvRequest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpreplay/types.hpp"

namespace cpreplay::io {

/// Open addressing with linear probing in one array, deletion by backward shift (no tombstones).
/// A location has a few requests open at a time and opens and closes one per non-blocking
/// message: std::unordered_map allocated and freed a node for each (a third of the reader's
/// instructions for an MpiIsend or MpiIrecvRequest on the bench stencil).
class RequestMap {
 public:
  RequestMap() : slots_(kInitialSlots) {}

  /// The event that began request `id`, or kNoEvent if it is not open.
  EventIdx find(std::uint64_t id) const {
    for (std::size_t i = home(id);; i = (i + 1) & mask()) {
      if (slots_[i].event == kNoEvent) return kNoEvent;
      if (slots_[i].id == id) return slots_[i].event;
    }
  }

  /// Opens request `id`, begun at `event` (never kNoEvent). False, and nothing changed, if it
  /// is open already.
  bool insert(std::uint64_t id, EventIdx event) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = home(id);; i = (i + 1) & mask()) {
      if (slots_[i].event == kNoEvent) {
        slots_[i] = Slot{id, event};
        ++size_;
        return true;
      }
      if (slots_[i].id == id) return false;
    }
  }

  /// Closes request `id`: the event that began it, or kNoEvent if it was not open.
  EventIdx take(std::uint64_t id) {
    std::size_t i = home(id);
    for (;; i = (i + 1) & mask()) {
      if (slots_[i].event == kNoEvent) return kNoEvent;
      if (slots_[i].id == id) break;
    }
    const EventIdx event = slots_[i].event;
    // Later entries of the probe run whose home does not lie after the hole move into it, so
    // that a lookup never stops at a hole before its entry.
    for (std::size_t j = (i + 1) & mask(); slots_[j].event != kNoEvent; j = (j + 1) & mask())
      if (((j - home(slots_[j].id)) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    slots_[i].event = kNoEvent;
    --size_;
    return event;
  }

  /// Requests open.
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kInitialSlots = 16;  // a power of two
  struct Slot {
    std::uint64_t id = 0;
    EventIdx event = kNoEvent;  ///< kNoEvent: the slot is empty
  };
  std::size_t mask() const { return slots_.size() - 1; }
  /// Fibonacci hashing: request ids are often consecutive, and the top bits of the product
  /// spread them over the table.
  std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    ++bits_;
    size_ = 0;
    for (const Slot& s : old)
      if (s.event != kNoEvent) insert(s.id, s.event);
  }

  std::vector<Slot> slots_;
  unsigned bits_ = 4;  // log2 of slots_.size()
  std::size_t size_ = 0;
};

}  // namespace cpreplay::io
