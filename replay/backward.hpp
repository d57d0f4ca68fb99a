// SPDX-License-Identifier: BSD-3-Clause
// Backward replay of critical-path ownership: exactly one rank owns the path at a time and hands
// it to the next owner with one small message per hop; everybody else waits for a token.
#pragma once

#include <cstdint>
#include <functional>

#include "cpreplay/types.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

/// Where ownership goes: the receiving rank interprets `kind`/`comm`/`target`.
struct Token {
  std::uint32_t kind = 0;  ///< meaning is the caller's; kDone ends the walk
  std::uint32_t comm = 0;
  std::uint64_t target = 0;
  static constexpr std::uint32_t kDone = 0xFFFFFFFFu;
};

struct Hop {
  Rank rank = 0;
  Token token;
};

/// Walks ownership backwards. `start` (identical on all ranks) names the first owner and its
/// token. On the owner, `step(token)` records what it owns and returns the next hop, or a hop
/// whose token.kind == Token::kDone to finish. Hops to oneself do not use MPI.
/// Post-INVARIANT: every rank returns after the walk has finished everywhere.
/// MPI: collective on world (point-to-point tokens, then done messages from the last owner).
void walk_ownership(const World& world, const Hop& start,
                    const std::function<Hop(const Token&)>& step);

}  // namespace cpreplay::replay
