// SPDX-License-Identifier: BSD-3-Clause
// The --overview SVG: plain shapes and one hatch pattern, no scripts, no external references.
#include "io/overview_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/xml.hpp"

namespace cpreplay::io {
namespace {

constexpr double kPlotX = 130.0;  // left of the plot: room for the rank labels
constexpr double kPlotW = 1000.0;
constexpr double kPlotTop = 56.0;
constexpr double kRowsHeight = 640.0;  // rows share this, within the bounds below
constexpr double kMinRow = 4.0;
constexpr double kMaxRow = 48.0;
constexpr double kWidth = kPlotX + kPlotW + 30.0;
constexpr double kLegendLine = 18.0;
/// Segment edges within a row are rounded to this many px (fewer rectangles, no visible loss).
constexpr double kStep = 0.25;

// Tableau 10: distinct for the common forms of colour blindness; grey is "other".
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf"};
constexpr const char* kOther = "#bab0ac";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string seconds(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char* colour(std::size_t k, std::size_t top) {
  return k < top ? kPalette[k % (sizeof kPalette / sizeof kPalette[0])] : kOther;
}

/// Seconds for the axis in a readable unit.
std::string time_label(double seconds, double step) {
  char buf[48];
  if (step >= 1.0)
    std::snprintf(buf, sizeof buf, "%g s", seconds);
  else if (step >= 1e-3)
    std::snprintf(buf, sizeof buf, "%g ms", std::round(seconds * 1e6) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%g \xc2\xb5s", std::round(seconds * 1e9) / 1e3);
  return buf;
}

}  // namespace

int OverviewSvg::ranks_per_band(int ranks) {
  return ranks <= kMaxRows ? 1 : (ranks + kMaxRows - 1) / kMaxRows;
}

bool OverviewSvg::rows_per_thread(const std::vector<int>& threads) {
  long long locations = 0;
  for (int t : threads) locations += t;
  return !threads.empty() && locations <= kMaxRows;
}

OverviewSvg::OverviewSvg(const std::string& path, OverviewSpec spec)
    : file_(path, "overview"), spec_(std::move(spec)) {
  thread_rows_ = rows_per_thread(spec_.threads);
  long long locations = 0;
  for (int t : spec_.threads) locations += t;
  if (thread_rows_) {
    first_row_.assign(spec_.threads.size() + 1, 0);
    for (std::size_t r = 0; r < spec_.threads.size(); ++r)
      first_row_[r + 1] = first_row_[r] + spec_.threads[r];
    rows_ = std::max(first_row_.back(), 1);
  } else {
    per_band_ = ranks_per_band(std::max(spec_.ranks, 1));
    rows_ = (std::max(spec_.ranks, 1) + per_band_ - 1) / per_band_;
  }
  row_height_ = std::clamp(std::floor(kRowsHeight / rows_), kMinRow, kMaxRow);
  plot_top_ = kPlotTop;
  const double plot_bottom = plot_top_ + rows_ * row_height_;
  const std::size_t legend_lines = spec_.legend.size() + 3;  // other, waiting, critical path
  const double height = plot_bottom + 44.0 + legend_lines * kLegendLine + 10.0;
  std::string& o = buf_;
  o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
       "\" font-family=\"sans-serif\" font-size=\"12\" data-ranks=\"" +
       std::to_string(spec_.ranks) + "\" data-ranks-per-row=\"" + std::to_string(per_band_) +
       (spec_.threads.empty() ? std::string()
                              : "\" data-threads=\"" + std::to_string(locations) +
                                    "\" data-rows=\"" + (thread_rows_ ? "thread" : "rank")) +
       "\" data-run-seconds=\"" + seconds(spec_.run_seconds) + "\" data-cell-height=\"" +
       num(cell_height()) + "\">\n";
  o += "<title>" + xml_escape(spec_.title) + "</title>\n";
  o += "<defs><pattern id=\"waiting\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" "
       "fill-opacity=\"0.3\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000000\" "
       "stroke-width=\"2.5\" stroke-opacity=\"0.7\"/></pattern></defs>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"" + num(kPlotX) + "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" +
       xml_escape(spec_.title) + "</text>\n";
  std::string rows_text =
      per_band_ == 1 ? "one row per rank"
                     : "one band per " + std::to_string(per_band_) + " ranks (added up)";
  if (thread_rows_)
    rows_text = "one row per thread, grouped by rank (master thread first; blank: idle)";
  else if (!spec_.threads.empty())
    rows_text = per_band_ == 1 ? "one row per rank, its threads together"
                               : "one band per " + std::to_string(per_band_) +
                                     " ranks, their threads together";
  o += "<text x=\"" + num(kPlotX) + "\" y=\"42\" fill=\"#555555\">" + rows_text +
       "; each call path as much of the row's height as its share of the time; hatched: "
       "waiting; black line: the critical path</text>\n";
  o += "<rect class=\"plot-area\" x=\"" + num(kPlotX) + "\" y=\"" + num(plot_top_) + "\" width=\"" +
       num(kPlotW) + "\" height=\"" + num(rows_ * row_height_) +
       "\" fill=\"#f6f6f6\" stroke=\"#999999\"/>\n<g class=\"rows\">\n";
  file_.write(o);
  o.clear();
}

double OverviewSvg::cell_height() const {
  return std::max(1.0, row_height_ - (row_height_ >= 8 ? 1.0 : 0.0));
}

double OverviewSvg::x_of(double seconds) const {
  return kPlotX + (spec_.run_seconds > 0.0 ? seconds / spec_.run_seconds * kPlotW : 0.0);
}

double OverviewSvg::y_of(int rank, int thread) const {
  if (thread_rows_) {
    const std::size_t r = std::min(static_cast<std::size_t>(std::max(rank, 0)),
                                   first_row_.size() - 1);
    return plot_top_ + (first_row_[r] + thread + 0.5) * row_height_;
  }
  return plot_top_ + (rank / per_band_ + 0.5) * row_height_;
}

void OverviewSvg::add_band(int first_rank, int last_rank, const float* bins) {
  const int row = first_rank / per_band_;
  float locations = static_cast<float>(last_rank - first_rank + 1);
  std::string attributes = "data-first-rank=\"" + std::to_string(first_rank) +
                           "\" data-last-rank=\"" + std::to_string(last_rank) + "\"";
  if (!spec_.threads.empty()) {
    // Shares are of all the band's threads: a rank whose workers idle is partly blank.
    int threads = 0;
    for (int r = first_rank; r <= last_rank; ++r)
      threads += spec_.threads[static_cast<std::size_t>(r)];
    locations = static_cast<float>(threads);
    attributes += " data-threads=\"" + std::to_string(threads) + "\"";
  }
  const std::string title = first_rank == last_rank ? "rank " + std::to_string(first_rank)
                                                    : "ranks " + std::to_string(first_rank) + "-" +
                                                          std::to_string(last_rank);
  // Rank labels at least 13 px apart.
  const int label_every = std::max(1, static_cast<int>(std::ceil(13.0 / row_height_)));
  std::string label;
  if (row % label_every == 0)
    label = "<text x=\"" + num(kPlotX - 6) + "\" y=\"" +
            num(plot_top_ + row * row_height_ + row_height_ / 2 + 4) +
            "\" text-anchor=\"end\" font-size=\"" + (row_height_ >= 12 ? "12" : "10") + "\">" +
            title + "</text>";
  add_row(row, attributes, title, label, "", locations, bins);
  next_rank_ = last_rank + 1;
}

void OverviewSvg::add_thread_row(int rank, int thread, const float* bins) {
  const int row = first_row_[static_cast<std::size_t>(rank)] + thread;
  const double y = plot_top_ + row * row_height_;
  const std::string text_y = num(y + row_height_ / 2 + 4);
  // The rank beside its master's row (labels at least 13 px apart), the thread number beside
  // each worker's where rows are tall enough to read it.
  std::string label;
  if (thread == 0 && y - last_label_y_ >= 13.0) {
    label = "<text x=\"" + num(kPlotX - 6) + "\" y=\"" + text_y +
            "\" text-anchor=\"end\" font-size=\"" + (row_height_ >= 12 ? "12" : "10") +
            "\">rank " + std::to_string(rank) + "</text>";
    last_label_y_ = y;
  } else if (thread > 0 && row_height_ >= 13.0) {
    label = "<text x=\"" + num(kPlotX - 6) + "\" y=\"" + text_y +
            "\" text-anchor=\"end\" font-size=\"10\" fill=\"#666666\">thread " +
            std::to_string(thread) + "</text>";
  }
  // A line between ranks, drawn over the colours of the rank's first row.
  const std::string separator =
      thread == 0 && rank > 0
          ? "<line class=\"rank-separator\" x1=\"" + num(kPlotX) + "\" y1=\"" + num(y) +
                "\" x2=\"" + num(kPlotX + kPlotW) + "\" y2=\"" + num(y) +
                "\" stroke=\"#333333\" stroke-width=\"1.5\"/>"
          : std::string();
  add_row(row,
          "data-first-rank=\"" + std::to_string(rank) + "\" data-last-rank=\"" +
              std::to_string(rank) + "\" data-thread=\"" + std::to_string(thread) + "\"",
          "rank " + std::to_string(rank) + " thread " + std::to_string(thread), label, separator,
          1.0f, bins);
}

void OverviewSvg::add_row(int row, const std::string& attributes, const std::string& title,
                          const std::string& label, const std::string& over, float locations,
                          const float* bins) {
  const std::size_t top = spec_.legend.size();
  const std::size_t columns = top + 2;
  const double y = plot_top_ + row * row_height_;
  const double bw = spec_.bins ? kPlotW / static_cast<double>(spec_.bins) : kPlotW;
  const float n = locations;  // the row's capacity per bin: how many locations it adds up
  std::string& o = buf_;
  o += "<g class=\"row\" " + attributes + "><title>" + title + "</title>" + label;
  const double h = cell_height();
  // Each bin's column of the row is shared out: every call-path class gets a segment as tall as
  // its share of the bin's time (the top paths in legend order from the top, then "other"; the
  // rest is blank: time in no region, or idle threads), so the picture's areas are the
  // profile's shares. Segment edges are rounded to kStep px, and a class's segments in
  // consecutive bins at the same place are drawn as one rectangle.
  auto edge = [&](float share) {
    return std::round(std::clamp(static_cast<double>(share) / n, 0.0, 1.0) * h / kStep) * kStep;
  };
  struct Run {
    std::size_t start = 0;
    double top = 0.0, bottom = 0.0;  // px below the row's top edge
  };
  std::vector<Run> runs(top + 2);  // per class, then waiting
  auto close_run = [&](std::size_t k, std::size_t end_bin) {
    Run& r = runs[k];
    if (r.bottom > r.top && end_bin > r.start)
      o += std::string(k == top + 1 ? "<rect class=\"waiting\"" : "<rect") + " x=\"" +
           num(kPlotX + r.start * bw) + "\" y=\"" + num(y + r.top) + "\" width=\"" +
           num((end_bin - r.start) * bw) + "\" height=\"" + num(r.bottom - r.top) +
           "\" fill=\"" + (k == top + 1 ? "url(#waiting)" : colour(k, top)) + "\"/>";
    r = Run{end_bin, 0.0, 0.0};
  };
  auto extend = [&](std::size_t k, std::size_t b, double from, double to) {
    Run& r = runs[k];
    if (r.top != from || r.bottom != to) {
      close_run(k, b);
      r.top = from;
      r.bottom = to;
    }
  };
  for (std::size_t b = 0; b < spec_.bins; ++b) {
    const float* v = bins + b * columns;
    float before = 0.0f;
    for (std::size_t k = 0; k <= top; ++k) {
      extend(k, b, edge(before), edge(before + v[k]));
      before += v[k];
    }
    // Waiting, hatched over the colours from the row's bottom up, as tall as its share.
    extend(top + 1, b, h - edge(v[top + 1]), h);
  }
  for (std::size_t k = 0; k < runs.size(); ++k) close_run(k, spec_.bins);
  o += over + "</g>\n";
  if (o.size() > (1u << 16)) {
    file_.write(o);
    o.clear();
  }
}

void OverviewSvg::put_point(double x, double y) {
  if (!path_started_) {
    buf_ +=
        "</g>\n<polyline class=\"critical-path\" fill=\"none\" stroke=\"#000000\" "
        "stroke-width=\"2\" stroke-linejoin=\"round\" points=\"";
    path_started_ = true;
  }
  buf_ += num(x) + "," + num(y) + " ";
  ++path_points_;
  if (buf_.size() > (1u << 16)) {
    file_.write(buf_);
    buf_.clear();
  }
}

void OverviewSvg::flush_path_column() {
  if (!have_column_) return;
  const double x = static_cast<double>(column_) / 10.0;
  put_point(x, first_y_);
  if (low_y_ != first_y_ && low_y_ != last_y_) put_point(x, low_y_);
  if (high_y_ != first_y_ && high_y_ != last_y_ && high_y_ != low_y_) put_point(x, high_y_);
  if (last_y_ != first_y_) put_point(x, last_y_);
  have_column_ = false;
}

void OverviewSvg::add_path_point(double seconds, int rank, int thread) {
  const long long column = std::llround(x_of(seconds) * 10.0);
  const double y = y_of(rank, thread);
  if (have_column_ && column == column_) {
    last_y_ = y;
    low_y_ = std::min(low_y_, y);
    high_y_ = std::max(high_y_, y);
    return;
  }
  flush_path_column();
  column_ = column;
  first_y_ = last_y_ = low_y_ = high_y_ = y;
  have_column_ = true;
}

void OverviewSvg::commit() {
  flush_path_column();
  if (path_points_ == 1) put_point(static_cast<double>(column_) / 10.0, last_y_);  // a line
  std::string& o = buf_;
  o += path_started_ ? "\"/>\n" : "</g>\n";
  // Time axis.
  const double axis_y = plot_top_ + rows_ * row_height_;
  if (spec_.run_seconds > 0.0) {
    const double raw = spec_.run_seconds / 8.0;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    o += "<g class=\"axis\" font-size=\"11\" fill=\"#333333\">";
    for (double t = 0.0; t <= spec_.run_seconds * (1 + 1e-9); t += step) {
      const double x = x_of(t);
      o += "<line x1=\"" + num(x) + "\" y1=\"" + num(axis_y) + "\" x2=\"" + num(x) + "\" y2=\"" +
           num(axis_y + 5) + "\" stroke=\"#333333\"/><text x=\"" + num(x) + "\" y=\"" +
           num(axis_y + 18) + "\" text-anchor=\"middle\">" + time_label(t, step) + "</text>";
    }
    o += "<text x=\"" + num(kPlotX + kPlotW) + "\" y=\"" + num(axis_y + 32) +
         "\" text-anchor=\"end\">time since the first event</text></g>\n";
  }
  // Legend.
  double y = axis_y + 44.0;
  o += "<g class=\"legend\">";
  auto entry = [&](const std::string& swatch, const std::string& text) {
    o += swatch + "<text x=\"" + num(kPlotX + 22) + "\" y=\"" + num(y + 11) + "\">" +
         xml_escape(text) + "</text>";
    y += kLegendLine;
  };
  auto box = [&](const std::string& fill) {
    return "<rect x=\"" + num(kPlotX) + "\" y=\"" + num(y) +
           "\" width=\"16\" height=\"12\" fill=\"" + fill +
           "\" stroke=\"#666666\" stroke-width=\"0.5\"/>";
  };
  for (std::size_t k = 0; k < spec_.legend.size(); ++k)
    entry(box(colour(k, spec_.legend.size())), spec_.legend[k]);
  entry(box(kOther), "other call paths");
  entry(box(kOther) + box("url(#waiting)"),
        "waiting in wait states (hatched from the bottom, as tall as its share of the time)");
  entry("<line x1=\"" + num(kPlotX) + "\" y1=\"" + num(y + 6) + "\" x2=\"" + num(kPlotX + 16) +
            "\" y2=\"" + num(y + 6) + "\" stroke=\"#000000\" stroke-width=\"2\"/>",
        thread_rows_ ? "critical path (jumps to the thread it continues on)"
                     : "critical path (jumps to the rank it continues on)");
  o += "</g>\n</svg>\n";
  file_.write(o);
  o.clear();
  file_.commit();
}

}  // namespace cpreplay::io
