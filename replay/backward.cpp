// SPDX-License-Identifier: BSD-3-Clause
// Token passing for the critical-path walk.
#include "replay/backward.hpp"

namespace cpreplay::replay {
namespace {
constexpr int kTokenTag = 7301;
}

void walk_ownership(const World& world, const Hop& start,
                    const std::function<Hop(const Token&)>& step) {
  Token token = start.token;
  bool own = start.rank == world.rank();
  while (true) {
    if (!own) {
      std::uint64_t buf[2];
      MPI_Recv(buf, 2, MPI_UINT64_T, MPI_ANY_SOURCE, kTokenTag, world.comm(), MPI_STATUS_IGNORE);
      token.kind = static_cast<std::uint32_t>(buf[0] >> 32);
      token.comm = static_cast<std::uint32_t>(buf[0]);
      token.target = buf[1];
      if (token.kind == Token::kDone) return;
    }
    Hop next = step(token);
    if (next.token.kind == Token::kDone) {
      std::uint64_t buf[2] = {static_cast<std::uint64_t>(Token::kDone) << 32, 0};
      for (int r = 0; r < world.size(); ++r)
        if (r != world.rank()) MPI_Send(buf, 2, MPI_UINT64_T, r, kTokenTag, world.comm());
      return;
    }
    if (next.rank == world.rank()) {
      token = next.token;
      own = true;
      continue;
    }
    std::uint64_t buf[2] = {(static_cast<std::uint64_t>(next.token.kind) << 32) | next.token.comm,
                            next.token.target};
    MPI_Send(buf, 2, MPI_UINT64_T, next.rank, kTokenTag, world.comm());
    own = false;
  }
}

}  // namespace cpreplay::replay
