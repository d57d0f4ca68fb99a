// SPDX-License-Identifier: BSD-3-Clause
// Trace-model helpers: role/paradigm names, scout's MPI name classification, the call tree.
#include <algorithm>
#include <cctype>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay {

const char* role_name(RegionRole role) {
  // PEARL's strings (they end up in the Cube report and drive the time-breakdown masks).
  static const char* const kNames[] = {
      "unknown", "function", "wrapper", "loop", "code", "parallel", "sections", "section",
      "workshare", "single", "single sblock", "master", "critical", "critical sblock", "atomic",
      "barrier", "implicit barrier", "flush", "ordered", "ordered sblock", "task", "task create",
      "task wait", "one2all", "all2one", "all2all", "other collective", "file io", "point2point",
      "rma", "data transfer", "artificial", "thread create", "thread wait", "untied task",
      "allocate", "deallocate", "reallocate", "file io metadata"};
  const auto i = static_cast<std::size_t>(role);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

const char* paradigm_name(Paradigm paradigm) {
  static const char* const kNames[] = {
      "unknown", "user", "compiler", "openmp", "mpi", "cuda", "measurement", "pthread", "hmpp",
      "ompss", "hardware", "gaspi", "upc", "shmem", "winthread", "qtthread", "acethread",
      "tbbthread", "openacc", "opencl", "mtapi", "sampling", "none", "hip", "kokkos", "io"};
  const auto i = static_cast<std::size_t>(paradigm);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

MpiClass classify_mpi_region(const std::string& file, const std::string& name) {
  // scalasca-metrics.md §2.3: an MPI region is one whose source file is "MPI".
  if (file != "MPI") return MpiClass::None;
  if (name.size() < 4 || name.compare(0, 4, "MPI_") != 0) return MpiClass::Other;
  std::string n = name.substr(4);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "init" || n == "init_thread") return MpiClass::Init;
  if (n == "finalize") return MpiClass::Finalize;
  if (n.compare(0, 8, "sendrecv") == 0) return MpiClass::SendRecv;
  if (n == "send" || n == "ssend") return MpiClass::Send;
  if (n.find("send") != std::string::npos) return MpiClass::OtherSend;
  if (n.find("recv") != std::string::npos) return MpiClass::Recv;
  if (n == "wait" || n == "waitany") return MpiClass::WaitSingle;
  if (n == "waitall" || n == "waitsome") return MpiClass::WaitMulti;
  if (n == "test" || n == "testany" || n == "testall" || n == "testsome") return MpiClass::Test;
  return MpiClass::Other;
}

std::size_t LocalTrace::bytes_used() const {
  return time.capacity() * sizeof(Ticks) + kind.capacity() * sizeof(EventKind) +
         ref.capacity() * sizeof(std::uint32_t) + callpath.capacity() * sizeof(std::uint32_t) +
         link.capacity() * sizeof(EventIdx) + p2p.size() * sizeof(P2pRecord) +
         coll.size() * sizeof(CollRecord);
}

CallpathId CallTree::find_or_add(CallpathId parent, RegionId region) {
  const std::uint64_t key = (static_cast<std::uint64_t>(parent.value) << 32) | region.value;
  auto [it, inserted] = index_.emplace(key, static_cast<std::uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back(Node{region, parent});
  return CallpathId{it->second};
}

std::vector<std::vector<std::uint32_t>> CallTree::children() const {
  std::vector<std::vector<std::uint32_t>> result(nodes_.size());
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].parent.valid()) result[nodes_[i].parent.value].push_back(i);
  return result;
}

}  // namespace cpreplay
