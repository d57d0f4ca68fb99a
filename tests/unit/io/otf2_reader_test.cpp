// SPDX-License-Identifier: BSD-3-Clause
// Tests the OTF2 reader on damaged event files: each must give a one-line TraceError.
#include "io/otf2_reader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cpreplay/error.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

/// A scratch directory named after this test file.
class TempDir : public cpreplay::testing::ScratchDir {
 public:
  TempDir() : ScratchDir("otf2_reader_test") {}
};

/// Reads rank 0 of `dir/traces.otf2` and returns the TraceError's message ("" if none).
std::string read_error(const fs::path& dir) {
  const std::string anchor = (dir / "traces.otf2").string();
  const cpreplay::Definitions defs = cpreplay::io::read_definitions(anchor);
  cpreplay::CallTree tree;
  try {
    cpreplay::io::read_events(anchor, defs, 0, tree);
  } catch (const cpreplay::TraceError& e) {
    return e.what();
  }
  return "";
}

/// A 1-rank archive whose rank 0 has the events of `other`'s rank 0, which may name regions
/// that only `other` defines (region ids follow first use: rank 1 of `other` defines them).
void graft_events(const fs::path& dir, const TraceWriter& other, const fs::path& scratch) {
  TraceWriter host(1);
  host.region(0, "main", 0.0, 1.0);
  host.write(dir.string());
  other.write(scratch.string());
  fs::copy_file(scratch / "traces/0.evt", dir / "traces/0.evt",
                fs::copy_options::overwrite_existing);
}

// Found by tests/fuzz: a Leave of an undefined region read past the region table.
TEST(Otf2Reader, LeaveOfUndefinedRegion_ThrowsTraceErrorNamingEvent) {
  TempDir tmp;
  TraceWriter other(2);
  for (int i = 0; i < 20; ++i) other.region(1, "r" + std::to_string(i), i, i + 0.5);
  other.leave(0, 0.0, "r19");  // region id 20
  graft_events(tmp.path() / "a", other, tmp.path() / "b");
  const std::string error = read_error(tmp.path() / "a");
  EXPECT_NE(error.find("traces.otf2: rank 0, event 0: Leave of undefined region 20"),
            std::string::npos)
      << error;
}

TEST(Otf2Reader, EnterOfUndefinedRegion_ThrowsTraceErrorNamingEvent) {
  TempDir tmp;
  TraceWriter other(2);
  for (int i = 0; i < 20; ++i) other.region(1, "r" + std::to_string(i), i, i + 0.5);
  other.enter(0, 0.0, "r19");
  graft_events(tmp.path() / "a", other, tmp.path() / "b");
  const std::string error = read_error(tmp.path() / "a");
  EXPECT_NE(error.find("traces.otf2: rank 0, event 0: Enter of undefined region 20"),
            std::string::npos)
      << error;
}

// Fuzz finding 6 (tests/fuzz/README.md): a timestamp past 2^63 overflowed the what-if's
// signed ticks; past 2^62 the event file is refused.
TEST(Otf2Reader, TimestampBeyond2To62_ThrowsTraceErrorNamingEvent) {
  TempDir tmp;
  TraceWriter w(1);
  w.region(0, "main", 1.0, 2.0);
  w.set_clock_skew(0, 5e9);  // 5e18 ticks (1e9 per second) later
  w.write((tmp.path() / "a").string());
  const std::string error = read_error(tmp.path() / "a");
  // (The writer's own base offset comes on top of the skew.)
  EXPECT_NE(error.find("traces.otf2: rank 0, event 0: timestamp 5000"), std::string::npos) << error;
  EXPECT_NE(error.find(" is beyond 2^62 ticks: the event file is damaged"), std::string::npos)
      << error;
}

// Fuzz finding 8 (tests/fuzz/README.md): a root's byte count near 2^64 went through a double
// and back (undefined); past 2^53 the event file is refused.
TEST(Otf2Reader, CollectiveBytesBeyond2To53_ThrowsTraceErrorNamingEvent) {
  TempDir tmp;
  TraceWriter w(1);
  w.collective(0, "MPI_Bcast", 1.0, 2.0, CollOpT::Bcast, std::uint64_t{1} << 60, 8, 0, 0);
  w.write((tmp.path() / "a").string());
  const std::string error = read_error(tmp.path() / "a");
  EXPECT_NE(error.find("traces.otf2: rank 0, event 2: collective byte count 1152921504606846976 "
                       "is beyond 2^53: the event file is damaged"),
            std::string::npos)
      << error;
}

TEST(Otf2Reader, EmptyEventFile_ThrowsDamagedOrTruncatedAfterZeroEvents) {
  TempDir tmp;
  TraceWriter w(1);
  w.region(0, "main", 0.0, 1.0);
  w.write((tmp.path() / "a").string());
  fs::resize_file(tmp.path() / "a/traces/0.evt", 0);
  const std::string error = read_error(tmp.path() / "a");
  EXPECT_NE(error.find("0.evt is damaged or truncated after 0 events"), std::string::npos)
      << error;
}

// Score-P writes 256 KiB definition chunks (as does our writer): a definitions file larger than
// that spans several chunks, and every region in it must still be read.
TEST(Otf2Reader, DefinitionsSpanningSeveralChunks_AllRegionsAndEventsRead) {
  TempDir tmp;
  TraceWriter w(1);
  const std::string pad(200, 'x');
  constexpr int kRegions = 4000;
  for (int i = 0; i < kRegions; ++i) w.region(0, "r" + std::to_string(i) + pad, i, i + 0.5);
  w.write((tmp.path() / "a").string());
  ASSERT_GT(fs::file_size(tmp.path() / "a/traces.def"), 2u * 256 * 1024);

  const std::string anchor = (tmp.path() / "a/traces.otf2").string();
  const cpreplay::Definitions defs = cpreplay::io::read_definitions(anchor);
  int found = 0;
  for (const cpreplay::Region& r : defs.regions)
    if (r.name == "r0" + pad || r.name == "r" + std::to_string(kRegions - 1) + pad) ++found;
  EXPECT_EQ(found, 2);
  cpreplay::CallTree tree;
  const cpreplay::LocalTrace trace = cpreplay::io::read_events(anchor, defs, 0, tree);
  EXPECT_EQ(trace.size(), 2u * kRegions);
  EXPECT_EQ(tree.size(), static_cast<std::size_t>(kRegions));
}

}  // namespace
