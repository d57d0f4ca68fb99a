// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the definitions encoding that rank 0 broadcasts to the other ranks.
#include <gtest/gtest.h>

#include <stdexcept>

#include "cpreplay/definitions.hpp"

namespace cpreplay {
namespace {

Definitions sample() {
  Definitions d;
  d.anchor_path = "/data/run 1/traces.otf2";
  d.clock = Clock{123456789012345ull, 2'400'000'000ull};
  Region main;
  main.name = "main";
  main.canonical_name = "main";
  main.file = "sim.c";
  main.begin_line = 10;
  main.end_line = 99;
  main.role = RegionRole::Function;
  main.paradigm = Paradigm::User;
  Region send;
  send.name = "MPI_Send";
  send.canonical_name = "MPI_Send";
  send.description = "blocking send";
  send.file = "MPI";
  send.role = RegionRole::Point2Point;
  send.paradigm = Paradigm::Mpi;
  send.mpi_class = MpiClass::Send;
  d.regions = {main, send, Region{}};
  d.system_nodes = {SystemTreeNode{"machine", "machine", UINT32_MAX},
                    SystemTreeNode{"node 0", "node", 0}};
  d.processes = {Process{"MPI Rank 0", 1, 7, "Master thread", 1, 1000, {}},
                 Process{"MPI Rank 1", 1, 9, "Master thread", 1, 5'000'000'000ull, {}}};
  Communicator world{"MPI_COMM_WORLD", {0, 1}, false};
  Communicator self{"MPI_COMM_SELF", {}, true};
  Communicator reversed{"row \xc3\xa9", {1, 0}, false};  // non-ASCII name
  d.comms = {world, self, reversed};
  d.program_region = RegionId{0};
  d.program_name_strings = {3, 17};
  return d;
}

TEST(DefinitionsCodec, RoundTrip_EveryFieldKept) {
  const Definitions d = sample();
  const Definitions e = decode_definitions(encode_definitions(d));
  EXPECT_EQ(e.anchor_path, d.anchor_path);
  EXPECT_EQ(e.clock.global_offset, d.clock.global_offset);
  EXPECT_EQ(e.clock.ticks_per_second, d.clock.ticks_per_second);
  ASSERT_EQ(e.regions.size(), 3u);
  EXPECT_EQ(e.regions[1].name, "MPI_Send");
  EXPECT_EQ(e.regions[1].description, "blocking send");
  EXPECT_EQ(e.regions[1].file, "MPI");
  EXPECT_EQ(e.regions[1].mpi_class, MpiClass::Send);
  EXPECT_EQ(e.regions[1].role, RegionRole::Point2Point);
  EXPECT_EQ(e.regions[1].paradigm, Paradigm::Mpi);
  EXPECT_EQ(e.regions[0].begin_line, 10u);
  EXPECT_EQ(e.regions[0].end_line, 99u);
  EXPECT_EQ(e.regions[2].name, "");
  ASSERT_EQ(e.system_nodes.size(), 2u);
  EXPECT_EQ(e.system_nodes[0].parent, UINT32_MAX);
  EXPECT_EQ(e.system_nodes[1].name, "node 0");
  EXPECT_EQ(e.system_nodes[1].class_name, "node");
  EXPECT_EQ(e.system_nodes[1].parent, 0u);
  ASSERT_EQ(e.ranks(), 2);
  EXPECT_EQ(e.processes[1].name, "MPI Rank 1");
  EXPECT_EQ(e.processes[1].system_node, 1u);
  EXPECT_EQ(e.processes[1].location_id, 9u);
  EXPECT_EQ(e.processes[1].location_name, "Master thread");
  EXPECT_EQ(e.processes[1].locations, 1u);
  EXPECT_EQ(e.processes[1].events, 5'000'000'000ull);
  ASSERT_EQ(e.comms.size(), 3u);
  EXPECT_EQ(e.comms[0].members, (std::vector<Rank>{0, 1}));
  EXPECT_TRUE(e.comms[1].is_self);
  EXPECT_TRUE(e.comms[1].members.empty());
  EXPECT_EQ(e.comms[2].name, "row \xc3\xa9");
  EXPECT_EQ(e.comms[2].members, (std::vector<Rank>{1, 0}));
  EXPECT_EQ(e.program_region, RegionId{0});
  EXPECT_EQ(e.program_name_strings, (std::vector<std::uint64_t>{3, 17}));
  // Encoding is deterministic: what every rank decodes encodes to the same bytes again.
  EXPECT_EQ(encode_definitions(e), encode_definitions(d));
}

TEST(DefinitionsCodec, TruncatedOrOverlong_Refused) {
  const std::string bytes = encode_definitions(sample());
  EXPECT_THROW(decode_definitions(bytes.substr(0, bytes.size() - 1)), std::runtime_error);
  EXPECT_THROW(decode_definitions(bytes.substr(0, 5)), std::runtime_error);
  EXPECT_THROW(decode_definitions(bytes + "x"), std::runtime_error);
  EXPECT_THROW(decode_definitions(""), std::runtime_error);
}

TEST(DefinitionsCodec, EmptyDefinitions_RoundTrip) {
  const Definitions e = decode_definitions(encode_definitions(Definitions{}));
  EXPECT_EQ(e.ranks(), 0);
  EXPECT_FALSE(e.program_region.valid());
}

}  // namespace
}  // namespace cpreplay
