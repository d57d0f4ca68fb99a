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

TEST(Rounding, AgreesWithLlroundAtEveryExponentsHalvesAndTheirNeighbours) {
  // Where ulp(x) is 1/2, 1/4, ... the sum x + 0.49999999999999994 rounds: the integers, halves
  // and quarters near every power of two, and the five doubles on either side of each.
  for (int e = -60; e < 63; ++e)
    for (std::int64_t k = -40; k <= 40; ++k)
      for (double h : {0.0, 0.25, 0.5, 0.75, 1.5}) {
        const double x = std::floor(std::ldexp(1.0, e)) + static_cast<double>(k) + h;
        for (double dir : {1.0, -1.0}) {
          double y = x;
          for (int j = 0; j < 5; ++j, y = std::nextafter(y, dir * 0x1p70))
            for (double v : {y, -y})
              if (std::fabs(v) < 0x1p63) {
                ASSERT_EQ(round_half_away(v), std::llround(v)) << v;
              }
        }
      }
}

}  // namespace
}  // namespace cpreplay::replay
