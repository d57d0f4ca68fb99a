// SPDX-License-Identifier: BSD-3-Clause
// Writes the corrections of a conformance expected.json from another reference report, for the
// cells where that reference and expected.json differ beyond the suite's tolerance (the
// conformance/README.md rule: 1e-7 s + 1e-6 relative, counts 0.5):
//
//   conformance_corrections EXPECTED.json REFERENCE.cubex REASON METRIC[,METRIC...] > FILE.json
//
// Used where Scalasca's stored value is wrong and a corrected Scalasca run is the reference
// (tests/conformance/corrections/README.md): the checker then compares cpreplay with the
// corrected value in those cells and says how many it took. Two metrics are Cube-derived, not
// stored by scout, and are derived here from the reference the way expected.json derives them
// (scalasca-metrics.md §7.6-§7.7): intra_partition_imbalance = critical_imbalance_impact -
// inter_partition_imbalance, and critical_path_imbalance. A metric the reference does not store
// (scout loses inter_partition_imbalance to its 0/0 division when every rank has no headroom)
// reads 0, which is what the guarded formula gives then.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cube_reader.hpp"
#include "tests/support/json.hpp"

using cpreplay::testing::CubeFile;
using cpreplay::testing::Json;

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

/// Sum of a stored (call-tree exclusive) metric over the subtree of `path` at location l.
double subtree(const CubeFile& cube, const std::string& metric, const std::string& path, int l) {
  const auto it = cube.values.find(metric);
  if (it == cube.values.end()) return 0.0;
  double sum = 0.0;
  for (const auto& [p, v] : it->second)
    if (p == path || p.rfind(path + "/", 0) == 0) sum += v.at(static_cast<std::size_t>(l));
  return sum;
}

/// scalasca-metrics.md §7.7 from the reference's critical_path, time and wait metrics.
double critical_path_imbalance(const CubeFile& cube, const std::string& path, int l, int n) {
  static const char* const kWaits[] = {"mpi_finalize_wait", "mpi_barrier_wait", "mpi_latesender",
                                       "mpi_latereceiver",  "mpi_earlyreduce",  "mpi_earlyscan",
                                       "mpi_latebroadcast", "mpi_wait_nxn"};
  if (!(subtree(cube, "critical_path", path, l) > 0.0)) return 0.0;
  double cp = 0.0, t = 0.0, w = 0.0;
  for (int k = 0; k < n; ++k) {
    cp += subtree(cube, "critical_path", path, k);
    t += cube.value("time", path, k);  // stored inclusive along the call tree
    for (const char* m : kWaits) w += subtree(cube, m, path, k);
  }
  const double share = (cp - (t - w) / n) / cp;
  return share > 0.0 ? share * cube.value("critical_path", path, l) : 0.0;
}

double reference_value(const CubeFile& cube, const std::string& metric, const std::string& path,
                       int l, int n) {
  if (metric == "intra_partition_imbalance")
    return cube.value("critical_imbalance_impact", path, l) -
           cube.value("inter_partition_imbalance", path, l);
  if (metric == "critical_path_imbalance") return critical_path_imbalance(cube, path, l, n);
  return cube.value(metric, path, l);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: conformance_corrections EXPECTED.json REFERENCE.cubex REASON METRICS\n");
    return 2;
  }
  try {
    const Json expected = cpreplay::testing::read_json_file(argv[1]);
    const CubeFile cube = cpreplay::testing::read_cube(argv[2]);
    const int n = static_cast<int>(cube.location_names.size());
    std::vector<std::string> key_of;
    if (expected.has("threads")) {
      for (int r = 0; r < static_cast<int>(expected["threads"].object.size()); ++r)
        for (int t = 0; t < static_cast<int>(expected["threads"][std::to_string(r)].number); ++t)
          key_of.push_back(std::to_string(r) + "." + std::to_string(t));
    } else {
      for (int r = 0; r < n; ++r) key_of.push_back(std::to_string(r));
    }
    if (static_cast<int>(key_of.size()) != n)
      throw std::runtime_error("the reference has " + std::to_string(n) +
                               " locations, expected.json " + std::to_string(key_of.size()));
    std::printf("{\n \"reason\": %s,\n \"metrics\": {", quoted(argv[3]).c_str());
    std::stringstream list(argv[4]);
    bool first_metric = true;
    int cells = 0;
    for (std::string metric; std::getline(list, metric, ',');) {
      if (!expected["metrics"].has(metric)) continue;
      const Json& values = expected["metrics"][metric]["values"];
      std::set<std::string> paths;
      for (const auto& [p, v] : values.object) paths.insert(p);
      const std::string base = metric == "intra_partition_imbalance" ? "critical_imbalance_impact"
                               : metric == "critical_path_imbalance" ? "critical_path"
                                                                     : metric;
      if (auto it = cube.values.find(base); it != cube.values.end())
        for (const auto& [p, v] : it->second) paths.insert(p);
      std::string body;
      for (const std::string& path : paths) {
        std::string row;
        for (int l = 0; l < n; ++l) {
          double exp = 0.0;
          if (values.has(path) && values[path].has(key_of[l])) exp = values[path][key_of[l]].number;
          const double ref = reference_value(cube, metric, path, l, n);
          if (std::fabs(ref - exp) <= 1e-7 + 1e-6 * std::fabs(exp)) continue;
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", ref);
          row += std::string(row.empty() ? "" : ", ") + quoted(key_of[l]) + ": " + buf;
          ++cells;
        }
        if (!row.empty())
          body += std::string(body.empty() ? "" : ",") + "\n   " + quoted(path) + ": {" + row + "}";
      }
      if (body.empty()) continue;
      std::printf("%s\n  %s: {%s\n  }", first_metric ? "" : ",", quoted(metric).c_str(),
                  body.c_str());
      first_metric = false;
    }
    std::printf("\n }\n}\n");
    std::fprintf(stderr, "%d cells corrected\n", cells);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conformance_corrections: %s\n", e.what());
    return 1;
  }
}
