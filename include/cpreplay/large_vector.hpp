// SPDX-License-Identifier: BSD-3-Clause
// Vectors for the per-event columns: large ones sit on transparent huge pages.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace cpreplay {

/// Memory for `bytes` bytes. From kLargeBytes on it is its own mapping, aligned to 2 MiB and
/// marked for transparent huge pages (madvise; nothing where the kernel has them off): a column
/// of a million events is then a handful of page faults instead of a thousand, which is most
/// of what filling it costs on virtual machines (bench/RESULTS.md, "Huge pages"). Untouched
/// pages stay unbacked as before, and the tail that does not fill a huge page keeps 4 KiB pages,
/// so the peak memory does not grow. Smaller blocks come from the heap. Throws std::bad_alloc.
void* allocate_large(std::size_t bytes);
/// Frees what allocate_large(bytes) returned (the same `bytes`).
void free_large(void* p, std::size_t bytes) noexcept;
inline constexpr std::size_t kLargeBytes = std::size_t{4} << 20;

template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(allocate_large(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { free_large(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const LargeAllocator<U>&) const noexcept { return false; }
};

/// A std::vector whose buffer, once large, is on huge pages (see allocate_large).
template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace cpreplay
