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
  template <class T, class F>
  void seq(const std::vector<T>& v, F&& each) {
    pod(static_cast<std::uint64_t>(v.size()));
    for (const T& x : v) each(x);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
  void pod(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
  }
  void str(std::string& s) {
    std::uint64_t n = 0;
    pod(n);
    need(n);
    s = in_.substr(at_, n);
    at_ += n;
  }
  /// A length must fit in what is left (one byte per element at least).
  template <class T, class F>
  void seq(std::vector<T>& v, F&& each) {
    std::uint64_t n = 0;
    pod(n);
    need(n);
    v.resize(static_cast<std::size_t>(n));
    for (T& x : v) each(x);
  }
  bool at_end() const { return at_ == in_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - at_) throw std::runtime_error("encoded definitions are truncated");
  }
  const std::string& in_;
  std::size_t at_ = 0;
};

/// The one list of fields, in wire order, for both directions (Io is Writer with a const
/// Definitions, Reader with a mutable one), so the encoding and the decoding cannot drift apart.
template <class Io, class Defs>
void transfer(Io& io, Defs& d) {
  io.str(d.anchor_path);
  io.pod(d.clock);
  io.seq(d.regions, [&](auto& r) {
    io.str(r.name);
    io.str(r.canonical_name);
    io.str(r.description);
    io.str(r.file);
    io.pod(r.begin_line);
    io.pod(r.end_line);
    io.pod(r.role);
    io.pod(r.paradigm);
    io.pod(r.mpi_class);
  });
  io.seq(d.system_nodes, [&](auto& n) {
    io.str(n.name);
    io.str(n.class_name);
    io.pod(n.parent);
  });
  io.seq(d.processes, [&](auto& p) {
    io.str(p.name);
    io.pod(p.system_node);
    io.pod(p.location_id);
    io.str(p.location_name);
    io.pod(p.locations);
    io.pod(p.events);
    io.seq(p.workers, [&](auto& w) {
      io.pod(w.location_id);
      io.str(w.name);
      io.pod(w.events);
    });
  });
  io.seq(d.comms, [&](auto& c) {
    io.str(c.name);
    io.seq(c.members, [&](auto& m) { io.pod(m); });
    io.pod(c.is_self);
  });
  io.pod(d.program_region);
  io.seq(d.program_name_strings, [&](auto& id) { io.pod(id); });
}

}  // namespace

std::string encode_definitions(const Definitions& d) {
  Writer w;
  transfer(w, d);
  return std::move(w.out);
}

Definitions decode_definitions(const std::string& bytes) {
  Reader r(bytes);
  Definitions d;
  transfer(r, d);
  if (!r.at_end()) throw std::runtime_error("encoded definitions have trailing bytes");
  return d;
}

}  // namespace cpreplay
