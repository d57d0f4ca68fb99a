// SPDX-License-Identifier: BSD-3-Clause
// The one place where Scalasca's metric names live.
#include "analysis/metric_table.hpp"

namespace cpreplay::analysis {
namespace {

using M = Metric;
constexpr M kRoot = M::Count;
constexpr auto C = Derivation::Computed;
constexpr auto S = Derivation::SumChildren;
constexpr auto D = Derivation::Difference;

const std::vector<MetricInfo> kTable = {
    {M::Time, "time", "Time", kRoot, "sec", true, C,
     "Total CPU allocation time (includes time allocated for idle threads)"},
    {M::Execution, "execution", "Execution", M::Time, "sec", false, C,
     "Execution time (does not include time allocated for idle threads)"},
    {M::Comp, "comp", "Computation", M::Execution, "sec", false, C,
     "Time spent on computation"},
    {M::Mpi, "mpi", "MPI", M::Execution, "sec", false, C, "Time spent in MPI calls"},
    {M::MpiManagement, "mpi_management", "Management", M::Mpi, "sec", false, C,
     "Time spent in MPI management operations"},
    {M::MpiInitExit, "mpi_init_exit", "Init/Finalize", M::MpiManagement, "sec", false, C,
     "Time spent in MPI initialization/finalization calls"},
    {M::MpiInitCompletion, "mpi_init_completion", "Initialization Completion", M::MpiInitExit,
     "sec", false, C, "Time needed to finish MPI initialization"},
    {M::MpiFinalizeWait, "mpi_finalize_wait", "Wait at Finalize", M::MpiInitExit, "sec", false,
     C, "Waiting time in front of MPI_Finalize"},
    {M::MpiMgmtComm, "mpi_mgmt_comm", "Communicator", M::MpiManagement, "sec", false, C,
     "Time spent in MPI communicator management routines"},
    {M::MpiMgmtFile, "mpi_mgmt_file", "File", M::MpiManagement, "sec", false, C,
     "Time spent in MPI file management routines"},
    {M::MpiSynchronization, "mpi_synchronization", "Synchronization", M::Mpi, "sec", false, S,
     "Time spent in MPI synchronization calls"},
    {M::MpiSyncCollective, "mpi_sync_collective", "Collective", M::MpiSynchronization, "sec",
     false, C, "Time spent in MPI barriers"},
    {M::MpiBarrierWait, "mpi_barrier_wait", "Wait at Barrier", M::MpiSyncCollective, "sec",
     false, C, "Waiting time in front of MPI barriers"},
    {M::MpiBarrierCompletion, "mpi_barrier_completion", "Barrier Completion",
     M::MpiSyncCollective, "sec", false, C, "Time needed to finish an MPI barrier"},
    {M::MpiCommunication, "mpi_communication", "Communication", M::Mpi, "sec", false, S,
     "Time spent in MPI communication calls"},
    {M::MpiPoint2point, "mpi_point2point", "Point-to-point", M::MpiCommunication, "sec", false,
     C, "MPI point-to-point communication"},
    {M::MpiLatesender, "mpi_latesender", "Late Sender", M::MpiPoint2point, "sec", false, C,
     "Time a receiving process is waiting for a message"},
    {M::MpiLatesenderWo, "mpi_latesender_wo", "Messages in Wrong Order", M::MpiLatesender,
     "sec", false, C, "Late Sender situation due to messages received in the wrong order"},
    {M::MpiLswoDifferent, "mpi_lswo_different", "From different sources", M::MpiLatesenderWo,
     "sec", false, C, "Wrong order situation due to messages received from different sources"},
    {M::MpiLswoSame, "mpi_lswo_same", "From same source", M::MpiLatesenderWo, "sec", false, C,
     "Wrong order situation due to messages received from the same source"},
    {M::MpiLatereceiver, "mpi_latereceiver", "Late Receiver", M::MpiPoint2point, "sec", false,
     C, "Time a sending process is waiting for the receiver to become ready"},
    {M::MpiCollective, "mpi_collective", "Collective", M::MpiCommunication, "sec", false, C,
     "MPI collective communication"},
    {M::MpiEarlyreduce, "mpi_earlyreduce", "Early Reduce", M::MpiCollective, "sec", false, C,
     "Waiting time due to an early receiver in MPI n-to-1 operations"},
    {M::MpiEarlyscan, "mpi_earlyscan", "Early Scan", M::MpiCollective, "sec", false, C,
     "Waiting time due to an early receiver in an MPI scan operation"},
    {M::MpiLatebroadcast, "mpi_latebroadcast", "Late Broadcast", M::MpiCollective, "sec",
     false, C, "Waiting time due to a late sender in MPI 1-to-n operations"},
    {M::MpiWaitNxn, "mpi_wait_nxn", "Wait at N x N", M::MpiCollective, "sec", false, C,
     "Time spent waiting in front of a synchronizing MPI n-to-n operation"},
    {M::MpiNxnCompletion, "mpi_nxn_completion", "N x N Completion", M::MpiCollective, "sec",
     false, C, "Time needed to finish an MPI n-to-n collective operation"},
    {M::MpiIo, "mpi_io", "File I/O", M::Mpi, "sec", false, C,
     "Time spent in MPI file I/O calls"},
    // OpenMP (hybrid traces only), placed as Scalasca's remapping specification places them.
    {M::OmpTime, "omp_time", "OpenMP", M::Execution, "sec", false, S,
     "Time spent in the OpenMP run-time system and API"},
    {M::OmpManagement, "omp_management", "Management", M::OmpTime, "sec", false, C,
     "Time spent in OpenMP thread management"},
    {M::OmpFork, "omp_fork", "Fork", M::OmpManagement, "sec", false, C,
     "Time spent in forking OpenMP thread teams"},
    {M::OmpSynchronization, "omp_synchronization", "Synchronization", M::OmpTime, "sec", false,
     S, "Time spent on OpenMP synchronization"},
    {M::OmpBarrier, "omp_barrier", "Barrier", M::OmpSynchronization, "sec", false, S,
     "Time spent in OpenMP barrier synchronization"},
    {M::OmpEbarrier, "omp_ebarrier", "Explicit", M::OmpBarrier, "sec", false, C,
     "Time spent in explicit OpenMP barrier synchronization"},
    {M::OmpEbarrierWait, "omp_ebarrier_wait", "Wait at Barrier", M::OmpEbarrier, "sec", false, C,
     "Waiting time in front of explicit OpenMP barriers"},
    {M::OmpIbarrier, "omp_ibarrier", "Implicit", M::OmpBarrier, "sec", false, C,
     "Time spent in implicit OpenMP barrier synchronization"},
    {M::OmpIbarrierWait, "omp_ibarrier_wait", "Wait at Barrier", M::OmpIbarrier, "sec", false, C,
     "Waiting time in front of implicit OpenMP barriers"},
    {M::OmpCritical, "omp_critical", "Critical", M::OmpSynchronization, "sec", false, C,
     "Time spent waiting at OpenMP critical sections"},
    {M::OmpLockContentionCritical, "omp_lock_contention_critical", "Lock Contention",
     M::OmpCritical, "sec", false, C,
     "Time lost waiting for an OpenMP critical section to become available"},
    {M::OmpLockApi, "omp_lock_api", "Lock API", M::OmpSynchronization, "sec", false, C,
     "Time spent in OpenMP lock API calls"},
    {M::OmpLockContentionApi, "omp_lock_contention_api", "Lock Contention", M::OmpLockApi, "sec",
     false, C, "Time lost waiting for an OpenMP lock to be acquired"},
    {M::OmpOrdered, "omp_ordered", "Ordered", M::OmpSynchronization, "sec", false, C,
     "Time spent waiting at OpenMP ordered regions"},
    {M::OmpTaskwait, "omp_taskwait", "Task Wait", M::OmpSynchronization, "sec", false, C,
     "Time spent waiting in OpenMP taskwait directives"},
    {M::OmpFlush, "omp_flush", "Flush", M::OmpTime, "sec", false, C,
     "Time spent in OpenMP flush directives"},
    {M::Overhead, "overhead", "Overhead", M::Time, "sec", false, C,
     "Time spent performing tasks related to trace generation"},
    {M::OmpIdleThreads, "omp_idle_threads", "Idle threads", M::Time, "sec", false, C,
     "Unused CPU reservation time"},
    {M::OmpLimitedParallelism, "omp_limited_parallelism", "Limited parallelism",
     M::OmpIdleThreads, "sec", false, C,
     "Unused CPU reservation time in parallel regions due to limited parallelism"},
    {M::Visits, "visits", "Visits", kRoot, "occ", false, C, "Number of visits"},
    {M::Syncs, "syncs", "Synchronizations", kRoot, "occ", false, S,
     "Number of synchronization operations"},
    {M::SyncsP2p, "syncs_p2p", "Point-to-point", M::Syncs, "occ", false, S,
     "Number of point-to-point synchronization operations"},
    {M::SyncsSend, "syncs_send", "Sends", M::SyncsP2p, "occ", false, C,
     "Number of point-to-point send synchronization operations"},
    {M::MpiSlrCount, "mpi_slr_count", "Late Receivers", M::SyncsSend, "occ", false, C,
     "Number of Late Receiver instances in synchronizations"},
    {M::SyncsRecv, "syncs_recv", "Receives", M::SyncsP2p, "occ", false, C,
     "Number of point-to-point receive synchronization operations"},
    {M::MpiSlsCount, "mpi_sls_count", "Late Senders", M::SyncsRecv, "occ", false, C,
     "Number of Late Sender instances in synchronizations"},
    {M::MpiSlswoCount, "mpi_slswo_count", "Messages in wrong order", M::MpiSlsCount, "occ",
     false, C, "Number of Late Sender instances in synchronizations where messages are received "
     "in wrong order"},
    {M::SyncsColl, "syncs_coll", "Collective", M::Syncs, "occ", false, C,
     "Number of collective synchronization operations"},
    {M::Comms, "comms", "Communications", kRoot, "occ", false, S,
     "Number of communication operations"},
    {M::CommsP2p, "comms_p2p", "Point-to-point", M::Comms, "occ", false, S,
     "Number of point-to-point communication operations"},
    {M::CommsSend, "comms_send", "Sends", M::CommsP2p, "occ", false, C,
     "Number of point-to-point send communication operations"},
    {M::MpiClrCount, "mpi_clr_count", "Late Receivers", M::CommsSend, "occ", false, C,
     "Number of Late Receiver instances in communications"},
    {M::CommsRecv, "comms_recv", "Receives", M::CommsP2p, "occ", false, C,
     "Number of point-to-point receive communication operations"},
    {M::MpiClsCount, "mpi_cls_count", "Late Senders", M::CommsRecv, "occ", false, C,
     "Number of Late Sender instances in communications"},
    {M::MpiClswoCount, "mpi_clswo_count", "Messages in wrong order", M::MpiClsCount, "occ",
     false, C, "Number of Late Sender instances in communications where messages are received "
     "in wrong order"},
    {M::CommsColl, "comms_coll", "Collective", M::Comms, "occ", false, S,
     "Number of collective communication operations"},
    {M::CommsCxch, "comms_cxch", "Exchange", M::CommsColl, "occ", false, C,
     "Number of collective communications as source and destination"},
    {M::CommsCsrc, "comms_csrc", "As source", M::CommsColl, "occ", false, C,
     "Number of collective communications as source"},
    {M::CommsCdst, "comms_cdst", "As destination", M::CommsColl, "occ", false, C,
     "Number of collective communications as destination"},
    {M::Bytes, "bytes", "Bytes transferred", kRoot, "bytes", false, S,
     "Number of bytes transferred"},
    {M::BytesP2p, "bytes_p2p", "Point-to-point", M::Bytes, "bytes", false, S,
     "Number of bytes transferred in point-to-point communication operations"},
    {M::BytesSent, "bytes_sent", "Sent", M::BytesP2p, "bytes", false, C,
     "Number of bytes sent in point-to-point communication operations"},
    {M::BytesRcvd, "bytes_rcvd", "Received", M::BytesP2p, "bytes", false, C,
     "Number of bytes received in point-to-point communication operations"},
    {M::BytesColl, "bytes_coll", "Collective", M::Bytes, "bytes", false, S,
     "Number of bytes transferred in collective communication operations"},
    {M::BytesCout, "bytes_cout", "Outgoing", M::BytesColl, "bytes", false, C,
     "Number of bytes outgoing in collective communication operations"},
    {M::BytesCin, "bytes_cin", "Incoming", M::BytesColl, "bytes", false, C,
     "Number of bytes incoming in collective communication operations"},
    {M::Delay, "delay", "Delay costs", kRoot, "sec", false, S,
     "Costs and location of delays causing wait states"},
    {M::DelayMpi, "delay_mpi", "MPI", M::Delay, "sec", false, S,
     "Delays causing wait states in MPI operations"},
    {M::DelayP2p, "delay_p2p", "Point-to-point", M::DelayMpi, "sec", false, S,
     "Delays causing wait states in MPI point-to-point communication"},
    {M::DelayLatesenderAggregate, "delay_latesender_aggregate", "Late Sender", M::DelayP2p,
     "sec", false, S, "Delays causing MPI Late Sender wait states"},
    {M::DelayLatesender, "delay_latesender", "Short-term", M::DelayLatesenderAggregate, "sec",
     false, C, "Delays that directly cause MPI Late Sender wait states"},
    {M::DelayLatesenderLongterm, "delay_latesender_longterm", "Long-term",
     M::DelayLatesenderAggregate, "sec", false, C,
     "Delays that indirectly cause MPI Late Sender wait states through wait-state propagation"},
    {M::DelayLatereceiverAggregate, "delay_latereceiver_aggregate", "Late Receiver",
     M::DelayP2p, "sec", false, S, "Delays causing MPI Late Receiver wait states"},
    {M::DelayLatereceiver, "delay_latereceiver", "Short-term", M::DelayLatereceiverAggregate,
     "sec", false, C, "Delays that directly cause MPI Late Receiver wait states"},
    {M::DelayLatereceiverLongterm, "delay_latereceiver_longterm", "Long-term",
     M::DelayLatereceiverAggregate, "sec", false, C,
     "Delays that indirectly cause MPI Late Receiver wait states through wait-state "
     "propagation"},
    {M::DelayCollective, "delay_collective", "Collective", M::DelayMpi, "sec", false, S,
     "Delays causing wait states in MPI collective communication"},
    {M::DelayBarrierAggregate, "delay_barrier_aggregate", "Wait at Barrier",
     M::DelayCollective, "sec", false, S, "Delays causing wait states in front of MPI barriers"},
    {M::DelayBarrier, "delay_barrier", "Short-term", M::DelayBarrierAggregate, "sec", false, C,
     "Delays that directly cause wait states in MPI barriers"},
    {M::DelayBarrierLongterm, "delay_barrier_longterm", "Long-term", M::DelayBarrierAggregate,
     "sec", false, C,
     "Delays that indirectly cause wait states in MPI barriers through wait-state propagation"},
    {M::DelayN21Aggregate, "delay_n21_aggregate", "Early Reduce", M::DelayCollective, "sec",
     false, S, "Delays causing wait states in MPI n-to-1 collective communications"},
    {M::DelayN21, "delay_n21", "Short-term", M::DelayN21Aggregate, "sec", false, C,
     "Delays that directly cause wait states in MPI n-to-1 collective communications"},
    {M::DelayN21Longterm, "delay_n21_longterm", "Long-term", M::DelayN21Aggregate, "sec",
     false, C,
     "Delays that indirectly cause wait states in MPI n-to-1 collective communications through "
     "wait-state propagation"},
    {M::Delay12nAggregate, "delay_12n_aggregate", "Late Broadcast", M::DelayCollective, "sec",
     false, S, "Delays causing wait states in MPI 1-to-n collective communications"},
    {M::Delay12n, "delay_12n", "Short-term", M::Delay12nAggregate, "sec", false, C,
     "Delays that directly cause wait states in MPI 1-to-n collective communications"},
    {M::Delay12nLongterm, "delay_12n_longterm", "Long-term", M::Delay12nAggregate, "sec",
     false, C,
     "Delays that indirectly cause wait states in MPI 1-to-n collective communications through "
     "wait-state propagation"},
    {M::DelayN2nAggregate, "delay_n2n_aggregate", "Wait at N x N", M::DelayCollective, "sec",
     false, S, "Delays causing wait states in front of MPI n-to-n collective communications"},
    {M::DelayN2n, "delay_n2n", "Short-term", M::DelayN2nAggregate, "sec", false, C,
     "Delays that directly cause wait states in MPI n-to-n collective communications"},
    {M::DelayN2nLongterm, "delay_n2n_longterm", "Long-term", M::DelayN2nAggregate, "sec", false,
     C, "Delays that indirectly cause wait states in MPI n-to-n collective communications "
     "through wait-state propagation"},
    // OpenMP delays (hybrid traces only), as scout.hyb and its Cube spec name them.
    {M::DelayOmp, "delay_omp", "OpenMP", M::Delay, "sec", false, S,
     "Delays causing wait states in OpenMP constructs"},
    {M::DelayOmpbarrierAggregate, "delay_ompbarrier_aggregate", "Wait at Barrier", M::DelayOmp,
     "sec", false, S, "Delays causing wait states in front of OpenMP barriers"},
    {M::DelayOmpbarrier, "delay_ompbarrier", "Short-term", M::DelayOmpbarrierAggregate, "sec",
     false, C, "Delays that directly cause wait states in OpenMP barriers"},
    {M::DelayOmpbarrierLongterm, "delay_ompbarrier_longterm", "Long-term",
     M::DelayOmpbarrierAggregate, "sec", false, C,
     "Delays that indirectly cause wait states in OpenMP barriers through wait-state "
     "propagation"},
    {M::DelayOmpidleAggregate, "delay_ompidle_aggregate", "Idleness delay costs", M::DelayOmp,
     "sec", false, S, "Delays causing OpenMP worker threads to idle"},
    {M::DelayOmpidle, "delay_ompidle", "Short-term", M::DelayOmpidleAggregate, "sec", false, C,
     "Delays on the OpenMP master thread that leave OpenMP worker threads idle"},
    {M::DelayOmpidleLongterm, "delay_ompidle_longterm", "Long-term", M::DelayOmpidleAggregate,
     "sec", false, C, "Delays that indirectly leave OpenMP worker threads idle"},
    {M::WaitstatesPropagatingVsTerminal, "waitstates_propagating_vs_terminal",
     "Propagating vs. terminal wait states", kRoot, "sec", false, S,
     "Wait states that do or do not cause further wait states"},
    {M::MpiWaitPropagating, "mpi_wait_propagating", "Propagating wait states",
     M::WaitstatesPropagatingVsTerminal, "sec", false, S,
     "MPI wait states that cause further wait states"},
    {M::MpiWaitPropagatingLs, "mpi_wait_propagating_ls", "Late Sender", M::MpiWaitPropagating,
     "sec", false, C, "Propagating MPI Late Sender wait states"},
    {M::MpiWaitPropagatingLr, "mpi_wait_propagating_lr", "Late Receiver", M::MpiWaitPropagating,
     "sec", false, C, "Propagating MPI Late Receiver wait states"},
    {M::MpiWaitTerminal, "mpi_wait_terminal", "Terminal wait states",
     M::WaitstatesPropagatingVsTerminal, "sec", false, S,
     "MPI wait states that do not cause further wait states"},
    {M::MpiWaitTerminalLs, "mpi_wait_terminal_ls", "Late Sender", M::MpiWaitTerminal, "sec",
     false, D, "Terminal MPI Late Sender wait states", M::MpiLatesender, M::MpiWaitPropagatingLs},
    {M::MpiWaitTerminalLr, "mpi_wait_terminal_lr", "Late Receiver", M::MpiWaitTerminal, "sec",
     false, D, "Terminal MPI Late Receiver wait states", M::MpiLatereceiver,
     M::MpiWaitPropagatingLr},
    {M::WaitstatesDirectVsIndirect, "waitstates_direct_vs_indirect",
     "Direct vs. indirect wait states", kRoot, "sec", false, S,
     "Wait states caused directly by delays, or indirectly by other wait states"},
    {M::MpiWaitDirect, "mpi_wait_direct", "Direct wait states", M::WaitstatesDirectVsIndirect,
     "sec", false, S, "MPI wait states caused directly by delays"},
    {M::MpiWaitDirectLatesender, "mpi_wait_direct_latesender", "Late Sender", M::MpiWaitDirect,
     "sec", false, D, "Direct MPI Late Sender wait states", M::MpiLatesender,
     M::MpiWaitIndirectLatesender},
    {M::MpiWaitDirectLatereceiver, "mpi_wait_direct_latereceiver", "Late Receiver",
     M::MpiWaitDirect, "sec", false, D, "Direct MPI Late Receiver wait states",
     M::MpiLatereceiver, M::MpiWaitIndirectLatereceiver},
    {M::MpiWaitIndirect, "mpi_wait_indirect", "Indirect wait states",
     M::WaitstatesDirectVsIndirect, "sec", false, S,
     "MPI wait states caused indirectly, by other wait states"},
    {M::MpiWaitIndirectLatesender, "mpi_wait_indirect_latesender", "Late Sender",
     M::MpiWaitIndirect, "sec", false, C, "Indirect MPI Late Sender wait states"},
    {M::MpiWaitIndirectLatereceiver, "mpi_wait_indirect_latereceiver", "Late Receiver",
     M::MpiWaitIndirect, "sec", false, C, "Indirect MPI Late Receiver wait states"},
    {M::CriticalPath, "critical_path", "Critical path", kRoot, "sec", false, C,
     "Profile of the application's critical path"},
    {M::CriticalPathImbalance, "critical_path_imbalance", "Imbalance", M::CriticalPath, "sec",
     false, C, "Imbalanced critical-path routines"},
    {M::NearCriticalPath, "near_critical_path", "Near-critical path", kRoot, "sec", false, C,
     "Non-waiting time whose slack is at most the --near-critical share of the runtime (by "
     "default 1 %): what becomes critical next when the critical path shrinks"},
    {M::PerformanceImpact, "performance_impact", "Performance impact", kRoot, "sec", false, S,
     "Performance impact of activities on the critical path and off it"},
    {M::PerformanceImpactCriticalpath, "performance_impact_criticalpath",
     "Critical-path activities", M::PerformanceImpact, "sec", false, S,
     "Overall resource consumption caused by activities on the critical path"},
    {M::CriticalPathActivities, "critical_path_activities", "Activity impact",
     M::PerformanceImpactCriticalpath, "sec", false, C,
     "Resource consumption of activities on the critical path"},
    {M::CriticalImbalanceImpact, "critical_imbalance_impact", "Imbalance impact",
     M::PerformanceImpactCriticalpath, "sec", false, C,
     "Performance impact of load imbalance on the critical path"},
    {M::IntraPartitionImbalance, "intra_partition_imbalance", "Intra-partition imbalance",
     M::CriticalImbalanceImpact, "sec", false, C,
     "Performance impact of load imbalance within process partitions that perform activities "
     "on the critical path"},
    {M::InterPartitionImbalance, "inter_partition_imbalance", "Inter-partition imbalance",
     M::CriticalImbalanceImpact, "sec", false, C,
     "Performance impact of load imbalance between process partitions that perform different "
     "activities"},
    {M::NonCriticalPathActivities, "non_critical_path_activities",
     "Non-critical-path activities", M::PerformanceImpact, "sec", false, C,
     "Overall resource consumption of activities off the critical path"},
};

}  // namespace

const std::vector<MetricInfo>& metric_table() { return kTable; }

const MetricInfo& metric_info(Metric m) {
  static const std::vector<const MetricInfo*> by_id = [] {
    std::vector<const MetricInfo*> v(kMetricCount, nullptr);
    for (const auto& info : kTable) v[static_cast<std::size_t>(info.id)] = &info;
    return v;
  }();
  return *by_id[static_cast<std::size_t>(m)];
}

bool is_mpi_only(Metric m) {
  switch (m) {
    case M::MpiInitCompletion: case M::MpiFinalizeWait: case M::MpiBarrierWait:
    case M::MpiBarrierCompletion: case M::MpiLatesender: case M::MpiLatesenderWo:
    case M::MpiLswoDifferent: case M::MpiLswoSame: case M::MpiLatereceiver:
    case M::MpiEarlyreduce: case M::MpiEarlyscan: case M::MpiLatebroadcast: case M::MpiWaitNxn:
    case M::MpiNxnCompletion: case M::SyncsSend: case M::SyncsRecv: case M::SyncsColl:
    case M::CommsSend: case M::CommsRecv: case M::CommsCxch: case M::CommsCsrc:
    case M::CommsCdst: case M::BytesSent: case M::BytesRcvd: case M::BytesCout:
    case M::BytesCin: case M::MpiSlrCount: case M::MpiSlsCount: case M::MpiSlswoCount:
    case M::MpiClrCount: case M::MpiClsCount: case M::MpiClswoCount:
    case M::MpiWaitIndirectLatesender: case M::MpiWaitIndirectLatereceiver:
    case M::MpiWaitPropagatingLs: case M::MpiWaitPropagatingLr:
      return true;
    default:
      return false;
  }
}

bool is_openmp(Metric m) {
  return (m >= M::OmpTime && m <= M::OmpFlush) ||
         m == M::OmpIdleThreads || m == M::OmpLimitedParallelism ||
         (m >= M::DelayOmp && m <= M::DelayOmpidleLongterm);
}

bool is_backward(Metric m) {
  return (m >= M::Delay && m <= M::MpiWaitIndirectLatereceiver) || m == M::NearCriticalPath;
}

void finalize_metric_tree(Severity& sev) {
  // Children follow parents in the table, so a reverse walk sees every child before its parent.
  const auto& table = metric_table();
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    if (it->derivation == Derivation::Difference) {
      // Cube derives these per call path and location; stored, they may not be negative.
      double* out = sev.row(it->id);
      const double* from = sev.row(it->from);
      const double* less = sev.row(it->less);
      for (std::size_t c = 0; c < sev.callpaths(); ++c) {
        const double d = from[c] - less[c];
        out[c] = d > 0.0 ? d : 0.0;
      }
      continue;
    }
    if (it->derivation != Derivation::SumChildren) continue;
    double* out = sev.row(it->id);
    for (std::size_t c = 0; c < sev.callpaths(); ++c) out[c] = 0.0;
    for (const auto& child : table) {
      if (child.parent != it->id) continue;
      const double* in = sev.row(child.id);
      for (std::size_t c = 0; c < sev.callpaths(); ++c) out[c] += in[c];
    }
  }
}

}  // namespace cpreplay::analysis
