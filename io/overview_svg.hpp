// SPDX-License-Identifier: BSD-3-Clause
// Writes the --overview picture: one self-contained SVG with ranks (or bands of ranks) down,
// time across, coloured by the top call paths, waiting hatched, the critical path as a line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/output_file.hpp"

namespace cpreplay::io {

struct OverviewSpec {
  int ranks = 0;
  std::size_t bins = 0;             ///< time bins across the plot
  std::vector<std::string> legend;  ///< the top call paths, coloured in this order
  double run_seconds = 0.0;         ///< the time axis: 0 .. run_seconds since the first event
  std::string title;
};

/// Streams the picture band by band, then the critical path point by point; written to a
/// temporary file and renamed by commit(). Throws UsageError naming the file when it cannot
/// be written. MPI: local (rank 0 only).
class OverviewSvg {
 public:
  /// More ranks than this are drawn as bands of consecutive ranks.
  static constexpr int kMaxRows = 128;
  /// Ranks per row: 1 up to kMaxRows ranks, then as many as make at most kMaxRows rows.
  static int ranks_per_band(int ranks);

  OverviewSvg(const std::string& path, OverviewSpec spec);

  /// The next row, ranks first..last in rank order: `bins` is [bin][column] summed over those
  /// ranks, columns = legend paths, other call paths, waiting; each in shares of a bin.
  void add_band(int first_rank, int last_rank, const float* bins);
  /// The next corner of the critical path: at `seconds` since the first event, on `rank`.
  void add_path_point(double seconds, int rank);
  /// Closes the path, draws the axis and legend, and renames the file into place.
  void commit();

 private:
  double x_of(double seconds) const;
  double y_of(int rank) const;  ///< middle of the rank's row
  void flush_path_column();
  void put_point(double x, double y);

  OutputFile file_;
  OverviewSpec spec_;
  int per_band_ = 1;
  int rows_ = 0;
  double row_height_ = 0.0;
  double plot_top_ = 0.0;
  int next_rank_ = 0;
  std::string buf_;
  // Critical path: corners sharing one tenth of a pixel collapse to first, lowest, highest, last.
  bool path_started_ = false;
  long long column_ = 0;
  double first_y_ = 0.0, low_y_ = 0.0, high_y_ = 0.0, last_y_ = 0.0;
  bool have_column_ = false;
  std::size_t path_points_ = 0;
};

}  // namespace cpreplay::io
