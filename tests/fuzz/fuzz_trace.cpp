// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer targets: the fuzz input replaces one file of a good archive written by TraceWriter.
//
// CPREPLAY_FUZZ_TARGET picks the file (tests/fuzz/README.md):
//   evt    (default) rank 0's .evt file of a one-rank archive;
//   defs   the global definitions (traces.def) of that archive;
//   multi  rank 1's .evt file of a three-rank archive whose ranks exchange messages, wait at
//          collectives and cause each other's waiting, analyzed in this one process (M = 1):
//          message matching, collectives across ranks, the root causes' records and the what-if
//          exchange between ranks, which the one-rank archive cannot reach.
//
// With the evt target, libotf2's reading of the input (CPREPLAY_TEST_OTF2_LIBRARY_EVENTS=1)
// must give the same events, error, record count and call paths as the reader's: where the
// direct event decoder (io/otf2_event_decoder.hpp) takes the input, and where it stops at
// something it does not take after calling back for what came before (undone, then libotf2
// reads the file); a difference is a finding. An input cut short (which libotf2
// reads past its end) is compared so: its whole records and an end-of-file record, read both
// ways with --partial, must give the same, and the events of the cut input read with --partial.
//
// The contract under test (STYLE.md §5): whatever the bytes, io::read_definitions,
// io::read_events, io::decode_events_only and the whole analysis (tools::run: preprocess,
// forward and backward replay, root causes, what-if, reductions, the Cube report, the views)
// either return or throw cpreplay::Error. Any other exception, a crash, an ASan/UBSan report, a
// leak or a hang is a finding.
//
// Before the first input the good archive itself must go through the whole analysis with every
// option and write its report and views; otherwise the target stops (it would test nothing).
//
// CPREPLAY_FUZZ_SEED_OUT=FILE writes the good file for the chosen target there (a seed).
// CPREPLAY_FUZZ_STATS=1 prints at exit how many event files each reader took.
// CPREPLAY_FUZZ_ARCHIVE_OUT=DIR writes the whole good archive there, to replay a finding with the
// real tool: cp crash-... DIR/traces/0.evt && mpirun -np 1 cpreplay DIR/traces.otf2
#include <mpi.h>
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cpreplay/error.hpp"
#include "io/otf2_reader.hpp"
#include "replay/world.hpp"
#include "tests/support/trace_writer.hpp"
#include "tools/early_read.hpp"
#include "tools/pipeline.hpp"

namespace {

using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

enum class Target { Events, Definitions, MultiRank };

struct Archive {
  Target mode = Target::Events;
  int ranks = 1;
  std::string root;    ///< temporary directory, removed at exit
  std::string anchor;  ///< root/a/traces.otf2
  std::string target;  ///< the file the fuzz input replaces
  std::optional<cpreplay::Definitions> defs;  ///< the good definitions (events modes)
  std::string report;    ///< where the pipeline writes its Cube report
  std::string timeline;  ///< --timeline
  std::string overview;  ///< --overview
};

Archive* g_archive = nullptr;

/// One rank that uses every event kind the reader handles, and one it skips (Metric).
void write_seed_trace(const std::string& dir) {
  TraceWriter w(1);
  w.program_begin(0, 0.0);
  w.enter(0, 0.0, "main");
  w.init(0, 0.0, 0.1);
  w.region(0, "compute", 0.1, 0.2);
  w.metric(0, 0.2);
  w.send(0, 0.3, 0.31, 0, 1, 64);
  w.recv(0, 0.32, 0.33, 0, 1, 64);
  w.enter(0, 0.4, "MPI_Isend");
  w.mpi_isend(0, 0.4, 0, 2, 128, 7);
  w.leave(0, 0.41, "MPI_Isend");
  w.enter(0, 0.42, "MPI_Irecv");
  w.mpi_irecv_request(0, 0.42, 8);
  w.leave(0, 0.43, "MPI_Irecv");
  w.enter(0, 0.44, "MPI_Test");
  w.request_test(0, 0.44, 8);
  w.leave(0, 0.45, "MPI_Test");
  w.enter(0, 0.46, "MPI_Waitall");
  w.mpi_isend_complete(0, 0.47, 7);
  w.mpi_irecv(0, 0.48, 0, 2, 128, 8);
  w.leave(0, 0.49, "MPI_Waitall");
  w.enter(0, 0.5, "MPI_Irecv");
  w.mpi_irecv_request(0, 0.5, 9);
  w.leave(0, 0.51, "MPI_Irecv");
  w.enter(0, 0.52, "MPI_Cancel");
  w.request_cancelled(0, 0.52, 9);
  w.leave(0, 0.53, "MPI_Cancel");
  w.collective(0, "MPI_Allreduce", 0.6, 0.7, CollOpT::Allreduce, 8, 8);
  w.collective(0, "MPI_Bcast", 0.7, 0.8, CollOpT::Bcast, 8, 8, 0, 0);
  w.collective(0, "MPI_Barrier", 0.8, 0.9, CollOpT::Barrier, 0, 0, w.self());
  w.finalize(0, 1.0, 1.1);
  w.leave(0, 1.2, "main");
  w.program_end(0, 1.2);
  w.write(dir);
}

/// Three ranks that exchange messages (blocking and non-blocking, on MPI_COMM_WORLD and a
/// sub-communicator), wait for each other (Late Sender, Late Receiver, wait at N x N, Late
/// Broadcast) and cause that waiting in their own regions, so that every pass has records to
/// send between ranks. Rank 1, whose file the inputs replace, takes part in all of it.
void write_multi_rank_trace(const std::string& dir) {
  TraceWriter w(3);
  const int pair = w.add_comm({1, 2}, "pair");
  for (int r = 0; r < 3; ++r) {
    w.program_begin(r, 0.0);
    w.enter(r, 0.0, "main");
    w.init(r, 0.0, 0.1);
  }
  // Late Sender on rank 1 (rank 0 computes longer), caused by rank 0's "compute".
  w.region(0, "compute", 0.1, 0.5);
  w.send(0, 0.5, 0.51, 1, 1, 1024);
  w.region(1, "compute", 0.1, 0.2);
  w.recv(1, 0.2, 0.52, 0, 1, 1024);
  // Non-blocking exchange between 1 and 2; rank 2 answers late (its "solve").
  w.region(2, "solve", 0.1, 0.7);
  w.enter(1, 0.53, "MPI_Isend");
  w.mpi_isend(1, 0.53, 2, 2, 256, 1);
  w.leave(1, 0.54, "MPI_Isend");
  w.enter(1, 0.55, "MPI_Irecv");
  w.mpi_irecv_request(1, 0.55, 2);
  w.leave(1, 0.56, "MPI_Irecv");
  w.enter(1, 0.57, "MPI_Test");
  w.request_test(1, 0.57, 2);
  w.leave(1, 0.58, "MPI_Test");
  w.metric(1, 0.59);
  w.enter(1, 0.6, "MPI_Waitall");
  w.recv(2, 0.7, 0.71, 1, 2, 256);
  w.send(2, 0.72, 0.73, 1, 3, 512);
  w.mpi_isend_complete(1, 0.74, 1);
  w.mpi_irecv(1, 0.75, 2, 3, 512, 2);
  w.leave(1, 0.76, "MPI_Waitall");
  // Late Receiver on rank 0: a synchronous send that waits for rank 1's receive.
  w.send(0, 0.6, 0.8, 1, 4, 0, 0, "MPI_Ssend");
  w.region(1, "compute", 0.76, 0.79);
  w.recv(1, 0.79, 0.8, 0, 4, 0);
  w.region(2, "compute", 0.73, 0.9);
  // Collectives: rank 2 is late everywhere (wait at N x N, Late Broadcast from root 1).
  w.collective(0, "MPI_Allreduce", 0.8, 0.95, CollOpT::Allreduce, 8, 8);
  w.collective(1, "MPI_Allreduce", 0.81, 0.95, CollOpT::Allreduce, 8, 8);
  w.collective(2, "MPI_Allreduce", 0.9, 0.95, CollOpT::Allreduce, 8, 8);
  w.region(1, "compute", 0.95, 1.1);
  w.collective(0, "MPI_Bcast", 0.96, 1.12, CollOpT::Bcast, 0, 64, 0, 1);
  w.collective(1, "MPI_Bcast", 1.1, 1.12, CollOpT::Bcast, 64, 64, 0, 1);
  w.collective(2, "MPI_Bcast", 0.97, 1.12, CollOpT::Bcast, 0, 64, 0, 1);
  w.collective(1, "MPI_Reduce", 1.13, 1.2, CollOpT::Reduce, 8, 8, pair, 0);
  w.collective(2, "MPI_Reduce", 1.15, 1.2, CollOpT::Reduce, 8, 0, pair, 0);
  w.region(0, "compute", 1.12, 1.25);
  for (int r = 0; r < 3; ++r) {
    w.collective(r, "MPI_Barrier", r == 0 ? 1.25 : 1.2, 1.3, CollOpT::Barrier, 0, 0);
    w.finalize(r, 1.3, 1.4);
    w.leave(r, 1.5, "main");
    w.program_end(r, 1.5);
  }
  w.write(dir);
}

void write_archive(Target mode, const std::string& dir) {
  if (mode == Target::MultiRank) {
    write_multi_rank_trace(dir);
  } else {
    write_seed_trace(dir);
  }
}

/// CPREPLAY_FUZZ_STATS=1: at exit, how many event files the direct decoder and libotf2 read.
void print_read_counts() {
  const cpreplay::io::EventReadCounts c = cpreplay::io::event_read_counts();
  std::fprintf(stderr, "fuzz_trace: event files read directly %llu, by libotf2 %llu\n",
               static_cast<unsigned long long>(c.direct),
               static_cast<unsigned long long>(c.library));
}

void remove_archive() {
  if (!g_archive) return;
  std::error_code ec;
  std::filesystem::remove_all(g_archive->root, ec);
}

/// The whole analysis, as `mpirun -np 1 cpreplay` runs it (every rank of the archive in this
/// process). The options follow the input's size, so every option's path gets inputs: bit 0
/// --partial, 1 --time-correct, 2 --window 1, 3 --what-if compute=0, 4 --timeline, 5 --overview.
cpreplay::tools::Settings settings_for(const Archive& a, std::size_t bits) {
  cpreplay::tools::Settings settings;
  settings.anchor = a.anchor;
  settings.output = a.report;
  settings.quiet = true;
  settings.partial = (bits & 1) != 0;
  settings.time_correct = (bits & 2) != 0;
  settings.window = (bits & 4) != 0 ? 1 : 4096;
  if (bits & 8) settings.what_if.emplace_back("compute", 0.0);
  if (bits & 16) settings.timeline = a.timeline;
  if (bits & 32) settings.overview = a.overview;
  return settings;
}

void run_pipeline(const cpreplay::tools::Settings& settings) {
  cpreplay::replay::World world;
  cpreplay::tools::run(settings, world, nullptr);
}

/// Rank 0 read as the pipeline reads it: its trace and call tree, or the error's message.
struct RankRead {
  std::optional<cpreplay::LocalTrace> trace;
  std::size_t paths = 0;
  std::string error;
};

RankRead read_rank0(const std::string& anchor, const cpreplay::Definitions& defs,
                    bool partial = false) {
  RankRead out;
  try {
    cpreplay::CallTree tree;
    out.trace.emplace(cpreplay::io::read_events(anchor, defs, 0, tree, partial));
    out.paths = tree.size();
  } catch (const cpreplay::Error& e) {
    out.error = e.what();
  }
  return out;
}

bool same(const RankRead& x, const RankRead& y) {
  if (x.error != y.error || x.paths != y.paths || x.trace.has_value() != y.trace.has_value())
    return false;
  if (!x.trace) return true;
  const cpreplay::LocalTrace &a = *x.trace, &b = *y.trace;
  if (a.size() != b.size() || a.records != b.records || a.incomplete != b.incomplete ||
      a.p2p.size() != b.p2p.size() || a.coll.size() != b.coll.size() ||
      a.locks.size() != b.locks.size())
    return false;
  for (cpreplay::EventIdx e = 0; e < a.size(); ++e)
    if (a.time[e] != b.time[e] || a.kind[e] != b.kind[e] || a.ref[e] != b.ref[e]) return false;
  return true;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

[[noreturn]] void fail_setup(const std::string& what) {
  std::fprintf(stderr, "fuzz_trace: %s\n", what.c_str());
  std::abort();
}

/// The good archive must go through everything with every option, or the inputs test nothing.
void check_good_archive(const Archive& a) {
  const cpreplay::tools::Settings settings = settings_for(a, 8 | 16 | 32);
  try {
    run_pipeline(settings);
  } catch (const std::exception& e) {
    fail_setup("the good archive fails the analysis: " + std::string(e.what()));
  }
  for (const std::string& file : {a.report, a.timeline, a.overview}) {
    std::error_code ec;
    if (std::filesystem::file_size(file, ec) == 0 || ec)
      fail_setup("the good archive's analysis wrote no " + file);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // One MPI process (singleton init, no mpirun) for the pipeline; the summary it prints on
  // stdout is of no interest here (libFuzzer reports on stderr).
  // What MPI_Init allocates stays until exit, much of it in plugins that LeakSanitizer's fast
  // unwinder cannot name: it is no leak of ours, so LeakSanitizer does not track it. No
  // MPI_Finalize either (it unloads the plugins); lsan.supp names Open MPI's libraries for what
  // the MPI calls of the pipeline keep.
  __lsan_disable();
  MPI_Init(argc, argv);
  __lsan_enable();
  if (!std::freopen("/dev/null", "w", stdout)) std::abort();
  g_archive = new Archive;
  Archive& a = *g_archive;
  const char* mode = std::getenv("CPREPLAY_FUZZ_TARGET");
  const std::string name = mode ? mode : "evt";
  if (name == "evt") {
    a.mode = Target::Events;
  } else if (name == "defs") {
    a.mode = Target::Definitions;
  } else if (name == "multi") {
    a.mode = Target::MultiRank;
    a.ranks = 3;
  } else {
    fail_setup("CPREPLAY_FUZZ_TARGET=" + name + ": expected evt, defs or multi");
  }
  // /dev/shm keeps the per-input file write off the disk.
  char tmpl_shm[] = "/dev/shm/cpreplay-fuzz-XXXXXX";
  char tmpl_tmp[] = "/tmp/cpreplay-fuzz-XXXXXX";
  const char* root = ::mkdtemp(tmpl_shm);
  if (!root) root = ::mkdtemp(tmpl_tmp);
  if (!root) std::abort();
  a.root = root;
  std::atexit(remove_archive);
  if (std::getenv("CPREPLAY_FUZZ_STATS")) std::atexit(print_read_counts);
  write_archive(a.mode, a.root + "/a");
  // Without the (empty) local definitions the reader skips them, and OTF2 does not allocate and
  // clear a definition chunk per input and rank (5 times more executions per second with the
  // 4 MiB chunks the writer used before; it now writes Score-P's 256 KiB).
  for (int r = 0; r < a.ranks; ++r)
    std::filesystem::remove(a.root + "/a/traces/" + std::to_string(r) + ".def");
  a.anchor = a.root + "/a/traces.otf2";
  a.report = a.root + "/report.cubex";
  a.timeline = a.root + "/timeline.json";
  a.overview = a.root + "/overview.svg";
  a.target = a.mode == Target::Definitions ? a.root + "/a/traces.def"
             : a.mode == Target::MultiRank ? a.root + "/a/traces/1.evt"
                                           : a.root + "/a/traces/0.evt";
  if (const char* out = std::getenv("CPREPLAY_FUZZ_SEED_OUT")) {
    std::filesystem::copy_file(a.target, out, std::filesystem::copy_options::overwrite_existing);
  }
  if (const char* out = std::getenv("CPREPLAY_FUZZ_ARCHIVE_OUT")) write_archive(a.mode, out);
  if (a.mode != Target::Definitions) a.defs = cpreplay::io::read_definitions(a.anchor);
  check_good_archive(a);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Archive& a = *g_archive;
  write_file(a.target, data, size);
  const cpreplay::tools::Settings settings = settings_for(a, size);
  if (a.mode == Target::MultiRank) {
    // Rank 1's events are read by the pipeline, beside the good ones of ranks 0 and 2.
    try {
      run_pipeline(settings);
    } catch (const cpreplay::Error&) {
    }
    return 0;
  }
  const cpreplay::Definitions* defs = a.defs ? &*a.defs : nullptr;
  std::optional<cpreplay::Definitions> fresh;
  if (a.mode == Target::Definitions) {
    try {
      fresh = cpreplay::io::read_definitions(a.anchor);
    } catch (const cpreplay::Error&) {
      return 0;
    }
    if (fresh->ranks() < 1) return 0;
    // What rank 0 hands to the others must decode to the same definitions.
    const std::string bytes = cpreplay::encode_definitions(*fresh);
    if (cpreplay::encode_definitions(cpreplay::decode_definitions(bytes)) != bytes) std::abort();
    defs = &*fresh;
  }
  const cpreplay::io::EventReadCounts before = cpreplay::io::event_read_counts();
  const RankRead read = read_rank0(a.anchor, *defs);
  const cpreplay::io::EventReadCounts after = cpreplay::io::event_read_counts();
  // The direct decoder (io/otf2_event_decoder.hpp) must read what libotf2 reads: whenever it
  // took the file, libotf2's reading of it must give the same events, error, count and call
  // paths; and where it stopped at something it does not take (after calling back for the
  // records before it, which read_location undoes), libotf2's reading after it must too.
  if (a.mode == Target::Events &&
      (after.direct > before.direct || after.library > before.library) &&
      read.error.find(" is cut short after ") == std::string::npos) {
    ::setenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS", "1", 1);
    const RankRead library = read_rank0(a.anchor, *defs);
    ::unsetenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS");
    if (!same(read, library)) {
      std::fprintf(stderr, "fuzz_trace: the direct decoder and libotf2 differ: \"%s\" vs \"%s\"\n",
                   read.error.c_str(), library.error.c_str());
      std::abort();
    }
  } else if (a.mode == Target::Events && after.direct > before.direct) {
    // A file cut short, which libotf2 reads past its end. Its whole records and an end-of-file
    // record are a file libotf2 reads as it should: with --partial, the decoder must read the
    // cut file to the same events as that one, and libotf2 that one as the decoder does.
    const std::uint64_t at = after.last_cut_at;
    if (at > size) std::abort();
    if (at >= 18) {  // a whole chunk header
      const RankRead cut = read_rank0(a.anchor, *defs, true);
      std::string ended(reinterpret_cast<const char*>(data), at);
      ended += "\x02\x01";  // OTF2_BUFFER_END_OF_FILE and the byte writers put after it
      write_file(a.target, reinterpret_cast<const std::uint8_t*>(ended.data()), ended.size());
      const RankRead direct = read_rank0(a.anchor, *defs, true);
      ::setenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS", "1", 1);
      const RankRead library = read_rank0(a.anchor, *defs, true);
      ::unsetenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS");
      write_file(a.target, data, size);
      if (!same(direct, library) || (cut.error.empty() && direct.error.empty() &&
                                     cut.trace->size() != direct.trace->size())) {
        std::fprintf(stderr,
                     "fuzz_trace: a file cut short at %llu bytes (whole records to %llu): "
                     "\"%s\"; ended there, the direct decoder and libotf2 read \"%s\" vs "
                     "\"%s\"\n",
                     static_cast<unsigned long long>(size), static_cast<unsigned long long>(at),
                     cut.error.c_str(), direct.error.c_str(), library.error.c_str());
        std::abort();
      }
    }
  }
  if (!read.error.empty()) defs = nullptr;
  if (defs) {
    try {
      run_pipeline(settings);
    } catch (const cpreplay::Error&) {
    }
    return 0;
  }
  // read_events stops at the first event it rejects; the decode-only path has no checks of its
  // own and takes OTF2's decoder through the rest of the file. (Each read costs OTF2 a fresh
  // 1 MiB chunk buffer, so this runs only when the first read stopped early.)
  try {
    (void)cpreplay::io::decode_events_only(a.anchor, a.defs ? *a.defs : *fresh, 0);
  } catch (const cpreplay::Error&) {
  }
  return 0;
}
