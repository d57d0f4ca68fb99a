// SPDX-License-Identifier: BSD-3-Clause
// The stage list of cpreplay: load, preprocess, forward, backward, reduce, write.
#include "tools/pipeline.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <memory>

#include "analysis/critical_path.hpp"
#include "analysis/indicators.hpp"
#include "analysis/profile.hpp"
#include "analysis/summary.hpp"
#include "analysis/wait_states.hpp"
#include "replay/clock_correction.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "cpreplay/error.hpp"
#include "io/cube_writer.hpp"
#include "io/otf2_reader.hpp"
#include "io/summary_writer.hpp"
#include "replay/preprocess.hpp"
#include "tools/report.hpp"

namespace cpreplay::tools {
namespace {

constexpr const char* kCreator = "cpreplay 0.1.0";
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

std::uint64_t sum_over_ranks(const replay::World& world, std::uint64_t v) {
  std::uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, world.comm());
  return total;
}

}  // namespace

void run(const Settings& settings, replay::World& world) {
  replay::Progress progress(world, settings.quiet || settings.count_ranks);
  const std::string output = settings.output.empty() ? default_output(settings.anchor)
                                                     : settings.output;

  // Load: definitions everywhere, then each rank its own events.
  progress.begin("definitions");
  Definitions defs;
  world.agree([&] { defs = io::read_definitions(settings.anchor); });
  if (settings.count_ranks) {
    if (world.rank() == 0) std::printf("%d\n", defs.ranks());
    return;
  }
  if (defs.ranks() != world.size())
    throw UsageError(settings.anchor + " has " + std::to_string(defs.ranks()) +
                     " MPI ranks but cpreplay runs on " + std::to_string(world.size()) +
                     ": use mpirun -np " + std::to_string(defs.ranks()));
  for (int r = 0; r < defs.ranks(); ++r)
    if (defs.processes[r].locations > 1)
      throw UsageError(settings.anchor + ": rank " + std::to_string(r) + " has " +
                       std::to_string(defs.processes[r].locations) +
                       " locations (threads); cpreplay analyzes pure MPI traces only for now");
  progress.end(std::to_string(defs.ranks()) + " ranks, " + std::to_string(defs.regions.size()) +
               " regions");

  if (settings.read_only) {
    progress.begin("decode");
    std::uint64_t n = 0;
    world.agree([&] { n = io::decode_events_only(settings.anchor, defs, world.rank()); });
    progress.end(std::to_string(sum_over_ranks(world, n)) + " events (read-only)");
    std::uint64_t peak = peak_rss_bytes(), max_peak = 0;
    MPI_Reduce(&peak, &max_peak, 1, MPI_UINT64_T, MPI_MAX, 0, world.comm());
    if (settings.verbose && world.rank() == 0)
      std::fprintf(stderr, "cpreplay: peak memory per rank %.1f MB (max)\n",
                   static_cast<double>(max_peak) / 1e6);
    return;
  }

  // The report file is opened first so an unwritable path fails before any work.
  std::unique_ptr<io::CubeWriter> writer;
  world.agree([&] {
    if (world.rank() != 0) return;
    writer = std::make_unique<io::CubeWriter>(output, io::CubeReportDef{});
    if (!settings.json.empty()) io::check_json_writable(settings.json);
  });

  progress.begin("events");
  LocalTrace trace;
  CallTree local_tree;
  world.agree([&] {
    trace = io::read_events(settings.anchor, defs, world.rank(), local_tree, settings.partial);
  });
  const std::uint64_t events = sum_over_ranks(world, trace.size());
  progress.end(std::to_string(events) + " events");

  progress.begin("preprocess");
  replay::PartialCut cut;
  if (settings.partial) cut = replay::cut_to_common_end(world, trace);
  const CallTree tree = replay::unify_call_trees(world, local_tree, trace);
  progress.end(std::to_string(tree.size()) + " call paths");

  analysis::Severity sev(tree.size());
  analysis::profile_pass(defs, tree, trace, sev);

  progress.begin("forward");
  replay::MessageTable messages;
  replay::CollectiveTable collectives;
  world.agree([&] { messages = replay::match_messages(world, defs, trace, settings.partial, settings.window); });
  world.agree([&] {
    collectives =
        replay::reduce_collectives(world, defs, trace, settings.window, settings.partial);
  });
  replay::ClockCorrection correction;
  if (settings.time_correct) {
    auto recollect = [&] {  // the matching is unchanged; the timings the passes read are not
      world.agree([&] {
        messages = replay::match_messages(world, defs, trace, settings.partial, settings.window);
      });
      world.agree([&] {
        collectives =
            replay::reduce_collectives(world, defs, trace, settings.window, settings.partial);
      });
    };
    correction = replay::correct_clocks(world, defs, trace, messages, collectives);
    recollect();
    // Drifting clocks: forward jumps until nothing moves (a bounded number of rounds).
    double largest_jump = 0.0;
    for (int round = 0; round < kMaxJumpRounds; ++round) {
      const std::uint64_t moved =
          replay::forward_jumps(world, defs, trace, messages, collectives, largest_jump);
      if (moved == 0) break;
      correction.jumped_events += moved;
      ++correction.jump_rounds;
      recollect();
    }
    MPI_Allreduce(MPI_IN_PLACE, &largest_jump, 1, MPI_DOUBLE, MPI_MAX, world.comm());
    correction.max_jump = largest_jump;
  }
  const analysis::WaitStateResult waits =
      analysis::wait_state_pass(defs, trace, messages, collectives, sev);
  progress.end(std::to_string(sum_over_ranks(world, messages.recv_events.size())) +
               " messages, " + std::to_string(sum_over_ranks(world, waits.waits.size())) +
               " wait states");

  progress.begin("backward");
  const analysis::CriticalPathResult cp =
      analysis::critical_path_pass(world, defs, tree, trace, waits, collectives,
                                   settings.partial ? cut.first_to_stop : -1);
  const analysis::CriticalPathSummary path = analysis::indicator_pass(world, tree, cp, sev);
  progress.end("critical path " + std::to_string(path.length) + " s, " +
               std::to_string(sum_over_ranks(world, cp.owned_segments)) + " segments");

  analysis::drop_mpi_only_on_non_mpi(defs, tree, sev);
  analysis::finalize_metric_tree(sev);

  progress.begin("report");
  world.agree([&] {
    if (world.rank() != 0) return;
    writer.reset();  // the probe's temporary file goes before the real one takes its name
    io::CubeReportDef def = make_report_def(defs, tree, kCreator);
    if (cut.applied) {
      // A partial report says so in its attributes, for whoever opens it later.
      def.attributes.push_back({"cpreplay::partial", "true"});
      def.attributes.push_back(
          {"cpreplay::partial_cut_seconds", std::to_string(defs.clock.seconds(cut.cut_time))});
      def.attributes.push_back({"cpreplay::partial_first_rank_to_stop",
                                std::to_string(cut.first_to_stop)});
    }
    writer = std::make_unique<io::CubeWriter>(output, std::move(def));
  });
  world.agree([&] {
    gather_and_write(world, tree, sev, writer.get());
    if (writer) writer->commit();
  });
  progress.end(output);

  Summary summary =
      analysis::build_summary(world, defs, tree, trace, sev, waits, path);
  summary.report = output;
  summary.json = settings.json;
  summary.analysis_seconds = progress.seconds_since_start();
  summary.time_corrected = settings.time_correct;
  summary.corrected_events = correction.moved_events;
  summary.corrected_ranks = correction.moved_ranks;
  summary.max_correction = correction.max_shift;
  summary.correction_consistent = correction.consistent;
  summary.jumped_events = correction.jumped_events;
  summary.max_jump = correction.max_jump;
  if (cut.applied) {
    summary.partial = true;
    summary.partial_first_rank = cut.first_to_stop;
    summary.partial_incomplete_ranks = cut.incomplete_ranks;
    summary.partial_events_cut = cut.events_cut;
    summary.partial_regions_closed = cut.regions_closed;
    summary.partial_unmatched_messages = sum_over_ranks(world, messages.unmatched);
    summary.partial_collectives_dropped = sum_over_ranks(world, collectives.dropped);
  }
  world.agree([&] {
    if (world.rank() == 0 && !settings.json.empty())
      io::write_summary_json(settings.json, summary);
  });
  // For benchmarks: the largest per-rank peak and what it means per event.
  std::uint64_t peak = peak_rss_bytes(), max_peak = 0, max_events = 0;
  const std::uint64_t mine = trace.size();
  MPI_Reduce(&peak, &max_peak, 1, MPI_UINT64_T, MPI_MAX, 0, world.comm());
  MPI_Reduce(&mine, &max_events, 1, MPI_UINT64_T, MPI_MAX, 0, world.comm());
  if (settings.verbose && world.rank() == 0)
    std::fprintf(stderr, "cpreplay: peak memory per rank %.1f MB (max), %.1f bytes/event, "
                         "%llu events on the largest rank\n",
                 static_cast<double>(max_peak) / 1e6,
                 max_events ? static_cast<double>(max_peak) / static_cast<double>(max_events) : 0.0,
                 static_cast<unsigned long long>(max_events));
  if (world.rank() == 0) {
    const std::uint64_t violations = summary.p2p_clock_violations + summary.coll_clock_violations;
    if (violations > 0)
      std::fprintf(stderr,
                   "cpreplay: warning: %llu clock-condition violations (%llu point-to-point, %llu "
                   "collective)%s\n",
                   static_cast<unsigned long long>(violations),
                   static_cast<unsigned long long>(summary.p2p_clock_violations),
                   static_cast<unsigned long long>(summary.coll_clock_violations),
                   settings.time_correct ? "" : "; rerun with --time-correct");
    std::fputs(io::summary_text(summary).c_str(), stdout);
    std::fflush(stdout);
  }
}

}  // namespace cpreplay::tools
