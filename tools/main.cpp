// SPDX-License-Identifier: BSD-3-Clause
// The cpreplay command: parse options, run the pipeline, map errors to exit codes.
#include <mpi.h>
#include <signal.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "io/cube_writer.hpp"
#include "tools/early_read.hpp"
#include "tools/mpi_startup.hpp"
#include "tools/pipeline.hpp"
#include "tools/version.hpp"

namespace po = boost::program_options;
using cpreplay::tools::Settings;

namespace {

/// A decimal count from 1 to 10^12, nothing else (no sign, no spaces, no suffix).
bool parse_count(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 13) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v < 1 || v > 1000000000000ull) return false;
  out = v;
  return true;
}

/// A decimal number, all of `text` (no trailing characters), finite.
bool parse_number(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return false;
  out = v;
  return true;
}

/// The what-if options; returns an error text (empty: fine).
std::string parse_what_if(const po::variables_map& vm, const std::vector<std::string>& changes,
                          const std::string& top, const std::string& near, Settings& s) {
  const bool given = !changes.empty() || vm.count("what-if-top") || vm.count("near-critical");
  if (s.no_what_if && given)
    return std::string("--no-what-if cannot be combined with ") +
           (!changes.empty() ? "--what-if" : vm.count("what-if-top") ? "--what-if-top"
                                                                      : "--near-critical");
  if (vm.count("what-if-top")) {
    std::uint64_t k = 0;
    if (!parse_count(top, k) || k > 100)
      return "--what-if-top '" + top + "' must be a whole number of call paths from 1 to 100";
    s.what_if_top = static_cast<std::size_t>(k);
  }
  if (vm.count("near-critical")) {
    double d = 0.0;
    if (!parse_number(near, d) || d < 0.0 || d > 1.0)
      return "--near-critical '" + near + "' must be a number from 0 to 1 (a share of the "
             "runtime)";
    s.near_critical = d;
  }
  for (const std::string& arg : changes) {
    // Region names may hold '=' (C++ operators): the factor follows the last one.
    const auto eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      return "--what-if '" + arg + "' must be REGION=FACTOR";
    const std::string region = arg.substr(0, eq), factor = arg.substr(eq + 1);
    double f = 0.0;
    if (!parse_number(factor, f)) return "--what-if '" + arg + "': FACTOR must be a number";
    if (f < 0.0) return "--what-if '" + arg + "': FACTOR must not be negative";
    for (const auto& [r, g] : s.what_if)
      if (r == region) return "--what-if '" + arg + "': region '" + region + "' given twice";
    s.what_if.push_back({region, f});
  }
  return "";
}

std::string one_line(std::string message);

/// Parses the command line; returns -1 to continue, otherwise the exit code.
int parse(int argc, char** argv, Settings& s, bool talk) {
  std::string max_events;  // checked below: Boost would take "-1" as a huge unsigned number
  std::vector<std::string> what_if;
  std::string what_if_top, near_critical;  // checked below, like max_events
  po::options_description opts("Options");
  opts.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("output,o", po::value(&s.output), "report file (default: cpreplay.cubex next to ANCHOR)")
      ("json", po::value(&s.json), "also write the summary as JSON to FILE")
      ("quiet,q", po::bool_switch(&s.quiet), "no progress output (the summary is still printed)")
      ("verbose,v", po::bool_switch(&s.verbose), "more detail in progress output")
      ("read-only", po::bool_switch(&s.read_only), "only decode the events (benchmark floor)")
      ("partial", po::bool_switch(&s.partial),
       "analyze a run whose ranks stopped mid-run, up to where every rank still has events")
      ("time-correct", po::bool_switch(&s.time_correct),
       "shift each rank's clock so that no message is received before it was sent and no "
       "collective is left before it was entered")
      ("count-ranks", po::bool_switch(&s.count_ranks),
       "print the number of MPI ranks in the trace and exit (runs without mpirun)")
      ("count-events", po::bool_switch(&s.count_events),
       "print the number of event records the trace's definitions announce, every thread of "
       "every rank together, and exit (runs without mpirun; for sizing jobs)")
      ("no-rootcause", po::bool_switch(&s.no_root_cause),
       "skip the root-cause analysis (delay costs, direct/indirect and propagating/terminal "
       "wait states), as Scalasca's --no-rootcause; their metrics stay empty")
      ("window", po::value(&s.window)->default_value(4096),
       "replay window: collective instances per reduction and send records per exchange "
       "round, in event order (bounds replay memory; results do not depend on it)")
      ("timeline", po::value(&s.timeline),
       "also write the run as a timeline to FILE.json (Chrome trace events: open it in "
       "Perfetto or chrome://tracing), with the critical path and the wait states")
      ("timeline-max-events", po::value(&max_events),
       "at most N timeline events (default 100000): shorter region visits are merged into "
       "their parents, the critical path and the longest wait states are kept")
      ("overview", po::value(&s.overview),
       "also draw the run as one SVG picture to FILE.svg: ranks by time, coloured by call "
       "path, waiting hatched, the critical path as a line")
      ("what-if", po::value(&what_if)->composing(),
       "REGION=FACTOR: also predict the runtime with the time of every call path of REGION "
       "scaled by FACTOR (0 removes it, 0.5 halves it), and the new critical path's top call "
       "paths; repeatable, all together one scenario")
      ("what-if-top", po::value(&what_if_top),
       "K: the call paths with the most critical-path time whose gains if zeroed, balanced "
       "and statically rebalanced are computed (default 10, 1 to 100)")
      ("near-critical", po::value(&near_critical),
       "D: near-critical time is non-waiting time whose slack is at most D x the runtime "
       "(default 0.01, 0 to 1); written as the metric near_critical_path")
      ("no-what-if", po::bool_switch(&s.no_what_if),
       "skip the what-if analysis (re-timing replay, gains, near-critical time)");
  po::options_description hidden;
  hidden.add_options()("anchor", po::value(&s.anchor));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("anchor", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    if (talk) std::fprintf(stderr, "cpreplay: error: %s (see cpreplay --help)\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    if (talk)
      std::cout << "Usage: mpirun -np N cpreplay [options] ANCHOR\n\n"
                << "Replays an OTF2 trace of an MPI program, finds wait states and the critical\n"
                << "path, and writes a Cube4 report. N is any count from 1 to the trace's MPI\n"
                << "ranks (cpreplay --count-ranks ANCHOR): each process analyzes a block of\n"
                << "ranks, and the results do not depend on N.\n\n"
                << opts << "\nExample:\n  mpirun -np 8 cpreplay scorep_run/traces.otf2\n";
    return 0;
  }
  if (vm.count("version")) {
    if (talk) std::cout << cpreplay::tools::version_text();
    return 0;
  }
  if (s.anchor.empty()) {
    if (talk) std::fprintf(stderr, "cpreplay: error: no trace given; usage: cpreplay [options] "
                                   "ANCHOR (see cpreplay --help)\n");
    return 2;
  }
  if (s.window == 0) {
    if (talk) std::fprintf(stderr, "cpreplay: error: --window must be at least 1 (see cpreplay "
                                   "--help)\n");
    return 2;
  }
  if (vm.count("timeline-max-events")) {
    const char* why = nullptr;
    if (s.timeline.empty())
      why = "needs --timeline";
    else if (!parse_count(max_events, s.timeline_max_events))
      why = "must be a whole number of events from 1 to 10^12";
    if (why != nullptr) {
      if (talk)
        std::fprintf(stderr,
                     "cpreplay: error: --timeline-max-events '%s' %s (see cpreplay --help)\n",
                     max_events.c_str(), why);
      return 2;
    }
  }
  const std::string why = parse_what_if(vm, what_if, what_if_top, near_critical, s);
  if (!why.empty()) {
    if (talk) std::fprintf(stderr, "cpreplay: error: %s (see cpreplay --help)\n", why.c_str());
    return 2;
  }
  std::uint64_t slice = 0;
  if (const char* us = std::getenv("CPREPLAY_TIME_SLICE_US");
      !cpreplay::tools::time_slice_ns(us, slice)) {
    if (talk)
      std::fprintf(stderr,
                   "cpreplay: error: CPREPLAY_TIME_SLICE_US '%s' must be a whole number of "
                   "microseconds from 100 to 100000, or 0 for the kernel's default\n",
                   one_line(us).c_str());
    return 2;
  }
  return -1;
}

/// One line for the terminal: OTF2, Boost or the C++ runtime may hand us text with newlines.
std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message.empty() ? std::string("unexplained failure") : message;
}

/// Prints the run's single error line on rank 0: the message of the lowest rank that has one.
/// World::agree() already leaves one failing rank per step, but a check that every rank makes
/// alike (the rank count) fails everywhere; and rank 0 owns the progress line on stderr, so
/// printing there keeps the error on a line of its own, after the "... failed" progress.
/// MPI: collective on MPI_COMM_WORLD.
void report_error(const std::string& message, int rank, int size) {
  constexpr int kTag = 7401;
  int mine = message.empty() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size) return;
  std::string text = message;
  if (first != 0) {
    if (rank == first) {
      MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kTag,
               MPI_COMM_WORLD);
    } else if (rank == 0) {
      MPI_Status status;
      MPI_Probe(first, kTag, MPI_COMM_WORLD, &status);
      int n = 0;
      MPI_Get_count(&status, MPI_CHAR, &n);
      text.assign(static_cast<std::size_t>(n), '\0');
      MPI_Recv(text.data(), n, MPI_CHAR, first, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "cpreplay: error: %s\n", text.c_str());
    std::fflush(stderr);
  }
}

/// mpirun ends the surviving ranks with SIGTERM when one rank dies (and on Ctrl-C): take the
/// report's temporary file along, then die of the same signal.
extern "C" void on_termination_signal(int sig) {
  cpreplay::io::remove_unfinished_reports();
  std::raise(sig);  // SA_RESETHAND restored the default action; delivered on return
}

void remove_reports_on_termination() {
  struct sigaction action {};
  action.sa_handler = on_termination_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaction(sig, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts (setenv) and before MPI_Init reads it (tools/mpi_startup.hpp).
  const std::string pml = cpreplay::tools::choose_single_node_transport();
  // MPI_Init mostly waits; the trace is read meanwhile (tools/early_read.hpp). The options are
  // read quietly first: their errors are printed once, below, by rank 0.
  cpreplay::tools::EarlyRead early;
  {
    Settings peek;
    if (parse(argc, argv, peek, false) < 0 && !peek.read_only && !peek.count_ranks &&
        !peek.count_events)
      early.start(peek);
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // MPI_Finalize's fence to the launcher, 40 ms later than it need be (tools/mpi_startup.hpp).
  const int no_delay = cpreplay::tools::no_delay_on_loopback_connections();
  // The replay's rounds are latency-bound: short slices keep them moving beside busy
  // processes (the main thread only: the early read, if still running, computes).
  const std::uint64_t slice = cpreplay::tools::request_short_time_slices();
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  remove_reports_on_termination();
  Settings settings;
  int code = parse(argc, argv, settings, rank == 0);
  if (code < 0 && settings.verbose && !settings.quiet && rank == 0 && !pml.empty())
    std::fprintf(stderr,
                 "cpreplay: MPI: all %d processes on one node: Open MPI's shared-memory "
                 "transport (pml %s; set OMPI_MCA_pml or CPREPLAY_KEEP_MPI_TRANSPORT=1 to "
                 "choose)\n",
                 size, pml.c_str());
  if (code < 0 && settings.verbose && !settings.quiet && rank == 0)
    std::fprintf(stderr,
                 "cpreplay: TCP_NODELAY on %d loopback connection%s (the MPI launcher's)\n",
                 no_delay, no_delay == 1 ? "" : "s");
  if (code < 0 && settings.verbose && !settings.quiet && rank == 0)
    std::fprintf(stderr, "cpreplay: scheduler time slice: %s\n",
                 slice > 0 ? (std::to_string(slice / 1000) + " us (CPREPLAY_TIME_SLICE_US)").c_str()
                           : "the kernel's default");
  std::unique_ptr<cpreplay::tools::EarlyTrace> early_trace = early.take(rank, size);
  std::string message;  // this rank's error line, if it has one to report
  if (code < 0) {
    code = 0;
    try {
      cpreplay::replay::World world;
      cpreplay::tools::run(settings, world, std::move(early_trace));
    } catch (const cpreplay::replay::PeerFailed&) {
      code = 1;
    } catch (const cpreplay::UsageError& e) {
      message = one_line(e.what());
      code = 2;
    } catch (const std::bad_alloc&) {
      message = "rank " + std::to_string(rank) +
                ": out of memory (run on more nodes, or fewer ranks per node)";
      code = 1;
    } catch (const std::exception& e) {
      message = one_line(e.what());
      code = 1;
    } catch (...) {
      message = "rank " + std::to_string(rank) + ": unexpected internal error";
      code = 1;
    }
    report_error(message, rank, size);
  }
  // Every rank leaves with the worst exit code, so mpirun reports the failure once.
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
