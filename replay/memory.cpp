// SPDX-License-Identifier: BSD-3-Clause
#include "replay/memory.hpp"

#include <sys/mman.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>

namespace cpreplay::replay {

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

void map_large_blocks_apart() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

namespace {
constexpr std::size_t kPage = 4096;
std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }
}  // namespace

SlabArena::~SlabArena() {
  for (const auto& [base, slab] : slabs_) munmap(base, slab.size);
}

void* SlabArena::allocate(std::size_t bytes, std::size_t align) {
  if (bytes == 0) bytes = 1;
  if (bytes <= heap_left_ && align <= alignof(std::max_align_t)) {
    heap_left_ -= bytes;
    return ::operator new(bytes);
  }
  heap_left_ = 0;  // from here on, slabs (a container that grew past the heap part)
  if (current_slab_ != nullptr) {
    Slab& s = *current_slab_;
    const std::size_t at = round_up(s.used, align);
    if (at <= s.size && bytes <= s.size - at) {
      s.used = at + bytes;
      ++s.live;
      return current_ + at;
    }
  }
  const std::size_t size = bytes > kSlabBytes ? round_up(bytes, kPage) : kSlabBytes;
  void* raw = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  char* base = static_cast<char*>(raw);
  Slab& slab = slabs_[base];
  slab = Slab{size, bytes, 1};
  mapped_ += size;
  // A request that fills a slab of its own leaves the current one to carve on.
  if (size == kSlabBytes || current_ == nullptr) {
    current_ = base;
    current_slab_ = &slab;
  }
  return base;
}

void SlabArena::deallocate(void* p, std::size_t) noexcept {
  if (p == nullptr) return;
  char* c = static_cast<char*>(p);
  auto it = slabs_.upper_bound(c);
  if (it == slabs_.begin() || c >= std::prev(it)->first + std::prev(it)->second.size) {
    ::operator delete(p);  // in no slab: one of the first requests, from the heap
    return;
  }
  --it;
  Slab& s = it->second;
  if (s.live == 0) return;
  if (--s.live > 0) return;
  if (it->first == current_) {
    // The slab blocks are carved from: start it over, its pages handed back.
    madvise(it->first, s.size, MADV_DONTNEED);
    s.used = 0;
    return;
  }
  munmap(it->first, s.size);
  mapped_ -= s.size;
  slabs_.erase(it);
}

}  // namespace cpreplay::replay
