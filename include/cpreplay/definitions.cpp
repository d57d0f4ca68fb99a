// SPDX-License-Identifier: BSD-3-Clause
// A flat byte encoding of Definitions, so one rank reads the definitions file and the others
// receive it (a 10,000-rank job then opens the file once, not 10,000 times).
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "cpreplay/definitions.hpp"

namespace cpreplay {
namespace {

class Writer {
 public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    out.append(s);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::size_t count() {  // a length that must fit in what is left (one byte per element at least)
    const auto n = pod<std::uint64_t>();
    need(n);
    return static_cast<std::size_t>(n);
  }
  bool at_end() const { return at_ == in_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - at_) throw std::runtime_error("encoded definitions are truncated");
  }
  const std::string& in_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_definitions(const Definitions& d) {
  Writer w;
  w.str(d.anchor_path);
  w.pod(d.clock);
  w.pod(static_cast<std::uint64_t>(d.regions.size()));
  for (const Region& r : d.regions) {
    w.str(r.name);
    w.str(r.canonical_name);
    w.str(r.description);
    w.str(r.file);
    w.pod(r.begin_line);
    w.pod(r.end_line);
    w.pod(r.role);
    w.pod(r.paradigm);
    w.pod(r.mpi_class);
  }
  w.pod(static_cast<std::uint64_t>(d.system_nodes.size()));
  for (const SystemTreeNode& n : d.system_nodes) {
    w.str(n.name);
    w.str(n.class_name);
    w.pod(n.parent);
  }
  w.pod(static_cast<std::uint64_t>(d.processes.size()));
  for (const Process& p : d.processes) {
    w.str(p.name);
    w.pod(p.system_node);
    w.pod(p.location_id);
    w.str(p.location_name);
    w.pod(p.locations);
    w.pod(p.events);
  }
  w.pod(static_cast<std::uint64_t>(d.comms.size()));
  for (const Communicator& c : d.comms) {
    w.str(c.name);
    w.pod(static_cast<std::uint64_t>(c.members.size()));
    w.out.append(reinterpret_cast<const char*>(c.members.data()), c.members.size() * sizeof(Rank));
    w.pod(c.is_self);
  }
  w.pod(d.program_region);
  w.pod(static_cast<std::uint64_t>(d.program_name_strings.size()));
  for (std::uint64_t id : d.program_name_strings) w.pod(id);
  return std::move(w.out);
}

Definitions decode_definitions(const std::string& bytes) {
  Reader r(bytes);
  Definitions d;
  d.anchor_path = r.str();
  d.clock = r.pod<Clock>();
  d.regions.resize(r.count());
  for (Region& g : d.regions) {
    g.name = r.str();
    g.canonical_name = r.str();
    g.description = r.str();
    g.file = r.str();
    g.begin_line = r.pod<std::uint32_t>();
    g.end_line = r.pod<std::uint32_t>();
    g.role = r.pod<RegionRole>();
    g.paradigm = r.pod<Paradigm>();
    g.mpi_class = r.pod<MpiClass>();
  }
  d.system_nodes.resize(r.count());
  for (SystemTreeNode& n : d.system_nodes) {
    n.name = r.str();
    n.class_name = r.str();
    n.parent = r.pod<std::uint32_t>();
  }
  d.processes.resize(r.count());
  for (Process& p : d.processes) {
    p.name = r.str();
    p.system_node = r.pod<std::uint32_t>();
    p.location_id = r.pod<std::uint64_t>();
    p.location_name = r.str();
    p.locations = r.pod<std::uint32_t>();
    p.events = r.pod<std::uint64_t>();
  }
  d.comms.resize(r.count());
  for (Communicator& c : d.comms) {
    c.name = r.str();
    c.members.resize(r.count());
    for (Rank& m : c.members) m = r.pod<Rank>();
    c.is_self = r.pod<bool>();
  }
  d.program_region = r.pod<RegionId>();
  d.program_name_strings.resize(r.count());
  for (std::uint64_t& id : d.program_name_strings) id = r.pod<std::uint64_t>();
  if (!r.at_end()) throw std::runtime_error("encoded definitions have trailing bytes");
  return d;
}

}  // namespace cpreplay
