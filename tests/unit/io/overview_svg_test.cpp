// SPDX-License-Identifier: BSD-3-Clause
// io::OverviewSvg at 1024 ranks (bands of 8), checked with the strict parser of
// tests/support/check_views.py, and io::OutputFile's all-or-nothing writing.
#include "io/overview_svg.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "io/output_file.hpp"
#include "tests/support/json.hpp"

namespace cpreplay::testing {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/cpreplay-unit-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

/// The strict checker's facts about an SVG (throws with its message when a rule is broken).
Json svg_facts(const std::string& file) {
  const std::string script =
      (fs::path(__FILE__).parent_path().parent_path().parent_path() / "support" / "check_views.py")
          .string();
  const std::string cmd = "/usr/bin/python3 '" + script + "' svg '" + file + "' 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (pclose(p) != 0) throw std::runtime_error("check_views.py failed: " + out);
  return parse_json(out);
}

TEST(OverviewSvg, RanksPerBand_OneRowUpTo128RanksThenBands) {
  EXPECT_EQ(io::OverviewSvg::ranks_per_band(4), 1);
  EXPECT_EQ(io::OverviewSvg::ranks_per_band(128), 1);
  EXPECT_EQ(io::OverviewSvg::ranks_per_band(129), 2);
  EXPECT_EQ(io::OverviewSvg::ranks_per_band(1024), 8);
  EXPECT_EQ(io::OverviewSvg::ranks_per_band(100000), 782);
}

// 1024 ranks in 128 bands of 8; two call paths, 10 bins. Band b spends all its time in path
// b % 2 and waits in bins 5..9 when b is even. The critical path runs on rank 0 for the first
// half of the 2 s run and on rank 1023 for the second.
TEST(OverviewSvg, ThousandRanks_BandsCoverEveryRankOnceAndThePathSpansTheRun) {
  TempDir dir;
  const std::string file = dir.path + "/o.svg";
  io::OverviewSpec spec;
  spec.ranks = 1024;
  spec.bins = 10;
  spec.legend = {"main/solve", "main/MPI_Waitall & <friends>"};  // escaped in the XML
  spec.run_seconds = 2.0;
  spec.title = "t";
  io::OverviewSvg svg(file, spec);
  const std::size_t columns = spec.legend.size() + 2;
  for (int band = 0; band < 128; ++band) {
    std::vector<float> bins(spec.bins * columns, 0.0f);
    for (std::size_t b = 0; b < spec.bins; ++b) {
      bins[b * columns + band % 2] = 8.0f;                        // 8 ranks, whole bin each
      if (band % 2 == 0 && b >= 5) bins[b * columns + 3] = 8.0f;  // waiting
    }
    svg.add_band(band * 8, band * 8 + 7, bins.data());
  }
  svg.add_path_point(0.0, 0);
  svg.add_path_point(1.0, 0);
  svg.add_path_point(1.0, 1023);
  svg.add_path_point(2.0, 1023);
  svg.commit();

  const Json facts = svg_facts(file);
  ASSERT_EQ(facts["rows"].array.size(), 128u);
  EXPECT_EQ(facts["rows"].array[5].array[0].number, 40);
  EXPECT_EQ(facts["rows"].array[5].array[1].number, 47);
  EXPECT_EQ(facts["waiting_rects"].number, 64);  // one hatched run per even band
  EXPECT_EQ(facts["row_fills"].array[0].array.size(), 1u);
  EXPECT_EQ(facts["row_fills"].array[0].array[0].string, "#4e79a7");
  EXPECT_EQ(facts["row_fills"].array[1].array[0].string, "#f28e2b");
  EXPECT_NEAR(facts["path_min_x"].number, facts["plot_x"].number, 0.05);
  EXPECT_NEAR(facts["path_max_x"].number - facts["path_min_x"].number, facts["plot_width"].number,
              0.1);
  // The path jumps at the middle, from the first band to the last.
  const auto& pts = facts["path_points"].array;
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_NEAR(pts[1].array[0].number, facts["plot_x"].number + facts["plot_width"].number / 2, 0.1);
  const double band_h = facts["plot_height"].number / 128;
  EXPECT_NEAR(pts[1].array[1].number, facts["plot_y"].number + band_h / 2, 0.01);
  EXPECT_NEAR(pts[2].array[1].number, facts["plot_y"].number + 127.5 * band_h, 0.01);
  EXPECT_GE(band_h, 4.0);  // still a visible band
  EXPECT_EQ(facts["legend"].array[1].string, "main/MPI_Waitall & <friends>");
  EXPECT_EQ(fs::directory_iterator(dir.path)->path().filename(), "o.svg");  // no temporary left
}

TEST(OverviewSvg, RowsPerThread_UpTo128ThreadsInAll) {
  EXPECT_FALSE(io::OverviewSvg::rows_per_thread({}));  // pure MPI
  EXPECT_TRUE(io::OverviewSvg::rows_per_thread({4, 4}));
  EXPECT_TRUE(io::OverviewSvg::rows_per_thread(std::vector<int>(32, 4)));
  EXPECT_FALSE(io::OverviewSvg::rows_per_thread(std::vector<int>(33, 4)));
}

// A hybrid trace of 2 ranks with 3 and 2 threads: a row per thread, grouped by rank. Rank 0's
// thread 1 idles in the first half of the 2 s run (bins 0-4 empty) and works in the second;
// every other thread works all along, rank 1's master waiting in bins 2-3. The path runs on
// rank 0's master, then its thread 2, then rank 1's thread 1.
TEST(OverviewSvg, HybridThreadRows_GroupedByRankThePathOnTheThreads) {
  TempDir dir;
  const std::string file = dir.path + "/o.svg";
  io::OverviewSpec spec;
  spec.ranks = 2;
  spec.threads = {3, 2};
  spec.bins = 10;
  spec.legend = {"main/work"};
  spec.run_seconds = 2.0;
  spec.title = "t";
  io::OverviewSvg svg(file, spec);
  const std::size_t columns = 3;
  for (int r = 0; r < 2; ++r)
    for (int t = 0; t < spec.threads[static_cast<std::size_t>(r)]; ++t) {
      std::vector<float> bins(spec.bins * columns, 0.0f);
      for (std::size_t b = 0; b < spec.bins; ++b) {
        if (!(r == 0 && t == 1 && b < 5)) bins[b * columns] = 1.0f;
        if (r == 1 && t == 0 && (b == 2 || b == 3)) bins[b * columns + 2] = 1.0f;
      }
      svg.add_thread_row(r, t, bins.data());
    }
  svg.add_path_point(0.0, 0, 0);
  svg.add_path_point(0.5, 0, 0);
  svg.add_path_point(0.5, 0, 2);
  svg.add_path_point(1.5, 0, 2);
  svg.add_path_point(1.5, 1, 1);
  svg.add_path_point(2.0, 1, 1);
  svg.commit();

  const Json facts = svg_facts(file);
  EXPECT_EQ(facts["row_unit"].string, "thread");
  EXPECT_EQ(facts["threads"].number, 5);
  const int rows[5][3] = {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {1, 1, 0}, {1, 1, 1}};
  ASSERT_EQ(facts["rows"].array.size(), 5u);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(facts["rows"].array[i].array[k].number, rows[i][k]);
  const char* labels[5] = {"rank 0", "thread 1", "thread 2", "rank 1", "thread 1"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(facts["row_labels"].array[i].array.at(0).string, labels[i]);
  EXPECT_EQ(facts["separators"].number, 1);  // between rank 0's threads and rank 1's
  const double x0 = facts["plot_x"].number, w = facts["plot_width"].number;
  const auto& idle = facts["row_runs"].array[1].array;  // rank 0, thread 1
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_NEAR(idle[0].array[0].number, x0 + w / 2, 0.01);
  EXPECT_NEAR(idle[0].array[1].number, w / 2, 0.01);
  EXPECT_EQ(facts["row_waiting"].array[3].array.size(), 1u);
  EXPECT_NEAR(facts["row_waiting"].array[3].array[0].array[0].number, x0 + 0.2 * w, 0.01);
  EXPECT_EQ(facts["waiting_rects"].number, 1);
  // Rows of 48 px; the path's corners at the rows of the threads that carry it.
  const double top = facts["plot_y"].number;
  const double want_y[6] = {0.5, 0.5, 2.5, 2.5, 4.5, 4.5};
  const auto& pts = facts["path_points"].array;
  ASSERT_EQ(pts.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(pts[i].array[1].number, top + want_y[i] * 48.0, 0.01) << i;
  EXPECT_EQ(facts["legend"].array.back().string,
            "critical path (jumps to the thread it continues on)");
}

// 40 ranks of 4 threads (160 > 128): a row per rank, its threads added up; shares are of the
// rank's 4 threads: a rank whose master alone works (1 of 4) fills a quarter of its row's
// height, one whose threads all work fills it; waiting is hatched from the bottom, as tall as
// its share of the 4 threads' time (2.5 of 4 in the first quarter of the run, 1 of 4 after).
// Rows of 16 px (640 / 40) draw 15 px; edges are rounded to 0.25 px.
TEST(OverviewSvg, HybridRankRows_ThreadsAddedUp) {
  TempDir dir;
  const std::string file = dir.path + "/o.svg";
  io::OverviewSpec spec;
  spec.ranks = 40;
  spec.threads.assign(40, 4);
  spec.bins = 4;
  spec.legend = {"main/work"};
  spec.run_seconds = 1.0;
  spec.title = "t";
  io::OverviewSvg svg(file, spec);
  for (int r = 0; r < 40; ++r) {
    std::vector<float> bins(spec.bins * 3, 0.0f);
    for (std::size_t b = 0; b < spec.bins; ++b) {
      bins[b * 3] = r % 2 == 0 ? 1.0f : 4.0f;
      bins[b * 3 + 2] = b == 0 ? 2.5f : 1.0f;
    }
    svg.add_band(r, r, bins.data());
  }
  svg.add_path_point(0.0, 0);
  svg.add_path_point(1.0, 39);
  svg.commit();
  const Json facts = svg_facts(file);
  EXPECT_EQ(facts["row_unit"].string, "rank");
  EXPECT_EQ(facts["threads"].number, 160);
  ASSERT_EQ(facts["rows"].array.size(), 40u);
  EXPECT_EQ(facts["rows"].array[7].array.size(), 2u);
  EXPECT_EQ(facts["separators"].number, 0);
  const double x0 = facts["plot_x"].number, w = facts["plot_width"].number;
  for (int r = 0; r < 40; ++r) {
    const double top = facts["plot_y"].number + 16.0 * r;
    const auto& runs = facts["row_runs"].array[r].array;
    ASSERT_EQ(runs.size(), 1u) << r;  // every bin alike: one rectangle
    EXPECT_NEAR(runs[0].array[0].number, x0, 0.01);
    EXPECT_NEAR(runs[0].array[1].number, w, 0.01);
    EXPECT_NEAR(runs[0].array[3].number, top, 0.01);
    EXPECT_NEAR(runs[0].array[4].number, r % 2 == 0 ? 3.75 : 15.0, 0.01) << r;
    const auto& hatched = facts["row_waiting"].array[r].array;
    ASSERT_EQ(hatched.size(), 2u) << r;
    EXPECT_NEAR(hatched[0].array[1].number, w / 4, 0.01);
    EXPECT_NEAR(hatched[0].array[3].number, 9.5, 0.01);  // 2.5 / 4 x 15 = 9.375
    EXPECT_NEAR(hatched[0].array[2].number, top + 15.0 - 9.5, 0.01);
    EXPECT_NEAR(hatched[1].array[0].number, x0 + w / 4, 0.01);
    EXPECT_NEAR(hatched[1].array[1].number, 3 * w / 4, 0.01);
    EXPECT_NEAR(hatched[1].array[3].number, 3.75, 0.01);
  }
  // Areas: work 1/4 and 4/4 of the rows alternately, waiting (2.5 + 3 x 1) / 16 of each.
  const double row_area = w * 15.0;
  EXPECT_NEAR(facts["areas"]["#4e79a7"].number, 20 * row_area * (0.25 + 1.0), 1.0);
  EXPECT_NEAR(facts["areas"]["waiting"].number, 40 * w / 4 * (9.5 + 3 * 3.75), 1.0);
}

TEST(OutputFile, Commit_RenamesIntoPlace_DestroyedUncommitted_LeavesNothing) {
  TempDir dir;
  {
    io::OutputFile f(dir.path + "/a.json", "timeline");
    f.write("{}\n");
    EXPECT_FALSE(fs::exists(dir.path + "/a.json"));
    f.commit();
  }
  std::ifstream in(dir.path + "/a.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{}\n");
  {
    io::OutputFile f(dir.path + "/b.json", "timeline");
    f.write("partial");
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"a.json"});
}

TEST(OutputFile, RenameFails_ThrowsNamingTheFileAndRemovesTheTemporary) {
  TempDir dir;
  fs::create_directory(dir.path + "/sub");
  io::OutputFile f(dir.path + "/sub/x.svg", "overview");
  f.write("<svg/>");
  // The target becomes a non-empty directory: rename(2) cannot replace it.
  fs::create_directory(dir.path + "/sub/x.svg");
  std::ofstream(dir.path + "/sub/x.svg/keep") << "x";
  try {
    f.commit();
    FAIL() << "commit() should throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write overview " + dir.path + "/sub/x.svg: ", 0),
              0u)
        << e.what();
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path + "/sub"))
    names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"x.svg"});
}

TEST(OutputFile, UnwritablePath_ThrowsBeforeWriting) {
  EXPECT_THROW(io::check_writable("/nonexistent-dir/x.json", "timeline"), UsageError);
  try {
    io::OutputFile f("/nonexistent-dir/x.json", "timeline");
    FAIL() << "should throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "cannot write timeline /nonexistent-dir/x.json: No such file or directory");
  }
}

}  // namespace
}  // namespace cpreplay::testing
