// SPDX-License-Identifier: BSD-3-Clause
// The cpreplay command: parse options, run the pipeline, map errors to exit codes.
#include <mpi.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "cpreplay/error.hpp"
#include "tools/pipeline.hpp"

namespace po = boost::program_options;
using cpreplay::tools::Settings;

namespace {

constexpr const char* kVersion = "cpreplay 0.1.0";

/// Parses the command line; returns -1 to continue, otherwise the exit code.
int parse(int argc, char** argv, Settings& s, bool talk) {
  po::options_description opts("Options");
  opts.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("output,o", po::value(&s.output), "report file (default: cpreplay.cubex next to ANCHOR)")
      ("json", po::value(&s.json), "also write the summary as JSON to FILE")
      ("quiet,q", po::bool_switch(&s.quiet), "no progress output (the summary is still printed)")
      ("verbose,v", po::bool_switch(&s.verbose), "more detail in progress output")
      ("read-only", po::bool_switch(&s.read_only), "only decode the events (benchmark floor)")
      ("time-correct", po::bool_switch(&s.time_correct),
       "shift each rank's clock so that no message is received before it was sent and no "
       "collective is left before it was entered")
      ("count-ranks", po::bool_switch(&s.count_ranks),
       "print the number of MPI ranks in the trace and exit (runs without mpirun)")
      ("window", po::value(&s.window)->default_value(4096),
       "collective instances per reduction (results do not depend on it)");
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
                << "Replays an OTF2 trace of an MPI program (one analysis rank per traced rank),\n"
                << "finds wait states and the critical path, and writes a Cube4 report.\n\n"
                << opts << "\nExample:\n  mpirun -np 8 cpreplay scorep_run/traces.otf2\n";
    return 0;
  }
  if (vm.count("version")) {
    if (talk) std::cout << kVersion << "\n";
    return 0;
  }
  if (s.anchor.empty()) {
    if (talk) std::fprintf(stderr, "cpreplay: error: no trace given; usage: cpreplay [options] "
                                   "ANCHOR (see cpreplay --help)\n");
    return 2;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Settings settings;
  int code = parse(argc, argv, settings, rank == 0);
  if (code < 0) {
    code = 0;
    try {
      cpreplay::replay::World world;
      cpreplay::tools::run(settings, world);
    } catch (const cpreplay::replay::PeerFailed&) {
      code = 1;
    } catch (const cpreplay::UsageError& e) {
      std::fprintf(stderr, "cpreplay: error: %s\n", e.what());
      code = 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cpreplay: error: %s\n", e.what());
      code = 1;
    }
  }
  // Every rank leaves with the worst exit code, so mpirun reports the failure once.
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
