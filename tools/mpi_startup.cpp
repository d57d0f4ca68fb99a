// SPDX-License-Identifier: BSD-3-Clause
// Open MPI's transport on one node (see mpi_startup.hpp).
#include "tools/mpi_startup.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace cpreplay::tools {
namespace {

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const std::size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

bool whole_number(const char* text, int& out) {
  if (text == nullptr || *text == '\0') return false;
  long long v = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || v > 214748364) return false;
    v = v * 10 + (*c - '0');
  }
  if (v > 2147483647) return false;
  out = static_cast<int>(v);
  return true;
}

std::vector<std::string> open_mpi_param_files(const StartupInputs& in) {
  std::vector<std::string> files;
  // Open MPI's own list, when the user replaced it (comma-separated; "none" = no files).
  for (const char* name : {"OMPI_MCA_mca_base_param_files", "OMPI_MCA_mca_param_files"})
    if (const char* list = in.env(name)) {
      std::stringstream ss(list);
      for (std::string f; std::getline(ss, f, ',');)
        if (!trim(f).empty() && trim(f) != "none") files.push_back(trim(f));
      return files;
    }
  if (const char* home = in.env("HOME"))
    files.push_back(std::string(home) + "/.openmpi/mca-params.conf");
  if (const char* prefix = in.env("OPAL_PREFIX"))
    files.push_back(std::string(prefix) + "/etc/openmpi-mca-params.conf");
  if (!in.mpi_library_dir.empty())
    files.push_back(directory_of(in.mpi_library_dir) + "/etc/openmpi-mca-params.conf");
  files.push_back("/etc/openmpi/openmpi-mca-params.conf");  // Debian's sysconfdir
  return files;
}

bool selects_transport(const std::string& text) {
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    if ((name == "pml" || name == "mtl") && !value.empty() && value[0] != '^') return true;
  }
  return false;
}

std::string single_node_pml(const StartupInputs& in) {
  if (const char* keep = in.env("CPREPLAY_KEEP_MPI_TRANSPORT");
      keep != nullptr && *keep != '\0' && std::string(keep) != "0")
    return "";
  int size = 0, local = 0;
  if (!whole_number(in.env("OMPI_COMM_WORLD_SIZE"), size) ||
      !whole_number(in.env("OMPI_COMM_WORLD_LOCAL_SIZE"), local) || size < 1 || local != size)
    return "";
  if (in.env("OMPI_MCA_pml") != nullptr || in.env("OMPI_MCA_mtl") != nullptr) return "";
  for (const std::string& f : open_mpi_param_files(in))
    if (selects_transport(in.file(f))) return "";
  return "ob1";
}

std::string choose_single_node_transport() {
  StartupInputs in;
  in.env = [](const char* name) { return static_cast<const char*>(std::getenv(name)); };
  in.file = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    if (f) ss << f.rdbuf();
    return ss.str();
  };
  // The library that defines MPI_Init, symbolic links resolved: an installation's etc/ sits
  // beside its lib/.
  if (void* init = dlsym(RTLD_DEFAULT, "MPI_Init")) {
    Dl_info info{};
    char resolved[PATH_MAX];
    if (dladdr(init, &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, resolved) != nullptr)
      in.mpi_library_dir = directory_of(resolved);
  }
  const std::string pml = single_node_pml(in);
  if (!pml.empty()) setenv("OMPI_MCA_pml", pml.c_str(), 0);
  return pml;
}

bool time_slice_ns(const char* override_us, std::uint64_t& ns) {
  ns = 100000;  // 0.1 ms, the shortest the kernel grants
  if (override_us == nullptr || *override_us == '\0') return true;  // unset or empty
  ns = 0;
  if (std::string(override_us) == "0") return true;
  int us = 0;
  if (!whole_number(override_us, us) || us < 100 || us > 100000) return false;
  ns = static_cast<std::uint64_t>(us) * 1000;
  return true;
}

std::uint64_t set_thread_time_slice(std::uint64_t ns) {
#if defined(__linux__) && defined(SYS_sched_setattr)
  // struct sched_attr (linux/sched/types.h). The thread's policy and nice value are read first
  // and kept (SCHED_FLAG_KEEP_PARAMS would also keep the old slice).
  struct {
    std::uint32_t size, policy;
    std::uint64_t flags;
    std::int32_t nice;
    std::uint32_t priority;
    std::uint64_t runtime, deadline, period;
  } attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return 0;
  if (attr.policy != 0 && attr.policy != 3 && attr.policy != 5) return 0;  // OTHER, BATCH, IDLE
  attr.size = sizeof attr;
  attr.flags = 0;
  attr.runtime = ns;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return 0;
  // Kernels without per-task slices accept the call and keep their own slice: read it back.
  if (ns == 0 || syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return 0;
  return attr.runtime == ns ? ns : 0;
#else
  (void)ns;
  return 0;
#endif
}

std::uint64_t request_short_time_slices() {
  std::uint64_t slice = 0;
  if (!time_slice_ns(std::getenv("CPREPLAY_TIME_SLICE_US"), slice) || slice == 0) return 0;
  return set_thread_time_slice(slice);
}

namespace {

/// TCP_NODELAY on `fd` if it is a TCP connection to a loopback address; true if set.
bool no_delay_if_loopback(int fd) {
  int type = 0;
  socklen_t length = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
    return false;
  sockaddr_storage peer{};
  length = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return false;
  bool loopback = false;
  if (peer.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&peer);
    loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;  // 127.0.0.0/8
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
    loopback = IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  const int one = 1;
  return loopback && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
}

}  // namespace

int no_delay_on_loopback_connections() {
  // The open descriptors as Linux lists them (a launcher may raise the limit to millions, all
  // but a few unused); elsewhere the first 1024.
  std::vector<int> fds;
  if (DIR* dir = opendir("/proc/self/fd")) {
    const int own = dirfd(dir);
    while (const dirent* entry = readdir(dir)) {
      int fd = 0;
      if (whole_number(entry->d_name, fd) && fd > 2 && fd != own) fds.push_back(fd);
    }
    closedir(dir);
  } else {
    for (int fd = 3; fd < 1024; ++fd) fds.push_back(fd);
  }
  int set = 0;
  for (const int fd : fds)
    if (no_delay_if_loopback(fd)) ++set;
  return set;
}

}  // namespace cpreplay::tools
