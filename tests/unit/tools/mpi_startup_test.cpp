// SPDX-License-Identifier: BSD-3-Clause
// When cpreplay asks Open MPI for its shared-memory transport (tools/mpi_startup.hpp).
#include "tools/mpi_startup.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using cpreplay::tools::open_mpi_param_files;
using cpreplay::tools::selects_transport;
using cpreplay::tools::single_node_pml;
using cpreplay::tools::StartupInputs;

/// A launcher's environment and the parameter files on disk, as maps.
struct Machine {
  std::map<std::string, std::string> env{{"OMPI_COMM_WORLD_SIZE", "4"},
                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                         {"HOME", "/home/u"}};
  std::map<std::string, std::string> files;
  std::string libdir = "/opt/openmpi/lib";

  StartupInputs inputs() const {
    StartupInputs in;
    in.env = [this](const char* name) -> const char* {
      const auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    };
    in.file = [this](const std::string& path) {
      const auto it = files.find(path);
      return it == files.end() ? std::string() : it->second;
    };
    in.mpi_library_dir = libdir;
    return in;
  }
};

TEST(MpiStartup, AllProcessesOnOneNodeUseSharedMemory) {
  Machine m;
  // Debian's own file only excludes components: no choice of its own.
  m.files["/etc/openmpi/openmpi-mca-params.conf"] =
      "# comment\nbtl_base_warn_component_unused=0\nmtl = ^ofi\nbtl = ^uct,openib,ofi\n"
      "pml = ^ucx\n";
  EXPECT_EQ(single_node_pml(m.inputs()), "ob1");
}

TEST(MpiStartup, SeveralNodesOrAnotherLauncherKeepOpenMpisChoice) {
  Machine m;
  m.env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "2";  // 4 processes, 2 on this node
  EXPECT_EQ(single_node_pml(m.inputs()), "");
  m.env.erase("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(single_node_pml(m.inputs()), "");
  Machine mpich;  // MPICH's Hydra: PMI_* only
  mpich.env = {{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}};
  EXPECT_EQ(single_node_pml(mpich.inputs()), "");
  Machine bad;
  bad.env["OMPI_COMM_WORLD_SIZE"] = "4x";
  bad.env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "4x";
  EXPECT_EQ(single_node_pml(bad.inputs()), "");
}

TEST(MpiStartup, TheUsersOrTheSitesChoiceWins) {
  for (const char* var : {"OMPI_MCA_pml", "OMPI_MCA_mtl", "CPREPLAY_KEEP_MPI_TRANSPORT"}) {
    Machine m;
    m.env[var] = "1";
    EXPECT_EQ(single_node_pml(m.inputs()), "") << var;
  }
  for (const char* file : {"/home/u/.openmpi/mca-params.conf",
                           "/opt/openmpi/etc/openmpi-mca-params.conf",
                           "/etc/openmpi/openmpi-mca-params.conf"}) {
    Machine m;
    m.files[file] = "pml = ucx\n";
    EXPECT_EQ(single_node_pml(m.inputs()), "") << file;
    m.files[file] = "  mtl=psm2  # the site's network\n";
    EXPECT_EQ(single_node_pml(m.inputs()), "") << file;
    m.files[file] = "# pml = ucx\npml_base_verbose = 5\nmtl = ^psm\n";
    EXPECT_EQ(single_node_pml(m.inputs()), "ob1") << file;
  }
  for (const char* no : {"", "0"}) {  // set to nothing or 0: not kept
    Machine m;
    m.env["CPREPLAY_KEEP_MPI_TRANSPORT"] = no;
    EXPECT_EQ(single_node_pml(m.inputs()), "ob1") << "'" << no << "'";
  }
  Machine prefixed;
  prefixed.env["OPAL_PREFIX"] = "/sw/ompi";
  prefixed.files["/sw/ompi/etc/openmpi-mca-params.conf"] = "pml = cm\n";
  EXPECT_EQ(single_node_pml(prefixed.inputs()), "");
}

TEST(MpiStartup, AnExplicitFileListReplacesTheDefaultOnes) {
  Machine m;
  m.env["OMPI_MCA_mca_base_param_files"] = "/a.conf, /b.conf";
  EXPECT_EQ(open_mpi_param_files(m.inputs()), (std::vector<std::string>{"/a.conf", "/b.conf"}));
  m.files["/b.conf"] = "pml=ob1\n";
  EXPECT_EQ(single_node_pml(m.inputs()), "");
  m.files["/etc/openmpi/openmpi-mca-params.conf"] = "pml = ucx\n";  // not read any more
  m.files.erase("/b.conf");
  EXPECT_EQ(single_node_pml(m.inputs()), "ob1");
  m.env["OMPI_MCA_mca_base_param_files"] = "none";
  EXPECT_TRUE(open_mpi_param_files(m.inputs()).empty());
}

TEST(MpiStartup, ParameterFileLines) {
  EXPECT_TRUE(selects_transport("pml=ob1"));
  EXPECT_TRUE(selects_transport("\tmtl = psm2\r\n"));
  EXPECT_FALSE(selects_transport("pml = ^ucx\nmtl = ^ofi"));
  EXPECT_FALSE(selects_transport("pml_ob1_priority = 20\nbtl = self,vader"));
  EXPECT_FALSE(selects_transport("#pml = ucx\npml ="));
}

}  // namespace

namespace {

using cpreplay::tools::time_slice_ns;

TEST(TimeSlice, DefaultOverrideAndRefusals) {
  std::uint64_t ns = 7;
  EXPECT_TRUE(time_slice_ns(nullptr, ns));
  EXPECT_EQ(ns, 100000u);  // 0.1 ms
  EXPECT_TRUE(time_slice_ns("", ns));
  EXPECT_EQ(ns, 100000u);
  EXPECT_TRUE(time_slice_ns("0", ns));
  EXPECT_EQ(ns, 0u);  // the kernel's own
  EXPECT_TRUE(time_slice_ns("100", ns));
  EXPECT_EQ(ns, 100000u);
  EXPECT_TRUE(time_slice_ns("100000", ns));
  EXPECT_EQ(ns, 100000000u);
  for (const char* bad : {"99", "100001", "-5", "1e3", "abc", " 300", "300us", "00", "9999999999999"})
    EXPECT_FALSE(time_slice_ns(bad, ns)) << bad;
}

}  // namespace

namespace {

using cpreplay::tools::no_delay_on_loopback_connections;

int no_delay(int fd) {
  int value = -1;
  socklen_t length = sizeof value;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &length) != 0) return -1;
  return value != 0 ? 1 : 0;
}

// A TCP connection to 127.0.0.1 (both of its ends: the launcher's PMIx connection is such a
// client end) gets TCP_NODELAY; a listening socket, a Unix socket pair and a UDP socket do not.
TEST(NoDelay, LoopbackConnectionsOnly) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const int udp = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(udp, 0);
  EXPECT_EQ(no_delay(client), 0);  // Nagle on: the kernel's default
  EXPECT_EQ(no_delay(server), 0);

  EXPECT_EQ(no_delay_on_loopback_connections(), 2);
  EXPECT_EQ(no_delay(client), 1);
  EXPECT_EQ(no_delay(server), 1);
  EXPECT_EQ(no_delay(listener), 0);  // not connected
  EXPECT_EQ(no_delay(udp), -1);      // no such option: not a TCP socket, untouched
  EXPECT_EQ(no_delay(pair[0]), -1);
  for (const int fd : {listener, client, server, pair[0], pair[1], udp}) close(fd);
}

}  // namespace
