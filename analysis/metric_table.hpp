// SPDX-License-Identifier: BSD-3-Clause
// The metric table: Scalasca's unique names, display names, units and the metric hierarchy
// users know from Cube (scalasca-metrics.md §1.3), and dense per-rank severity storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpreplay/types.hpp"

namespace cpreplay::analysis {

enum class Metric : std::uint8_t {
  Time, Execution, Comp, Mpi, MpiManagement, MpiInitExit, MpiInitCompletion, MpiFinalizeWait,
  MpiMgmtComm, MpiMgmtFile, MpiSynchronization, MpiSyncCollective, MpiBarrierWait,
  MpiBarrierCompletion, MpiCommunication, MpiPoint2point, MpiLatesender, MpiLatesenderWo,
  MpiLswoDifferent, MpiLswoSame, MpiLatereceiver, MpiCollective, MpiEarlyreduce, MpiEarlyscan,
  MpiLatebroadcast, MpiWaitNxn, MpiNxnCompletion, MpiIo,
  OmpTime, OmpManagement, OmpFork, OmpSynchronization, OmpBarrier, OmpEbarrier, OmpEbarrierWait,
  OmpIbarrier, OmpIbarrierWait, OmpCritical, OmpLockContentionCritical, OmpLockApi,
  OmpLockContentionApi, OmpOrdered, OmpTaskwait, OmpFlush,
  Overhead, OmpIdleThreads, OmpLimitedParallelism,
  Visits,
  Syncs, SyncsP2p, SyncsSend, MpiSlrCount, SyncsRecv, MpiSlsCount, MpiSlswoCount, SyncsColl,
  Comms, CommsP2p, CommsSend, MpiClrCount, CommsRecv, MpiClsCount, MpiClswoCount, CommsColl,
  CommsCxch, CommsCsrc, CommsCdst,
  Bytes, BytesP2p, BytesSent, BytesRcvd, BytesColl, BytesCout, BytesCin,
  Delay, DelayMpi, DelayP2p, DelayLatesenderAggregate, DelayLatesender, DelayLatesenderLongterm,
  DelayLatereceiverAggregate, DelayLatereceiver, DelayLatereceiverLongterm, DelayCollective,
  DelayBarrierAggregate, DelayBarrier, DelayBarrierLongterm, DelayN21Aggregate, DelayN21,
  DelayN21Longterm, Delay12nAggregate, Delay12n, Delay12nLongterm, DelayN2nAggregate, DelayN2n,
  DelayN2nLongterm, DelayOmp, DelayOmpbarrierAggregate, DelayOmpbarrier, DelayOmpbarrierLongterm,
  DelayOmpidleAggregate, DelayOmpidle, DelayOmpidleLongterm,
  WaitstatesPropagatingVsTerminal, MpiWaitPropagating, MpiWaitPropagatingLs,
  MpiWaitPropagatingLr, MpiWaitTerminal, MpiWaitTerminalLs, MpiWaitTerminalLr,
  WaitstatesDirectVsIndirect, MpiWaitDirect, MpiWaitDirectLatesender, MpiWaitDirectLatereceiver,
  MpiWaitIndirect, MpiWaitIndirectLatesender, MpiWaitIndirectLatereceiver,
  CriticalPath, CriticalPathImbalance, NearCriticalPath,
  PerformanceImpact, PerformanceImpactCriticalpath, CriticalPathActivities,
  CriticalImbalanceImpact, IntraPartitionImbalance, InterPartitionImbalance,
  NonCriticalPathActivities,
  Count
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::Count);

/// How a metric's values come about.
enum class Derivation : std::uint8_t {
  Computed,     ///< written by an analysis pass
  SumChildren,  ///< the sum of its children (filled by finalize_metric_tree)
  Difference,   ///< `from` minus `less` (Cube's derived direct/terminal wait states)
};

struct MetricInfo {
  Metric id;
  const char* uniq_name;
  const char* disp_name;
  Metric parent;  ///< Metric::Count for a root
  const char* uom;  ///< "sec", "occ", "bytes"
  bool inclusive;   ///< stored inclusive along the call tree (only `time`)
  Derivation derivation;
  const char* description;
  Metric from = Metric::Count;  ///< Derivation::Difference: the minuend
  Metric less = Metric::Count;  ///< Derivation::Difference: the subtrahend
};

/// The table, in report (depth-first) order; parents precede children.
const std::vector<MetricInfo>& metric_table();
const MetricInfo& metric_info(Metric m);
/// True if the metric is an MPI pattern: Scalasca drops its values on non-MPI call paths.
bool is_mpi_only(Metric m);
/// True for the OpenMP metrics (omp_*): reports of hybrid traces only, as scout.hyb's.
bool is_openmp(Metric m);
/// True for the metrics of the backward replay that hybrid traces do not have yet (delay costs,
/// wait-state classes, near_critical_path; issue 17 part 2).
bool is_backward(Metric m);

/// Dense severities of one rank: [metric][call path], exclusive along the call tree (time too,
/// until the report makes it inclusive).
class Severity {
 public:
  explicit Severity(std::size_t callpaths = 0) { resize(callpaths); }
  void resize(std::size_t callpaths) {
    callpaths_ = callpaths;
    data_.assign(kMetricCount * callpaths, 0.0);
  }
  double& at(Metric m, std::uint32_t cp) {
    return data_[static_cast<std::size_t>(m) * callpaths_ + cp];
  }
  double at(Metric m, std::uint32_t cp) const {
    return data_[static_cast<std::size_t>(m) * callpaths_ + cp];
  }
  void add(Metric m, std::uint32_t cp, double v) { at(m, cp) += v; }
  double* row(Metric m) { return data_.data() + static_cast<std::size_t>(m) * callpaths_; }
  const double* row(Metric m) const {
    return data_.data() + static_cast<std::size_t>(m) * callpaths_;
  }
  std::size_t callpaths() const { return callpaths_; }

 private:
  std::size_t callpaths_ = 0;
  std::vector<double> data_;
};

/// Fills the SumChildren and Difference metrics bottom-up so that every metric stores its full amount
/// (inclusive along the metric tree).
void finalize_metric_tree(Severity& sev);

}  // namespace cpreplay::analysis
