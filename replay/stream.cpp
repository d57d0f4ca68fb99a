// SPDX-License-Identifier: BSD-3-Clause
// Chunked streaming of per-rank bytes to rank 0.
#include "replay/stream.hpp"

namespace cpreplay::replay {
namespace {
constexpr int kChunkTag = 7501;  // an empty chunk ends a rank's stream
}

void stream_to_root(const World& world, const ChunkProducer& produce,
                    const ChunkConsumer& consume) {
  if (world.rank() != 0) {
    // Double buffering: the next chunk is formatted while the previous one is on its way.
    std::string buf[2];
    MPI_Request request = MPI_REQUEST_NULL;
    int cur = 0;
    bool more = true;
    while (more) {
      buf[cur].clear();
      more = produce(buf[cur]);
      if (buf[cur].empty()) continue;
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      MPI_Isend(buf[cur].data(), static_cast<int>(buf[cur].size()), MPI_CHAR, 0, kChunkTag,
                world.comm(), &request);
      cur ^= 1;
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_CHAR, 0, kChunkTag, world.comm());
    return;
  }
  int open = world.size() - 1;
  bool own = true;
  std::string mine, theirs;
  auto receive = [&](const MPI_Status& probed) {
    int n = 0;
    MPI_Get_count(&probed, MPI_CHAR, &n);
    if (theirs.size() < static_cast<std::size_t>(n)) theirs.resize(static_cast<std::size_t>(n));
    MPI_Recv(theirs.data(), n, MPI_CHAR, probed.MPI_SOURCE, kChunkTag, world.comm(),
             MPI_STATUS_IGNORE);
    if (n == 0)
      --open;
    else
      consume(theirs.data(), static_cast<std::size_t>(n));
  };
  while (open > 0 || own) {
    MPI_Status status;
    if (own) {
      // Take what has arrived; otherwise format a chunk of our own instead of waiting.
      int flag = 0;
      if (open > 0) MPI_Iprobe(MPI_ANY_SOURCE, kChunkTag, world.comm(), &flag, &status);
      if (flag) {
        receive(status);
        continue;
      }
      mine.clear();
      own = produce(mine);
      if (!mine.empty()) consume(mine.data(), mine.size());
      continue;
    }
    MPI_Probe(MPI_ANY_SOURCE, kChunkTag, world.comm(), &status);
    receive(status);
  }
}

}  // namespace cpreplay::replay
