// SPDX-License-Identifier: BSD-3-Clause
// An independent Cube4 (.cubex) reader for tests; shares no code with io/cube_writer.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cpreplay::testing {

/// One metric as declared in anchor.xml.
struct CubeMetricInfo {
  std::string uniq_name;
  std::string disp_name;
  std::string dtype;
  std::string uom;
  std::string url;
  std::string descr;
  std::string parent;      ///< uniq name of the parent metric, "" for a root
  bool inclusive = false;  ///< type="INCLUSIVE" (call-tree storage), else EXCLUSIVE
};

/// Everything a test needs from a report, keyed by readable names instead of ids.
struct CubeFile {
  std::map<std::string, std::string> attributes;  ///< <attr key value>
  std::vector<CubeMetricInfo> metrics;            ///< document order
  /// Per cnode id: region names from the root joined by '/', e.g. "sim.exe/main/MPI_Recv".
  std::vector<std::string> callpaths;
  std::vector<std::string> location_names;  ///< per location id, e.g. "Master thread"
  std::vector<std::string> process_names;   ///< per location id: its location group ("MPI Rank 3")
  /// Per location id: system tree node names from the root joined by '/'
  /// ("machine Linux/node node00").
  std::vector<std::string> system_path;
  /// Per cnode id: the same from the regions' mangled names (a region's name where it has
  /// none), as Scalasca's references name call paths of traces without a demangler.
  std::vector<std::string> mangled_callpaths;
  std::vector<std::string> region_names;      ///< per region id
  std::vector<std::string> region_mangled_names;  ///< per region id; its name where empty
  std::vector<std::string> region_roles;      ///< per region id
  std::vector<std::string> region_paradigms;  ///< per region id
  /// metric uniq name -> call path (read_cube's CallpathKey) -> value per location id. Only
  /// rows present in the file; a metric without data files has no entry. INTEGER/UINT64 values
  /// are converted to double.
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  std::vector<std::string> member_names;  ///< regular tar members in archive order

  /// The stored value, 0 when the metric or call path has no row. Throws std::out_of_range
  /// for a location id outside 0..L-1.
  double value(const std::string& metric, const std::string& callpath, int location) const;
  /// The metric's declaration, nullptr when the report has no such metric.
  const CubeMetricInfo* metric(const std::string& uniq) const;
};

/// Which names `CubeFile::values` joins into its call paths: the regions' `name`s, or their
/// `mangled_name`s (conformance references made from traces whose names are mangled).
enum class CallpathKey { Name, MangledName };

/// Reads a .cubex (plain or gzip-compressed tar). Throws std::runtime_error naming the file
/// and the problem on any malformed input. As strict as Cube's clients: `Id` is required on
/// <systemtreenode>, <locationgroup> and <location>, `id` on <metric>, <region> and <cnode>
/// (exact case), and the report must pass cube_vocabulary_violations().
CubeFile read_cube(const std::string& path, CallpathKey key = CallpathKey::Name);

/// The vocabulary check of docs/cube-report.md: every element and attribute name in the
/// report's anchor.xml must be one that Scalasca 2.6's scout.cubex (written by CubeW 4.6) uses
/// on that element, spelled with the same case; the attributes CubeW always writes must be
/// there; and the <attr> entries "CubePL Version" = 1.1 and "Cube Version" = 4.6 must come
/// before CUBE_CT_AGGR. Returns one line per violation, each naming the file, the anchor.xml
/// line and the element; empty when the report conforms. Throws std::runtime_error when the
/// file is no readable archive or anchor.xml is not well-formed XML.
std::vector<std::string> cube_vocabulary_violations(const std::string& path);

}  // namespace cpreplay::testing
