// SPDX-License-Identifier: BSD-3-Clause
// Rounding to whole ticks in the re-timing replay's inner loops.
#pragma once

#include <cstdint>

namespace cpreplay::replay {

/// std::llround (halves away from zero) for |x| < 2^63, without the libm call (on x86-64
/// without SSE4.1 llround is a call; it was 3.6 % of the what-if phase). Exact: the truncation
/// is exact, and so is x minus it (Sterbenz), so the half test sees the true fraction.
inline std::int64_t round_half_away(double x) {
  const auto t = static_cast<std::int64_t>(x);  // truncates toward zero
  const double frac = x - static_cast<double>(t);
  // Without branches: which way a fraction goes is unpredictable, and a mispredicted branch
  // per scaled activity was half of the time spent applying the scenarios' changes.
  return t + static_cast<std::int64_t>(frac >= 0.5) - static_cast<std::int64_t>(frac <= -0.5);
}

}  // namespace cpreplay::replay
