// SPDX-License-Identifier: BSD-3-Clause
// round_half_away gives std::llround's value everywhere the re-timing replay uses it.
#include "replay/rounding.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace cpreplay::replay {
namespace {

TEST(Rounding, AgreesWithLlroundOnEdgesAndAtRandom) {
  const double edges[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
                          -0.49999999999999994, 4503599627370495.5, -4503599627370495.5,
                          4503599627370496.0, 9007199254740993.0, 1e18, -1e18, 123456789.5,
                          std::nextafter(0.5, 1.0), std::nextafter(0.5, 0.0),
                          std::numeric_limits<double>::denorm_min(), 2251799813685247.5,
                          -2251799813685247.5, 0x1p62 - 1024.0, -(0x1p62 - 1024.0), 0x1p62,
                          -0x1p62, 6e18, -6e18, 0x1p63 - 1024.0, -(0x1p63 - 1024.0)};
  for (double x : edges) EXPECT_EQ(round_half_away(x), std::llround(x)) << x;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> small(-1e6, 1e6);
  std::uniform_int_distribution<std::int64_t> ticks(-(std::int64_t{1} << 52),
                                                    std::int64_t{1} << 52);
  std::uniform_real_distribution<double> factor(0.0, 3.0);
  for (int i = 0; i < 1000000; ++i) {
    const double a = small(gen);
    ASSERT_EQ(round_half_away(a), std::llround(a)) << a;
    const double b = static_cast<double>(ticks(gen)) * factor(gen);  // a duration times a factor
    if (std::fabs(b) < 9e18) {
      ASSERT_EQ(round_half_away(b), std::llround(b)) << b;
    }
    const double c = static_cast<double>(ticks(gen) % 1000) + 0.5;  // exact halves
    ASSERT_EQ(round_half_away(c), std::llround(c)) << c;
    // Any magnitude below 2^63.
    const double d = std::ldexp(factor(gen) / 3.0, static_cast<int>(gen() % 64)) *
                     (gen() % 2 == 0 ? 1.0 : -1.0);
    if (std::fabs(d) < 0x1p63) {
      ASSERT_EQ(round_half_away(d), std::llround(d)) << d;
    }
  }
}

}  // namespace
}  // namespace cpreplay::replay
