// SPDX-License-Identifier: BSD-3-Clause
// Handing freed heap pages back to the system between and inside stages.
#pragma once

namespace cpreplay::replay {

/// Returns the heap's free pages to the system (glibc: malloc_trim; elsewhere nothing). A stage's
/// transient buffers then do not stay resident under the next stage's tables, and a table moved
/// into a new one does not count twice towards the peak.
void release_free_memory();

}  // namespace cpreplay::replay
