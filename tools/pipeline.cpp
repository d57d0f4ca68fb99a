// SPDX-License-Identifier: BSD-3-Clause
// The stage list of cpreplay: load, preprocess, forward, backward, reduce, write.
#include "tools/pipeline.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "analysis/critical_path.hpp"
#include "analysis/indicators.hpp"
#include "analysis/openmp.hpp"
#include "analysis/profile.hpp"
#include "analysis/root_cause.hpp"
#include "analysis/summary.hpp"
#include "analysis/wait_states.hpp"
#include "analysis/what_if.hpp"
#include "cpreplay/error.hpp"
#include "cpreplay/shard.hpp"
#include "io/cube_writer.hpp"
#include "io/otf2_reader.hpp"
#include "io/output_file.hpp"
#include "io/summary_writer.hpp"
#include "replay/clock_correction.hpp"
#include "replay/collectives.hpp"
#include "replay/memory.hpp"
#include "replay/messages.hpp"
#include "replay/preprocess.hpp"
#include "tools/early_read.hpp"
#include "tools/report.hpp"
#include "tools/views.hpp"

namespace cpreplay::tools {
namespace {

constexpr const char* kCreator = "cpreplay " CPREPLAY_VERSION;  // project(VERSION), CMakeLists.txt
constexpr int kMaxJumpRounds = 64;

std::string default_output(const std::string& anchor) {
  const auto slash = anchor.find_last_of('/');
  return (slash == std::string::npos ? std::string() : anchor.substr(0, slash + 1)) +
         "cpreplay.cubex";
}

/// Peak resident memory of this process in bytes.
std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

/// Resident memory of this process now, in bytes (0 where /proc/self/statm is not there).
std::uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

using replay::release_free_memory;

std::uint64_t sum_over_ranks(const replay::World& world, std::uint64_t v) {
  std::uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  return total;
}

/// Hands each round's matched messages to two sinks (the wait-state pass and the what-if's
/// record of the matching).
class TeeSink final : public replay::MessageSink {
 public:
  TeeSink(replay::MessageSink* a, replay::MessageSink* b) : a_(a), b_(b) {}
  void receives(const replay::MatchedRecv* m, std::size_t n, EventIdx done) override {
    a_->receives(m, n, done);
    b_->receives(m, n, done);
  }
  void sends(const replay::MatchedSend* m, std::size_t n, EventIdx done) override {
    a_->sends(m, n, done);
    b_->sends(m, n, done);
  }

 private:
  replay::MessageSink* a_;
  replay::MessageSink* b_;
};

/// The state the stages hand to each other. Every stage is collective on world; errors inside
/// them surface through World::agree, so all ranks stop at the same boundary.
class Pipeline {
 public:
  Pipeline(const Settings& settings, replay::World& world, std::unique_ptr<EarlyTrace> early)
      : settings_(settings),
        world_(world),
        progress_(world, settings.quiet || settings.count_ranks || settings.count_events),
        output_(settings.output.empty() ? default_output(settings.anchor) : settings.output),
        early_(std::move(early)) {
    // The summary's analysis time includes the reading done while MPI started.
    if (early_) progress_.add_earlier(seconds(early_->start, early_->end));
  }

  /// Definitions everywhere; checks the process count (at most the trace's ranks) and threads,
  /// and shares the ranks out. False: nothing more to do.
  bool load_definitions() {
    progress_.begin("definitions");
    // Rank 0 reads the definitions file and hands it on: at thousands of ranks, one reader
    // instead of a storm of opens and parses of the same file on the shared file system.
    // A process that read them while MPI started has them already (rank 0's error, if any,
    // is rethrown here as if it had read them now).
    std::string bytes;
    world_.agree([&] {
      if (world_.rank() != 0) return;
      defs_ = early_ ? early_definitions() : io::read_definitions(settings_.anchor);
      bytes = encode_definitions(defs_);
    });
    world_.broadcast(bytes);
    world_.agree([&] {
      if (world_.rank() == 0) return;
      defs_ = early_ && !early_->definitions_error ? early_definitions()
                                                   : decode_definitions(bytes);
    });
    if (settings_.count_ranks || settings_.count_events) {
      if (world_.rank() != 0) return false;
      if (settings_.count_ranks) std::printf("%d\n", defs_.ranks());
      if (settings_.count_events) {
        // What every location announces (Score-P counts its records): for sizing jobs. Every
        // thread of a hybrid rank is read and held by the process that holds the rank.
        std::uint64_t events = 0;
        for (const Process& p : defs_.processes) {
          events += p.events;
          for (const WorkerThread& w : p.workers) events += w.events;
        }
        std::printf("%llu\n", static_cast<unsigned long long>(events));
      }
      return false;
    }
    // Each process analyzes a block of ranks (docs/replay-engine.md §1): any count up to N.
    if (world_.size() > defs_.ranks())
      throw UsageError(settings_.anchor + " has " + std::to_string(defs_.ranks()) +
                       " MPI ranks but cpreplay runs on " + std::to_string(world_.size()) +
                       " processes: use at most " + std::to_string(defs_.ranks()) +
                       " (mpirun -np " + std::to_string(defs_.ranks()) + " or fewer)");
    hybrid_ = defs_.hybrid();
    // The block of trace ranks this process analyzes (docs/replay-engine.md §1).
    shard_ = Shard(RankBlocks(defs_.ranks(), world_.size()), world_.rank());
    const std::string detail = std::to_string(defs_.ranks()) + " ranks, " +
                               std::to_string(defs_.regions.size()) + " regions";
    if (early_)
      phase_end(detail + " (read while MPI started)",
                seconds(early_->start, early_->definitions_end));
    else
      phase_end(detail);
    return true;
  }

  bool hybrid() const { return hybrid_; }

  /// --read-only: decode the events and report how long that took, nothing else.
  void decode_only() {
    progress_.begin("decode");
    std::uint64_t n = 0;
    world_.agree([&] {
      for (Rank r = shard_.first(); r < shard_.last(); ++r)
        n += io::decode_events_only(settings_.anchor, defs_, r);
    });
    phase_end(std::to_string(sum_over_ranks(world_, n)) + " events (read-only)");
    report_peak_memory();
  }

  /// The report (and --json) paths are tried first, so an unwritable path fails before work.
  /// The probe's temporary file goes at once: a run killed mid-analysis leaves nothing behind,
  /// whatever signal ends it.
  void probe_outputs() {
    world_.agree([&] {
      if (world_.rank() != 0) return;
      if (!settings_.no_what_if) analysis::check_what_if_regions(defs_, what_if_settings());
      { io::CubeWriter probe(output_, io::CubeReportDef{}); }
      if (!settings_.json.empty()) io::check_json_writable(settings_.json);
      if (!settings_.timeline.empty()) io::check_writable(settings_.timeline, "timeline");
      if (!settings_.overview.empty()) io::check_writable(settings_.overview, "overview");
    });
  }

  void load_events() {
    progress_.begin("events");
    const bool early = early_ && early_->events_read;
    world_.agree([&] {
      if (!early) return read_shard(settings_, defs_, shard_, local_trees_);
      if (early_->events_error) std::rethrow_exception(early_->events_error);
      shard_ = std::move(early_->shard);
      local_trees_ = std::move(early_->local_trees);
    });
    release_free_memory();  // the OTF2 reader's buffers
    const std::string detail =
        std::to_string(sum_over_ranks(world_, shard_.events())) + " events";
    // Rank 0 prints: its own read says how long reading took.
    if (early)
      phase_end(detail + " (read while MPI started)",
                seconds(early_->definitions_end, early_->end));
    else
      phase_end(detail);
    early_.reset();
  }

  /// --partial cut, unified call tree, and the communication-free profile.
  void preprocess() {
    progress_.begin("preprocess");
    if (settings_.partial) {
      std::vector<bool> barrier_region(defs_.regions.size(), false);
      for (std::size_t r = 0; r < defs_.regions.size(); ++r)
        barrier_region[r] = analysis::is_omp_barrier(analysis::omp_construct(defs_.regions[r]));
      cut_ = replay::cut_to_common_end(world_, shard_, barrier_region);
    }
    tree_ = replay::unify_call_trees(world_, local_trees_, shard_);
    std::vector<CallTree>().swap(local_trees_);
    sev_.assign(shard_.size(), analysis::Severity(tree_.size()));
    if (hybrid_) {
      // Every thread of a rank is here: the OpenMP pass runs in memory (replay-engine.md §4).
      worker_sev_.resize(shard_.size());
      worker_tail_.resize(shard_.size());
      // The views show every OpenMP wait-state instance; kept only when they are asked for.
      const bool views = !settings_.timeline.empty() || !settings_.overview.empty();
      if (views) omp_waits_.resize(shard_.size());
      for (std::size_t i = 0; i < shard_.size(); ++i) {
        worker_sev_[i].assign(shard_.workers[i].size(), analysis::Severity(tree_.size()));
        std::vector<analysis::Severity*> sevs{&sev_[i]};
        for (analysis::Severity& w : worker_sev_[i]) sevs.push_back(&w);
        analysis::openmp_profile_pass(defs_, tree_, shard_.traces[i], shard_.workers[i], sevs,
                                      views ? &omp_waits_[i] : nullptr, &worker_tail_[i]);
      }
    } else {
      // What-if's balance statistics start from the profile's ticks, while the timestamps are
      // the same (--time-correct changes them later).
      const bool keep = !settings_.no_what_if && !settings_.time_correct;
      if (keep) profile_ticks_.resize(shard_.size());
      for (std::size_t i = 0; i < shard_.size(); ++i)
        analysis::profile_pass(defs_, tree_, shard_.traces[i], sev_[i], nullptr, true,
                               keep ? &profile_ticks_[i] : nullptr);
    }
    phase_end(std::to_string(tree_.size()) + " call paths");
  }

  /// Message matching and collective timings, clock correction if asked, wait states.
  void forward() {
    progress_.begin("forward");
    if (settings_.time_correct) {
      replay_communication();  // timings and messages are kept: the clock correction reuses them
      correct_clocks();
      matched_messages_ = unmatched_messages_ = 0;
      waits_.clear();
      for (std::size_t i = 0; i < shard_.size(); ++i) {
        matched_messages_ += messages_[i].recv_events.size();
        unmatched_messages_ += messages_[i].unmatched;
        waits_.push_back(analysis::wait_state_pass(defs_, shard_.traces[i], std::move(messages_[i]),
                                                   collectives_[i], sev_[i]));
      }
      std::vector<replay::MessageTable>().swap(messages_);
    } else {
      // Collective timings and matched messages go into each rank's wait-state pass window by
      // window and round by round; neither is kept, but for what the what-if phase's re-timing
      // replay needs of the matching (replay::RetimeMatches: it would match them again).
      std::vector<std::unique_ptr<analysis::WaitStatePass>> passes;
      std::vector<replay::MessageSink*> sinks;
      std::vector<std::unique_ptr<TeeSink>> tees;
      if (!settings_.no_what_if && !settings_.partial)
        retime_matches_ = std::make_unique<replay::RetimeMatches>(defs_, shard_);
      for (std::size_t i = 0; i < shard_.size(); ++i) {
        passes.push_back(std::make_unique<analysis::WaitStatePass>(defs_, shard_.traces[i], sev_[i]));
        sinks.push_back(passes.back().get());
        if (retime_matches_) {
          tees.push_back(std::make_unique<TeeSink>(sinks.back(), retime_matches_->sink(i)));
          sinks.back() = tees.back().get();
        }
      }
      reduce_collectives(&passes);
      world_.agree([&] {
        const replay::MatchCounts counts = replay::match_messages(
            world_, defs_, shard_, sinks, settings_.partial, settings_.window);
        matched_messages_ = counts.matched;
        unmatched_messages_ = counts.unmatched;
      });
      waits_.clear();
      for (auto& pass : passes) waits_.push_back(pass->finish());
      // Nothing after this phase reads the message records without what-if: the profile has
      // the bytes, the wait states their peers.
      if (settings_.no_what_if)
        for (LocalTrace& t : shard_.traces) t.release_messages();
    }
    std::uint64_t waits = 0;
    for (const analysis::WaitStateResult& w : waits_) waits += w.waits.size();
    phase_end(std::to_string(sum_over_ranks(world_, matched_messages_)) +
                  " messages, " + std::to_string(sum_over_ranks(world_, waits)) +
                  " wait states");
  }

  /// Critical path: the backward walk of ownership and each rank's segment credits.
  void backward() {
    progress_.begin("backward");
    cp_ = analysis::critical_path_pass(world_, defs_, tree_, shard_, waits_, collectives_,
                                       settings_.partial ? cut_.first_to_stop : -1);
    release_free_memory();  // the jump tables: the root-cause phase's peak comes next
    std::uint64_t owned = 0;
    for (const analysis::CriticalPathResult& cp : cp_) owned += cp.owned_segments;
    phase_end(std::to_string(sum_over_ranks(world_, owned)) + " owned segments");
  }

  /// Root causes: delay costs and wait-state classes, on a backward replay in rounds.
  void root_causes() {
    progress_.begin("root causes");
    analysis::RootCauseResult rc;
    world_.agree([&] {
      rc = analysis::root_cause_pass(world_, defs_, tree_, shard_, waits_, sev_,
                                     hybrid_ ? &worker_sev_ : nullptr, settings_.window);
    });
    release_free_memory();  // the phase's tables: the report's rows come next
    phase_end(std::to_string(sum_over_ranks(world_, rc.synchpoints)) + " synchronization points, " +
              std::to_string(rc.rounds) + " rounds");
    if (rc.skipped > 0 && world_.rank() == 0)
      std::fprintf(stderr,
                   "cpreplay: warning: root causes: %llu synchronization points skipped (their "
                   "partners' records never came); their delay costs are missing, everything "
                   "else is complete\n",
                   static_cast<unsigned long long>(rc.skipped));
  }

  /// Global reductions: the critical-path profile and the indicators built on it, and the
  /// metric tree's final shape.
  void reduce() {
    progress_.begin("reduce");
    if (!hybrid_)
      path_ = analysis::indicator_pass(world_, shard_.blocks, tree_, cp_, sev_);
    else
      path_ = analysis::thread_critical_path_pass(world_, shard_.blocks, defs_, tree_, cp_, sev_,
                                                  worker_sev_, worker_tail_);
    std::vector<std::vector<std::vector<double>>>().swap(worker_tail_);
    stretches_.clear();
    if (!settings_.timeline.empty() || !settings_.overview.empty())  // the views' only
      for (analysis::CriticalPathResult& cp : cp_) stretches_.push_back(std::move(cp.stretches));
    std::vector<analysis::CriticalPathResult>().swap(cp_);  // per-call-path arrays, done
    phase_end("critical path " + std::to_string(path_.length) + " s");
  }

  /// The metric tree's final shape once every analysis has stored its leaves: MPI-only metrics
  /// off non-MPI call paths, derived metrics (differences, sums of children) computed.
  void finalize_metrics() {
    for (std::vector<analysis::Severity>& threads : worker_sev_)
      for (analysis::Severity& sev : threads) {
        analysis::drop_mpi_only_on_non_mpi(defs_, tree_, sev);
        analysis::finalize_metric_tree(sev);
      }
    for (analysis::Severity& sev : sev_) {
      analysis::drop_mpi_only_on_non_mpi(defs_, tree_, sev);
      analysis::finalize_metric_tree(sev);
    }
  }

  /// What if: the gains of zeroing, balancing and rebalancing the top call paths, the
  /// near-critical time, and the user's scenario, from one re-timing replay.
  void what_if() {
    if (settings_.no_what_if) return;
    progress_.begin("what-if");
    // What-if's tables and the root causes' after them: each large one in a mapping of its own.
    replay::map_large_blocks_apart();
    if (retime_matches_) {
      // The kept matching gets its partners' ranks; then nothing reads the message records.
      retime_matches_->resolve_peers();
      for (LocalTrace& t : shard_.traces) t.release_messages();
      release_free_memory();
    }
    world_.agree([&] {
      what_if_ = analysis::what_if_pass(world_, defs_, tree_, shard_, sev_,
                                        hybrid_ ? &worker_sev_ : nullptr, path_,
                                        what_if_settings());
    });
    what_if_ran_ = true;
    retime_matches_.reset();
    std::vector<analysis::CallpathTicks>().swap(profile_ticks_);
    release_free_memory();
    std::string detail = std::to_string(what_if_.clocks) + " clocks, " +
                         std::to_string(what_if_.parts) + " parts, " +
                         std::to_string(what_if_.forward_rounds) + " + " +
                         std::to_string(what_if_.backward_rounds) + " rounds";
    if (settings_.verbose) {
      char split[96];
      std::snprintf(split, sizeof split, " (prepare %.3f s, forward %.3f s, slack %.3f s)",
                    what_if_.prepare_seconds, what_if_.forward_seconds,
                    what_if_.backward_seconds);
      detail += split;
    }
    phase_end(detail);
    if (what_if_.released > 0 && world_.rank() == 0)
      std::fprintf(stderr,
                   "cpreplay: warning: what-if: %llu synchronizations replayed without their "
                   "partner (their partners' records depend on each other in a cycle, which "
                   "clock-condition violations can cause)\n",
                   static_cast<unsigned long long>(what_if_.released));
  }

  /// --timeline and --overview: the run in time, with the critical path's stretches.
  void export_views() {
    if (settings_.timeline.empty() && settings_.overview.empty()) return;
    progress_.begin("views");
    const ViewOutputs out{settings_.timeline, settings_.overview, settings_.timeline_max_events,
                          kCreator};
    const ViewReport r = tools::export_views(world_, out, defs_, tree_, shard_, waits_, sev_,
                                             worker_sev_, omp_waits_, stretches_, path_.length);
    std::vector<std::vector<analysis::PathStretch>>().swap(stretches_);
    std::vector<analysis::OmpWaits>().swap(omp_waits_);
    std::string detail;
    if (!settings_.timeline.empty())
      detail = settings_.timeline + " (" + std::to_string(r.events_written) + " events)";
    if (!settings_.overview.empty()) detail += (detail.empty() ? "" : ", ") + settings_.overview;
    phase_end(detail);
    if (world_.rank() == 0 && !r.reduction.empty())
      std::fprintf(stderr, "cpreplay: note: timeline: %s\n", r.reduction.c_str());
  }

  void write_report() {
    progress_.begin("report");
    world_.agree([&] {
      if (world_.rank() == 0) writer_ = std::make_unique<io::CubeWriter>(output_, report_def());
    });
    world_.agree([&] {
      gather_and_write(world_, defs_, shard_.blocks, tree_, sev_, worker_sev_, writer_.get());
      if (writer_) writer_->commit();
    });
    phase_end(output_);
  }

  /// The summary on stdout (rank 0) and in --json.
  void summarize() {
    // Hybrid traces: the critical-path table and the impact split take every thread as a
    // location, as the indicators do (docs/json-schema.md); the summary names ranks as causes,
    // a rank's delays being those of all its threads.
    Summary summary = analysis::build_summary(world_, defs_, tree_, shard_, sev_, waits_, path_,
                                              hybrid_ ? &worker_sev_ : nullptr);
    if (hybrid_)
      analysis::add_openmp_summary(world_, defs_, tree_, shard_, sev_, worker_sev_, summary);
    describe_run(summary);
    if (what_if_ran_ && world_.rank() == 0)
      analysis::describe_what_if(summary, what_if_, defs_, tree_);
    world_.agree([&] {
      if (world_.rank() == 0 && !settings_.json.empty())
        io::write_summary_json(settings_.json, summary);
    });
    report_peak_memory();
    if (world_.rank() != 0) return;
    const std::uint64_t violations = summary.p2p_clock_violations + summary.coll_clock_violations;
    if (violations > 0)
      std::fprintf(stderr,
                   "cpreplay: warning: %llu clock-condition violations (%llu point-to-point, %llu "
                   "collective)%s\n",
                   static_cast<unsigned long long>(violations),
                   static_cast<unsigned long long>(summary.p2p_clock_violations),
                   static_cast<unsigned long long>(summary.coll_clock_violations),
                   settings_.time_correct ? "" : "; rerun with --time-correct");
    std::fputs(io::summary_text(summary).c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  /// Collectives go first: their reduction buffers are gone before the messages are matched.
  /// With a wait-state pass, the collective timings are handed to it instead of being stored.
  void reduce_collectives(
      std::vector<std::unique_ptr<analysis::WaitStatePass>>* passes = nullptr) {
    replay::TimingSink sink;
    // The what-if phase's re-timing replay keeps the timings as its rules (RetimeMatches).
    replay::RetimeMatches* retime = passes != nullptr ? retime_matches_.get() : nullptr;
    if (passes)
      sink = [passes, retime](std::size_t i, const replay::CollInstance* instances,
                              const replay::CollTiming* timings, std::size_t n) {
        (*passes)[i]->collectives(instances, timings, n);
        if (retime != nullptr) retime->collectives(i, instances, timings, n);
      };
    world_.agree([&] {
      collectives_ = replay::reduce_collectives(world_, defs_, shard_, settings_.window,
                                                settings_.partial, sink);
    });
    if (retime != nullptr) retime->collectives_done(&collectives_);
    release_free_memory();
  }

  /// For the clock correction: the matching is fixed by the trace; the timings it carries
  /// change with every correction, so both tables are rebuilt after each.
  void replay_communication() {
    reduce_collectives();
    world_.agree([&] {
      messages_ = replay::match_messages(world_, defs_, shard_, settings_.partial,
                                         settings_.window);
    });
  }

  /// Constant offsets first; where clocks drift, forward jumps until nothing moves.
  void correct_clocks() {
    // Hybrid traces: the workers move with their master (one clock per process).
    std::vector<std::vector<Ticks>> before;
    if (hybrid_)
      for (const LocalTrace& master : shard_.traces) before.push_back(replay::master_times(master));
    correction_ = replay::correct_clocks(world_, defs_, shard_, messages_, collectives_);
    replay_communication();
    double largest_jump = 0.0;
    for (int round = 0; round < kMaxJumpRounds; ++round) {
      const std::uint64_t moved =
          replay::forward_jumps(world_, defs_, shard_, messages_, collectives_, largest_jump);
      if (moved == 0) break;
      correction_.jumped_events += moved;
      ++correction_.jump_rounds;
      replay_communication();
    }
    MPI_Allreduce(MPI_IN_PLACE, &largest_jump, 1, MPI_DOUBLE, MPI_MAX, world_.comm());
    correction_.max_jump = largest_jump;
    for (std::size_t i = 0; i < before.size(); ++i)
      replay::shift_threads_with_master(before[i], shard_.traces[i], shard_.workers[i]);
  }

  analysis::WhatIfSettings what_if_settings() const {
    analysis::WhatIfSettings w;
    w.top = settings_.what_if_top;
    w.near_critical = settings_.near_critical;
    w.changes = settings_.what_if;
    w.window = settings_.window;
    w.partial = settings_.partial;
    w.matches = retime_matches_.get();
    if (!profile_ticks_.empty()) w.profile = &profile_ticks_;
    return w;
  }

  io::CubeReportDef report_def() const {
    io::CubeReportDef def = make_report_def(defs_, tree_, kCreator);
    if (cut_.applied) {
      // A partial report says so in its attributes, for whoever opens it later.
      def.attributes.push_back({"cpreplay::partial", "true"});
      def.attributes.push_back(
          {"cpreplay::partial_cut_seconds", std::to_string(defs_.clock.seconds(cut_.cut_time))});
      def.attributes.push_back(
          {"cpreplay::partial_first_rank_to_stop", std::to_string(cut_.first_to_stop)});
    }
    return def;
  }

  /// What the run did beyond the analysis: outputs, clock correction, the partial cut.
  void describe_run(Summary& s) {
    s.report = output_;
    s.json = settings_.json;
    s.analysis_seconds = progress_.seconds_since_start();
    s.time_corrected = settings_.time_correct;
    s.corrected_events = correction_.moved_events;
    s.corrected_ranks = correction_.moved_ranks;
    s.max_correction = correction_.max_shift;
    s.correction_consistent = correction_.consistent;
    s.jumped_events = correction_.jumped_events;
    s.max_jump = correction_.max_jump;
    // Collective either way: every rank knows whether the cut applied.
    const std::uint64_t unmatched = sum_over_ranks(world_, unmatched_messages_);
    std::uint64_t dropped = 0;
    for (const replay::CollectiveTable& c : collectives_) dropped += c.dropped;
    dropped = sum_over_ranks(world_, dropped);
    if (!cut_.applied) return;
    s.partial = true;
    s.partial_first_rank = cut_.first_to_stop;
    s.partial_incomplete_ranks = cut_.incomplete_ranks;
    s.partial_events_cut = cut_.events_cut;
    s.partial_regions_closed = cut_.regions_closed;
    s.partial_unmatched_messages = unmatched;
    s.partial_collectives_dropped = dropped;
  }

  static double seconds(EarlyTrace::Clock::time_point from, EarlyTrace::Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  }

  /// The early read's definitions; its error is thrown here, at the stage that reads them.
  Definitions early_definitions() {
    if (early_->definitions_error) std::rethrow_exception(early_->definitions_error);
    return std::move(early_->defs);
  }

  /// Ends a phase line; with -v it also shows process 0's peak memory so far (where the peak is)
  /// and what the phase cost process 0: CPU time in user and kernel mode, context switches and
  /// page faults (bench/: where the wall time goes when processes share a core). `seconds`:
  /// the phase's duration when it ran elsewhere (negative: since progress_.begin()).
  void phase_end(const std::string& detail, double seconds = -1.0) {
    const auto end = [&](const std::string& text) {
      if (seconds < 0) return progress_.end(text);
      progress_.end(text, seconds);
    };
    if (!settings_.verbose) return end(detail);
    rusage now{};
    getrusage(RUSAGE_SELF, &now);
    const auto secs = [](const timeval& a, const timeval& b) {
      return static_cast<double>(a.tv_sec - b.tv_sec) +
             1e-6 * static_cast<double>(a.tv_usec - b.tv_usec);
    };
    char resident[40] = "";  // where the system tells it (Linux)
    if (const std::uint64_t r = resident_bytes(); r > 0)
      std::snprintf(resident, sizeof resident, ", now %.1f MB", static_cast<double>(r) / 1e6);
    char peak[200];
    std::snprintf(peak, sizeof peak,
                  "  [process 0 peak %.1f MB%s; cpu %.3f s user, %.3f s sys, %ld switches, %ld "
                  "faults]",
                  static_cast<double>(peak_rss_bytes()) / 1e6, resident,
                  secs(now.ru_utime, usage_.ru_utime),
                  secs(now.ru_stime, usage_.ru_stime),
                  (now.ru_nvcsw + now.ru_nivcsw) - (usage_.ru_nvcsw + usage_.ru_nivcsw),
                  now.ru_minflt - usage_.ru_minflt);
    usage_ = now;
    end(detail + peak);
  }

  /// -v: the largest per-process peak and what it means per event (for bench/).
  void report_peak_memory() {
    std::uint64_t peak = peak_rss_bytes(), max_peak = 0, max_events = 0;
    const std::uint64_t mine = shard_.events();
    MPI_Reduce(&peak, &max_peak, 1, MPI_UINT64_T, MPI_MAX, 0, world_.comm());
    MPI_Reduce(&mine, &max_events, 1, MPI_UINT64_T, MPI_MAX, 0, world_.comm());
    if (!settings_.verbose || world_.rank() != 0) return;
    if (max_events == 0) {
      std::fprintf(stderr, "cpreplay: peak memory per process %.1f MB (max)\n",
                   static_cast<double>(max_peak) / 1e6);
      return;
    }
    std::fprintf(stderr,
                 "cpreplay: peak memory per process %.1f MB (max), %.1f bytes/event, %llu events on "
                 "the largest process\n",
                 static_cast<double>(max_peak) / 1e6,
                 static_cast<double>(max_peak) / static_cast<double>(max_events),
                 static_cast<unsigned long long>(max_events));
  }

  const Settings& settings_;
  replay::World& world_;
  replay::Progress progress_;
  rusage usage_ = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u;
  }();  ///< -v: this process's usage at the end of the previous phase
  const std::string output_;
  std::unique_ptr<EarlyTrace> early_;  ///< read while MPI started; gone after the events stage
  std::unique_ptr<io::CubeWriter> writer_;  // rank 0 only
  /// The forward replay's matching as the what-if phase needs it, or null (--no-what-if; with
  /// --partial or --time-correct the what-if phase matches the messages itself).
  std::unique_ptr<replay::RetimeMatches> retime_matches_;
  /// Pure-MPI traces, what-if on, no clock correction: per held rank the profile's ticks and
  /// visits, from the preprocessing to the what-if phase (its balance statistics).
  std::vector<analysis::CallpathTicks> profile_ticks_;
  Definitions defs_;
  /// The trace ranks this process analyzes and their events.
  Shard shard_;
  std::vector<CallTree> local_trees_;  ///< per rank of the shard, until unified
  CallTree tree_;
  std::vector<analysis::Severity> sev_;  ///< per held rank (its master thread)
  /// Hybrid traces: per held rank, threads 1, 2, ... (time, visits and OpenMP metrics).
  std::vector<std::vector<analysis::Severity>> worker_sev_;
  /// Per held rank and worker thread: the time scout.hyb's runtime map drops per call path
  /// (openmp_profile_pass), until the indicators have used it.
  std::vector<std::vector<std::vector<double>>> worker_tail_;
  /// Hybrid traces with --timeline or --overview: per held rank, its threads' OpenMP waits.
  std::vector<analysis::OmpWaits> omp_waits_;
  bool hybrid_ = false;  ///< several threads per rank
  replay::PartialCut cut_;
  /// Per held rank: --time-correct only; consumed by the wait-state pass.
  std::vector<replay::MessageTable> messages_;
  std::uint64_t matched_messages_ = 0;
  std::uint64_t unmatched_messages_ = 0;
  std::vector<replay::CollectiveTable> collectives_;  ///< per held rank
  replay::ClockCorrection correction_;
  std::vector<analysis::WaitStateResult> waits_;  ///< per held rank
  std::vector<analysis::CriticalPathResult> cp_;  ///< per held rank: backward's, for reduce
  analysis::CriticalPathSummary path_;
  /// Per held rank: reduce keeps them for export_views.
  std::vector<std::vector<analysis::PathStretch>> stretches_;
  analysis::WhatIfResult what_if_;
  bool what_if_ran_ = false;  ///< not with --no-what-if
};

}  // namespace

void run(const Settings& settings, replay::World& world, std::unique_ptr<EarlyTrace> early) {
  Pipeline p(settings, world, std::move(early));
  if (!p.load_definitions()) return;
  if (settings.read_only) return p.decode_only();
  p.probe_outputs();
  p.load_events();
  p.preprocess();
  p.forward();
  p.backward();
  p.reduce();
  p.what_if();  // before the root causes: the forward replay's matching it keeps goes first
  if (!settings.no_root_cause) p.root_causes();
  p.finalize_metrics();
  p.export_views();
  p.write_report();
  p.summarize();
}

}  // namespace cpreplay::tools
