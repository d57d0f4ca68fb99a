// SPDX-License-Identifier: BSD-3-Clause
// Writes the --overview picture: one self-contained SVG with ranks (or bands of ranks, or for
// hybrid traces threads grouped by rank) down, time across, coloured by the top call paths,
// waiting hatched, the critical path as a line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/output_file.hpp"

namespace cpreplay::io {

struct OverviewSpec {
  int ranks = 0;
  /// Hybrid traces: each rank's thread locations (master first); empty for pure MPI.
  std::vector<int> threads;
  std::size_t bins = 0;             ///< time bins across the plot
  std::vector<std::string> legend;  ///< the top call paths, coloured in this order
  double run_seconds = 0.0;         ///< the time axis: 0 .. run_seconds since the first event
  std::string title;
};

/// Streams the picture band by band, then the critical path point by point; written to a
/// temporary file and renamed by commit(). Throws UsageError naming the file when it cannot
/// be written. MPI: local (rank 0 only).
///
/// Hybrid traces (spec.threads): one row per thread, the ranks' threads in order (master
/// first), when there are at most kMaxRows threads in all (add_thread_row); else one row per
/// rank with its threads added up, or bands of ranks past kMaxRows ranks (add_band), as for
/// pure MPI.
class OverviewSvg {
 public:
  /// More ranks than this are drawn as bands of consecutive ranks.
  static constexpr int kMaxRows = 128;
  /// Ranks per row: 1 up to kMaxRows ranks, then as many as make at most kMaxRows rows.
  static int ranks_per_band(int ranks);
  /// Whether a hybrid trace with these threads per rank gets one row per thread.
  static bool rows_per_thread(const std::vector<int>& threads);

  OverviewSvg(const std::string& path, OverviewSpec spec);

  /// The next row, ranks first..last in rank order: `bins` is [bin][column] summed over those
  /// ranks (all their threads), columns = legend paths, other call paths, waiting; each in
  /// shares of a bin.
  void add_band(int first_rank, int last_rank, const float* bins);
  /// The next row when rows_per_thread: thread `thread` of `rank`, in order; `bins` as above.
  void add_thread_row(int rank, int thread, const float* bins);
  /// The next corner of the critical path: at `seconds` since the first event, on `rank` (and
  /// its thread `thread`, which picks the row when rows are threads).
  void add_path_point(double seconds, int rank, int thread = 0);
  /// Closes the path, draws the axis and legend, and renames the file into place.
  void commit();

 private:
  /// The drawn height of a row (its pitch less a 1 px gap where rows are 8 px or taller).
  double cell_height() const;
  double x_of(double seconds) const;
  double y_of(int rank, int thread) const;  ///< middle of the location's row
  /// One row's group: its data attributes, hover title, label text element, the rows' colour
  /// runs and hatching, and `over` drawn on top; `locations`: how many it adds up.
  void add_row(int row, const std::string& attributes, const std::string& title,
               const std::string& label, const std::string& over, float locations,
               const float* bins);
  void flush_path_column();
  void put_point(double x, double y);

  OutputFile file_;
  OverviewSpec spec_;
  bool thread_rows_ = false;
  std::vector<int> first_row_;  ///< thread rows: each rank's master row
  double last_label_y_ = -1e9;
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
