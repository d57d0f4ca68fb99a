// SPDX-License-Identifier: BSD-3-Clause
// The direct OTF2 event decoder (io/otf2_event_decoder.hpp) against libotf2's reader
// (CPREPLAY_TEST_OTF2_LIBRARY_EVENTS=1): on every shared trace both must give the same events,
// side records, call trees and record counts, with the direct decoder taking every file; on
// damaged files the decoder must leave the file to the library, whose error stays the message;
// a file cut short is read up to the cut, with or without --partial.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "io/otf2_reader.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using cpreplay::CallTree;
using cpreplay::Definitions;
using cpreplay::LocalTrace;
using cpreplay::Rank;
using cpreplay::io::EventReadCounts;
using cpreplay::io::ForkPoint;

/// Sets CPREPLAY_TEST_OTF2_LIBRARY_EVENTS for its lifetime (the library path) or clears it.
class LibraryEvents {
 public:
  explicit LibraryEvents(bool on) {
    if (on)
      ::setenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS", "1", 1);
    else
      ::unsetenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS");
  }
  ~LibraryEvents() { ::unsetenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS"); }
};

/// One rank (all its threads) read one way.
struct RankRead {
  std::vector<LocalTrace> threads;
  CallTree tree;
  std::vector<ForkPoint> forks;  ///< the master's forks, as its read left them
  std::string error;      ///< the TraceError's message, "" if none
  std::uint64_t direct = 0, library = 0;  ///< event files each path read
  std::string declined;                   ///< why the decoder last left a file to libotf2
  std::uint64_t defs_direct = 0, defs_library = 0;  ///< local definition files each path read
};

RankRead read_rank(const std::string& anchor, const Definitions& defs, Rank rank, bool library,
                   bool partial = false) {
  const LibraryEvents env(library);
  RankRead out;
  const EventReadCounts before = cpreplay::io::event_read_counts();
  try {
    out.threads.push_back(
        cpreplay::io::read_events(anchor, defs, rank, out.tree, partial, &out.forks));
    const std::size_t workers = defs.processes[static_cast<std::size_t>(rank)].workers.size();
    for (std::size_t t = 1; t <= workers; ++t)
      out.threads.push_back(cpreplay::io::read_worker_events(
          anchor, defs, rank, static_cast<int>(t), out.tree, out.forks, partial));
  } catch (const cpreplay::TraceError& e) {
    out.error = e.what();
  }
  const EventReadCounts after = cpreplay::io::event_read_counts();
  out.direct = after.direct - before.direct;
  out.library = after.library - before.library;
  out.declined = after.last_declined;
  out.defs_direct = after.defs_direct - before.defs_direct;
  out.defs_library = after.defs_library - before.defs_library;
  return out;
}

/// Every column, side record and count of two reads of one location.
void expect_same(const LocalTrace& a, const LocalTrace& b, const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (cpreplay::EventIdx e = 0; e < a.size(); ++e) {
    ASSERT_EQ(a.time[e], b.time[e]) << where << ", event " << e;
    ASSERT_EQ(a.kind[e], b.kind[e]) << where << ", event " << e;
    ASSERT_EQ(a.ref[e], b.ref[e]) << where << ", event " << e;
  }
  EXPECT_EQ(a.region_of_path, b.region_of_path) << where;
  ASSERT_EQ(a.p2p.size(), b.p2p.size()) << where;
  for (std::size_t i = 0; i < a.p2p.size(); ++i) {
    const cpreplay::P2pRecord x = a.p2p[i], y = b.p2p[i];
    EXPECT_TRUE(x.comm == y.comm && x.peer == y.peer && x.tag == y.tag &&
                x.partner == y.partner && x.length == y.length)
        << where << ", message " << i;
  }
  EXPECT_EQ(a.long_messages, b.long_messages) << where;
  ASSERT_EQ(a.coll.size(), b.coll.size()) << where;
  for (std::size_t i = 0; i < a.coll.size(); ++i) {
    const cpreplay::CollRecord &x = a.coll[i], &y = b.coll[i];
    EXPECT_TRUE(x.sent == y.sent && x.received == y.received && x.comm == y.comm &&
                x.root == y.root && x.begin == y.begin && x.op == y.op)
        << where << ", collective " << i;
  }
  EXPECT_EQ(a.long_coll_bytes, b.long_coll_bytes) << where;
  ASSERT_EQ(a.locks.size(), b.locks.size()) << where;
  for (std::size_t i = 0; i < a.locks.size(); ++i)
    EXPECT_TRUE(a.locks[i].lock == b.locks[i].lock && a.locks[i].order == b.locks[i].order &&
                a.locks[i].acquire == b.locks[i].acquire &&
                a.locks[i].openmp == b.locks[i].openmp)
        << where << ", lock record " << i;
  EXPECT_EQ(a.incomplete, b.incomplete) << where;
  EXPECT_EQ(a.records, b.records) << where;
}

void expect_same(const RankRead& direct, const RankRead& library, const std::string& where) {
  EXPECT_EQ(direct.error, library.error) << where;
  ASSERT_EQ(direct.forks.size(), library.forks.size()) << where;
  for (std::size_t i = 0; i < direct.forks.size(); ++i)
    EXPECT_TRUE(direct.forks[i].time == library.forks[i].time &&
                direct.forks[i].path == library.forks[i].path)
        << where << ", fork " << i;
  ASSERT_EQ(direct.threads.size(), library.threads.size()) << where;
  for (std::size_t t = 0; t < direct.threads.size(); ++t)
    expect_same(direct.threads[t], library.threads[t], where + ", thread " + std::to_string(t));
  ASSERT_EQ(direct.tree.size(), library.tree.size()) << where;
  for (std::uint32_t c = 0; c < direct.tree.size(); ++c) {
    const auto& x = direct.tree.node(cpreplay::CallpathId{c});
    const auto& y = library.tree.node(cpreplay::CallpathId{c});
    EXPECT_TRUE(x.region == y.region && x.parent == y.parent) << where << ", call path " << c;
  }
}

/// ../shared next to the repository, found from this source file.
fs::path shared_dir() { return fs::path(__FILE__).parent_path() / "../../../../shared"; }

std::vector<std::string> shared_anchors() {
  std::vector<std::string> anchors;
  const fs::path shared = shared_dir();
  // Not conformance-pending: its traces enter the suite by name, once they pass.
  for (const char* set :
       {"conformance", "conformance-next", "traces", "real", "conformance-hybrid"}) {
    if (!fs::is_directory(shared / set)) continue;
    for (const auto& entry : fs::directory_iterator(shared / set)) {
      if (!entry.is_directory()) continue;
      for (const auto& file : fs::directory_iterator(entry.path()))
        if (file.path().extension() == ".otf2") anchors.push_back(file.path().string());
    }
  }
  std::sort(anchors.begin(), anchors.end());
  return anchors;
}

TEST(Otf2EventDecoder, EveryLocationOfEverySharedTraceDecodesAsLibotf2DoesIt) {
  const std::vector<std::string> anchors = shared_anchors();
  if (anchors.empty()) GTEST_SKIP() << shared_dir().string() << " has no traces";
  std::uint64_t events = 0, files = 0, def_files = 0;
  for (const std::string& anchor : anchors) {
    const Definitions defs = cpreplay::io::read_definitions(anchor);
    for (Rank r = 0; r < defs.ranks(); ++r) {
      const std::string where = anchor + ", rank " + std::to_string(r);
      const RankRead direct = read_rank(anchor, defs, r, false);
      const RankRead library = read_rank(anchor, defs, r, true);
      EXPECT_EQ(direct.error, "") << where;
      // The direct decoder took every file the library reads, and the library none of them.
      EXPECT_EQ(direct.library, 0u) << where << ": " << direct.declined;
      EXPECT_EQ(direct.direct, library.library) << where;
      EXPECT_GE(direct.direct, 1u) << where;
      EXPECT_EQ(library.direct, 0u) << where;
      // Their local definitions too (Score-P's mapping tables and clock offsets).
      EXPECT_EQ(direct.defs_library, 0u) << where;
      EXPECT_EQ(direct.defs_direct, library.defs_library) << where;
      EXPECT_EQ(library.defs_direct, 0u) << where;
      def_files += direct.defs_direct;
      expect_same(direct, library, where);
      for (const LocalTrace& t : direct.threads) events += t.size();
      files += direct.direct;
    }
  }
  std::cout << anchors.size() << " traces, " << files << " event files (" << def_files
            << " with local definitions), " << events << " events compared\n";
  EXPECT_GT(events, 0u);
}

// ---------------------------------------------------------------------------------------------
// Damaged event files: the decoder declines them and libotf2's error is the message.

/// A scratch directory named after this test file.
class TempDir : public cpreplay::testing::ScratchDir {
 public:
  TempDir() : ScratchDir("otf2_decoder_test") {}
};

/// A 2-rank trace with every kind of MPI event and a metric record on rank 0.
void write_trace(const fs::path& dir) {
  using cpreplay::testing::CollOpT;
  cpreplay::testing::TraceWriter w(2);
  for (int r = 0; r < 2; ++r) {
    w.program_begin(r, 0.0);
    w.init(r, 0.1, 0.2);
  }
  w.metric(0, 0.25);
  w.send(0, 0.3, 0.4, 1, 7, 64);
  w.recv(1, 0.3, 0.5, 0, 7, 64);
  for (int r = 0; r < 2; ++r) {
    w.collective(r, "MPI_Allreduce", 0.6, 0.7 + 0.1 * r, CollOpT::Allreduce, 8, 8);
    w.finalize(r, 0.9, 1.0);
    w.program_end(r, 1.1);
  }
  w.write(dir.string());
}

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(),
                                                             static_cast<long>(bytes.size()));
}

/// Damages rank 0's event file with `damage`, then reads rank 0 both ways (and with --partial).
template <class Damage>
void check_damage(const char* what, Damage damage) {
  SCOPED_TRACE(what);
  TempDir tmp;
  write_trace(tmp.path());
  const fs::path evt = tmp.path() / "traces/0.evt";
  std::vector<char> bytes = slurp(evt);
  damage(bytes);
  spit(evt, bytes);
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  for (const bool partial : {false, true}) {
    const RankRead direct = read_rank(anchor, defs, 0, false, partial);
    const RankRead library = read_rank(anchor, defs, 0, true, partial);
    EXPECT_EQ(direct.direct, 0u) << "the decoder took a damaged file";
    EXPECT_EQ(direct.library, 1u);
    expect_same(direct, library, std::string(what) + (partial ? " (--partial)" : ""));
  }
}

TEST(Otf2EventDecoder, TheUndamagedTestTraceIsDecodedDirectly) {
  TempDir tmp;
  write_trace(tmp.path());
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  for (Rank r = 0; r < 2; ++r) {
    const RankRead direct = read_rank(anchor, defs, r, false);
    const RankRead library = read_rank(anchor, defs, r, true);
    EXPECT_EQ(direct.direct, 1u);
    EXPECT_EQ(direct.library, 0u);
    EXPECT_EQ(direct.error, "");
    expect_same(direct, library, "rank " + std::to_string(r));
  }
}

TEST(Otf2EventDecoder, APinnedEnvironmentIsNotReadAgain) {
  // The command pins the environment before its reading thread starts beside MPI_Init (which
  // sets variables: a getenv there crashed once in about 400 runs); the readers then
  // keep the pinned choice whatever the environment says later.
  TempDir tmp;
  write_trace(tmp.path());
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  ::unsetenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS");
  cpreplay::io::pin_environment();
  const RankRead asked_library = read_rank(anchor, defs, 0, true);  // sets the variable
  ::setenv("CPREPLAY_TEST_OTF2_LIBRARY_EVENTS", "1", 1);
  cpreplay::io::pin_environment();
  const RankRead asked_direct = read_rank(anchor, defs, 0, false);  // clears it
  cpreplay::io::unpin_environment();
  const RankRead unpinned = read_rank(anchor, defs, 0, true);
  EXPECT_EQ(asked_library.direct, 1u);
  EXPECT_EQ(asked_library.library, 0u);
  EXPECT_EQ(asked_direct.direct, 0u);
  EXPECT_EQ(asked_direct.library, 1u);
  EXPECT_EQ(unpinned.library, 1u);
  expect_same(asked_library, asked_direct, "rank 0");
}

// ---------------------------------------------------------------------------------------------
// Files cut short: decoded up to the cut (libotf2 reads past the end of such a file: the bytes of
// its chunk buffer after the file's data, stale from an earlier read, become records).

/// The events rank 0 has when its event file is cut to `size` bytes: the error without
/// --partial, the events with it. Checks both reads took the file directly.
struct CutRead {
  std::string error;        ///< without --partial
  RankRead partial;         ///< with --partial
  std::uint64_t cut_at = 0;  ///< where the whole records end (EventReadCounts::last_cut_at)
};

CutRead read_cut(const fs::path& dir, const std::vector<char>& whole, std::size_t size) {
  const fs::path evt = dir / "traces/0.evt";
  spit(evt, std::vector<char>(whole.begin(), whole.begin() + static_cast<long>(size)));
  const std::string anchor = (dir / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  CutRead out;
  const RankRead plain = read_rank(anchor, defs, 0, false, false);
  out.error = plain.error;
  EXPECT_EQ(plain.direct, 1u) << size << " bytes: " << plain.declined;
  EXPECT_EQ(plain.library, 0u) << size << " bytes";
  out.partial = read_rank(anchor, defs, 0, false, true);
  EXPECT_EQ(out.partial.direct, 1u) << size << " bytes: " << out.partial.declined;
  EXPECT_EQ(out.partial.library, 0u) << size << " bytes";
  out.cut_at = cpreplay::io::event_read_counts().last_cut_at;
  return out;
}

/// The number in "is cut short after N events (", or -1 if the message has none.
long cut_count(const std::string& error) {
  const std::string key = " is cut short after ";
  const auto at = error.find(key);
  if (at == std::string::npos) return -1;
  return std::stol(error.substr(at + key.size()));
}

/// The first n events of `whole` and the cut read's events are the same.
void expect_prefix(const LocalTrace& whole, const LocalTrace& cut, std::size_t n,
                   const std::string& where) {
  ASSERT_EQ(cut.size(), n) << where;
  ASSERT_LE(n, whole.size()) << where;
  for (cpreplay::EventIdx e = 0; e < n; ++e) {
    ASSERT_EQ(cut.time[e], whole.time[e]) << where << ", event " << e;
    ASSERT_EQ(cut.kind[e], whole.kind[e]) << where << ", event " << e;
    ASSERT_EQ(cut.ref[e], whole.ref[e]) << where << ", event " << e;
  }
  EXPECT_TRUE(cut.incomplete) << where;
}

TEST(Otf2EventDecoder, AFileCutAtAnyByte_IsReadUpToTheCut) {
  TempDir tmp;
  write_trace(tmp.path());
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const RankRead whole = read_rank(anchor, cpreplay::io::read_definitions(anchor), 0, false);
  ASSERT_EQ(whole.error, "");
  const std::vector<char> bytes = slurp(tmp.path() / "traces/0.evt");
  ASSERT_GT(bytes.size(), 100u);
  // Every whole record before the cut counts: the count never falls as the cut moves on, the
  // file without its end-of-file record and the byte after it has every event, and without only
  // that last byte it is whole.
  ASSERT_EQ(bytes[bytes.size() - 2], 2);  // OTF2_BUFFER_END_OF_FILE
  long last = 0;
  for (std::size_t size = 1; size < bytes.size(); ++size) {
    const std::string where = std::to_string(size) + " of " + std::to_string(bytes.size()) +
                              " bytes";
    const CutRead cut = read_cut(tmp.path(), bytes, size);
    if (size == bytes.size() - 1) {
      EXPECT_EQ(cut.error, "") << where;
      ASSERT_EQ(cut.partial.error, "") << where;
      EXPECT_EQ(cut.partial.threads[0].size(), whole.threads[0].size()) << where;
      EXPECT_FALSE(cut.partial.threads[0].incomplete) << where;
      continue;
    }
    const long n = cut_count(cut.error);
    ASSERT_GE(n, last) << where << ": " << cut.error;
    last = n;
    EXPECT_NE(cut.error.find(": rank 0: event file " + (tmp.path() / "traces/0.evt").string() +
                             " is cut short after " + std::to_string(n) + " events (it ends "),
              std::string::npos)
        << where << ": " << cut.error;
    EXPECT_NE(cut.error.find(", at " + std::to_string(size) + " bytes"), std::string::npos)
        << cut.error;
    if (n == 0) {
      // Nothing to analyze: --partial refuses it too, with the same message.
      EXPECT_EQ(cut.partial.error, cut.error) << where;
      EXPECT_EQ(cut.error.find("--partial"), std::string::npos) << cut.error;
      continue;
    }
    EXPECT_NE(cut.error.find("; --partial analyzes the events before the cut)"),
              std::string::npos)
        << cut.error;
    ASSERT_EQ(cut.partial.error, "") << where;
    expect_prefix(whole.threads[0], cut.partial.threads[0], static_cast<std::size_t>(n), where);
    // The whole records end where the decoder says: those bytes and an end-of-file record are a
    // file libotf2 reads as the decoder does, to the same events.
    ASSERT_GE(cut.cut_at, 18u) << where;
    ASSERT_LE(cut.cut_at, size) << where;
    std::vector<char> ended(bytes.begin(), bytes.begin() + static_cast<long>(cut.cut_at));
    ended.push_back(2);  // OTF2_BUFFER_END_OF_FILE, and the byte writers put after it
    ended.push_back(1);
    spit(tmp.path() / "traces/0.evt", ended);
    const Definitions defs = cpreplay::io::read_definitions(anchor);
    const RankRead direct = read_rank(anchor, defs, 0, false, true);
    const RankRead library = read_rank(anchor, defs, 0, true, true);
    EXPECT_EQ(direct.direct, 1u) << where;
    expect_same(direct, library, where + ", ended after the whole records");
    ASSERT_EQ(direct.threads[0].size(), static_cast<std::size_t>(n)) << where;
  }
  EXPECT_EQ(static_cast<std::size_t>(last), whole.threads[0].size());
  // Where the reads end: the header, a record, and before the end-of-file record.
  EXPECT_NE(read_cut(tmp.path(), bytes, 10).error.find("(it ends inside a chunk header, at 10 "
                                                       "bytes)"),
            std::string::npos);
  EXPECT_NE(read_cut(tmp.path(), bytes, 20).error.find("(it ends inside a record, at 20 bytes)"),
            std::string::npos);
  EXPECT_NE(read_cut(tmp.path(), bytes, bytes.size() - 2).error.find(
                "(it ends before the end-of-file record, at "),
            std::string::npos);
}

TEST(Otf2EventDecoder, AFileCutAtAChunkBoundary_IsReadUpToTheCut) {
  // Three 1 MiB chunks of rank 0's events (about 2.4 MB), cut where a chunk ends and just after.
  TempDir tmp;
  {
    cpreplay::testing::TraceWriter w(2);
    for (int r = 0; r < 2; ++r) w.program_begin(r, 0.0);
    for (int i = 0; i < 100000; ++i) w.region(0, "work", 1.0 + i * 1e-3, 1.0 + (i + 0.5) * 1e-3);
    for (int r = 0; r < 2; ++r) w.program_end(r, 200.0);
    w.write(tmp.path().string());
  }
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const RankRead whole = read_rank(anchor, cpreplay::io::read_definitions(anchor), 0, false);
  ASSERT_EQ(whole.error, "");
  const std::vector<char> bytes = slurp(tmp.path() / "traces/0.evt");
  constexpr std::size_t kChunk = 1024 * 1024;
  ASSERT_GT(bytes.size(), 2 * kChunk);
  long at_boundary = -1;
  for (const std::size_t size : {kChunk, kChunk + 1, 2 * kChunk, 2 * kChunk + 17}) {
    const std::string where = std::to_string(size) + " bytes";
    const CutRead cut = read_cut(tmp.path(), bytes, size);
    const long n = cut_count(cut.error);
    ASSERT_GT(n, 0) << where << ": " << cut.error;
    if (size % kChunk == 0) {
      EXPECT_NE(cut.error.find("(it ends after an end-of-chunk record, at " +
                               std::to_string(size) + " bytes; --partial"),
                std::string::npos)
          << cut.error;
      at_boundary = n;
    } else {
      // One byte or the chunk header of the next chunk: not one more event.
      EXPECT_NE(cut.error.find("(it ends inside a chunk header, at "), std::string::npos)
          << cut.error;
      EXPECT_EQ(n, at_boundary) << where;
    }
    ASSERT_EQ(cut.partial.error, "") << where;
    expect_prefix(whole.threads[0], cut.partial.threads[0], static_cast<std::size_t>(n), where);
  }
}

TEST(Otf2EventDecoder, ABadChunkHeaderIsLeftToTheLibrary) {
  check_damage("not a chunk header", [](std::vector<char>& b) { b[0] = 7; });
  check_damage("big-endian marker", [](std::vector<char>& b) { b[1] = 0x23; });
  check_damage("bad endianness byte", [](std::vector<char>& b) { b[1] = 0x11; });
}

TEST(Otf2EventDecoder, GarbageIsLeftToTheLibrary) {
  check_damage("garbage after the header", [](std::vector<char>& b) {
    for (std::size_t i = 30; i < b.size() && i < 60; ++i) b[i] = static_cast<char>(0xfe);
  });
  check_damage("an unknown record type", [](std::vector<char>& b) {
    // The first record after the header's timestamp (18 + 9 bytes) becomes type 200.
    b[27] = static_cast<char>(200);
  });
  check_damage("an invalid compressed length", [](std::vector<char>& b) {
    b[28] = 9;  // the ProgramBegin's record length byte... or its first field: either is damage
  });
  check_damage("all zero", [](std::vector<char>& b) { std::fill(b.begin(), b.end(), 0); });
}

TEST(Otf2EventDecoder, DamageAnywhereReadsAsTheLibraryReadsIt) {
  // The decoder decodes in one pass and calls back as it goes: when it stops at damage late in
  // the file, the events before it must be undone (the location's events, its open regions and
  // requests, the master's forks) before libotf2 reads the file from its start. Rank 0's master
  // (nested regions, non-blocking requests, a parallel region on both threads, a collective) gets
  // a byte of garbage at every position after its chunk header in turn; each read (and with
  // --partial) must give what libotf2's gives: the error, every thread's events, the call tree.
  TempDir tmp;
  {
    cpreplay::testing::TraceWriter w(2);
    w.set_threads_per_process(2);
    const std::string par = "!$omp parallel @a.c:3";
    for (int r = 0; r < 2; ++r) {
      w.program_begin(r, 0.0);
      w.enter(r, 0.01, "main");
      w.init(r, 0.1, 0.2);
    }
    w.enter(0, 0.21, "solve");
    w.enter(0, 0.22, "MPI_Irecv");
    w.mpi_irecv_request(0, 0.23, 5);
    w.leave(0, 0.24, "MPI_Irecv");
    w.enter(0, 0.25, "MPI_Isend");
    w.mpi_isend(0, 0.26, 1, 3, 128, 6);
    w.leave(0, 0.27, "MPI_Isend");
    w.enter(0, 0.28, "MPI_Waitall");
    w.mpi_isend_complete(0, 0.29, 6);
    w.mpi_irecv(0, 0.30, 1, 4, 128, 5);
    w.leave(0, 0.31, "MPI_Waitall");
    w.send(1, 0.22, 0.25, 0, 4, 128);
    w.recv(1, 0.26, 0.30, 0, 3, 128);
    w.omp_fork(0, 0.4, 2);
    for (int t = 0; t < 2; ++t) {
      w.omp_team_begin(0, t, 0.41 + 0.01 * t);
      w.thread_enter(0, t, 0.41 + 0.01 * t, par);
      w.thread_enter(0, t, 0.45, "work");
      w.thread_leave(0, t, 0.5 + 0.01 * t, "work");
      w.thread_leave(0, t, 0.55, par);
      w.omp_team_end(0, t, 0.55);
    }
    w.omp_join(0, 0.56);
    w.leave(0, 0.6, "solve");
    for (int r = 0; r < 2; ++r) {
      w.collective(r, "MPI_Allreduce", 0.6, 0.7 + 0.1 * r, cpreplay::testing::CollOpT::Allreduce,
                   8, 8);
      w.finalize(r, 0.9, 1.0);
      w.leave(r, 1.05, "main");
      w.program_end(r, 1.1);
    }
    w.write(tmp.path().string());
  }
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const fs::path evt = tmp.path() / "traces/0.evt";
  const std::vector<char> bytes = slurp(evt);
  {
    const Definitions defs = cpreplay::io::read_definitions(anchor);
    const RankRead whole = read_rank(anchor, defs, 0, false);
    ASSERT_EQ(whole.error, "");
    ASSERT_EQ(whole.threads.size(), 2u);  // the master and one worker thread
    ASSERT_EQ(whole.direct, 2u);
  }
  std::size_t declined_late = 0;  // damage the decoder stopped at after calling back
  for (std::size_t at = 18; at + 2 < bytes.size(); ++at) {
    std::vector<char> damaged = bytes;
    damaged[at] = static_cast<char>(0xfe);
    spit(evt, damaged);
    const Definitions defs = cpreplay::io::read_definitions(anchor);
    // Garbage that makes a record of the last chunk run past the file's end reads as a file cut
    // short there (the decoder cannot tell the two apart, and libotf2 reads past the end of a
    // file cut short): those are the decoder's own reads, tested above.
    const RankRead plain = read_rank(anchor, defs, 0, false, false);
    if (plain.library == 0 && plain.error.find(" is cut short after ") != std::string::npos)
      continue;
    if (plain.library > 0 && at > 40) ++declined_late;
    for (const bool partial : {false, true}) {
      const std::string where =
          "garbage at byte " + std::to_string(at) + (partial ? " (--partial)" : "");
      const RankRead direct = partial ? read_rank(anchor, defs, 0, false, true) : plain;
      const RankRead library = read_rank(anchor, defs, 0, true, partial);
      expect_same(direct, library, where);
    }
  }
  // Most positions are inside the records after the first ones: the decoder met them late.
  EXPECT_GT(declined_late, 50u);
}

// ---------------------------------------------------------------------------------------------
// Local definitions (<location>.def): mapping tables and clock offsets, written by hand.

/// A compressed unsigned integer as OTF2 writes it: its length byte, then the bytes.
std::vector<std::uint8_t> compressed(std::uint64_t v) {
  std::vector<std::uint8_t> out{0};
  while (v != 0) {
    out.push_back(static_cast<std::uint8_t>(v & 0xff));
    v >>= 8;
    ++out[0];
  }
  return out;
}

void append(std::vector<std::uint8_t>& to, const std::vector<std::uint8_t>& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

/// A record: its type, its one-byte length, its data.
std::vector<std::uint8_t> def_record(std::uint8_t type, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> r{type, static_cast<std::uint8_t>(data.size())};
  append(r, data);
  return r;
}

/// MappingTable (sparse): the type, the pair count, the mode, the pairs.
std::vector<std::uint8_t> mapping(OTF2_MappingType type,
                                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& p) {
  std::vector<std::uint8_t> data{type};
  append(data, compressed(p.size()));
  data.push_back(OTF2_ID_MAP_SPARSE);
  for (const auto& [local, global] : p) {
    append(data, compressed(local));
    append(data, compressed(global));
  }
  return def_record(5, data);
}

/// ClockOffset: the time (raw), the offset (compressed int64), the deviation (a raw double).
std::vector<std::uint8_t> clock_offset(std::uint64_t time, std::int64_t offset) {
  std::vector<std::uint8_t> data(8);
  std::memcpy(data.data(), &time, 8);
  append(data, compressed(static_cast<std::uint64_t>(offset)));
  data.resize(data.size() + 8, 0);
  return def_record(6, data);
}

/// A local definition file: the chunk header, the records, end of file and of buffer.
void write_def(const fs::path& path, const std::vector<std::vector<std::uint8_t>>& records) {
  std::vector<std::uint8_t> bytes{3, 0x42, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (const auto& r : records) append(bytes, r);
  append(bytes, {2, 1});
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
}

/// Rank 0 of the test trace with `records` as its local definitions, read both ways.
struct DefsCase {
  RankRead direct, library;
};

DefsCase read_with_defs(const std::vector<std::vector<std::uint8_t>>& records) {
  TempDir tmp;
  write_trace(tmp.path());
  write_def(tmp.path() / "traces/0.def", records);
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  return DefsCase{read_rank(anchor, defs, 0, false), read_rank(anchor, defs, 0, true)};
}

TEST(Otf2EventDecoder, MappingTablesAndClockOffsetsApplyAsLibotf2AppliesThem) {
  // Regions 1 and 2 swapped (Enter and Leave alike), messages on communicator 0 stay (an entry
  // for an unused id), and two intervals of clock offsets whose slopes round both ways.
  const std::uint64_t t0 = cpreplay::testing::TraceWriter::to_ticks(0.0);
  const std::uint64_t t1 = cpreplay::testing::TraceWriter::to_ticks(0.45);
  const std::uint64_t t2 = cpreplay::testing::TraceWriter::to_ticks(0.9);
  const DefsCase c = read_with_defs({mapping(OTF2_MAPPING_REGION, {{1, 2}, {2, 1}}),
                                     mapping(OTF2_MAPPING_COMM, {{7, 9}}),
                                     clock_offset(t0, 1000), clock_offset(t1, -2333),
                                     clock_offset(t2, 5001)});
  EXPECT_EQ(c.direct.defs_direct, 1u);
  EXPECT_EQ(c.direct.direct, 1u);
  EXPECT_EQ(c.library.defs_library, 1u);
  EXPECT_EQ(c.direct.error, "");
  expect_same(c.direct, c.library, "mapped and clock-corrected");
  // The corrections moved the times: they differ from the file's own.
  const DefsCase plain = read_with_defs({});
  ASSERT_FALSE(plain.direct.threads.empty());
  ASSERT_FALSE(c.direct.threads.empty());
  EXPECT_NE(plain.direct.threads[0].time[1], c.direct.threads[0].time[1]);
}

TEST(Otf2EventDecoder, LocalDefinitionsItDoesNotReadGoToLibotf2) {
  // A String record (type 10): libotf2 reads the file, the decoder still reads the events with
  // the mapping the library hands over.
  std::vector<std::uint8_t> str{0};  // string id 0 (compressed), then "x\0"
  str.push_back('x');
  str.push_back(0);
  const DefsCase c =
      read_with_defs({def_record(10, str), mapping(OTF2_MAPPING_REGION, {{1, 2}, {2, 1}})});
  EXPECT_EQ(c.direct.defs_library, 1u);
  EXPECT_EQ(c.direct.direct, 1u);
  expect_same(c.direct, c.library, "a String record");
}

TEST(Otf2EventDecoder, LocalDefinitionsLibotf2RefusesKeepTheirError) {
  // Two tables of one type, and two clock offsets at one time: libotf2's own error.
  for (const auto& records :
       {std::vector<std::vector<std::uint8_t>>{mapping(OTF2_MAPPING_REGION, {{1, 2}}),
                                               mapping(OTF2_MAPPING_REGION, {{2, 1}})},
        std::vector<std::vector<std::uint8_t>>{clock_offset(5, 0), clock_offset(5, 10)}}) {
    const DefsCase c = read_with_defs(records);
    EXPECT_EQ(c.direct.defs_direct, 0u);
    EXPECT_NE(c.direct.error, "");
    expect_same(c.direct, c.library, "refused local definitions");
  }
}

// ---------------------------------------------------------------------------------------------
// Definition files cut short: libotf2 would read past their end too (for the global definitions
// it reported "string 0 is defined twice" on HPCCG's cut at 5,000 bytes): the reader says so.

TEST(Otf2EventDecoder, LocalDefinitionsCutAtAnyByte_SayWhereTheyEnd) {
  TempDir tmp;
  write_trace(tmp.path());
  const fs::path def = tmp.path() / "traces/0.def";
  write_def(def, {mapping(OTF2_MAPPING_REGION, {{1, 2}, {2, 1}}), clock_offset(5, 10),
                  clock_offset(99, 20)});
  const std::vector<char> bytes = slurp(def);
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  const Definitions defs = cpreplay::io::read_definitions(anchor);
  const RankRead whole = read_rank(anchor, defs, 0, false);
  ASSERT_EQ(whole.error, "");
  for (std::size_t size = 1; size + 1 < bytes.size(); ++size) {
    spit(def, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(size)));
    const std::string where = std::to_string(size) + " of " + std::to_string(bytes.size());
    const std::string error = "traces.otf2: rank 0: local definitions " + def.string() +
                              " are cut short (they end ";
    for (const bool library : {false, true}) {
      const RankRead cut = read_rank(anchor, defs, 0, library, true);
      EXPECT_NE(cut.error.find(error), std::string::npos) << where << ": " << cut.error;
      EXPECT_NE(cut.error.find(", at " + std::to_string(size) + " bytes)"), std::string::npos)
          << cut.error;
    }
  }
  // The header, a record, the end-of-file record.
  const auto message = [&](std::size_t size) {
    spit(def, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(size)));
    return read_rank(anchor, defs, 0, false).error;
  };
  EXPECT_NE(message(17).find("(they end inside a chunk header, at 17 bytes)"), std::string::npos);
  EXPECT_NE(message(20).find("(they end inside a record, at 20 bytes)"), std::string::npos);
  EXPECT_NE(message(bytes.size() - 2).find("(they end before the end-of-file record, at "),
            std::string::npos);
  // Without only the byte after the end-of-file record it is whole.
  spit(def, std::vector<char>(bytes.begin(), bytes.end() - 1));
  const RankRead last = read_rank(anchor, defs, 0, false);
  EXPECT_EQ(last.error, "");
  expect_same(last, whole, "the last byte cut");
}

TEST(Otf2EventDecoder, GlobalDefinitionsCutAtAnyByte_SayWhereTheyEnd) {
  TempDir tmp;
  write_trace(tmp.path());
  const fs::path def = tmp.path() / "traces.def";
  const std::vector<char> bytes = slurp(def);
  const std::string anchor = (tmp.path() / "traces.otf2").string();
  ASSERT_GT(bytes.size(), 100u);
  ASSERT_EQ(bytes[bytes.size() - 2], 2);  // OTF2_BUFFER_END_OF_FILE
  const auto read = [&](std::size_t size) -> std::string {
    spit(def, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(size)));
    try {
      cpreplay::io::read_definitions(anchor);
    } catch (const cpreplay::TraceError& e) {
      return e.what();
    }
    return "";
  };
  for (std::size_t size = 1; size + 1 < bytes.size(); ++size) {
    const std::string error = read(size);
    EXPECT_NE(error.find(anchor + ": global definitions " + def.string() +
                         " are cut short (they end "),
              std::string::npos)
        << size << ": " << error;
    EXPECT_NE(error.find(", at " + std::to_string(size) + " bytes)"), std::string::npos)
        << error;
  }
  EXPECT_NE(read(10).find("(they end inside a chunk header, at 10 bytes)"), std::string::npos);
  EXPECT_NE(read(bytes.size() - 2).find("(they end before the end-of-file record, at "),
            std::string::npos);
  EXPECT_EQ(read(bytes.size() - 1), "");
  EXPECT_EQ(read(bytes.size()), "");
}

}  // namespace
