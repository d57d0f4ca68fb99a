// SPDX-License-Identifier: BSD-3-Clause
// What the terminal summary and the --json file report: global results, computed on rank 0.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cpreplay {

/// One call path of the critical-path table (the paper's Table I). Times in seconds.
struct SummaryCallpath {
  std::string path;           ///< region names from the root, joined by '/'
  std::string name;           ///< the call path's own region name
  double critical_path = 0.0; ///< its time on the critical path
  double critical_path_share = 0.0;  ///< critical_path / critical-path length
  double imbalance = 0.0;             ///< critical_path_imbalance, summed over ranks
  double imbalance_share = 0.0;       ///< imbalance / critical-path length
  double imbalance_percent = 0.0;     ///< imbalance / average time per rank (paper's metric)
  double profile_imbalance = 0.0;     ///< max - average of its time per rank
  double time_total = 0.0;            ///< exclusive time summed over ranks
  double time_average = 0.0;          ///< time_total / ranks
  double time_max = 0.0;              ///< largest exclusive time on one rank
};

/// One wait-state metric with where it occurs.
struct SummaryWaitMetric {
  std::string metric;        ///< Scalasca unique name, e.g. mpi_latesender
  std::string name;          ///< display name, e.g. Late Sender
  double seconds = 0.0;      ///< summed over call paths and ranks
  double share = 0.0;        ///< seconds / total allocation time
  struct Where {
    std::string path;
    double seconds = 0.0;
  };
  std::vector<Where> callpaths;  ///< largest first (at most 3)

  /// A call path whose delay causes this waiting (scalasca-metrics.md §8): its delay costs of
  /// the matching pattern (e.g. delay_latesender and delay_latesender_longterm for Late Sender),
  /// summed over ranks. Only call paths that pass the summary's rule are listed (README, "The
  /// summary": >= 10 % of the wait state and >= 1 % of the critical-path length).
  struct Cause {
    std::string path;
    double short_term = 0.0;  ///< short-term delay: waiting it caused directly
    double long_term = 0.0;   ///< long-term delay: waiting it caused through other wait states
    struct RankDelay {
      int rank = 0;
      double seconds = 0.0;  ///< short + long-term delay on this call path on this rank
    };
    std::vector<RankDelay> ranks;  ///< the ranks with the most delay here, largest first (<= 4)
    int rank_count = 0;            ///< ranks with more than 1 ns of delay here
    int named_ranks = 0;  ///< the first `named_ranks` of `ranks` hold >= 90 % of it; 0: spread
    std::string rank_names;  ///< "rank 0", "ranks 2 and 5", "ranks 0-3", "12 ranks"
  };
  bool has_causes = false;      ///< a delay metric exists for this pattern (not for completions)
  double delay_short_term = 0.0;  ///< the pattern's short-term delay, all call paths and ranks
  double delay_long_term = 0.0;   ///< the pattern's long-term delay, all call paths and ranks
  std::vector<Cause> caused_by;   ///< largest first (at most 3)
  bool has_classes = false;       ///< Late Sender / Late Receiver: indirect and propagating exist
  double indirect = 0.0;     ///< waiting caused by the causer's own waiting (mpi_wait_indirect_*)
  double propagating = 0.0;  ///< waiting that causes waiting elsewhere (mpi_wait_propagating_*)
};

/// One wait-state instance (like Scalasca's statistics file), for timeline viewers.
struct SummaryWaitInstance {
  std::string metric;
  std::string name;
  std::string path;
  int rank = 0;
  double start = 0.0;     ///< seconds since the trace's first event
  double duration = 0.0;  ///< seconds of waiting
};

struct SummaryImpact {
  double total = 0.0;                     ///< ranks x critical-path length
  double critical_path_activities = 0.0;  ///< summed over call paths and ranks
  double imbalance_impact = 0.0;
  double intra_partition = 0.0;
  double inter_partition = 0.0;
  double non_critical_path_activities = 0.0;
};

/// One call path of the what-if block (docs/what-if.md). Times in seconds, sums over ranks.
struct SummaryWhatIfCallpath {
  std::string path;
  std::string name;
  double critical_path = 0.0;  ///< its time on the critical path
  double imbalance = 0.0;      ///< its critical-path imbalance
  /// One of the --what-if-top call paths by critical-path time: the three gains are computed.
  bool has_gains = false;
  double zeroing_gain = 0.0;    ///< runtime - runtime with its time at zero on every rank
  double balance_gain = 0.0;    ///< runtime - runtime with every visit at the mean visit time
  double rebalance_gain = 0.0;  ///< runtime - runtime with each rank's total at the average
  double near_critical = 0.0;   ///< non-waiting time with slack <= δ x runtime
};

/// A user's --what-if scenario: the changes, the predicted runtime and its critical path.
struct SummaryWhatIfScenario {
  std::vector<std::pair<std::string, double>> changes;  ///< region name, factor
  double runtime = 0.0;
  struct OnPath {
    std::string path;
    double seconds = 0.0;  ///< on the re-timed run's critical path, summed over ranks
    double share = 0.0;    ///< of that critical path's length
  };
  std::vector<OnPath> critical_path;  ///< its top call paths, largest first
};

struct SummaryWhatIf {
  bool computed = false;  ///< false with --no-what-if
  double runtime = 0.0;   ///< the trace's runtime, re-measured by the replay (= wall_clock)
  double near_critical_fraction = 0.0;  ///< δ (--near-critical)
  int top = 0;                          ///< --what-if-top K
  std::vector<SummaryWhatIfCallpath> callpaths;  ///< the top K first, then other near-critical
  std::vector<SummaryWhatIfScenario> scenarios;
  std::uint64_t released = 0;  ///< synchronizations replayed without their partner (cycles)
};

/// An OpenMP barrier where threads wait (imbalance of the construct before it).
struct SummaryOmpBarrier {
  std::string path;       ///< the barrier's call path
  std::string construct;  ///< the region it ends or stands in, e.g. "!$omp for @a.c:23"
  double seconds = 0.0;   ///< barrier waiting, all threads
  std::vector<std::string> last_to_arrive;  ///< "rank.thread" of the threads that waited least
  std::vector<std::string> waiting_most;    ///< "rank.thread" of the threads that waited most
  std::vector<double> waiting_most_s;       ///< their waiting, seconds
};

/// OpenMP results of a hybrid trace (all threads summed in location order).
struct SummaryOpenMp {
  bool hybrid = false;
  int locations = 0;                  ///< thread locations of all ranks
  double idle_serial = 0.0;           ///< omp_idle_threads less limited parallelism
  double limited_parallelism = 0.0;   ///< omp_limited_parallelism
  double management = 0.0;            ///< omp_management
  double ibarrier_wait = 0.0;         ///< omp_ibarrier_wait
  double ebarrier_wait = 0.0;         ///< omp_ebarrier_wait
  double lock_critical = 0.0;         ///< omp_lock_contention_critical
  double lock_api = 0.0;              ///< omp_lock_contention_api
  double worker_time = 0.0;           ///< time of the worker threads (in allocation_time)
  std::vector<SummaryOmpBarrier> barriers;  ///< largest waiting first, at most 3
};

struct Summary {
  std::string trace;
  std::string report;
  std::string json;
  int ranks = 0;
  int processes = 1;             ///< analysis processes (mpirun -np M), each holding a block
  int ranks_per_process_min = 1; ///< trace ranks the smallest block holds
  int ranks_per_process_max = 1; ///< trace ranks the largest block holds
  std::uint64_t events = 0;
  double wall_clock = 0.0;             ///< first to last event, seconds
  double critical_path_length = 0.0;   ///< seconds
  double allocation_time = 0.0;        ///< inclusive time of the roots, summed over ranks
  double analysis_seconds = 0.0;
  std::uint64_t p2p_clock_violations = 0;
  std::uint64_t coll_clock_violations = 0;
  bool time_corrected = false;          ///< --time-correct was given
  std::uint64_t corrected_events = 0;   ///< events whose timestamp moved
  int corrected_ranks = 0;              ///< ranks whose clock was shifted
  double max_correction = 0.0;          ///< largest shift, seconds
  bool correction_consistent = true;    ///< false: constant offsets could not remove them all
  std::uint64_t jumped_events = 0;      ///< event moves by forward jumps (drifting clocks)
  double max_jump = 0.0;                ///< largest forward jump, seconds
  bool partial = false;                 ///< --partial cut the trace (a rank stopped mid-run)
  int partial_first_rank = 0;           ///< the rank whose events end first
  int partial_incomplete_ranks = 0;
  std::uint64_t partial_events_cut = 0;
  std::uint64_t partial_regions_closed = 0;
  std::uint64_t partial_unmatched_messages = 0;
  std::uint64_t partial_collectives_dropped = 0;
  std::vector<SummaryCallpath> callpaths;  ///< by critical-path time, largest first
  std::vector<SummaryWaitMetric> waits;    ///< largest first, only those > 0
  SummaryImpact impact;
  std::vector<std::string> findings;       ///< one sentence each
  std::vector<SummaryWaitInstance> worst;  ///< the most severe wait-state instances
  SummaryWhatIf what_if;
  SummaryOpenMp openmp;                    ///< hybrid traces only (openmp.hybrid)
};

}  // namespace cpreplay
