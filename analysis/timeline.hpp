// SPDX-License-Identifier: BSD-3-Clause
// The run as timeline events for --timeline: each location's call-path activity (nested, in
// time order) and wait-state instances, produced chunk by chunk, with a global event budget that
// merges short activity into its parent.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/critical_path.hpp"
#include "analysis/metric_table.hpp"
#include "analysis/openmp.hpp"
#include "analysis/wait_states.hpp"
#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "cpreplay/shard.hpp"
#include "replay/world.hpp"

namespace cpreplay::analysis {

/// Trace time as integer nanoseconds since the trace's first event (over all ranks). Rounding
/// is monotone, so intervals nested in ticks stay nested in nanoseconds.
struct ViewClock {
  Ticks origin = 0;
  std::uint64_t ticks_per_second = 1;
  std::uint64_t ns(Ticks t) const;
  /// Ticks of a duration in seconds (a wait state's length), rounded.
  Ticks ticks(double seconds) const;
  double ns_per_tick = 1.0;  ///< 1e9 / ticks_per_second
};

/// The first and last event time over all ranks (all their threads). MPI: collective on world.
ViewClock view_clock(const replay::World& world, const Definitions& defs, const Shard& shard,
                     Ticks* last = nullptr);

/// What --timeline-max-events keeps, identical on every rank.
struct TimelineBudget {
  std::uint64_t max_events = 0;
  std::uint64_t stretches = 0;       ///< critical-path stretches, all kept
  std::uint64_t flows = 0;           ///< flow events: 2 per hand-over between ranks
  std::uint64_t activity_total = 0;  ///< complete events of call-path activity in the run
  std::uint64_t activity_kept = 0;
  std::uint64_t activity_min_ns = 0;  ///< shorter activity is merged into its parent
  std::uint64_t waits_total = 0;
  std::uint64_t waits_kept = 0;
  std::uint64_t wait_min_ns = 0;  ///< shorter wait states are left out
  bool reduced() const { return activity_kept < activity_total || waits_kept < waits_total; }
  std::uint64_t kept() const { return stretches + flows + activity_kept + waits_kept; }
  std::uint64_t total() const { return stretches + flows + activity_total + waits_total; }
};

/// One event of a thread's timeline. Activity: a region visit; Wait: a wait-state instance.
/// Times in ns from ViewClock.
struct TimelineEvent {
  enum Kind : std::uint8_t { Activity, Wait };
  std::uint64_t ts_ns = 0;
  std::uint64_t dur_ns = 0;
  double wait = 0.0;             ///< Wait: seconds
  std::uint32_t callpath = 0;    ///< the region visit's call path, or the wait's cnode(X)
  Rank partner = -1;             ///< Wait: the rank waited for (OpenMP: the thread)
  Metric metric = Metric::Time;  ///< Wait: its wait-state metric
  Kind kind = Activity;
  bool partner_is_thread = false;  ///< Wait: an OpenMP wait state; `partner` is a thread
};

/// One location's timeline (a pure-MPI rank, or one thread of a hybrid rank), event by event in
/// chunks: activity first (in order of Enter, parents before children), then wait states (in
/// order of their start: the MPI ones of `waits` and the OpenMP ones of `omp` merged). Holds a
/// few thousand events at a time whatever the trace size: a first pass notes the Leave of the
/// few regions that stay open across a block of events, so every other Leave is found within
/// one block. `waits` (MPI wait states, in event order) may be null, as on a worker thread;
/// `omp` holds `omp_count` OpenMP wait states in order of begin.
/// MPI: local.
class TimelineSource {
 public:
  TimelineSource(const LocalTrace& trace, const WaitStateResult* waits, const OmpWaitState* omp,
                 std::size_t omp_count, const ViewClock& clock);

  /// Adds this rank's duration histograms (activity, then wait states; kHistogramBuckets each)
  /// to `into`, and drops them.
  void take_histograms(std::vector<std::uint64_t>& into);
  /// Keeps the activity and wait states the budget keeps.
  void keep(const TimelineBudget& budget);
  /// Appends up to about `max` events to `out`; false once everything has been produced.
  bool next(std::vector<TimelineEvent>& out, std::size_t max);

  static const std::size_t kHistogramBuckets;

 private:
  struct Pending {
    std::uint64_t ts_ns;
    std::uint64_t dur_ns;
    std::uint32_t callpath;
    std::uint8_t state;  ///< 0 open, 1 kept, 2 merged into its parent
  };
  void flush_activity(std::vector<TimelineEvent>& out);
  void flush_waits(std::vector<TimelineEvent>& out);
  std::size_t mpi_waits() const { return waits_ ? waits_->waits.size() : 0; }

  const LocalTrace& trace_;
  const WaitStateResult* waits_;
  const OmpWaitState* omp_;
  std::size_t omp_count_;
  ViewClock clock_;
  std::vector<std::uint64_t> activity_hist_;
  std::vector<std::uint64_t> wait_hist_;
  /// (Enter, leave time in ns) of regions open at a block boundary (or never left), by Enter.
  std::vector<std::pair<EventIdx, std::uint64_t>> long_;
  std::uint64_t activity_min_ns_ = 0;
  std::uint64_t wait_min_ns_ = 0;
  // Production state.
  EventIdx next_event_ = 0;
  std::size_t next_long_ = 0;
  std::size_t next_wait_ = 0;
  std::size_t next_omp_ = 0;
  std::vector<Pending> pending_;  ///< region visits of this block, in Enter order
  std::size_t pending_head_ = 0;
  std::vector<std::uint32_t> stack_;       ///< open visits: index into pending_, or kLongVisit
  std::vector<TimelineEvent> same_start_;  ///< wait states starting together, longest first
};

/// A wait state's name on the timeline: the metric's display name ("Late Sender"), the OpenMP
/// ones told apart from the MPI ones ("Wait at OpenMP Barrier", "OpenMP Lock Contention").
const char* timeline_wait_name(Metric metric);

/// Chooses the shortest kept activity and wait state so that the whole timeline fits
/// `max_events` (critical path first, then the longest wait states, then activity), from the
/// histograms of all ranks (`sources`: this process's ranks), and tells every source.
/// `local_stretches`: the held ranks' critical-path stretches; `local_handovers`: how many of
/// them took the path over from another rank (each gets a pair of flow events).
/// MPI: collective on world.
TimelineBudget timeline_budget(const replay::World& world,
                               const std::vector<TimelineSource*>& sources,
                               std::uint64_t max_events, std::uint64_t local_stretches,
                               std::uint64_t local_handovers);

}  // namespace cpreplay::analysis
