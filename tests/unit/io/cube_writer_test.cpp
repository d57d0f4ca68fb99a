// SPDX-License-Identifier: BSD-3-Clause
// Tests the Cube4 writer: call-tree enumerations, byte layout, round trips and failure cleanup.
#include "io/cube_writer.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "cpreplay/error.hpp"
#include "tests/support/cube_reader.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cpreplay::io::cube_enumeration;
using cpreplay::io::CubeCnodeDef;
using cpreplay::io::CubeMetricDef;
using cpreplay::io::CubeReportDef;
using cpreplay::io::CubeWriter;

/// A fresh directory under the system temp dir, removed with its contents at scope exit.
/// A scratch directory named after this test file.
class TempDir : public cpreplay::testing::ScratchDir {
 public:
  TempDir() : ScratchDir("cube_writer_test") {}
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Raw tar walk for byte-level checks: (name, contents) in archive order, plus where the
/// end-of-archive marker starts.
struct RawTar {
  std::vector<std::pair<std::string, std::string>> members;
  std::size_t end_offset = 0;
};

RawTar split_tar(const std::string& archive) {
  RawTar tar;
  std::size_t offset = 0;
  while (offset + 512 <= archive.size()) {
    const char* h = archive.data() + offset;
    if (h[0] == '\0') break;
    EXPECT_EQ(std::string(h + 257, 5), "ustar");
    const std::string name(h, strnlen(h, 100));
    const std::size_t size = std::stoull(std::string(h + 124, 11), nullptr, 8);
    tar.members.emplace_back(name, archive.substr(offset + 512, size));
    offset += 512 + (size + 511) / 512 * 512;
  }
  tar.end_offset = offset;
  return tar;
}

/// The test's own minimal ustar writer, for archives the CubeWriter never produces.
std::string tar_of(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  for (const auto& [name, data] : members) {
    std::string h(512, '\0');
    std::memcpy(&h[0], name.data(), name.size());
    std::snprintf(&h[100], 8, "%07o", 0644);
    std::snprintf(&h[108], 8, "%07o", 0);
    std::snprintf(&h[116], 8, "%07o", 0);
    std::snprintf(&h[124], 12, "%011llo", static_cast<unsigned long long>(data.size()));
    std::snprintf(&h[136], 12, "%011o", 0);
    std::memset(&h[148], ' ', 8);
    h[156] = '0';
    std::memcpy(&h[257], "ustar", 6);  // magic with its NUL
    std::memcpy(&h[263], "00", 2);
    unsigned sum = 0;
    for (const char c : h) sum += static_cast<unsigned char>(c);
    std::snprintf(&h[148], 8, "%06o", sum);
    out += h;
    out += data;
    out.append((512 - data.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

template <class T>
T load(const std::string& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

template <class T>
T byteswapped(T value) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  std::reverse(std::begin(raw), std::end(raw));
  std::memcpy(&value, raw, sizeof(T));
  return value;
}

template <class T>
void append(std::string& bytes, T value) {
  bytes.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// Lowers RLIMIT_FSIZE for the scope, so writes past `bytes` fail with EFBIG the way a full
/// disk fails with ENOSPC (SIGXFSZ is ignored meanwhile, otherwise it would kill the test).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

/// One machine, one node, `locations` single-threaded ranks.
void add_flat_system(CubeReportDef& def, int locations) {
  def.system_nodes = {{"machine Linux", "machine", -1}, {"node node00", "node", 0}};
  for (int r = 0; r < locations; ++r) {
    def.processes.push_back({"MPI Rank " + std::to_string(r), r, 1});
    def.threads.push_back({"Master thread", 0, r});
  }
}

cpreplay::io::CubeRegionDef region(const std::string& name) {
  cpreplay::io::CubeRegionDef r;
  r.name = name;
  r.mangled_name = name;
  r.paradigm = "user";
  r.role = "function";
  return r;
}

// ---------------------------------------------------------------------------------------------

TEST(CubeEnumeration, FormatExampleTree_PreorderAndInclusiveOrders) {
  // A(B(D,E),C), cnodes in preorder: A0 B1 D2 E3 C4.
  const std::vector<CubeCnodeDef> tree = {{0, -1}, {1, 0}, {2, 1}, {3, 1}, {4, 0}};
  EXPECT_EQ(cube_enumeration(tree, false), (std::vector<int>{0, 1, 2, 3, 4}));  // A B D E C
  EXPECT_EQ(cube_enumeration(tree, true), (std::vector<int>{0, 1, 4, 2, 3}));   // A B C D E
}

TEST(CubeEnumeration, DeeperTree_InclusiveListsChildrenBeforeDescending) {
  // A(B(D(G),E),C(F)), cnodes in preorder: A0 B1 D2 G3 E4 C5 F6.
  const std::vector<CubeCnodeDef> tree = {{0, -1}, {1, 0}, {2, 1}, {3, 2}, {4, 1}, {5, 0}, {6, 5}};
  EXPECT_EQ(cube_enumeration(tree, false), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  // A B C D E G F
  EXPECT_EQ(cube_enumeration(tree, true), (std::vector<int>{0, 1, 5, 2, 4, 3, 6}));
}

TEST(CubeEnumeration, NonContiguousChildrenAndTwoRoots_FollowParentIndices) {
  // R1(X(Q), Y(Z)), R2(W) with vector order R1 X Y Z R2 W Q.
  const std::vector<CubeCnodeDef> tree = {{0, -1}, {0, 0}, {0, 0}, {0, 2}, {0, -1}, {0, 4}, {0, 1}};
  // R1 X Q Y Z R2 W
  EXPECT_EQ(cube_enumeration(tree, false), (std::vector<int>{0, 1, 6, 2, 3, 4, 5}));
  // R1 X Y Q Z, then R2 W
  EXPECT_EQ(cube_enumeration(tree, true), (std::vector<int>{0, 1, 2, 6, 3, 4, 5}));
}

TEST(CubeEnumeration, ParentAfterChild_Throws) {
  const std::vector<CubeCnodeDef> tree = {{0, 1}, {0, -1}};
  EXPECT_THROW(cube_enumeration(tree, false), cpreplay::Error);
}

// ---------------------------------------------------------------------------------------------

TEST(CubeWriter, SmallReport_IndexAndDataBytesAsSpecified) {
  TempDir dir;
  const fs::path target = dir.path() / "small.cubex";
  CubeReportDef def;
  def.regions = {region("A"), region("B"), region("C"), region("D")};
  def.cnodes = {{0, -1}, {1, 0}, {3, 1}, {2, 0}};  // A(B(D),C): preorder A B D C, incl. A B C D
  CubeMetricDef time{"time", "Time", "FLOAT", "sec", "", "", -1, true};
  CubeMetricDef visits{"visits", "Visits", "INTEGER", "occ", "", "", -1, false};
  def.metrics = {time, visits};
  add_flat_system(def, 2);
  {
    CubeWriter writer(target.string(), def);
    // Rows per cnode id (A, B, D, C), two locations each.
    writer.add_metric_data(0, {5.0, 6.0, 0.0, 0.0, 1.0, 2.0, 0.5, 0.25});
    writer.add_metric_data(1, {1, 1, 2, 0, 0, 0, 0, 3});
    writer.commit();
  }
  const std::string archive = slurp(target);
  ASSERT_EQ(archive.size() % 512, 0u);
  const RawTar tar = split_tar(archive);
  ASSERT_EQ(tar.members.size(), 5u);
  EXPECT_EQ(tar.members[0].first, "0.index");
  EXPECT_EQ(tar.members[1].first, "0.data");
  EXPECT_EQ(tar.members[2].first, "1.index");
  EXPECT_EQ(tar.members[3].first, "1.data");
  EXPECT_EQ(tar.members[4].first, "anchor.xml");
  EXPECT_EQ(archive.size() - tar.end_offset, 1024u);
  EXPECT_TRUE(std::all_of(archive.begin() + static_cast<std::ptrdiff_t>(tar.end_offset),
                          archive.end(), [](char c) { return c == '\0'; }));

  // time (inclusive order A B C D): B is all zero, so positions 0 (A), 2 (C), 3 (D).
  const std::string& index0 = tar.members[0].second;
  ASSERT_EQ(index0.size(), 11u + 4 + 2 + 1 + 4 + 3 * 4);
  EXPECT_EQ(index0.substr(0, 11), "CUBEX.INDEX");
  EXPECT_EQ(load<std::int32_t>(index0, 11), 1);
  EXPECT_EQ(load<std::uint16_t>(index0, 15), 0);
  EXPECT_EQ(static_cast<int>(index0[17]), 1);
  EXPECT_EQ(load<std::int32_t>(index0, 18), 3);
  EXPECT_EQ(load<std::int32_t>(index0, 22), 0);
  EXPECT_EQ(load<std::int32_t>(index0, 26), 2);
  EXPECT_EQ(load<std::int32_t>(index0, 30), 3);
  const unsigned char little_endian_one[4] = {1, 0, 0, 0};
  EXPECT_EQ(std::memcmp(index0.data() + 11, little_endian_one, 4), 0);

  const std::string& data0 = tar.members[1].second;
  ASSERT_EQ(data0.size(), 10u + 6 * 8);
  EXPECT_EQ(data0.substr(0, 10), "CUBEX.DATA");
  const double expected_time[] = {5.0, 6.0, 0.5, 0.25, 1.0, 2.0};  // rows A, C, D
  for (int i = 0; i < 6; ++i) EXPECT_EQ(load<double>(data0, 10 + 8 * i), expected_time[i]) << i;

  // visits (preorder A B D C): D is all zero, so positions 0 (A), 1 (B), 3 (C).
  const std::string& index1 = tar.members[2].second;
  ASSERT_EQ(index1.size(), 34u);
  EXPECT_EQ(load<std::int32_t>(index1, 18), 3);
  EXPECT_EQ(load<std::int32_t>(index1, 22), 0);
  EXPECT_EQ(load<std::int32_t>(index1, 26), 1);
  EXPECT_EQ(load<std::int32_t>(index1, 30), 3);
  const std::string& data1 = tar.members[3].second;
  ASSERT_EQ(data1.size(), 10u + 6 * 8);
  const std::int64_t expected_visits[] = {1, 1, 2, 0, 0, 3};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(load<std::int64_t>(data1, 10 + 8 * i), expected_visits[i]) << i;
  }

  const std::string& anchor = tar.members[4].second;
  EXPECT_EQ(anchor.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_NE(anchor.find("<cube version=\"4.4\">"), std::string::npos);
  EXPECT_NE(anchor.find("<metric id=\"0\" type=\"INCLUSIVE\">"), std::string::npos);
  EXPECT_NE(anchor.find("<metric id=\"1\" type=\"EXCLUSIVE\">"), std::string::npos);
  EXPECT_EQ(cpreplay::testing::cube_vocabulary_violations(target.string()),
            std::vector<std::string>{});
}

// A nested call tree on 3 locations: every value must come back on its own call path.
TEST(CubeWriter, NestedCallTree_TimeRowsOnRightCallpaths) {
  TempDir dir;
  const fs::path target = dir.path() / "nested.cubex";
  CubeReportDef def;
  def.attributes = {{"Creator", "cpreplay test"}, {"CUBE_CT_AGGR", "SUM"}};
  def.mirrors = {"https://example.org/doc/"};
  def.regions = {region("sim.exe"),  region("main"),     region("foo"),
                 region("MPI_Recv"), region("MPI_Send"), region("bar")};
  def.regions[3].paradigm = "mpi";
  def.regions[3].role = "point2point";
  // sim.exe(main(foo(MPI_Recv), MPI_Send, bar(MPI_Recv))) in preorder.
  def.cnodes = {{0, -1}, {1, 0}, {2, 1}, {3, 2}, {4, 1}, {5, 1}, {3, 5}};
  const std::vector<std::string> paths = {"sim.exe",
                                          "sim.exe/main",
                                          "sim.exe/main/foo",
                                          "sim.exe/main/foo/MPI_Recv",
                                          "sim.exe/main/MPI_Send",
                                          "sim.exe/main/bar",
                                          "sim.exe/main/bar/MPI_Recv"};
  // Metric children are not contiguous: document order is time, mpi, visits.
  def.metrics = {{"time", "Time", "FLOAT", "sec", "@mirror@time", "Total time", -1, true},
                 {"visits", "Visits", "INTEGER", "occ", "", "Number of visits", -1, false},
                 {"mpi", "MPI", "FLOAT", "sec", "", "MPI time", 0, false}};
  def.system_nodes = {
      {"machine Linux", "machine", -1}, {"node node00", "node", 0}, {"node node01", "node", 0}};
  def.processes = {{"MPI Rank 0", 0, 1}, {"MPI Rank 1", 1, 1}, {"MPI Rank 2", 2, 2}};
  def.threads = {{"Master thread", 0, 0}, {"Master thread", 0, 1}, {"Master thread", 0, 2}};

  constexpr int kLocations = 3;
  const std::size_t cnodes = def.cnodes.size();
  // time: inclusive values, bar/MPI_Recv all zero; visits: MPI_Send rounds to zero everywhere.
  std::vector<double> time(cnodes * kLocations), visits(cnodes * kLocations),
      mpi(cnodes * kLocations, 0.0);
  for (std::size_t c = 0; c < cnodes; ++c) {
    for (int l = 0; l < kLocations; ++l) {
      time[c * kLocations + l] = (c == 6) ? 0.0 : 10.0 * (c + 1) + l + 0.125;
      visits[c * kLocations + l] = (c == 4) ? 0.4 : static_cast<double>(c + 1 + 10 * l);
    }
  }
  visits[0] = 2.6;                 // rounds to 3
  mpi[3 * kLocations + 0] = 1.5;   // foo/MPI_Recv on rank 0
  mpi[4 * kLocations + 2] = 0.75;  // MPI_Send on rank 2
  {
    CubeWriter writer(target.string(), def);
    writer.add_metric_data(1, visits);  // any order
    writer.add_metric_data(0, time);
    writer.add_metric_data(2, mpi);
    writer.commit();
  }

  const cpreplay::testing::CubeFile cube = cpreplay::testing::read_cube(target.string());
  EXPECT_EQ(cube.member_names, (std::vector<std::string>{"1.index", "1.data", "0.index", "0.data",
                                                         "2.index", "2.data", "anchor.xml"}));
  EXPECT_EQ(cube.attributes.at("Creator"), "cpreplay test");
  EXPECT_EQ(cube.attributes.at("CUBE_CT_AGGR"), "SUM");
  ASSERT_EQ(cube.metrics.size(), 3u);
  EXPECT_EQ(cube.metrics[0].uniq_name, "time");
  EXPECT_EQ(cube.metrics[1].uniq_name, "mpi");
  EXPECT_EQ(cube.metrics[1].parent, "time");
  EXPECT_EQ(cube.metrics[2].uniq_name, "visits");
  EXPECT_EQ(cube.metrics[2].parent, "");
  EXPECT_TRUE(cube.metric("time")->inclusive);
  EXPECT_FALSE(cube.metric("visits")->inclusive);
  EXPECT_EQ(cube.metric("time")->url, "@mirror@time");
  EXPECT_EQ(cube.metric("time")->descr, "Total time");
  EXPECT_EQ(cube.metric("visits")->dtype, "INTEGER");
  EXPECT_EQ(cube.metric("visits")->uom, "occ");
  EXPECT_EQ(cube.metric("nonexistent"), nullptr);

  EXPECT_EQ(cube.callpaths, paths);
  EXPECT_EQ(cube.region_names,
            (std::vector<std::string>{"sim.exe", "main", "foo", "MPI_Recv", "MPI_Send", "bar"}));
  EXPECT_EQ(cube.region_paradigms[3], "mpi");
  EXPECT_EQ(cube.region_roles[3], "point2point");
  EXPECT_EQ(cube.location_names,
            (std::vector<std::string>{"Master thread", "Master thread", "Master thread"}));
  EXPECT_EQ(cube.process_names,
            (std::vector<std::string>{"MPI Rank 0", "MPI Rank 1", "MPI Rank 2"}));
  EXPECT_EQ(cube.system_path,
            (std::vector<std::string>{"machine Linux/node node00", "machine Linux/node node00",
                                      "machine Linux/node node01"}));

  for (std::size_t c = 0; c < cnodes; ++c) {
    for (int l = 0; l < kLocations; ++l) {
      const std::size_t i = c * kLocations + l;
      EXPECT_EQ(cube.value("time", paths[c], l), time[i]) << paths[c] << " loc " << l;
      EXPECT_EQ(cube.value("visits", paths[c], l),
                (c == 0 && l == 0) ? 3.0 : (c == 4 ? 0.0 : visits[i]))
          << paths[c] << " loc " << l;
      EXPECT_EQ(cube.value("mpi", paths[c], l), mpi[i]) << paths[c] << " loc " << l;
    }
  }
  // Zero rows are absent from the index, not stored as zeros.
  EXPECT_EQ(cube.values.at("time").size(), 6u);
  EXPECT_EQ(cube.values.at("time").count("sim.exe/main/bar/MPI_Recv"), 0u);
  EXPECT_EQ(cube.values.at("visits").size(), 6u);
  EXPECT_EQ(cube.values.at("visits").count("sim.exe/main/MPI_Send"), 0u);
  EXPECT_EQ(cube.values.at("mpi").size(), 2u);
  EXPECT_EQ(cube.values.at("mpi").count("sim.exe/main/foo/MPI_Recv"), 1u);
  EXPECT_EQ(cube.values.at("mpi").count("sim.exe/main/MPI_Send"), 1u);
}

TEST(CubeWriter, RegionNameWithMarkup_EscapedInXml) {
  TempDir dir;
  const fs::path target = dir.path() / "escape.cubex";
  const std::string nasty = "a<b>&\"c\"";
  CubeReportDef def;
  def.attributes = {{"k'ey", "v<a>l&ue\"'"}};
  def.regions = {region("prog"), region(nasty)};
  def.regions[1].mod = "dir/<file>&.c";
  def.cnodes = {{0, -1}, {1, 0}};
  def.metrics = {{"time", "Time & more", "FLOAT", "sec", "", "it's <descr>", -1, true}};
  add_flat_system(def, 1);
  def.processes[0].name = "Rank \"0\" & <co>";
  {
    CubeWriter writer(target.string(), def);
    writer.add_metric_data(0, {1.0, 2.0});
    writer.commit();
  }
  const RawTar tar = split_tar(slurp(target));
  const std::string& anchor = tar.members.back().second;
  EXPECT_NE(anchor.find("<name>a&lt;b&gt;&amp;&quot;c&quot;</name>"), std::string::npos);
  EXPECT_EQ(anchor.find(nasty), std::string::npos);

  const cpreplay::testing::CubeFile cube = cpreplay::testing::read_cube(target.string());
  EXPECT_EQ(cube.region_names[1], nasty);
  EXPECT_EQ(cube.callpaths[1], "prog/" + nasty);
  EXPECT_EQ(cube.attributes.at("k'ey"), "v<a>l&ue\"'");
  EXPECT_EQ(cube.metric("time")->disp_name, "Time & more");
  EXPECT_EQ(cube.metric("time")->descr, "it's <descr>");
  EXPECT_EQ(cube.process_names[0], "Rank \"0\" & <co>");
  EXPECT_EQ(cube.value("time", "prog/" + nasty, 0), 2.0);
}

TEST(CubeWriter, AllZeroMetric_WritesNoFilesAndReadsAsZero) {
  TempDir dir;
  const fs::path target = dir.path() / "zero.cubex";
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true},
                 {"visits", "Visits", "INTEGER", "occ", "", "", -1, false}};
  add_flat_system(def, 2);
  {
    CubeWriter writer(target.string(), def);
    writer.add_metric_data(0, {0.0, 0.0});
    writer.add_metric_data(1, {0.2, -0.3});  // rounds to zero
    writer.commit();
  }
  const cpreplay::testing::CubeFile cube = cpreplay::testing::read_cube(target.string());
  EXPECT_EQ(cube.member_names, (std::vector<std::string>{"anchor.xml"}));
  EXPECT_EQ(cube.value("time", "prog", 1), 0.0);
  EXPECT_EQ(cube.values.count("time"), 0u);
}

TEST(CubeWriter, WrongValueCount_ThrowsAndKeepsWriterUsable) {
  TempDir dir;
  const fs::path target = dir.path() / "r.cubex";
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 2);
  CubeWriter writer(target.string(), def);
  EXPECT_THROW(writer.add_metric_data(0, {1.0}), cpreplay::Error);
  EXPECT_THROW(writer.add_metric_data(1, {1.0, 2.0}), cpreplay::Error);
  writer.add_metric_data(0, {1.0, 2.0});
  EXPECT_THROW(writer.add_metric_data(0, {1.0, 2.0}), cpreplay::Error);
  writer.commit();
  EXPECT_THROW(writer.commit(), cpreplay::Error);
  EXPECT_EQ(cpreplay::testing::read_cube(target.string()).value("time", "prog", 1), 2.0);
}

TEST(CubeWriter, InvalidDefinition_ThrowsBeforeCreatingFiles) {
  TempDir dir;
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}, {5, 0}};  // region 5 does not exist
  EXPECT_THROW(CubeWriter((dir.path() / "r.cubex").string(), def), cpreplay::Error);
  EXPECT_TRUE(dir.entries().empty());
}

// ---------------------------------------------------------------------------------------------

TEST(CubeWriter, UnwritablePath_ThrowsUsageErrorAndLeavesNoFile) {
  const std::string target = "/proc/nonexistent/x.cubex";
  try {
    CubeWriter writer(target, CubeReportDef{});
    FAIL() << "expected UsageError";
  } catch (const cpreplay::UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot write report /proc/nonexistent/x.cubex: ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::exists(target + ".tmp-" + std::to_string(::getpid())));
  EXPECT_THROW(CubeWriter("/proc/x.cubex", CubeReportDef{}), cpreplay::UsageError);
  EXPECT_FALSE(fs::exists("/proc/x.cubex"));
}

TEST(CubeWriter, FileTooLargeWhileAddingData_ThrowsUsageErrorAndRemovesTemp) {
  TempDir dir;
  const fs::path target = dir.path() / "big.cubex";
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 100000);  // one 800 kB row
  const std::vector<double> values(100000, 1.0);
  {
    CubeWriter writer(target.string(), def);
    {
      FileSizeLimit limit(64 * 1024);
      try {
        writer.add_metric_data(0, values);
        FAIL() << "expected UsageError";
      } catch (const cpreplay::UsageError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot write report " + target.string() + ": " + std::strerror(EFBIG));
      }
    }
    EXPECT_TRUE(dir.entries().empty());
    EXPECT_THROW(writer.commit(), cpreplay::Error);  // a failed writer stays failed
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(CubeWriter, FileTooLargeAtCommit_ThrowsUsageErrorAndLeavesNoFile) {
  TempDir dir;
  const fs::path target = dir.path() / "r.cubex";
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 1);
  CubeWriter writer(target.string(), def);
  writer.add_metric_data(0, {1.0});  // 2 kB, still in the stdio buffer
  FileSizeLimit limit(1024);
  EXPECT_THROW(writer.commit(), cpreplay::UsageError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(CubeWriter, DestroyedWithoutCommit_LeavesNeitherTargetNorTemp) {
  TempDir dir;
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 1);
  {
    CubeWriter writer((dir.path() / "r.cubex").string(), def);
    writer.add_metric_data(0, {1.0});
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.cubex.tmp-" + std::to_string(::getpid())});
  }
  EXPECT_TRUE(dir.entries().empty());
}

// What tools/main.cpp's SIGTERM handler calls when mpirun ends the rank mid-write.
TEST(CubeWriter, RemoveUnfinishedReports_DeletesOpenTempsOnly) {
  TempDir dir;
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 1);
  {
    CubeWriter done((dir.path() / "done.cubex").string(), def);
    done.add_metric_data(0, {1.0});
    done.commit();
  }
  CubeWriter open((dir.path() / "open.cubex").string(), def);
  open.add_metric_data(0, {1.0});
  cpreplay::io::remove_unfinished_reports();
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"done.cubex"});
  EXPECT_EQ(cpreplay::testing::cube_vocabulary_violations((dir.path() / "done.cubex").string()),
            std::vector<std::string>{});
}

TEST(CubeWriter, Commit_CreatesExactlyTheTargetFile) {
  TempDir dir;
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 1);
  {
    CubeWriter writer((dir.path() / "r.cubex").string(), def);
    writer.add_metric_data(0, {1.0});
    writer.commit();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.cubex"});
  EXPECT_EQ(cpreplay::testing::cube_vocabulary_violations((dir.path() / "r.cubex").string()),
            std::vector<std::string>{});
}

TEST(CubeWriter, TargetIsDirectory_CommitThrowsAndRemovesTemp) {
  TempDir dir;
  const fs::path target = dir.path() / "taken.cubex";
  fs::create_directory(target);
  std::ofstream(target / "keep") << "x";  // a non-empty directory cannot be renamed over
  CubeReportDef def;
  def.regions = {region("prog")};
  def.cnodes = {{0, -1}};
  add_flat_system(def, 1);
  CubeWriter writer(target.string(), def);
  EXPECT_THROW(writer.commit(), cpreplay::UsageError);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken.cubex"});
  EXPECT_TRUE(fs::is_directory(target));
}

// ---------------------------------------------------------------------------------------------
// The test reader must also handle what Scalasca's own writer may produce.

TEST(CubeReader, CompressedBigEndianData_MatchesPlainReport) {
  TempDir dir;
  const fs::path plain = dir.path() / "plain.cubex";
  CubeReportDef def;
  def.regions = {region("A"), region("B"), region("C"), region("D")};
  def.cnodes = {{0, -1}, {1, 0}, {3, 1}, {2, 0}};  // A(B(D),C)
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true}};
  add_flat_system(def, 2);
  {
    CubeWriter writer(plain.string(), def);
    writer.add_metric_data(0, {5.0, 6.0, 0.0, 0.0, 1.0, 2.0, 0.5, 0.25});
    writer.commit();
  }
  const RawTar tar = split_tar(slurp(plain));
  ASSERT_EQ(tar.members.size(), 3u);
  const std::string& index = tar.members[0].second;
  const std::string& data = tar.members[1].second;

  // Big-endian index.
  std::string swapped_index = index.substr(0, 11);
  append(swapped_index, byteswapped<std::int32_t>(1));
  append(swapped_index, byteswapped<std::uint16_t>(0));
  swapped_index += index[17];
  for (std::size_t off = 18; off < index.size(); off += 4) {
    append(swapped_index, byteswapped(load<std::int32_t>(index, off)));
  }
  // Big-endian rows, one zlib stream per row, behind the ZCUBEX.DATA sub-index.
  const std::size_t rows = (data.size() - 10) / 16;
  std::string streams;
  std::string header = "ZCUBEX.DATA";
  append(header, byteswapped<std::int64_t>(static_cast<std::int64_t>(rows)));
  for (std::size_t r = 0; r < rows; ++r) {
    std::string row;
    for (int l = 0; l < 2; ++l) append(row, byteswapped(load<double>(data, 10 + 16 * r + 8 * l)));
    uLongf size = compressBound(static_cast<uLong>(row.size()));
    std::string packed(size, '\0');
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(&packed[0]), &size,
                        reinterpret_cast<const Bytef*>(row.data()), row.size(), Z_BEST_SPEED),
              Z_OK);
    packed.resize(size);
    append(header, byteswapped<std::int64_t>(static_cast<std::int64_t>(16 * r)));
    append(header, byteswapped<std::int64_t>(static_cast<std::int64_t>(streams.size())));
    append(header, byteswapped<std::int64_t>(static_cast<std::int64_t>(size)));
    streams += packed;
  }
  const fs::path packed_path = dir.path() / "packed.cubex";
  std::ofstream(packed_path, std::ios::binary) << tar_of({{"0.index", swapped_index},
                                                          {"0.data", header + streams},
                                                          {"anchor.xml", tar.members[2].second}});

  const auto a = cpreplay::testing::read_cube(plain.string());
  const auto b = cpreplay::testing::read_cube(packed_path.string());
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(b.value("time", "A/B/D", 1), 2.0);
  EXPECT_EQ(b.value("time", "A/C", 0), 0.5);
  EXPECT_EQ(b.value("time", "A/B", 0), 0.0);
}

TEST(CubeReader, MalformedInput_ThrowsRuntimeError) {
  TempDir dir;
  const fs::path path = dir.path() / "bad.cubex";
  std::ofstream(path, std::ios::binary) << tar_of({{"anchor.xml", "<cube><metrics></cube>"}});
  EXPECT_THROW(cpreplay::testing::read_cube(path.string()), std::runtime_error);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a tar archive";
  EXPECT_THROW(cpreplay::testing::read_cube(path.string()), std::runtime_error);
  EXPECT_THROW(cpreplay::testing::read_cube((dir.path() / "missing.cubex").string()),
               std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Interoperability: the report speaks CubeW's vocabulary (docs/cube-report.md), and the test
// reader is as strict about it as Cube's clients.

using cpreplay::testing::cube_vocabulary_violations;

/// A two-rank report with one of everything: attributes as tools/report.cpp sets them, a
/// mirror, a nested metric, two regions and cnodes, one machine with one node.
CubeReportDef interop_def() {
  CubeReportDef def;
  def.attributes = {{"Creator", "cpreplay test"}, {"CUBE_CT_AGGR", "SUM"}};
  def.mirrors = {"https://example.org/doc/"};
  def.regions = {region("prog"), region("MPI_Recv")};
  def.regions[1].mod = "recv.c";
  def.regions[1].begin_line = 10;
  def.regions[1].end_line = 20;
  def.cnodes = {{0, -1}, {1, 0}};
  def.metrics = {{"time", "Time", "FLOAT", "sec", "", "", -1, true},
                 {"mpi", "MPI", "FLOAT", "sec", "", "", 0, false},
                 {"visits", "Visits", "INTEGER", "occ", "", "", -1, false}};
  add_flat_system(def, 2);
  return def;
}

void write_interop_report(const fs::path& target) {
  CubeWriter writer(target.string(), interop_def());
  writer.add_metric_data(0, {3.0, 4.0, 1.0, 2.5});
  writer.add_metric_data(1, {0.0, 0.0, 1.0, 2.5});
  writer.add_metric_data(2, {1, 1, 2, 3});
  writer.commit();
}

/// The report at `source` with `from` replaced by `to` everywhere in anchor.xml (the data
/// members are kept as they are), written to `target`. Fails the test if `from` is absent.
void rewrite_anchor(const fs::path& source, const fs::path& target, const std::string& from,
                    const std::string& to) {
  RawTar tar = split_tar(slurp(source));
  std::string& anchor = tar.members.back().second;
  ASSERT_EQ(tar.members.back().first, "anchor.xml");
  std::size_t count = 0;
  for (std::size_t at = anchor.find(from); at != std::string::npos;
       at = anchor.find(from, at + to.size())) {
    anchor.replace(at, from.size(), to);
    ++count;
  }
  ASSERT_GT(count, 0u) << from;
  std::ofstream(target, std::ios::binary | std::ios::trunc) << tar_of(tar.members);
}

/// 1-based line of the `nth` (0-based) occurrence of `needle` in anchor.xml of `report`.
std::size_t anchor_line(const fs::path& report, const std::string& needle, int nth = 0) {
  const std::string anchor = split_tar(slurp(report)).members.back().second;
  std::size_t at = anchor.find(needle);
  for (int i = 0; i < nth && at != std::string::npos; ++i) at = anchor.find(needle, at + 1);
  if (at == std::string::npos) return 0;
  return 1 + static_cast<std::size_t>(std::count(anchor.begin(), anchor.begin() + at, '\n'));
}

/// What read_cube throws for `path`, "" when it reads the report.
std::string read_error(const fs::path& path) {
  try {
    cpreplay::testing::read_cube(path.string());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CubeInterop, Anchor_SystemTreeIdCapitalisedAsCubeW_OthersLowercase) {
  TempDir dir;
  const fs::path target = dir.path() / "r.cubex";
  write_interop_report(target);
  const std::string anchor = split_tar(slurp(target)).members.back().second;
  // CubeW's versions first, then the caller's attributes in their order.
  EXPECT_EQ(anchor.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<cube version=\"4.4\">\n"
                         "<attr key=\"CubePL Version\" value=\"1.1\"/>\n"
                         "<attr key=\"Cube Version\" value=\"4.6\"/>\n"
                         "<attr key=\"Creator\" value=\"cpreplay test\"/>\n"
                         "<attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n"
                         "<doc>\n",
                         0),
            0u)
      << anchor.substr(0, 300);
  EXPECT_NE(anchor.find("<metric id=\"0\" type=\"INCLUSIVE\">"), std::string::npos);
  EXPECT_NE(anchor.find("<metric id=\"1\" type=\"EXCLUSIVE\">"), std::string::npos);
  EXPECT_NE(anchor.find("<region id=\"1\" mod=\"recv.c\" begin=\"10\" end=\"20\">"),
            std::string::npos);
  EXPECT_NE(anchor.find("<cnode id=\"1\" calleeId=\"1\">"), std::string::npos);
  EXPECT_NE(anchor.find("<systemtreenode Id=\"0\">\n<name>machine Linux</name>\n"
                        "<class>machine</class>\n<systemtreenode Id=\"1\">"),
            std::string::npos);
  EXPECT_NE(anchor.find("<locationgroup Id=\"1\">\n<name>MPI Rank 1</name>\n<rank>1</rank>\n"
                        "<type>process</type>\n<location Id=\"1\">\n<name>Master thread</name>\n"
                        "<rank>0</rank>\n<type>thread</type>\n</location>"),
            std::string::npos);
  for (const char* wrong : {"<systemtreenode id=", "<locationgroup id=", "<location id=",
                            "<metric Id=", "<region Id=", "<cnode Id="}) {
    EXPECT_EQ(anchor.find(wrong), std::string::npos) << wrong;
  }
  EXPECT_EQ(cube_vocabulary_violations(target.string()), std::vector<std::string>{});
  const auto cube = cpreplay::testing::read_cube(target.string());
  EXPECT_EQ(cube.attributes.at("Cube Version"), "4.6");
  EXPECT_EQ(cube.attributes.at("CubePL Version"), "1.1");
  EXPECT_EQ(cube.value("time", "prog/MPI_Recv", 1), 2.5);
  EXPECT_EQ(cube.value("mpi", "prog/MPI_Recv", 0), 1.0);
  EXPECT_EQ(cube.value("visits", "prog", 1), 1.0);
  EXPECT_EQ(cube.process_names, (std::vector<std::string>{"MPI Rank 0", "MPI Rank 1"}));
}

// Scout's report of every trace carries a Cartesian topology after the system tree, as CubeW
// 4.6 writes it; a reader stricter than the writer would refuse every Scalasca report.
TEST(CubeInterop, CartesianTopologyAsScoutWritesIt_Accepted) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path with = dir.path() / "with.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);
  const std::string cart =
      "<topologies>\n<cart name=\"Process x Thread\" ndims=\"2\">\n"
      "<dim name=\"Process\" size=\"2\" periodic=\"false\"/>\n"
      "<dim name=\"Thread\" size=\"1\" periodic=\"false\"/>\n"
      "<coord locId=\"0\">0 0</coord>\n<coord locId=\"1\">1 0</coord>\n</cart>\n"
      "</topologies>\n</system>";
  rewrite_anchor(good, with, "</system>", cart);
  EXPECT_EQ(cube_vocabulary_violations(with.string()), std::vector<std::string>{});
  EXPECT_EQ(cpreplay::testing::read_cube(with.string()).value("time", "prog/MPI_Recv", 1), 2.5);
  rewrite_anchor(with, bad, "<coord locId=\"1\">", "<coord locid=\"1\">");
  const std::vector<std::string> violations = cube_vocabulary_violations(bad.string());
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_NE(violations[0].find("has attribute 'locid'"), std::string::npos) << violations[0];
  EXPECT_NE(violations[1].find("lacks attribute 'locId'"), std::string::npos) << violations[1];
}

TEST(CubeInterop, VersionAttributeGivenByCaller_RefusedBeforeCreatingFiles) {
  TempDir dir;
  for (const char* key : {"Cube Version", "CubePL Version"}) {
    CubeReportDef def = interop_def();
    def.attributes.emplace_back(key, "9.9");
    try {
      CubeWriter writer((dir.path() / "r.cubex").string(), def);
      FAIL() << "expected cpreplay::Error for " << key;
    } catch (const cpreplay::Error& e) {
      EXPECT_EQ(std::string(e.what()), "invalid Cube report definition for " +
                                           (dir.path() / "r.cubex").string() + ": attribute '" +
                                           key + "' is written by the Cube writer itself");
    }
  }
  EXPECT_TRUE(dir.entries().empty());
}

// The vocabulary check must be able to fail: each rewrite below is one spelling a CubeW 4.6
// report never uses, and each must be named with its line.
TEST(CubeInterop, LowercaseIdOnLocation_VocabularyCheckRejectsEachLocation) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);
  rewrite_anchor(good, bad, "<location Id=", "<location id=");
  const std::size_t first = anchor_line(bad, "<location id=", 0);
  const std::size_t second = anchor_line(bad, "<location id=", 1);
  ASSERT_GT(first, 0u);
  ASSERT_GT(second, first);
  const std::string prefix = bad.string() + ": anchor.xml line ";
  EXPECT_EQ(cube_vocabulary_violations(bad.string()),
            (std::vector<std::string>{
                prefix + std::to_string(first) +
                    ": <location> has attribute 'id', which CubeW 4.6 does not write there "
                    "(it writes: Id)",
                prefix + std::to_string(first) +
                    ": <location> lacks attribute 'Id', which CubeW 4.6 writes on every "
                    "<location>",
                prefix + std::to_string(second) +
                    ": <location> has attribute 'id', which CubeW 4.6 does not write there "
                    "(it writes: Id)",
                prefix + std::to_string(second) +
                    ": <location> lacks attribute 'Id', which CubeW 4.6 writes on every "
                    "<location>"}));
}

TEST(CubeInterop, OtherForeignNames_VocabularyCheckNamesThem) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);
  const std::string prefix = bad.string() + ": anchor.xml line ";
  struct Case {
    std::string from, to, expected;  // expected: the violation after "line N: "
  };
  const std::vector<Case> cases = {
      {"<metric id=\"1\"", "<metric Id=\"1\"",
       "<metric> has attribute 'Id', which CubeW 4.6 does not write there (it writes: id, "
       "type)"},
      {"<systemtreenode Id=\"0\"", "<systemtreenode Id=\"0\" class=\"machine\"",
       "<systemtreenode> has attribute 'class', which CubeW 4.6 does not write there (it "
       "writes: Id)"},
      {"<uniq_name>mpi</uniq_name>", "<Uniq_name>mpi</Uniq_name>",
       "<Uniq_name> is not an element of a CubeW 4.6 report"},
      {"<doc>", "<doc lang=\"en\">",
       "<doc> has attribute 'lang', which CubeW 4.6 does not write there (it writes: none)"},
      {"<cnode id=\"1\" calleeId=\"1\">", "<cnode id=\"1\" calleeid=\"1\">",
       "<cnode> has attribute 'calleeid', which CubeW 4.6 does not write there (it writes: id, "
       "calleeId)"},
  };
  for (const Case& c : cases) {
    rewrite_anchor(good, bad, c.from, c.to);
    const std::vector<std::string> violations = cube_vocabulary_violations(bad.string());
    ASSERT_GE(violations.size(), 1u) << c.to;
    EXPECT_EQ(violations[0], prefix + std::to_string(anchor_line(bad, c.to)) + ": " + c.expected);
  }
}

TEST(CubeInterop, VersionAttributesMissingWrongOrLate_VocabularyCheckRejects) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);

  rewrite_anchor(good, bad, "<attr key=\"Cube Version\" value=\"4.6\"/>\n", "");
  EXPECT_EQ(cube_vocabulary_violations(bad.string()),
            std::vector<std::string>{bad.string() +
                                     ": anchor.xml: no <attr key=\"Cube Version\" value=\"4.6\"/> "
                                     "(CubeW 4.6 writes it on every report)"});

  rewrite_anchor(good, bad, "value=\"1.1\"", "value=\"1.0\"");
  EXPECT_EQ(cube_vocabulary_violations(bad.string()),
            std::vector<std::string>{
                bad.string() + ": anchor.xml line 3: <attr> CubePL Version is '1.0', expected "
                               "<attr key=\"CubePL Version\" value=\"1.1\"/>"});

  // CUBE_CT_AGGR moved in front of both version entries.
  rewrite_anchor(good, bad,
                 "<attr key=\"CubePL Version\" value=\"1.1\"/>\n"
                 "<attr key=\"Cube Version\" value=\"4.6\"/>\n"
                 "<attr key=\"Creator\" value=\"cpreplay test\"/>\n"
                 "<attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n",
                 "<attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n"
                 "<attr key=\"CubePL Version\" value=\"1.1\"/>\n"
                 "<attr key=\"Cube Version\" value=\"4.6\"/>\n"
                 "<attr key=\"Creator\" value=\"cpreplay test\"/>\n");
  EXPECT_EQ(cube_vocabulary_violations(bad.string()),
            (std::vector<std::string>{
                bad.string() + ": anchor.xml line 4: <attr> CubePL Version comes after "
                               "CUBE_CT_AGGR (line 3); CubeW writes it before",
                bad.string() + ": anchor.xml line 5: <attr> Cube Version comes after "
                               "CUBE_CT_AGGR (line 3); CubeW writes it before"}));
}

// The strict reader: the id of each element in exactly CubeW's spelling, or a one-line error
// naming the element, its line and the spelling found.
TEST(CubeInterop, IdInWrongCase_StrictReaderRefusesNamingElement) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);
  ASSERT_EQ(read_error(good), "");
  struct Case {
    std::string element, from, to;
  };
  const std::vector<Case> cases = {
      {"systemtreenode", "<systemtreenode Id=", "<systemtreenode id="},
      {"locationgroup", "<locationgroup Id=", "<locationgroup id="},
      {"location", "<location Id=", "<location id="},
      {"metric", "<metric id=", "<metric Id="},
      {"region", "<region id=", "<region Id="},
      {"cnode", "<cnode id=", "<cnode ID="},
  };
  for (const Case& c : cases) {
    rewrite_anchor(good, bad, c.from, c.to);
    const bool system_tree = c.element == "systemtreenode" || c.element == "locationgroup" ||
                             c.element == "location";
    const std::string want = system_tree ? "Id" : "id";
    const std::string found = c.to.substr(c.to.find(' ') + 1, 2);
    EXPECT_EQ(read_error(bad), bad.string() + ": anchor.xml line " +
                                   std::to_string(anchor_line(bad, c.to)) + ": <" + c.element +
                                   "> without " + want + " attribute (it has '" + found +
                                   "'; CubeW writes '" + want + "' on <" + c.element +
                                   ">, and Cube clients read only that spelling)");
  }
}

TEST(CubeInterop, MissingOrDuplicateIds_StrictReaderRefuses) {
  TempDir dir;
  const fs::path good = dir.path() / "good.cubex";
  const fs::path bad = dir.path() / "bad.cubex";
  write_interop_report(good);

  rewrite_anchor(good, bad, "<locationgroup Id=\"1\">", "<locationgroup>");
  EXPECT_EQ(read_error(bad), bad.string() + ": anchor.xml line " +
                                 std::to_string(anchor_line(bad, "<locationgroup>")) +
                                 ": <locationgroup> without Id attribute");
  rewrite_anchor(good, bad, "<locationgroup Id=\"1\">", "<locationgroup Id=\"0\">");
  EXPECT_EQ(read_error(bad), bad.string() + ": duplicate location group id 0");
  rewrite_anchor(good, bad, "<systemtreenode Id=\"1\">", "<systemtreenode Id=\"2\">");
  EXPECT_EQ(read_error(bad),
            bad.string() + ": system tree node ids are not dense: id 1 is missing");
  rewrite_anchor(good, bad, "<location Id=\"1\">", "<location Id=\"one\">");
  EXPECT_EQ(read_error(bad), bad.string() + ": anchor.xml line " +
                                 std::to_string(anchor_line(bad, "<location Id=\"one\">")) +
                                 ": <location> Id is not an integer: 'one'");
  // pycubexr converts a region's begin and end with int(): both must be there.
  rewrite_anchor(good, bad, " begin=\"10\"", "");
  EXPECT_EQ(read_error(bad), bad.string() + ": anchor.xml line " +
                                 std::to_string(anchor_line(bad, "<region id=\"1\"")) +
                                 ": <region> without begin attribute");
}

}  // namespace
