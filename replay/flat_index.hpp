// SPDX-License-Identifier: BSD-3-Clause
// An open-addressing map from 64-bit keys to 32-bit slots, for the replay's records in flight.
#pragma once

#include <cstdint>
#include <vector>

namespace cpreplay::replay {

/// Finds what is in flight by key (an event, a collective instance) without allocating per
/// insertion, as a node-based map does: the backward replay looks up and replaces thousands of
/// entries per round. Linear probing, deletion by backward shift (no tombstones), load <= 1/2.
class FlatIndex {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  std::uint32_t find(std::uint64_t key) const {
    if (size_ == 0) return kNone;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.used) return kNone;
      if (s.key == key) return s.value;
    }
  }
  bool contains(std::uint64_t key) const { return find(key) != kNone; }

  /// Sets the value of `key`, inserting it if absent.
  void set(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
    slots_[i] = Slot{key, value, 1};
    ++size_;
  }

  /// The value of `key`, inserted as `init` if absent (`inserted` says which). The pointer is
  /// valid until the next insertion.
  std::uint32_t* find_or_insert(std::uint64_t key, std::uint32_t init, bool& inserted) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].key == key) {
        inserted = false;
        return &slots_[i].value;
      }
    slots_[i] = Slot{key, init, 1};
    ++size_;
    inserted = true;
    return &slots_[i].value;
  }

  /// Removes `key` if present.
  void erase(std::uint64_t key) {
    if (size_ == 0) return;
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return;
      if (slots_[i].key == key) break;
    }
    // Backward shift: later entries of the probe run move up if that keeps them reachable.
    for (std::size_t j = i;;) {
      j = (j + 1) & mask_;
      if (!slots_[j].used) break;
      const std::size_t h = home(slots_[j].key);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].used = 0;
    --size_;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Calls f(key, value) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = 0;
    std::uint32_t used = 0;
  };

  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::size_t cap = old.empty() ? 64 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) set(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace cpreplay::replay
