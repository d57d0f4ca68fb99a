// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the fuzz input becomes rank 0's .evt file (or traces.def) of a good archive.
//
// The contract under test (STYLE.md §5): whatever the bytes, io::read_definitions,
// io::read_events and io::decode_events_only either return or throw cpreplay::Error. Any other
// exception, a crash, an ASan/UBSan report, a leak or a hang is a finding. Inputs whose events
// load then go through the whole analysis on one MPI rank (tools::run: preprocess, forward and
// backward replay, reductions, the Cube report), with the same contract.
//
// CPREPLAY_FUZZ_TARGET=defs fuzzes the global definitions (traces.def) instead of the events.
// CPREPLAY_FUZZ_SEED_OUT=FILE writes the good file for the chosen target there (a seed).
// CPREPLAY_FUZZ_ARCHIVE_OUT=DIR writes the whole good 1-rank archive there, to replay a finding
// with the real tool: cp crash-... DIR/traces/0.evt && mpirun -np 1 cpreplay DIR/traces.otf2
#include <mpi.h>
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "cpreplay/error.hpp"
#include "io/otf2_reader.hpp"
#include "replay/world.hpp"
#include "tools/pipeline.hpp"
#include "tests/support/trace_writer.hpp"

namespace {

using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

struct Archive {
  std::string root;    ///< temporary directory, removed at exit
  std::string anchor;  ///< root/a/traces.otf2
  std::string target;  ///< the file the fuzz input replaces
  bool defs_mode = false;
  std::optional<cpreplay::Definitions> defs;  ///< the good definitions (events mode)
  std::string report;  ///< where the pipeline writes its Cube report
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

void remove_archive() {
  if (!g_archive) return;
  std::error_code ec;
  std::filesystem::remove_all(g_archive->root, ec);
}

/// The whole analysis on one rank, as `mpirun -np 1 cpreplay` runs it. The options follow the
/// input's size, so every option's path gets inputs.
void run_pipeline(const Archive& a, std::size_t size) {
  cpreplay::tools::Settings settings;
  settings.anchor = a.anchor;
  settings.output = a.report;
  settings.quiet = true;
  settings.partial = (size & 1) != 0;
  settings.time_correct = (size & 2) != 0;
  settings.window = (size & 4) != 0 ? 1 : 4096;
  try {
    cpreplay::replay::World world;
    cpreplay::tools::run(settings, world, nullptr);
  } catch (const cpreplay::Error&) {
  }
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
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
  // /dev/shm keeps the per-input file write off the disk.
  char tmpl_shm[] = "/dev/shm/cpreplay-fuzz-XXXXXX";
  char tmpl_tmp[] = "/tmp/cpreplay-fuzz-XXXXXX";
  const char* root = ::mkdtemp(tmpl_shm);
  if (!root) root = ::mkdtemp(tmpl_tmp);
  if (!root) std::abort();
  g_archive = new Archive;
  Archive& a = *g_archive;
  a.root = root;
  std::atexit(remove_archive);
  write_seed_trace(a.root + "/a");
  // Without the (empty) local definitions the reader skips them, and OTF2 does not allocate and
  // clear a definition chunk per input (5 times more executions per second with the 4 MiB chunks
  // the writer used before; it now writes Score-P's 256 KiB).
  std::filesystem::remove(a.root + "/a/traces/0.def");
  a.anchor = a.root + "/a/traces.otf2";
  a.report = a.root + "/report.cubex";
  const char* mode = std::getenv("CPREPLAY_FUZZ_TARGET");
  a.defs_mode = mode && std::string(mode) == "defs";
  a.target = a.defs_mode ? a.root + "/a/traces.def" : a.root + "/a/traces/0.evt";
  if (const char* out = std::getenv("CPREPLAY_FUZZ_SEED_OUT")) {
    std::filesystem::copy_file(a.target, out, std::filesystem::copy_options::overwrite_existing);
  }
  if (const char* out = std::getenv("CPREPLAY_FUZZ_ARCHIVE_OUT")) write_seed_trace(out);
  if (!a.defs_mode) a.defs = cpreplay::io::read_definitions(a.anchor);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Archive& a = *g_archive;
  write_file(a.target, data, size);
  const cpreplay::Definitions* defs = a.defs ? &*a.defs : nullptr;
  std::optional<cpreplay::Definitions> fresh;
  if (a.defs_mode) {
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
  try {
    cpreplay::CallTree tree;
    const cpreplay::LocalTrace trace = cpreplay::io::read_events(a.anchor, *defs, 0, tree);
    (void)trace;
  } catch (const cpreplay::Error&) {
    defs = nullptr;
  }
  if (defs) {
    run_pipeline(a, size);
    return 0;
  }
  // read_events stops at the first event it rejects; the decode-only path has no checks of its
  // own and takes OTF2's decoder through the rest of the file. (Each read costs OTF2 a fresh
  // 1 MiB chunk buffer, so this runs only when the first read stopped early.)
  try {
    (void)cpreplay::io::decode_events_only(a.anchor, a.defs_mode ? *fresh : *a.defs, 0);
  } catch (const cpreplay::Error&) {
  }
  return 0;
}
