// SPDX-License-Identifier: BSD-3-Clause
// Handing freed heap pages back to the system (glibc's malloc_trim).
#include "replay/memory.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace cpreplay::replay {

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace cpreplay::replay
