// SPDX-License-Identifier: BSD-3-Clause
// Large column buffers on transparent huge pages.
#include "cpreplay/large_vector.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace cpreplay {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;

std::size_t mapped_length(std::size_t bytes) { return (bytes + kPage - 1) & ~(kPage - 1); }

}  // namespace

void* allocate_large(std::size_t bytes) {
  if (bytes < kLargeBytes) return ::operator new(bytes);
  const std::size_t length = mapped_length(bytes);
  // Over-map by one huge page, then cut the mapping down to a 2 MiB-aligned start: the kernel
  // backs only aligned 2 MiB ranges with huge pages.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(std::uintptr_t{kHugePage} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + length + kHugePage;
  if (end > aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(p, length, MADV_HUGEPAGE);  // advice only: without huge pages it is a no-op
#endif
  return p;
}

void free_large(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kLargeBytes) {
    ::operator delete(p);
    return;
  }
  munmap(p, mapped_length(bytes));
}

}  // namespace cpreplay
