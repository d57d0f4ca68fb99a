// SPDX-License-Identifier: BSD-3-Clause
// The summary text's what-if block: its call paths read apart from each other, not from the
// near-critical call paths it does not show.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpreplay/names.hpp"
#include "cpreplay/summary.hpp"
#include "io/summary_writer.hpp"

namespace {

using cpreplay::Summary;
using cpreplay::SummaryWhatIfCallpath;

SummaryWhatIfCallpath what_if_row(const std::string& path, bool gains, double near) {
  SummaryWhatIfCallpath p;
  p.path = path;
  p.has_gains = gains;
  p.near_critical = near;
  return p;
}

// A row with gains differs from a near-critical call path the text leaves out (the fourth of
// those without gains) only far from its callee: the row reads apart from the call paths the
// text shows (its twin, the third other, shown), not from that one.
TEST(SummaryText, WhatIfPaths_ReadApartFromShownOnly) {
  const std::string shown = "prog/main/alpha/solve/exchange_externals/MPI_Send";
  const std::string twin = "prog/main/beta/setup/exchange_externals/MPI_Send";
  const std::string hidden = "prog/main/gamma/solve/exchange_externals/MPI_Send";
  Summary s;
  s.what_if.computed = true;
  s.what_if.runtime = 1.0;
  s.what_if.near_critical_fraction = 0.01;
  s.what_if.callpaths = {what_if_row(shown, true, 0.5), what_if_row("prog/main/a", false, 0.4),
                         what_if_row("prog/main/b", false, 0.3), what_if_row(twin, false, 0.2),
                         what_if_row(hidden, false, 0.1)};
  const std::string text = cpreplay::io::summary_text(s);
  // Alone and beside the hidden path, the row would read differently: the test can tell.
  const std::string with_twin = cpreplay::shorten_callpaths({shown, twin}, 29)[0];
  const std::string with_all = cpreplay::shorten_callpaths({shown, twin, hidden}, 29)[0];
  ASSERT_NE(with_twin, with_all);
  EXPECT_NE(text.find("  " + with_twin), std::string::npos) << text;
  EXPECT_EQ(text.find(with_all), std::string::npos) << text;
  // The hidden path is not named anywhere.
  EXPECT_EQ(text.find("gamma"), std::string::npos) << text;
  EXPECT_NE(text.find("also near-critical: "), std::string::npos) << text;
}

}  // namespace
