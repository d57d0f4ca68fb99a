// SPDX-License-Identifier: BSD-3-Clause
// The re-timing replay: every event's time recomputed for changed call-path durations, several
// scenarios ("clocks") at once, plus each activity's slack in the unchanged run (docs/what-if.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/world.hpp"

namespace cpreplay::replay {

namespace detail::retiming {
class MatchRecorder;
}

/// The forward replay's message matching, kept for the re-timing replay so that the what-if
/// phase does not match the messages again (RetimeRequest::matches): one sink per held rank,
/// to be given to match_messages beside the wait-state passes'.
class RetimeMatches {
 public:
  RetimeMatches(const Definitions& defs, const Shard& shard);
  ~RetimeMatches();
  RetimeMatches(const RetimeMatches&) = delete;
  RetimeMatches& operator=(const RetimeMatches&) = delete;

  /// The sink of the i-th held rank (Shard::traces order).
  MessageSink* sink(std::size_t i);
  detail::retiming::MatchRecorder& recorder(std::size_t i) { return *recorders_[i]; }
  /// The messages' partner ranks, from the traces' message records: after this, the re-timing
  /// replay needs nothing of those records (LocalTrace::release_messages).
  void resolve_peers();

  /// The forward replay's collective timings of the i-th held rank (a TimingSink beside the
  /// wait-state pass's), kept as the re-timing replay's rules...
  void collectives(std::size_t i, const CollInstance* instances, const CollTiming* timings,
                   std::size_t n);
  /// ...once all came, with the instance tables that reduction returned (reduce_collectives;
  /// they must outlive the re-timing replay): it then takes both instead of reducing the
  /// timings again.
  void collectives_done(const std::vector<CollectiveTable>* tables) { tables_ = tables; }
  const std::vector<CollectiveTable>* collective_tables() const { return tables_; }

 private:
  std::vector<std::unique_ptr<detail::retiming::MatchRecorder>> recorders_;
  const std::vector<CollectiveTable>* tables_ = nullptr;
};

/// How one scenario changes the exclusive time of one call path (the activities whose innermost
/// open region is that call path: the time between two consecutive events). Only non-waiting
/// time is ever scaled: waiting is re-derived from the partners' new times.
struct TimeChange {
  enum class Kind : std::uint8_t {
    Factor,     ///< its non-waiting time times `value` (>= 0)
    Balance,    ///< every visit takes the mean non-waiting time over all ranks and visits
    Rebalance,  ///< each rank's total takes the average over the ranks that run it
  };
  std::uint32_t clock = 0;  ///< the scenario, 1 .. clocks - 1 (clock 0 is the unchanged run)
  std::uint32_t callpath = 0;
  Kind kind = Kind::Factor;
  double value = 1.0;
};

struct RetimeRequest {
  std::uint32_t clocks = 1;  ///< scenarios carried together, clock 0 = nothing changed
  std::vector<TimeChange> changes;  ///< at most one per (clock, call path)
  /// Activities of the unchanged run whose slack is at most this many ticks are summed per call
  /// path into RetimeResult::near_critical. Negative: no slack pass.
  double slack_limit = -1.0;
  /// A clock whose critical path is profiled (RetimeResult::path_profile), or -1.
  int path_clock = -1;
  std::size_t window = 4096;  ///< --window: window / 4 parts of the run replayed at a time
  bool tolerate_unmatched = false;  ///< --partial: unmatched messages carry no constraint
  /// The forward replay's matching of the same traces (its tables are taken over), or null:
  /// the re-timing replay matches the messages itself.
  RetimeMatches* matches = nullptr;
  /// Hybrid traces: per call path, 1 where its region is an OpenMP barrier (explicit or
  /// implicit; the analysis layer recognises them by name, as PEARL does). Their instances
  /// synchronize a thread team. Empty: no OpenMP barriers.
  std::vector<std::uint8_t> barrier_paths;
  /// Pure-MPI traces: per held rank (Shard::traces order), per call path, the rank's exclusive
  /// ticks and visits as the profile counted them from these very timestamps
  /// (analysis::CallpathTicks): the balance statistics start from them instead of walking every
  /// event again. Empty: the replay counts them itself (hybrid traces always do).
  std::vector<const std::int64_t*> profile_exclusive;
  std::vector<const std::uint64_t*> profile_visits;
};

struct RetimeResult {
  /// Per clock: the run's length (first to last event over all ranks) in ticks; the same on
  /// every rank. Clock 0 equals the trace's own length: the replay checks every event of it.
  std::vector<std::int64_t> runtime;
  /// Per held rank (in rank order), per call path: seconds of non-waiting time in activities
  /// whose slack in the unchanged run is at most the request's limit (rank-major rows of
  /// tree.size() values; empty without a slack pass).
  std::vector<double> near_critical;
  /// Hybrid traces: the same for every worker thread of the held ranks, rank-major and then in
  /// thread order (threads 1, 2, ...), one row per thread; empty for pure-MPI traces.
  std::vector<double> thread_near_critical;
  /// Hybrid traces: per held rank, the rows of all its threads summed (in ticks, then
  /// seconds); empty for pure-MPI traces, where `near_critical` is that.
  std::vector<double> rank_near_critical;
  /// Per held rank, per call path (rank-major rows): seconds of the path clock's critical path
  /// (its exclusive durations in that scenario along the longest path of the re-timed run; a
  /// hybrid rank's row holds all its threads).
  std::vector<double> path_profile;
  std::uint64_t parts = 0;  ///< parts the run splits into at collectives on all ranks
  std::uint32_t forward_rounds = 0;   ///< the same for every number of processes
  std::uint32_t backward_rounds = 0;
  /// Synchronizations whose partner's record never came (clock-condition violations can make
  /// the rules' partners depend on each other in a cycle): replayed as plain activities. All
  /// ranks.
  std::uint64_t released = 0;
  double prepare_seconds = 0.0;   ///< this process: matching, rules, cuts, balance factors
  double forward_seconds = 0.0;   ///< this process: the forward rounds and the joins
  double backward_seconds = 0.0;  ///< this process: the slack rounds
};

/// Re-times the run for `request.clocks` scenarios in one forward replay that carries a value
/// per clock on every record, then (with a slack limit) replays backward once for the slack of
/// the unchanged run. The model (docs/what-if.md): on a rank events keep their order and the
/// time between consecutive events, scaled where the scenario changes its call path; an event
/// that completes a synchronization (a receive, a synchronous send's completion, a collective's
/// end) ends at the latest new ready time of the constraints that bind it plus the original time
/// from the latest original ready time to its end. Messages are matched as the forward replay
/// matches them, collectives bind as the wait-state rules say. The run is cut into parts at the
/// collectives on all ranks that every rank leaves only after the last one entered; all parts are
/// replayed at once, each relative to its start, and joined by one reduction per window.
/// The shard may hold any number of ranks: each step runs for all of them, records between
/// them move in memory in the same rounds, and every reduction is exact (integer sums, max,
/// min), so every value and the round counts are the same for every number of processes.
/// Hybrid traces (shard.workers): every thread is re-timed beside its master, part by part; its
/// OpenMP forks, barriers, joins and lock hand-overs bind in memory (docs/what-if.md, "Threads";
/// the barriers are request.barrier_paths).
/// Throws ReplayError (after every rank finished the rounds) when clock 0 does not reproduce an
/// event's time. Test hook: CPREPLAY_TEST_RETIME_NUDGE=R:E moves event E of rank R by one tick
/// in clock 0 (tests/e2e/what_if_test.cpp shows the check catches it);
/// CPREPLAY_TEST_RETIME_NO_CUTS replays the run as one part (the parts must not change a value);
/// CPREPLAY_TEST_RETIME_UNSHARED ignores request.profile_exclusive and the forward replay's
/// collective rules (the same values).
/// MPI: collective on world.
RetimeResult retime(const World& world, const Definitions& defs, const CallTree& tree,
                    const Shard& shard, const RetimeRequest& request);

}  // namespace cpreplay::replay
