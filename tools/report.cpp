// SPDX-License-Identifier: BSD-3-Clause
// Cube report assembly and the gather of metric rows to rank 0, a bounded batch at a time.
#include "tools/report.hpp"

#include <algorithm>
#include <exception>

#include "analysis/profile.hpp"
#include "cpreplay/names.hpp"

namespace cpreplay::tools {

std::vector<analysis::Metric> report_metrics(const Definitions& defs) {
  const bool hybrid = defs.hybrid();
  std::vector<analysis::Metric> out;
  for (const auto& m : analysis::metric_table())
    if (hybrid || !analysis::is_openmp(m.id))
      out.push_back(m.id);
  return out;
}

io::CubeReportDef make_report_def(const Definitions& defs, const CallTree& tree,
                                  const std::string& creator) {
  io::CubeReportDef def;
  def.attributes = {{"Creator", creator}, {"CUBE_CT_AGGR", "SUM"}};
  def.mirrors = {"https://apps.fz-juelich.de/scalasca/releases/scalasca/2.6/help/"};
  const std::vector<analysis::Metric> metrics = report_metrics(defs);
  std::vector<int> index_of(analysis::kMetricCount, -1);
  for (std::size_t i = 0; i < metrics.size(); ++i)
    index_of[static_cast<int>(metrics[i])] = static_cast<int>(i);
  for (const analysis::Metric id : metrics) {
    const analysis::MetricInfo& m = analysis::metric_info(id);
    io::CubeMetricDef md;
    md.uniq_name = m.uniq_name;
    md.disp_name = m.disp_name;
    md.uom = m.uom;
    md.dtype = std::string(m.uom) == "sec" ? "FLOAT" : "INTEGER";
    md.url = std::string("@mirror@scalasca_patterns.html#") + m.uniq_name;
    md.descr = m.description;
    md.parent = m.parent == analysis::Metric::Count ? -1 : index_of[static_cast<int>(m.parent)];
    md.inclusive = m.inclusive;
    def.metrics.push_back(md);
  }
  for (const Region& r : defs.regions) {
    io::CubeRegionDef rd;
    // As Score-P writes a region it could demangle: the demangled name, and the trace's
    // (canonical) name in mangled_name (docs/cube-report.md).
    rd.name = demangle(r.name);
    rd.mangled_name = r.canonical_name.empty() ? r.name : r.canonical_name;
    rd.mod = r.file;
    rd.paradigm = paradigm_name(r.paradigm);
    rd.role = role_name(r.role);
    rd.descr = r.description;
    rd.begin_line = r.begin_line;
    rd.end_line = r.end_line;
    def.regions.push_back(rd);
  }
  for (const auto& n : tree.nodes())
    def.cnodes.push_back(io::CubeCnodeDef{static_cast<int>(n.region.value),
                                          n.parent.valid() ? static_cast<int>(n.parent.value)
                                                           : -1});
  for (const auto& n : defs.system_nodes)
    def.system_nodes.push_back(io::CubeSystemNodeDef{
        n.class_name + " " + n.name, n.class_name,
        n.parent == UINT32_MAX ? -1 : static_cast<int>(n.parent)});
  if (def.system_nodes.empty()) def.system_nodes.push_back({"machine unknown", "machine", -1});
  for (int r = 0; r < defs.ranks(); ++r) {
    const Process& p = defs.processes[r];
    def.processes.push_back(io::CubeProcessDef{p.name, r, static_cast<int>(p.system_node)});
    def.threads.push_back(io::CubeThreadDef{
        p.location_name.empty() ? "CPU thread 0" : p.location_name,
        static_cast<int>(p.location_id >> 32), r});
    // Worker threads: location rank = thread number, as CubeW writes them.
    for (std::size_t t = 0; t < p.workers.size(); ++t)
      def.threads.push_back(io::CubeThreadDef{
          p.workers[t].name.empty() ? "CPU thread " + std::to_string(t + 1) : p.workers[t].name,
          static_cast<int>(t + 1), r});
  }
  return def;
}

void gather_and_write(const replay::World& world, const Definitions& defs,
                      const RankBlocks& blocks, const CallTree& tree,
                      const std::vector<analysis::Severity>& sevs,
                      const std::vector<std::vector<analysis::Severity>>& workers,
                      io::CubeWriter* writer) {
  const std::vector<analysis::Metric> metrics = report_metrics(defs);
  const std::size_t n = tree.size();
  // Locations before each rank (rank-major, thread-minor): an O(N) table.
  std::vector<std::size_t> first_location(static_cast<std::size_t>(blocks.ranks()) + 1, 0);
  for (int r = 0; r < blocks.ranks(); ++r)
    first_location[r + 1] = first_location[r] + defs.processes[r].locations;
  const std::size_t locations = first_location.back();
  // As many metrics per gather as fit in kGatherBytes on process 0 (at least one): a small run
  // needs a single gather, a 10,000-rank one still holds one metric at a time.
  constexpr std::size_t kGatherBytes = std::size_t{256} << 10;
  const std::size_t per_gather = std::max<std::size_t>(
      1, std::min(metrics.size(),
                  kGatherBytes / std::max<std::size_t>(1, n * locations * sizeof(double))));
  std::vector<double> mine,
      gathered(world.rank() == 0 ? per_gather * n * locations : 0);
  std::vector<double> rows(world.rank() == 0 ? n * locations : 0);
  std::vector<int> counts(static_cast<std::size_t>(world.size())),
      displs(static_cast<std::size_t>(world.size()));
  std::exception_ptr error;
  auto append = [&](const analysis::Severity& sev, analysis::Metric id) {
    const double* row = sev.row(id);
    if (analysis::metric_info(id).inclusive) {
      const std::vector<double> incl = analysis::inclusive_along_call_tree(tree, row);
      mine.insert(mine.end(), incl.begin(), incl.end());
    } else {
      mine.insert(mine.end(), row, row + n);
    }
  };
  for (std::size_t first = 0; first < metrics.size(); first += per_gather) {
    const std::size_t k = std::min(per_gather, metrics.size() - first);
    // Location by location, each with its k metrics: process 0 receives them in order.
    mine.clear();
    for (std::size_t r = 0; r < sevs.size(); ++r) {
      for (std::size_t i = first; i < first + k; ++i) append(sevs[r], metrics[i]);
      if (r < workers.size())
        for (const analysis::Severity& w : workers[r])
          for (std::size_t i = first; i < first + k; ++i) append(w, metrics[i]);
    }
    for (int p = 0; p < world.size(); ++p) {
      const std::size_t a = first_location[blocks.first(p)],
                        b = first_location[blocks.first(p + 1)];
      counts[static_cast<std::size_t>(p)] = static_cast<int>((b - a) * k * n);
      displs[static_cast<std::size_t>(p)] = static_cast<int>(a * k * n);
    }
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, gathered.data(),
                counts.data(), displs.data(), MPI_DOUBLE, 0, world.comm());
    if (world.rank() != 0 || error) continue;
    for (std::size_t j = 0; j < k && !error; ++j) {  // the first write error is the one to report
      bool any = false;
      for (std::size_t l = 0; l < locations; ++l)
        for (std::size_t c = 0; c < n; ++c) {
          const double v = gathered[l * k * n + j * n + c];
          rows[c * locations + l] = v;
          any = any || v != 0.0;
        }
      if (!any) continue;
      try {
        writer->add_metric_data(static_cast<int>(first + j), rows);
      } catch (...) {
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace cpreplay::tools
