// SPDX-License-Identifier: BSD-3-Clause
// Handing freed memory back to the system between and inside stages.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <type_traits>

namespace cpreplay::replay {

/// Returns the heap's free pages to the system (glibc: malloc_trim; elsewhere nothing). A stage's
/// transient buffers then do not stay resident under the next stage's tables, and a table moved
/// into a new one does not count twice towards the peak.
void release_free_memory();

/// From here on, blocks of 128 KiB and more in mappings of their own (glibc: a fixed mmap
/// threshold; elsewhere nothing), so that a table freed goes back to the system at once.
/// glibc's default raises the threshold to the largest such block freed so far (up to 32 MiB),
/// which suits the forward replay's matching, whose windows allocate and free the same buffers
/// round after round (the heap reuses them: no fresh pages). But what-if's tables and then the
/// root-cause phase's (100-340 KiB per location or rank) came from the heap, and the holes
/// their transients left stayed resident beside the tables that stay: set at what-if's start,
/// bench/hybrid.sh's peak per process is 0.6-0.8 MB lower, the bench reference trace's time
/// the same; set for the whole run, the forward replay's windows cost 3 % more time there
/// (bench/RESULTS.md, "Session 16").
void map_large_blocks_apart();

/// Memory for one container, from mappings of its own ("slabs", 1 MiB or the request if larger),
/// never from the heap. For containers that grow block by block while short-lived ones come and
/// go (the forward replay's wait states and synchronization points beside the matching's
/// queues): on the heap their blocks end up interleaved, and once the short-lived ones are freed
/// the holes between the blocks that stay are resident, too small for malloc_trim to hand back
/// and for the later stages' tables to use (bench/RESULTS.md, "Session 11"). Here a slab goes
/// back to the system as soon as its last block is freed, and all of them with the arena.
/// Blocks are carved in order and not reused: meant for containers that grow, then shrink or go.
/// The first `heap_bytes` requested come from the heap: a small container (a rank with a few
/// dozen wait states, hundreds of them on one process) then costs no page of its own.
class SlabArena {
 public:
  explicit SlabArena(std::size_t heap_bytes = 0) : heap_left_(heap_bytes) {}
  ~SlabArena();
  SlabArena(const SlabArena&) = delete;
  SlabArena& operator=(const SlabArena&) = delete;

  /// Throws std::bad_alloc.
  void* allocate(std::size_t bytes, std::size_t align);
  void deallocate(void* p, std::size_t bytes) noexcept;
  /// Bytes of the slabs mapped now (for tests).
  std::size_t mapped() const { return mapped_; }

  static constexpr std::size_t kSlabBytes = std::size_t{1} << 20;

 private:
  struct Slab {
    std::size_t size = 0;
    std::size_t used = 0;  ///< bytes carved so far
    std::size_t live = 0;  ///< blocks carved and not yet freed
  };
  std::map<char*, Slab> slabs_;  ///< by start address
  char* current_ = nullptr;      ///< the slab blocks are carved from
  Slab* current_slab_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t heap_left_;  ///< requests still served by the heap
};

/// A container allocator over a SlabArena of its own: every container default-constructed with
/// it gets a fresh arena; copies of a container get another; moves and swaps take it along.
template <class T>
class SlabAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  /// Containers' first 64 KiB come from the heap (see SlabArena).
  static constexpr std::size_t kHeapBytes = std::size_t{64} << 10;

  SlabAllocator() : arena_(std::make_shared<SlabArena>(kHeapBytes)) {}
  // Copies share the arena. No move constructor on purpose: a moved-from container still frees
  // through its allocator, so the arena must stay with it too.
  SlabAllocator(const SlabAllocator& other) noexcept : arena_(other.arena_) {}
  template <class U>
  SlabAllocator(const SlabAllocator<U>& other) noexcept : arena_(other.arena_) {}  // NOLINT
  SlabAllocator& operator=(const SlabAllocator& other) noexcept {
    arena_ = other.arena_;
    return *this;
  }

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(arena_->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { arena_->deallocate(p, n * sizeof(T)); }
  SlabAllocator select_on_container_copy_construction() const { return SlabAllocator(); }

  const SlabArena& arena() const { return *arena_; }

  template <class U>
  bool operator==(const SlabAllocator<U>& o) const noexcept { return arena_ == o.arena_; }
  template <class U>
  bool operator!=(const SlabAllocator<U>& o) const noexcept { return arena_ != o.arena_; }

 private:
  template <class U>
  friend class SlabAllocator;
  std::shared_ptr<SlabArena> arena_;
};

/// A deque whose blocks sit in a SlabArena of its own (see there).
template <class T>
using SlabDeque = std::deque<T, SlabAllocator<T>>;
}  // namespace cpreplay::replay
