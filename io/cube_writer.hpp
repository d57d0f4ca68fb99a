// SPDX-License-Identifier: BSD-3-Clause
// Writes Cube4 (.cubex) reports: a tar archive with anchor.xml and one index/data pair per metric.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace cpreplay::io {

/// One metric of the metric tree. Parents precede their children in CubeReportDef::metrics.
struct CubeMetricDef {
  std::string uniq_name;
  std::string disp_name;
  std::string dtype = "FLOAT";  ///< "FLOAT" (8-byte double) or "INTEGER" (8-byte signed)
  std::string uom = "sec";      ///< "sec", "occ", "bytes"
  std::string url;
  std::string descr;
  int parent = -1;              ///< index into metrics, or -1 for a root
  bool inclusive = false;       ///< call-tree storage type: INCLUSIVE (time) or EXCLUSIVE
};

struct CubeRegionDef {
  std::string name;
  std::string mangled_name;
  std::string mod;   ///< source file
  std::string paradigm;
  std::string role;
  std::string url;
  std::string descr;
  std::int64_t begin_line = -1;
  std::int64_t end_line = -1;
};

/// One call path. Parents precede children; siblings keep vector order (document order).
struct CubeCnodeDef {
  int region = 0;   ///< index into regions
  int parent = -1;  ///< index into cnodes, or -1 for a root
};

struct CubeSystemNodeDef {
  std::string name;       ///< e.g. "machine Linux"
  std::string cls;        ///< e.g. "machine"
  int parent = -1;        ///< index into system_nodes, or -1
};

struct CubeProcessDef {
  std::string name;  ///< e.g. "MPI Rank 0"
  int rank = 0;
  int system_node = 0;  ///< index into system_nodes
};

/// One location (thread). Location ids are the vector index; data rows use this order.
struct CubeThreadDef {
  std::string name;  ///< e.g. "Master thread"
  int rank = 0;      ///< thread number
  int process = 0;   ///< index into processes
};

struct CubeReportDef {
  /// <attr key value>, written after the writer's own "CubePL Version" and "Cube Version"
  /// (those two keys are refused here).
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<std::string> mirrors;  ///< <doc><mirrors><murl>
  std::vector<CubeMetricDef> metrics;
  std::vector<CubeRegionDef> regions;
  std::vector<CubeCnodeDef> cnodes;
  std::vector<CubeSystemNodeDef> system_nodes;
  std::vector<CubeProcessDef> processes;
  std::vector<CubeThreadDef> threads;
};

/// Writes the report in CubeW 4.6's vocabulary and layout; docs/cube-report.md lists the rules
/// (Id/id spelling, element order, index enumerations) any change here must keep.
/// Streams a .cubex to `path + ".tmp-<pid>"` and renames it into place on commit(); a writer
/// destroyed without commit() removes its temporary file, so no partial report is ever left.
/// Throws cpreplay::UsageError (unwritable path, full disk) naming the file.
/// MPI: local (rank 0 only).
class CubeWriter {
 public:
  CubeWriter(std::string path, CubeReportDef def);
  ~CubeWriter();
  CubeWriter(const CubeWriter&) = delete;
  CubeWriter& operator=(const CubeWriter&) = delete;

  /// Adds the data of one metric: `values` is row-major [cnode][thread] in definition order,
  /// size cnodes × threads. Rows that are all zero are left out of the index. INTEGER metrics
  /// are rounded to the nearest int64. Metrics never given data get no files (read as zero).
  /// Values are written immediately; call at most once per metric, in any order.
  void add_metric_data(int metric, const std::vector<double>& values);

  /// Writes anchor.xml, the tar end marker, flushes, and renames the file into place.
  void commit();

 private:
  void write_member(const std::string& name, const std::string& bytes);
  std::string anchor_xml() const;
  /// Closes and removes the temporary file, then throws UsageError for `err` (an errno value).
  [[noreturn]] void fail(int err);
  /// Throws unless the writer can still take data (open, not committed, no earlier failure).
  void require_open(const char* operation) const;

  std::string path_;
  std::string tmp_path_;
  int pending_slot_ = -1;  ///< registration for remove_unfinished_reports(), or -1
  CubeReportDef def_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
  std::vector<bool> has_data_;  ///< per metric: add_metric_data() already called
};

/// Removes the temporary files of all reports still being written in this process. For the
/// signal handlers of tools/ (mpirun ends the surviving ranks with SIGTERM when one rank dies):
/// async-signal-safe, it only calls unlink(2).
void remove_unfinished_reports() noexcept;

/// Adds another output's temporary file to those remove_unfinished_reports() removes; returns
/// its slot, or -1 when all are taken (the file is then only removed by its owner).
int register_unfinished_file(const std::string& tmp_path);
/// Forgets a slot from register_unfinished_file (and sets it to -1).
void unregister_unfinished_file(int& slot);

/// Positions of cnodes in Cube's enumeration for a metric (cube-format.md "N.index"):
/// result[k] = cnode index at position k. Exclusive: depth-first preorder; inclusive: root,
/// then all its children, then descend into the first child, and so on.
std::vector<int> cube_enumeration(const std::vector<CubeCnodeDef>& cnodes, bool inclusive);

}  // namespace cpreplay::io
