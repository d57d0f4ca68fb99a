// SPDX-License-Identifier: BSD-3-Clause
// Cube report assembly and the gather of metric rows to rank 0, a bounded batch at a time.
#include "tools/report.hpp"

#include <algorithm>
#include <exception>

#include "analysis/profile.hpp"

namespace cpreplay::tools {

io::CubeReportDef make_report_def(const Definitions& defs, const CallTree& tree,
                                  const std::string& creator) {
  io::CubeReportDef def;
  def.attributes = {{"Creator", creator}, {"CUBE_CT_AGGR", "SUM"}};
  def.mirrors = {"https://apps.fz-juelich.de/scalasca/releases/scalasca/2.6/help/"};
  const auto& table = analysis::metric_table();
  std::vector<int> index_of(analysis::kMetricCount, -1);
  for (std::size_t i = 0; i < table.size(); ++i) index_of[static_cast<int>(table[i].id)] =
      static_cast<int>(i);
  for (const auto& m : table) {
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
    rd.name = r.name;
    rd.mangled_name = r.canonical_name;
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
  }
  return def;
}

void gather_and_write(const replay::World& world, const RankBlocks& blocks, const CallTree& tree,
                      const std::vector<analysis::Severity>& sevs, io::CubeWriter* writer) {
  const auto& table = analysis::metric_table();
  const std::size_t n = tree.size();
  const std::size_t ranks = static_cast<std::size_t>(blocks.ranks());
  const std::size_t held = sevs.size();
  // As many metrics per gather as fit in kGatherBytes on process 0 (at least one): a small run
  // needs a single gather, a 10,000-rank one still holds one metric at a time.
  constexpr std::size_t kGatherBytes = std::size_t{32} << 20;
  const std::size_t per_gather = std::max<std::size_t>(
      1, std::min(table.size(), kGatherBytes / std::max<std::size_t>(1, n * ranks * sizeof(double))));
  std::vector<double> mine, gathered(world.rank() == 0 ? per_gather * n * ranks : 0);
  std::vector<double> rows(world.rank() == 0 ? n * ranks : 0);
  std::vector<int> counts(static_cast<std::size_t>(world.size())),
      displs(static_cast<std::size_t>(world.size()));
  std::exception_ptr error;
  for (std::size_t first = 0; first < table.size(); first += per_gather) {
    const std::size_t k = std::min(per_gather, table.size() - first);
    // Rank by rank, each with its k metrics: process 0 receives the ranks in order.
    mine.clear();
    for (std::size_t r = 0; r < held; ++r)
      for (std::size_t i = first; i < first + k; ++i) {
        const double* row = sevs[r].row(table[i].id);
        if (table[i].inclusive) {
          const std::vector<double> incl = analysis::inclusive_along_call_tree(tree, row);
          mine.insert(mine.end(), incl.begin(), incl.end());
        } else {
          mine.insert(mine.end(), row, row + n);
        }
      }
    for (int p = 0; p < world.size(); ++p) {
      counts[static_cast<std::size_t>(p)] = static_cast<int>(blocks.count(p) * k * n);
      displs[static_cast<std::size_t>(p)] = static_cast<int>(blocks.first(p) * k * n);
    }
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, gathered.data(),
                counts.data(), displs.data(), MPI_DOUBLE, 0, world.comm());
    if (world.rank() != 0 || error) continue;
    for (std::size_t j = 0; j < k && !error; ++j) {  // the first write error is the one to report
      bool any = false;
      for (std::size_t r = 0; r < ranks; ++r)
        for (std::size_t c = 0; c < n; ++c) {
          const double v = gathered[r * k * n + j * n + c];
          rows[c * ranks + r] = v;
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
