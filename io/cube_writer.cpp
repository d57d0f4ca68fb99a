// SPDX-License-Identifier: BSD-3-Clause
// Writes Cube4 (.cubex) reports as a plain ustar archive, renamed into place only when complete.
#include "io/cube_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstring>
#include <ctime>
#include <utility>

#include "cpreplay/error.hpp"
#include "io/xml.hpp"

namespace cpreplay::io {
namespace {

// Temporary files of the writers alive in this process, in plain static storage that a signal
// handler may read (remove_unfinished_reports). Rank 0 has at most two writers at a time.
constexpr int kMaxPending = 4;
constexpr std::size_t kMaxPendingPath = 4096;
char g_pending_path[kMaxPending][kMaxPendingPath];
volatile std::sig_atomic_t g_pending_used[kMaxPending];

int register_pending(const std::string& path) {
  if (path.size() >= kMaxPendingPath) return -1;
  for (int i = 0; i < kMaxPending; ++i) {
    if (g_pending_used[i]) continue;
    std::memcpy(g_pending_path[i], path.c_str(), path.size() + 1);
    g_pending_used[i] = 1;
    return i;
  }
  return -1;
}

void unregister_pending(int& slot) {
  if (slot >= 0) g_pending_used[slot] = 0;
  slot = -1;
}

/// The <attr> entries every report starts with, as CubeW 4.6 writes them (keys reserved).
constexpr std::pair<const char*, const char*> kVersionAttributes[] = {
    {"CubePL Version", "1.1"}, {"Cube Version", "4.6"}};

constexpr std::size_t kTarBlock = 512;
constexpr char kIndexMarker[] = "CUBEX.INDEX";  // 11 bytes, no terminator in the file
constexpr char kDataMarker[] = "CUBEX.DATA";    // 10 bytes, no terminator in the file

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw Error("invalid Cube report definition for " + path + ": " + what);
}

/// Children lists (in vector order) and roots (in vector order) of a parent-index forest.
/// Post-INVARIANT: every parent index precedes its child, so the forest has no cycles.
template <class Node>
void build_forest(const std::vector<Node>& nodes, const char* what,
                  std::vector<std::vector<int>>& children, std::vector<int>& roots) {
  children.assign(nodes.size(), {});
  roots.clear();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int parent = nodes[i].parent;
    if (parent == -1) {
      roots.push_back(static_cast<int>(i));
    } else if (parent >= 0 && static_cast<std::size_t>(parent) < i) {
      children[static_cast<std::size_t>(parent)].push_back(static_cast<int>(i));
    } else {
      throw Error(std::string("invalid Cube report definition: ") + what + " " + std::to_string(i) +
                  " has parent " + std::to_string(parent) + ", expected -1 or a preceding index");
    }
  }
}

void append_element(std::string& xml, const char* tag, const std::string& text) {
  xml += '<';
  xml += tag;
  xml += '>';
  xml += xml_escape(text);
  xml += "</";
  xml += tag;
  xml += ">\n";
}

/// Writes `value` as zero-padded octal into a tar header field of `width` bytes (NUL-terminated).
/// Sizes that do not fit use the GNU base-256 encoding (high bit of the first byte set).
void put_octal(char* field, std::size_t width, std::uint64_t value) {
  const std::size_t digits = width - 1;
  if (digits < 22 && (value >> (3 * digits)) != 0) {
    std::memset(field, 0, width);
    field[0] = static_cast<char>(0x80);
    for (std::size_t i = width - 1; i > 0; --i) {
      field[i] = static_cast<char>(value & 0xffu);
      value >>= 8;
    }
    return;
  }
  for (std::size_t i = digits; i > 0; --i) {
    field[i - 1] = static_cast<char>('0' + (value & 7u));
    value >>= 3;
  }
  field[digits] = '\0';
}

/// One 512-byte ustar header for a regular file.
std::string tar_header(const std::string& name, std::uint64_t size, std::uint64_t mtime) {
  std::string header(kTarBlock, '\0');
  char* h = header.data();
  std::memcpy(h, name.data(), name.size());  // caller checked name.size() <= 100
  put_octal(h + 100, 8, 0644);               // mode
  put_octal(h + 108, 8, 0);                  // uid
  put_octal(h + 116, 8, 0);                  // gid
  put_octal(h + 124, 12, size);
  put_octal(h + 136, 12, mtime);
  std::memset(h + 148, ' ', 8);  // checksum is computed with its own field as blanks
  h[156] = '0';                  // regular file
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  unsigned sum = 0;
  for (const char ch : header) sum += static_cast<unsigned char>(ch);
  put_octal(h + 148, 7, sum);  // six digits and a NUL, then the space already there
  return header;
}

template <class T>
void append_raw(std::string& bytes, T value) {
  char buffer[sizeof(T)];
  std::memcpy(buffer, &value, sizeof(T));
  bytes.append(buffer, sizeof(T));
}

}  // namespace

std::vector<int> cube_enumeration(const std::vector<CubeCnodeDef>& cnodes, bool inclusive) {
  std::vector<std::vector<int>> children;
  std::vector<int> roots;
  build_forest(cnodes, "cnode", children, roots);

  std::vector<int> order;
  order.reserve(cnodes.size());
  // Explicit stacks instead of recursion: call trees of recursive programs can be very deep.
  if (!inclusive) {
    std::vector<int> stack(roots.rbegin(), roots.rend());
    while (!stack.empty()) {
      const int node = stack.back();
      stack.pop_back();
      order.push_back(node);
      const auto& kids = children[static_cast<std::size_t>(node)];
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
    }
    return order;
  }
  // Inclusive ("wide search" in cubew): a root is listed, then expanding a node lists all its
  // children one after another and then expands each child in turn.
  for (const int root : roots) {
    order.push_back(root);
    std::vector<std::pair<int, std::size_t>> stack;  // (node being expanded, next child)
    const auto expand = [&](int node) {
      const auto& kids = children[static_cast<std::size_t>(node)];
      order.insert(order.end(), kids.begin(), kids.end());
      stack.emplace_back(node, 0);
    };
    expand(root);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto& kids = children[static_cast<std::size_t>(node)];
      if (next == kids.size()) {
        stack.pop_back();
        continue;
      }
      const int child = kids[next++];
      expand(child);  // may reallocate the stack: the references above are not used after this
    }
  }
  return order;
}

CubeWriter::CubeWriter(std::string path, CubeReportDef def)
    : path_(std::move(path)), def_(std::move(def)) {
  // Validate before creating anything, so a bad definition leaves no file behind.
  std::vector<std::vector<int>> children;
  std::vector<int> roots;
  build_forest(def_.metrics, "metric", children, roots);
  build_forest(def_.cnodes, "cnode", children, roots);
  build_forest(def_.system_nodes, "system tree node", children, roots);
  for (const auto& attribute : def_.attributes) {
    for (const auto& [key, value] : kVersionAttributes) {
      (void)value;
      if (attribute.first == key) {
        invalid(path_, "attribute '" + attribute.first + "' is written by the Cube writer itself");
      }
    }
  }
  for (std::size_t i = 0; i < def_.metrics.size(); ++i) {
    const std::string& dtype = def_.metrics[i].dtype;
    if (dtype != "FLOAT" && dtype != "INTEGER") {
      invalid(path_, "metric " + def_.metrics[i].uniq_name + " has dtype '" + dtype +
                         "', expected FLOAT or INTEGER");
    }
  }
  for (std::size_t i = 0; i < def_.cnodes.size(); ++i) {
    const int region = def_.cnodes[i].region;
    if (region < 0 || static_cast<std::size_t>(region) >= def_.regions.size()) {
      invalid(path_, "cnode " + std::to_string(i) + " refers to region " + std::to_string(region) +
                         " of " + std::to_string(def_.regions.size()));
    }
  }
  for (std::size_t i = 0; i < def_.processes.size(); ++i) {
    const int node = def_.processes[i].system_node;
    if (node < 0 || static_cast<std::size_t>(node) >= def_.system_nodes.size()) {
      invalid(path_, "process " + std::to_string(i) + " refers to system tree node " +
                         std::to_string(node) + " of " + std::to_string(def_.system_nodes.size()));
    }
  }
  for (std::size_t i = 0; i < def_.threads.size(); ++i) {
    const int process = def_.threads[i].process;
    if (process < 0 || static_cast<std::size_t>(process) >= def_.processes.size()) {
      invalid(path_, "thread " + std::to_string(i) + " refers to process " +
                         std::to_string(process) + " of " + std::to_string(def_.processes.size()));
    }
  }
  has_data_.assign(def_.metrics.size(), false);

  // Open now so an unwritable destination fails before any analysis work is spent on it.
  tmp_path_ = path_ + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw UsageError("cannot write report " + path_ + ": " + std::strerror(errno));
  }
  pending_slot_ = register_pending(tmp_path_);
}

CubeWriter::~CubeWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!committed_) std::remove(tmp_path_.c_str());
  unregister_pending(pending_slot_);
}

void CubeWriter::fail(int err) {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  std::remove(tmp_path_.c_str());
  unregister_pending(pending_slot_);
  const char* reason = err != 0 ? std::strerror(err) : "write failed";
  throw UsageError("cannot write report " + path_ + ": " + reason);
}

void CubeWriter::require_open(const char* operation) const {
  if (committed_) {
    throw Error("report " + path_ + ": " + operation + " after commit()");
  }
  if (file_ == nullptr) {
    throw Error("report " + path_ + ": " + operation + " after an earlier write error");
  }
}

void CubeWriter::write_member(const std::string& name, const std::string& bytes) {
  if (name.size() > 100) invalid(path_, "tar member name too long: " + name);
  const auto mtime = static_cast<std::uint64_t>(std::time(nullptr));
  const std::string header = tar_header(name, bytes.size(), mtime);
  static const char zeros[kTarBlock] = {};
  const std::size_t padding = (kTarBlock - bytes.size() % kTarBlock) % kTarBlock;
  errno = 0;
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size() ||
      std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() ||
      std::fwrite(zeros, 1, padding, file_) != padding) {
    fail(errno);
  }
}

void CubeWriter::add_metric_data(int metric, const std::vector<double>& values) {
  require_open("add_metric_data()");
  if (metric < 0 || static_cast<std::size_t>(metric) >= def_.metrics.size()) {
    invalid(path_, "add_metric_data() for metric " + std::to_string(metric) + " of " +
                       std::to_string(def_.metrics.size()));
  }
  const CubeMetricDef& m = def_.metrics[static_cast<std::size_t>(metric)];
  const std::size_t threads = def_.threads.size();
  const std::size_t cnodes = def_.cnodes.size();
  if (values.size() != cnodes * threads) {
    invalid(path_, "metric " + m.uniq_name + " got " + std::to_string(values.size()) +
                       " values, expected " + std::to_string(cnodes) + " cnodes x " +
                       std::to_string(threads) + " threads");
  }
  if (has_data_[static_cast<std::size_t>(metric)]) {
    invalid(path_, "metric " + m.uniq_name + " given data twice");
  }
  has_data_[static_cast<std::size_t>(metric)] = true;

  const bool integer = m.dtype == "INTEGER";
  const std::vector<int> order = cube_enumeration(def_.cnodes, m.inclusive);
  std::vector<std::int32_t> positions;
  std::string data(kDataMarker, sizeof(kDataMarker) - 1);
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const double* row = values.data() + static_cast<std::size_t>(order[pos]) * threads;
    bool nonzero = false;
    for (std::size_t t = 0; t < threads; ++t) {
      nonzero = nonzero || (integer ? std::llround(row[t]) != 0 : row[t] != 0.0);
    }
    if (!nonzero) continue;  // all-zero rows are left out of the sparse index
    positions.push_back(static_cast<std::int32_t>(pos));
    for (std::size_t t = 0; t < threads; ++t) {
      if (integer) {
        append_raw<std::int64_t>(data, static_cast<std::int64_t>(std::llround(row[t])));
      } else {
        append_raw<double>(data, row[t]);
      }
    }
  }
  // A metric without any non-zero row gets no files; readers treat it as all zero.
  if (positions.empty()) return;

  // Native byte order: the endianness marker (int32 1) tells readers which one it is.
  std::string index(kIndexMarker, sizeof(kIndexMarker) - 1);
  append_raw<std::int32_t>(index, 1);
  append_raw<std::uint16_t>(index, 0);  // version
  append_raw<std::uint8_t>(index, 1);   // sparse list of positions
  append_raw<std::int32_t>(index, static_cast<std::int32_t>(positions.size()));
  for (const std::int32_t p : positions) append_raw<std::int32_t>(index, p);

  const std::string id = std::to_string(metric);
  write_member(id + ".index", index);
  write_member(id + ".data", data);
}

void CubeWriter::commit() {
  require_open("commit()");
  write_member("anchor.xml", anchor_xml());
  static const char end_of_archive[2 * kTarBlock] = {};
  errno = 0;
  if (std::fwrite(end_of_archive, 1, sizeof(end_of_archive), file_) != sizeof(end_of_archive)) {
    fail(errno);
  }
  if (std::fflush(file_) != 0) fail(errno);
  std::FILE* file = file_;
  file_ = nullptr;  // fclose releases the stream even when it reports an error
  if (std::fclose(file) != 0) fail(errno);
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) fail(errno);
  committed_ = true;
  unregister_pending(pending_slot_);
}

void remove_unfinished_reports() noexcept {
  for (int i = 0; i < kMaxPending; ++i)
    if (g_pending_used[i]) ::unlink(g_pending_path[i]);
}

int register_unfinished_file(const std::string& tmp_path) { return register_pending(tmp_path); }

void unregister_unfinished_file(int& slot) { unregister_pending(slot); }

std::string CubeWriter::anchor_xml() const {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cube version=\"4.4\">\n";
  // CubeW 4.6 (the writer of Scalasca 2.6's reports) states its versions first, before the
  // caller's attributes; the Cube library picks its CubePL engine from "CubePL Version".
  for (const auto& [key, value] : kVersionAttributes) {
    xml += "<attr key=\"" + std::string(key) + "\" value=\"" + value + "\"/>\n";
  }
  for (const auto& [key, value] : def_.attributes) {
    xml += "<attr key=\"" + xml_escape(key) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  }
  xml += "<doc>\n<mirrors>\n";
  for (const std::string& url : def_.mirrors) append_element(xml, "murl", url);
  xml += "</mirrors>\n</doc>\n";

  std::vector<std::vector<int>> children;
  std::vector<int> roots;

  // Metric tree: ids are vector indices; the document nests children under their parents.
  build_forest(def_.metrics, "metric", children, roots);
  xml += "<metrics>\n";
  {
    const auto write_metric = [&](const auto& self, int id) -> void {
      const CubeMetricDef& m = def_.metrics[static_cast<std::size_t>(id)];
      xml += "<metric id=\"" + std::to_string(id) + "\" type=\"" +
             (m.inclusive ? "INCLUSIVE" : "EXCLUSIVE") + "\">\n";
      append_element(xml, "disp_name", m.disp_name);
      append_element(xml, "uniq_name", m.uniq_name);
      append_element(xml, "dtype", m.dtype);
      append_element(xml, "uom", m.uom);
      append_element(xml, "url", m.url);
      append_element(xml, "descr", m.descr);
      for (const int child : children[static_cast<std::size_t>(id)]) self(self, child);
      xml += "</metric>\n";
    };
    for (const int root : roots) write_metric(write_metric, root);
  }
  xml += "</metrics>\n<program>\n";

  for (std::size_t i = 0; i < def_.regions.size(); ++i) {
    const CubeRegionDef& r = def_.regions[i];
    xml += "<region id=\"" + std::to_string(i) + "\" mod=\"" + xml_escape(r.mod) + "\" begin=\"" +
           std::to_string(r.begin_line) + "\" end=\"" + std::to_string(r.end_line) + "\">\n";
    append_element(xml, "name", r.name);
    append_element(xml, "mangled_name", r.mangled_name);
    append_element(xml, "paradigm", r.paradigm);
    append_element(xml, "role", r.role);
    append_element(xml, "url", r.url);
    append_element(xml, "descr", r.descr);
    xml += "</region>\n";
  }

  // Call tree: written iteratively (deep recursion in traced programs gives deep trees).
  build_forest(def_.cnodes, "cnode", children, roots);
  for (const int root : roots) {
    std::vector<std::pair<int, std::size_t>> stack;
    const auto open = [&](int id) {
      xml += "<cnode id=\"" + std::to_string(id) + "\" calleeId=\"" +
             std::to_string(def_.cnodes[static_cast<std::size_t>(id)].region) + "\">\n";
      stack.emplace_back(id, 0);
    };
    open(root);
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const auto& kids = children[static_cast<std::size_t>(id)];
      if (next == kids.size()) {
        xml += "</cnode>\n";
        stack.pop_back();
        continue;
      }
      open(kids[next++]);
    }
  }
  xml += "</program>\n<system>\n";

  // System tree: location groups sit inside their system tree node, locations inside their
  // group; ids are the vector indices (data rows are in location-id order). CubeW spells the
  // id attribute of these three elements "Id" (metric, region and cnode keep "id"), and
  // readers follow it: pycubexr reads only "Id" here (docs/cube-report.md).
  build_forest(def_.system_nodes, "system tree node", children, roots);
  std::vector<std::vector<int>> groups_of_node(def_.system_nodes.size());
  for (std::size_t p = 0; p < def_.processes.size(); ++p) {
    groups_of_node[static_cast<std::size_t>(def_.processes[p].system_node)].push_back(
        static_cast<int>(p));
  }
  std::vector<std::vector<int>> threads_of_group(def_.processes.size());
  for (std::size_t t = 0; t < def_.threads.size(); ++t) {
    threads_of_group[static_cast<std::size_t>(def_.threads[t].process)].push_back(
        static_cast<int>(t));
  }
  {
    const auto write_node = [&](const auto& self, int id) -> void {
      const CubeSystemNodeDef& node = def_.system_nodes[static_cast<std::size_t>(id)];
      xml += "<systemtreenode Id=\"" + std::to_string(id) + "\">\n";
      append_element(xml, "name", node.name);
      append_element(xml, "class", node.cls);
      for (const int child : children[static_cast<std::size_t>(id)]) self(self, child);
      for (const int p : groups_of_node[static_cast<std::size_t>(id)]) {
        const CubeProcessDef& process = def_.processes[static_cast<std::size_t>(p)];
        xml += "<locationgroup Id=\"" + std::to_string(p) + "\">\n";
        append_element(xml, "name", process.name);
        append_element(xml, "rank", std::to_string(process.rank));
        append_element(xml, "type", "process");
        for (const int t : threads_of_group[static_cast<std::size_t>(p)]) {
          const CubeThreadDef& thread = def_.threads[static_cast<std::size_t>(t)];
          xml += "<location Id=\"" + std::to_string(t) + "\">\n";
          append_element(xml, "name", thread.name);
          append_element(xml, "rank", std::to_string(thread.rank));
          append_element(xml, "type", "thread");
          xml += "</location>\n";
        }
        xml += "</locationgroup>\n";
      }
      xml += "</systemtreenode>\n";
    };
    for (const int root : roots) write_node(write_node, root);
  }
  xml += "</system>\n</cube>\n";
  return xml;
}

}  // namespace cpreplay::io
