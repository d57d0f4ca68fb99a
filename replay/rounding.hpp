// SPDX-License-Identifier: BSD-3-Clause
// Rounding to whole ticks in the re-timing replay's inner loops.
#pragma once

#include <cmath>
#include <cstdint>

namespace cpreplay::replay {

/// std::llround (halves away from zero) for |x| < 2^63, without the libm call (on x86-64
/// without SSE4.1 llround is a call; it was 3.6 % of the what-if phase): x plus the largest
/// double below one half, with x's sign, truncated. Exact for every double: the sum rounds up
/// to the next integer exactly when x's fraction is at least one half (a fraction just below
/// it stays below the integer, also where ulp(x) is 1/2 or 1/4). One add and one conversion,
/// without flags or branches: which way a fraction goes is unpredictable, and this rounding
/// of each scaled activity is a fifth of the forward replay's work (tests/unit: against
/// std::llround at every exponent's halves and their neighbours). Needs -ffp-contract=off
/// where the caller multiplies (a fused x = a * b + 0.49... would skip the product's rounding).
inline std::int64_t round_half_away(double x) {
  return static_cast<std::int64_t>(x + std::copysign(0.49999999999999994, x));
}

}  // namespace cpreplay::replay
