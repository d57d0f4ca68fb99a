// SPDX-License-Identifier: BSD-3-Clause
// Binning a location's time for the --overview picture.
#include "analysis/overview.hpp"

#include <algorithm>
#include <numeric>

#include "replay/rank_sum.hpp"

namespace cpreplay::analysis {
namespace {

/// Adds the part of [a, b] (ticks) that falls into each bin to column `col`, in bin units.
class Binner {
 public:
  Binner(const OverviewLayout& layout, float* out)
      : begin_(layout.begin),
        bins_(layout.bins),
        columns_(layout.columns()),
        out_(out),
        per_tick_(layout.end > layout.begin ? static_cast<double>(layout.bins) /
                                                  static_cast<double>(layout.end - layout.begin)
                                            : 0.0) {}
  void add(Ticks a, Ticks b, std::size_t col) {
    if (b <= a || per_tick_ == 0.0) return;
    const double fa = static_cast<double>(a - std::min(a, begin_)) * per_tick_;
    const double fb = static_cast<double>(b - std::min(b, begin_)) * per_tick_;
    auto bin = static_cast<std::size_t>(fa);
    double x = fa;
    while (x < fb && bin < bins_) {
      const double edge = std::min(fb, static_cast<double>(bin + 1));
      out_[bin * columns_ + col] += static_cast<float>(edge - x);
      x = edge;
      ++bin;
    }
  }

 private:
  Ticks begin_;
  std::size_t bins_;
  std::size_t columns_;
  float* out_;
  double per_tick_;
};

}  // namespace

OverviewLayout overview_layout(const replay::World& world, const RankBlocks& blocks,
                               const CallTree& tree, const std::vector<Severity>& sevs,
                               const std::vector<std::vector<Severity>>& workers, Ticks begin,
                               Ticks end, std::size_t bins, std::size_t max_top) {
  const std::size_t n = tree.size();
  const std::vector<double> total =
      replay::sum_over_ranks(world, blocks, n, [&](std::size_t i, double* out) {
        std::copy(sevs[i].row(Metric::Time), sevs[i].row(Metric::Time) + n, out);
        if (i >= workers.size()) return;
        // A worker's `time` includes its idle time (docs/openmp.md), which the picture leaves
        // blank: only the time it ran counts, in thread order.
        for (const Severity& w : workers[i]) {
          const double* time = w.row(Metric::Time);
          const double* idle = w.row(Metric::OmpIdleThreads);
          for (std::size_t c = 0; c < n; ++c) out[c] += time[c] - idle[c];
        }
      });
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // Ties by call path id, so every rank picks the same paths.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return total[a] > total[b]; });
  OverviewLayout layout;
  layout.begin = begin;
  layout.end = end;
  layout.bins = bins;
  for (double t : total) layout.total_time += t;
  // Paths below half a percent of the time would not show; they stay "other".
  for (std::uint32_t c : order) {
    if (layout.top.size() == max_top || !(total[c] > 0.005 * layout.total_time)) break;
    layout.top.push_back(c);
    layout.top_time.push_back(total[c]);
  }
  layout.class_of.assign(n, static_cast<std::uint8_t>(layout.top.size()));
  for (std::size_t k = 0; k < layout.top.size(); ++k)
    layout.class_of[layout.top[k]] = static_cast<std::uint8_t>(k);
  return layout;
}

std::vector<float> overview_bins(const OverviewLayout& layout, const CallTree& tree,
                                 const LocalTrace& trace, const WaitStateResult* waits,
                                 const OmpWaitState* omp, std::size_t omp_count,
                                 std::uint64_t ticks_per_second) {
  std::vector<float> out(layout.bins * layout.columns(), 0.0f);
  Binner binner(layout, out.data());
  // Exclusive time as the critical path counts it: the stretch before an Enter/Leave belongs to
  // the innermost region open during it.
  // A worker thread's call paths hang below the master's (docs/openmp.md): once it has left its
  // outermost region (the parallel region) it is idle, not in the master's enclosing region.
  std::uint32_t current = UINT32_MAX;
  std::size_t depth = 0;
  Ticks prev = 0;
  const auto n = static_cast<EventIdx>(trace.size());
  for (EventIdx e = 0; e < n; ++e) {
    const EventKind k = trace.kind[e];
    if (k != EventKind::Enter && k != EventKind::Leave) continue;
    const Ticks t = trace.time[e];
    if (current < layout.class_of.size()) binner.add(prev, t, layout.class_of[current]);
    prev = t;
    if (k == EventKind::Enter) {
      current = trace.ref[e];
      ++depth;
    } else {
      depth -= depth > 0;
      const CallpathId parent =
          trace.ref[e] < tree.size() ? tree.node(CallpathId{trace.ref[e]}).parent : CallpathId{};
      current = parent.valid() && depth > 0 ? parent.value : UINT32_MAX;
    }
  }
  const std::size_t wait_col = layout.columns() - 1;
  auto length = [&](double wait) {
    return static_cast<Ticks>(wait * static_cast<double>(ticks_per_second) + 0.5);
  };
  if (waits != nullptr)
    for (const WaitState& w : waits->waits) {
      const Ticks start = wait_start(trace, w);
      binner.add(start, start + length(w.wait), wait_col);
    }
  for (std::size_t i = 0; i < omp_count; ++i)
    binner.add(omp[i].begin, omp[i].begin + length(omp[i].wait), wait_col);
  return out;
}

}  // namespace cpreplay::analysis
