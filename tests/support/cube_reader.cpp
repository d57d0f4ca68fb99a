// SPDX-License-Identifier: BSD-3-Clause
// Reads Cube4 reports for tests, written from cube-format.md alone (not from io/cube_writer).
#include "tests/support/cube_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace cpreplay::testing {
namespace {

/// Every error carries the file name; the reader's callers are tests that print what().
class Failure {
 public:
  explicit Failure(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void operator()(const std::string& what) const {
    throw std::runtime_error(path_ + ": " + what);
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Archive layer: gzip (optional) and ustar.

std::string gunzip(const std::string& in, const Failure& fail) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) fail("cannot initialise zlib");
  std::string out;
  char buffer[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      fail("corrupt gzip compression");
    }
    out.append(buffer, sizeof(buffer) - zs.avail_out);
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      fail("truncated gzip stream");
    }
  }
  inflateEnd(&zs);
  return out;
}

/// A tar numeric field: octal digits (NUL/space padded) or GNU base-256 (high bit set).
std::uint64_t tar_number(const char* field, std::size_t width, const char* what,
                         const Failure& fail) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(field);
  if (bytes[0] & 0x80u) {
    std::uint64_t value = bytes[0] & 0x7fu;
    for (std::size_t i = 1; i < width; ++i) {
      if (value >> 56) fail(std::string("tar header: ") + what + " too large");
      value = (value << 8) | bytes[i];
    }
    return value;
  }
  std::size_t i = 0;
  while (i < width && (field[i] == ' ' || field[i] == '\0')) ++i;
  std::uint64_t value = 0;
  bool any = false;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) {
    value = value * 8 + static_cast<std::uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (field[i] != ' ' && field[i] != '\0') {
      fail(std::string("tar header: ") + what + " is not an octal number");
    }
  }
  if (!any) fail(std::string("tar header: ") + what + " is empty");
  return value;
}

std::string tar_string(const char* field, std::size_t width) {
  return std::string(field, strnlen(field, width));
}

struct TarMember {
  std::string name;
  std::string data;
};

std::vector<TarMember> read_tar(const std::string& archive, const Failure& fail) {
  constexpr std::size_t kBlock = 512;
  std::vector<TarMember> members;
  std::string long_name;  // from a GNU 'L' record, applies to the next member
  std::size_t offset = 0;
  for (;;) {
    if (offset + kBlock > archive.size()) {
      fail("truncated tar archive: no end-of-archive marker at offset " + std::to_string(offset));
    }
    const char* h = archive.data() + offset;
    if (std::all_of(h, h + kBlock, [](char c) { return c == '\0'; })) break;

    unsigned sum = 0;
    int signed_sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) {
      const bool in_checksum = i >= 148 && i < 156;
      sum += in_checksum ? ' ' : static_cast<unsigned char>(h[i]);
      signed_sum += in_checksum ? ' ' : static_cast<signed char>(h[i]);
    }
    const std::uint64_t stored = tar_number(h + 148, 8, "checksum", fail);
    if (stored != sum && static_cast<std::int64_t>(stored) != signed_sum) {
      fail("tar header checksum mismatch at offset " + std::to_string(offset));
    }
    const std::uint64_t size = tar_number(h + 124, 12, "size", fail);
    const char type = h[156];
    std::string name = tar_string(h, 100);
    if (std::memcmp(h + 257, "ustar", 5) == 0) {
      const std::string prefix = tar_string(h + 345, 155);
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    offset += kBlock;
    if (size > archive.size() - offset) {
      fail("tar member " + name + " claims " + std::to_string(size) + " bytes, archive ends first");
    }
    std::string data = archive.substr(offset, static_cast<std::size_t>(size));
    offset += static_cast<std::size_t>((size + kBlock - 1) / kBlock * kBlock);
    if (offset > archive.size()) offset = archive.size();  // last member's padding may be cut

    if (type == 'L') {  // GNU long name record
      long_name = std::string(data.c_str());
      continue;
    }
    if (type != '0' && type != '\0' && type != '7') {
      long_name.clear();  // directories, links, pax headers: nothing a report needs
      continue;
    }
    if (!long_name.empty()) name = std::move(long_name);
    long_name.clear();
    if (name.rfind("./", 0) == 0) name.erase(0, 2);
    members.push_back({std::move(name), std::move(data)});
  }
  return members;
}

// ---------------------------------------------------------------------------------------------
// XML layer: a small non-validating parser, enough for anchor.xml.

struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlNode> children;
  std::string text;  // concatenated character data directly inside this element
  std::size_t line = 0;  // of the start tag, for error messages

  const std::string* attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  const XmlNode* child(const std::string& tag) const {
    for (const XmlNode& c : children) {
      if (c.name == tag) return &c;
    }
    return nullptr;
  }
};

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class XmlParser {
 public:
  XmlParser(const std::string& text, Failure fail) : s_(text), fail_(std::move(fail)) {}

  XmlNode parse_document() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    skip_misc();
    if (!starts_with("<")) error("expected the root element");
    XmlNode root = parse_element();
    skip_misc();
    if (pos_ != s_.size()) error("unexpected content after the root element");
    return root;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    const auto line =
        1 + std::count(s_.begin(),
                       s_.begin() + static_cast<std::ptrdiff_t>(std::min(pos_, s_.size())), '\n');
    fail_("anchor.xml line " + std::to_string(line) + ": " + what);
  }

  bool starts_with(const char* prefix) const {
    return s_.compare(pos_, std::strlen(prefix), prefix) == 0;
  }

  void skip_space() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) != nullptr) ++pos_;
  }

  void skip_past(const char* terminator, const char* what) {
    const std::size_t end = s_.find(terminator, pos_);
    if (end == std::string::npos) error(std::string("unterminated ") + what);
    pos_ = end + std::strlen(terminator);
  }

  /// Whitespace, comments, processing instructions (<?xml ... ?>) and <!DOCTYPE ...>.
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts_with("<?")) {
        skip_past("?>", "processing instruction");
      } else if (starts_with("<!--")) {
        skip_past("-->", "comment");
      } else if (starts_with("<!DOCTYPE")) {
        skip_past(">", "DOCTYPE");
      } else {
        return;
      }
    }
  }

  std::string parse_name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
                      c == '-' || c == '.' || static_cast<unsigned char>(c) >= 0x80;
      if (!ok) break;
      ++pos_;
    }
    if (pos_ == start) error("expected a name");
    return s_.substr(start, pos_ - start);
  }

  std::string unescape(std::size_t begin, std::size_t end) const {
    std::string out;
    out.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      if (s_[i] != '&') {
        out += s_[i];
        continue;
      }
      const std::size_t semi = s_.find(';', i);
      if (semi == std::string::npos || semi >= end) error("unterminated entity reference");
      const std::string entity = s_.substr(i + 1, semi - i - 1);
      if (entity == "amp") {
        out += '&';
      } else if (entity == "lt") {
        out += '<';
      } else if (entity == "gt") {
        out += '>';
      } else if (entity == "quot") {
        out += '"';
      } else if (entity == "apos") {
        out += '\'';
      } else if (entity.size() > 1 && entity[0] == '#') {
        const bool hex = entity[1] == 'x' || entity[1] == 'X';
        const std::string digits = entity.substr(hex ? 2 : 1);
        if (digits.empty() ||
            digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
                std::string::npos ||
            digits.size() > 8) {
          error("bad character reference &" + entity + ";");
        }
        const unsigned long cp = std::stoul(digits, nullptr, hex ? 16 : 10);
        if (cp > 0x10ffff) error("bad character reference &" + entity + ";");
        append_utf8(out, cp);
      } else {
        error("unknown entity &" + entity + ";");
      }
      i = semi;
    }
    return out;
  }

  /// The line of `pos_`. Elements are parsed in document order, so counting on from the last
  /// element keeps the total cost linear in the document's size.
  std::size_t current_line() {
    line_ += static_cast<std::size_t>(
        std::count(s_.begin() + static_cast<std::ptrdiff_t>(line_pos_),
                   s_.begin() + static_cast<std::ptrdiff_t>(pos_), '\n'));
    line_pos_ = pos_;
    return line_;
  }

  XmlNode parse_element() {
    XmlNode node;
    node.line = current_line();
    ++pos_;  // '<'
    node.name = parse_name();
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) error("unterminated start tag <" + node.name + ">");
      if (starts_with("/>")) {
        pos_ += 2;
        return node;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      std::string key = parse_name();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '=') error("attribute " + key + " has no value");
      ++pos_;
      skip_space();
      std::size_t begin = pos_;
      std::size_t end = 0;
      if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
        const char quote = s_[pos_];
        begin = ++pos_;
        end = s_.find(quote, pos_);
        if (end == std::string::npos) error("unterminated value of attribute " + key);
        pos_ = end + 1;
      } else {
        // WORKAROUND for cubew's derived-metric output (<cubeplaggr cubeplaggrtype=plus>):
        // accept unquoted attribute values.
        while (pos_ < s_.size() && std::strchr(" \t\r\n/>", s_[pos_]) == nullptr) ++pos_;
        end = pos_;
        if (end == begin) error("attribute " + key + " has no value");
      }
      if (s_.find('<', begin) < end) error("'<' in the value of attribute " + key);
      node.attributes.emplace_back(std::move(key), unescape(begin, end));
    }
    // Content.
    for (;;) {
      if (pos_ >= s_.size()) error("element <" + node.name + "> is not closed");
      if (starts_with("</")) {
        pos_ += 2;
        const std::string closing = parse_name();
        if (closing != node.name) {
          error("</" + closing + "> closes <" + node.name + ">");
        }
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '>') error("malformed end tag </" + closing);
        ++pos_;
        return node;
      }
      if (starts_with("<!--")) {
        skip_past("-->", "comment");
      } else if (starts_with("<![CDATA[")) {
        const std::size_t begin = pos_ + 9;
        skip_past("]]>", "CDATA section");
        node.text.append(s_, begin, pos_ - 3 - begin);
      } else if (starts_with("<?")) {
        skip_past("?>", "processing instruction");
      } else if (s_[pos_] == '<') {
        node.children.push_back(parse_element());
      } else {
        const std::size_t begin = pos_;
        pos_ = std::min(s_.find('<', pos_), s_.size());
        node.text += unescape(begin, pos_);
      }
    }
  }

  const std::string& s_;
  Failure fail_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;      // line of line_pos_
  std::size_t line_pos_ = 0;  // where current_line() stopped counting
};

// ---------------------------------------------------------------------------------------------
// anchor.xml interpretation.

std::string child_text(const XmlNode& node, const char* tag) {
  const XmlNode* c = node.child(tag);
  return c != nullptr ? c->text : std::string();
}

long long to_integer(const std::string& text, const std::string& what, const Failure& fail) {
  std::size_t begin = text.find_first_not_of(" \t\r\n");
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) fail(what + " is empty");
  const std::string trimmed = text.substr(begin, end - begin + 1);
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(trimmed, &used);
  } catch (const std::exception&) {
    fail(what + " is not an integer: '" + text + "'");
  }
  if (used != trimmed.size()) fail(what + " is not an integer: '" + text + "'");
  return value;
}

std::string where(const XmlNode& node) {
  return "anchor.xml line " + std::to_string(node.line) + ": <" + node.name + ">";
}

bool same_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

/// The attribute `key`, exactly as spelled (attribute names are case-sensitive in XML, and
/// Cube's clients look them up that way: pycubexr's int(node.get('Id')) fails on "id").
const std::string& required_attribute(const XmlNode& node, const char* key, const Failure& fail) {
  if (const std::string* value = node.attribute(key)) return *value;
  std::string what = where(node) + " without " + key + " attribute";
  for (const auto& [k, v] : node.attributes) {
    (void)v;
    if (same_ignoring_case(k, key)) {
      what += " (it has '" + k + "'; CubeW writes '" + key + "' on <" + node.name +
              ">, and Cube clients read only that spelling)";
    }
  }
  fail(what);
}

long long integer_attribute(const XmlNode& node, const char* key, const Failure& fail) {
  return to_integer(required_attribute(node, key, fail), where(node) + " " + key, fail);
}

/// CubeW spells the id attribute "Id" on the three system-tree elements and "id" on every
/// other element that has one (metric, region, cnode); a reader must not accept either for both.
long long id_attribute(const XmlNode& node, const Failure& fail) {
  const bool system_tree = node.name == "systemtreenode" || node.name == "locationgroup" ||
                           node.name == "location";
  return integer_attribute(node, system_tree ? "Id" : "id", fail);
}

/// Places `item` at `id` in a vector of dense ids, rejecting duplicates.
template <class T>
void place(std::vector<T>& table, std::vector<bool>& seen, long long id, T item,
           const std::string& what, const Failure& fail) {
  if (id < 0 || id > 100000000) fail(what + " id " + std::to_string(id) + " out of range");
  const auto index = static_cast<std::size_t>(id);
  if (index >= table.size()) {
    table.resize(index + 1);
    seen.resize(index + 1, false);
  }
  if (seen[index]) fail("duplicate " + what + " id " + std::to_string(id));
  seen[index] = true;
  table[index] = std::move(item);
}

void require_dense(const std::vector<bool>& seen, const std::string& what, const Failure& fail) {
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) fail(what + " ids are not dense: id " + std::to_string(i) + " is missing");
  }
}

enum class MetricKind { Exclusive, Inclusive, Simple, Derived };

struct MetricEntry {
  std::size_t info = 0;  // index into CubeFile::metrics
  MetricKind kind = MetricKind::Exclusive;
};

struct CnodeEntry {
  long long region = 0;
  std::vector<std::size_t> children;  // cnode ids, document order
  std::string path;
};

struct Anchor {
  bool mangled_keys = false;                 // key values by CallpathKey::MangledName
  std::map<long long, MetricEntry> metrics;  // by metric id
  std::vector<CnodeEntry> cnodes;            // by cnode id
  std::vector<std::size_t> roots;            // root cnode ids, document order
  std::size_t locations = 0;
};

void read_metric(const XmlNode& node, const std::string& parent, CubeFile& cube, Anchor& anchor,
                 const Failure& fail) {
  const long long id = id_attribute(node, fail);
  CubeMetricInfo info;
  info.uniq_name = child_text(node, "uniq_name");
  info.disp_name = child_text(node, "disp_name");
  info.dtype = child_text(node, "dtype");
  info.uom = child_text(node, "uom");
  info.url = child_text(node, "url");
  info.descr = child_text(node, "descr");
  info.parent = parent;
  if (info.uniq_name.empty()) fail("metric id " + std::to_string(id) + " has no uniq_name");

  MetricEntry entry;
  const std::string* type = node.attribute("type");
  const std::string kind = type != nullptr ? *type : "EXCLUSIVE";
  if (kind == "EXCLUSIVE") {
    entry.kind = MetricKind::Exclusive;
  } else if (kind == "INCLUSIVE") {
    entry.kind = MetricKind::Inclusive;
    info.inclusive = true;
  } else if (kind == "SIMPLE") {
    entry.kind = MetricKind::Simple;
  } else if (kind == "PREDERIVED_EXCLUSIVE" || kind == "PREDERIVED_INCLUSIVE" ||
             kind == "POSTDERIVED") {
    entry.kind = MetricKind::Derived;
  } else {
    fail("metric " + info.uniq_name + " has unknown type '" + kind + "'");
  }
  if (cube.metric(info.uniq_name) != nullptr) fail("duplicate metric " + info.uniq_name);
  if (anchor.metrics.count(id) != 0) fail("duplicate metric id " + std::to_string(id));
  entry.info = cube.metrics.size();
  anchor.metrics[id] = entry;
  cube.metrics.push_back(info);
  for (const XmlNode& child : node.children) {
    if (child.name == "metric") read_metric(child, info.uniq_name, cube, anchor, fail);
  }
}

void read_cnode(const XmlNode& node, long long parent, std::vector<CnodeEntry>& cnodes,
                std::vector<bool>& seen, std::vector<std::size_t>& roots, const Failure& fail) {
  const long long id = id_attribute(node, fail);
  CnodeEntry entry;
  entry.region = integer_attribute(node, "calleeId", fail);
  place(cnodes, seen, id, std::move(entry), "cnode", fail);
  if (parent < 0) {
    roots.push_back(static_cast<std::size_t>(id));
  } else {
    cnodes[static_cast<std::size_t>(parent)].children.push_back(static_cast<std::size_t>(id));
  }
  for (const XmlNode& child : node.children) {
    if (child.name == "cnode") read_cnode(child, id, cnodes, seen, roots, fail);
  }
}

void read_program(const XmlNode& program, CubeFile& cube, Anchor& anchor, const Failure& fail) {
  struct RegionEntry {
    std::string name, mangled_name, role, paradigm;
  };
  std::vector<RegionEntry> regions;
  std::vector<bool> region_seen;
  std::vector<bool> cnode_seen;
  for (const XmlNode& child : program.children) {
    if (child.name == "region") {
      // pycubexr converts begin and end with int() and reads mod: all three are required.
      required_attribute(child, "mod", fail);
      integer_attribute(child, "begin", fail);
      integer_attribute(child, "end", fail);
      // Cube's Region falls back to the name where mangled_name is absent or empty (CubeW
      // writes both; Score-P's name is the demangled one when it could demangle).
      std::string mangled = child_text(child, "mangled_name");
      std::string name = child_text(child, "name");
      if (mangled.empty()) mangled = name;
      RegionEntry r{std::move(name), std::move(mangled), child_text(child, "role"),
                    child_text(child, "paradigm")};
      place(regions, region_seen, id_attribute(child, fail), std::move(r), "region", fail);
    } else if (child.name == "cnode") {
      read_cnode(child, -1, anchor.cnodes, cnode_seen, anchor.roots, fail);
    }
  }
  require_dense(region_seen, "region", fail);
  require_dense(cnode_seen, "cnode", fail);
  for (RegionEntry& r : regions) {
    cube.region_names.push_back(std::move(r.name));
    cube.region_mangled_names.push_back(std::move(r.mangled_name));
    cube.region_roles.push_back(std::move(r.role));
    cube.region_paradigms.push_back(std::move(r.paradigm));
  }
  // Call paths, root first; an explicit stack keeps deep call trees off the C++ stack.
  std::vector<std::size_t> stack(anchor.roots.rbegin(), anchor.roots.rend());
  std::vector<std::string> parent_path(anchor.cnodes.size());
  std::vector<std::string> parent_mangled(anchor.cnodes.size());
  std::vector<std::string> path(anchor.cnodes.size()), mangled(anchor.cnodes.size());
  while (!stack.empty()) {
    const std::size_t id = stack.back();
    stack.pop_back();
    CnodeEntry& c = anchor.cnodes[id];
    if (c.region < 0 || static_cast<std::size_t>(c.region) >= cube.region_names.size()) {
      fail("cnode " + std::to_string(id) + " calls unknown region " + std::to_string(c.region));
    }
    const std::string& name = cube.region_names[static_cast<std::size_t>(c.region)];
    const std::string& mname = cube.region_mangled_names[static_cast<std::size_t>(c.region)];
    path[id] = parent_path[id].empty() ? name : parent_path[id] + "/" + name;
    mangled[id] = parent_mangled[id].empty() ? mname : parent_mangled[id] + "/" + mname;
    for (auto it = c.children.rbegin(); it != c.children.rend(); ++it) {
      parent_path[*it] = path[id];
      parent_mangled[*it] = mangled[id];
      stack.push_back(*it);
    }
  }
  for (std::size_t id = 0; id < anchor.cnodes.size(); ++id) {
    anchor.cnodes[id].path = anchor.mangled_keys ? mangled[id] : path[id];
    cube.callpaths.push_back(path[id]);
    cube.mangled_callpaths.push_back(mangled[id]);
  }
}

struct LocationEntry {
  std::string name, group, system;
};

/// The system tree's three id spaces; each must be dense and free of duplicates.
struct SystemTree {
  std::vector<std::string> node_names, group_names;
  std::vector<bool> node_seen, group_seen, location_seen;
  std::vector<LocationEntry> locations;
};

void read_system_node(const XmlNode& node, const std::string& parent_path, SystemTree& tree,
                      const Failure& fail) {
  const std::string name = child_text(node, "name");
  place(tree.node_names, tree.node_seen, id_attribute(node, fail), name, "system tree node", fail);
  const std::string path = parent_path.empty() ? name : parent_path + "/" + name;
  for (const XmlNode& child : node.children) {
    if (child.name == "systemtreenode") {
      read_system_node(child, path, tree, fail);
    } else if (child.name == "locationgroup") {
      const std::string group = child_text(child, "name");
      place(tree.group_names, tree.group_seen, id_attribute(child, fail), group,
            "location group", fail);
      for (const XmlNode& loc : child.children) {
        if (loc.name != "location") continue;
        place(tree.locations, tree.location_seen, id_attribute(loc, fail),
              LocationEntry{child_text(loc, "name"), group, path}, "location", fail);
      }
    }
  }
}

void read_anchor(const XmlNode& root, CubeFile& cube, Anchor& anchor, const Failure& fail) {
  if (root.name != "cube") fail("anchor.xml root element is <" + root.name + ">, expected <cube>");
  bool have_program = false;
  bool have_system = false;
  SystemTree system;
  for (const XmlNode& child : root.children) {
    if (child.name == "attr") {
      cube.attributes[required_attribute(child, "key", fail)] =
          required_attribute(child, "value", fail);
    } else if (child.name == "metrics") {
      for (const XmlNode& m : child.children) {
        if (m.name == "metric") read_metric(m, "", cube, anchor, fail);
      }
    } else if (child.name == "program") {
      have_program = true;
      read_program(child, cube, anchor, fail);
    } else if (child.name == "system") {
      have_system = true;
      for (const XmlNode& node : child.children) {
        if (node.name == "systemtreenode") read_system_node(node, "", system, fail);
      }
    }
  }
  if (!have_program) fail("anchor.xml has no <program>");
  if (!have_system) fail("anchor.xml has no <system>");
  require_dense(system.node_seen, "system tree node", fail);
  require_dense(system.group_seen, "location group", fail);
  require_dense(system.location_seen, "location", fail);
  for (LocationEntry& l : system.locations) {
    cube.location_names.push_back(std::move(l.name));
    cube.process_names.push_back(std::move(l.group));
    cube.system_path.push_back(std::move(l.system));
  }
  anchor.locations = system.locations.size();
}

// ---------------------------------------------------------------------------------------------
// Vocabulary: the element and attribute names of a CubeW 4.6 report.

struct ElementRule {
  const char* element;
  std::vector<std::string> attributes;  // all it may carry, spelled as CubeW spells them
  std::vector<std::string> required;    // those CubeW writes on every such element
};

/// What Scalasca 2.6's scout.cubex (written by CubeW 4.6) uses, element by element. The
/// system tree's "Id" is capitalised, everything else's "id" is not.
const std::vector<ElementRule>& cubew_vocabulary() {
  static const std::vector<ElementRule> rules = {
      {"cube", {"version"}, {"version"}},
      {"attr", {"key", "value"}, {"key", "value"}},
      {"metric", {"id", "type"}, {"id"}},
      {"region", {"id", "mod", "begin", "end"}, {"id", "mod", "begin", "end"}},
      {"cnode", {"id", "calleeId"}, {"id", "calleeId"}},
      {"systemtreenode", {"Id"}, {"Id"}},
      {"locationgroup", {"Id"}, {"Id"}},
      {"location", {"Id"}, {"Id"}},
      {"doc", {}, {}},
      {"mirrors", {}, {}},
      {"murl", {}, {}},
      {"metrics", {}, {}},
      {"disp_name", {}, {}},
      {"uniq_name", {}, {}},
      {"dtype", {}, {}},
      {"uom", {}, {}},
      {"url", {}, {}},
      {"descr", {}, {}},
      {"program", {}, {}},
      {"name", {}, {}},
      {"mangled_name", {}, {}},
      {"paradigm", {}, {}},
      {"role", {}, {}},
      {"class", {}, {}},
      {"system", {}, {}},
      {"rank", {}, {}},
      {"type", {}, {}},
      {"topologies", {}, {}},
      // Cartesian topologies, as scout writes "Process x Thread" (and Score-P's MPI ones).
      {"cart", {"name", "ndims"}, {"ndims"}},
      {"dim", {"name", "size", "periodic"}, {"size", "periodic"}},
      {"coord", {"locId"}, {"locId"}},
  };
  return rules;
}

/// The <attr> entries CubeW 4.6 writes ahead of the caller's (CUBE_CT_AGGR among those).
const std::pair<const char*, const char*> kCubewVersionAttributes[] = {
    {"CubePL Version", "1.1"}, {"Cube Version", "4.6"}};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::vector<std::string> vocabulary_violations(const XmlNode& root) {
  std::vector<std::string> out;
  std::map<std::string, const ElementRule*> rules;
  for (const ElementRule& rule : cubew_vocabulary()) rules[rule.element] = &rule;

  if (root.name != "cube") out.push_back(where(root) + " is the root element, expected <cube>");
  std::vector<const XmlNode*> stack{&root};
  while (!stack.empty()) {
    const XmlNode& node = *stack.back();
    stack.pop_back();
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) stack.push_back(&*it);
    const auto rule = rules.find(node.name);
    if (rule == rules.end()) {
      out.push_back(where(node) + " is not an element of a CubeW 4.6 report");
      continue;
    }
    const std::vector<std::string>& allowed = rule->second->attributes;
    for (const auto& [key, value] : node.attributes) {
      (void)value;
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      out.push_back(where(node) + " has attribute '" + key +
                    "', which CubeW 4.6 does not write there (it writes: " + join(allowed) + ")");
    }
    for (const std::string& key : rule->second->required) {
      if (node.attribute(key) == nullptr) {
        out.push_back(where(node) + " lacks attribute '" + key +
                      "', which CubeW 4.6 writes on every <" + node.name + ">");
      }
    }
  }

  // The version entries come first among the report's <attr>, before CUBE_CT_AGGR.
  std::vector<const XmlNode*> attrs;
  for (const XmlNode& child : root.children) {
    if (child.name == "attr") attrs.push_back(&child);
  }
  std::size_t aggr = attrs.size();
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const std::string* key = attrs[i]->attribute("key");
    if (key != nullptr && *key == "CUBE_CT_AGGR") aggr = std::min(aggr, i);
  }
  for (const auto& [key, value] : kCubewVersionAttributes) {
    const std::string entry = std::string("<attr key=\"") + key + "\" value=\"" + value + "\"/>";
    std::size_t found = attrs.size();
    for (std::size_t i = 0; i < attrs.size() && found == attrs.size(); ++i) {
      const std::string* k = attrs[i]->attribute("key");
      if (k != nullptr && *k == key) found = i;
    }
    if (found == attrs.size()) {
      out.push_back("anchor.xml: no " + entry + " (CubeW 4.6 writes it on every report)");
      continue;
    }
    const std::string* v = attrs[found]->attribute("value");
    if (v == nullptr || *v != value) {
      out.push_back(where(*attrs[found]) + " " + key + " is '" + (v != nullptr ? *v : "") +
                    "', expected " + entry);
    }
    if (found > aggr) {
      out.push_back(where(*attrs[found]) + " " + key + " comes after CUBE_CT_AGGR (line " +
                    std::to_string(attrs[aggr]->line) + "); CubeW writes it before");
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Metric data: call-tree enumeration, index and data files.

/// Exclusive metrics: depth-first preorder over the document tree.
void preorder(const std::vector<CnodeEntry>& cnodes, std::size_t id,
              std::vector<std::size_t>& out) {
  out.push_back(id);
  for (const std::size_t child : cnodes[id].children) preorder(cnodes, child, out);
}

/// Inclusive metrics: a taken node lists all its children, then descends into each in turn.
void list_children_then_descend(const std::vector<CnodeEntry>& cnodes, std::size_t id,
                                std::vector<std::size_t>& out) {
  const auto& children = cnodes[id].children;
  out.insert(out.end(), children.begin(), children.end());
  for (const std::size_t child : children) list_children_then_descend(cnodes, child, out);
}

std::vector<std::size_t> enumerate(const Anchor& anchor, MetricKind kind) {
  std::vector<std::size_t> out;
  if (kind == MetricKind::Simple) {
    for (std::size_t id = 0; id < anchor.cnodes.size(); ++id) out.push_back(id);
    return out;
  }
  for (const std::size_t root : anchor.roots) {
    if (kind == MetricKind::Inclusive) {
      out.push_back(root);
      list_children_then_descend(anchor.cnodes, root, out);
    } else {
      preorder(anchor.cnodes, root, out);
    }
  }
  return out;
}

class ByteReader {
 public:
  ByteReader(const std::string& bytes, bool swap) : bytes_(bytes), swap_(swap) {}

  template <class T>
  T at(std::size_t offset) const {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, bytes_.data() + offset, sizeof(T));
    if (swap_) std::reverse(std::begin(raw), std::end(raw));
    T value;
    std::memcpy(&value, raw, sizeof(T));
    return value;
  }

 private:
  const std::string& bytes_;
  bool swap_;
};

struct Index {
  std::vector<std::size_t> positions;
  bool swap = false;
};

Index read_index(const std::string& bytes, std::size_t cnodes, const std::string& member,
                 const Failure& fail) {
  constexpr std::size_t kHeader = 11 + 4 + 2 + 1;
  if (bytes.size() < kHeader || bytes.compare(0, 11, "CUBEX.INDEX") != 0) {
    fail(member + ": missing CUBEX.INDEX marker");
  }
  Index index;
  std::int32_t marker = 0;
  std::memcpy(&marker, bytes.data() + 11, 4);
  if (marker == 1) {
    index.swap = false;
  } else if (marker == 0x01000000) {
    index.swap = true;
  } else {
    fail(member + ": bad endianness marker " + std::to_string(marker));
  }
  const ByteReader in(bytes, index.swap);
  const auto format = static_cast<unsigned>(static_cast<unsigned char>(bytes[17]));
  if (format == 3) {  // dense: every call-tree position has a row
    if (bytes.size() != kHeader) fail(member + ": dense index with trailing bytes");
    for (std::size_t p = 0; p < cnodes; ++p) index.positions.push_back(p);
    return index;
  }
  if (format != 1) fail(member + ": unsupported index format " + std::to_string(format));
  if (bytes.size() < kHeader + 4) fail(member + ": truncated before the entry count");
  const std::int32_t n = in.at<std::int32_t>(kHeader);
  if (n < 0) fail(member + ": negative entry count");
  if (bytes.size() != kHeader + 4 + 4 * static_cast<std::size_t>(n)) {
    fail(member + ": " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
         " entries");
  }
  for (std::int32_t i = 0; i < n; ++i) {
    const std::int32_t p = in.at<std::int32_t>(kHeader + 4 + 4 * static_cast<std::size_t>(i));
    if (p < 0 || static_cast<std::size_t>(p) >= cnodes) {
      fail(member + ": position " + std::to_string(p) + " outside the call tree of " +
           std::to_string(cnodes) + " cnodes");
    }
    if (!index.positions.empty() && static_cast<std::size_t>(p) <= index.positions.back()) {
      fail(member + ": positions not strictly ascending at entry " + std::to_string(i));
    }
    index.positions.push_back(static_cast<std::size_t>(p));
  }
  return index;
}

/// The row bytes of a data file: after CUBEX.DATA as stored, after ZCUBEX.DATA inflated.
std::string data_payload(const std::string& bytes, std::size_t expected, bool swap,
                         const std::string& member, const Failure& fail) {
  if (bytes.compare(0, 10, "CUBEX.DATA") == 0) {
    if (bytes.size() - 10 != expected) {
      fail(member + ": " + std::to_string(bytes.size() - 10) + " data bytes, index needs " +
           std::to_string(expected));
    }
    return bytes.substr(10);
  }
  if (bytes.compare(0, 11, "ZCUBEX.DATA") != 0) fail(member + ": missing CUBEX.DATA marker");
  // Layout (cubew): marker, int64 count, count x (uncompressed offset, compressed offset,
  // compressed size), then the zlib streams; compressed offsets count from the first stream.
  const ByteReader in(bytes, swap);
  if (bytes.size() < 19) fail(member + ": truncated compressed header");
  const auto count = in.at<std::int64_t>(11);
  if (count < 0 || static_cast<std::uint64_t>(count) > (bytes.size() - 19) / 24) {
    fail(member + ": bad compressed entry count " + std::to_string(count));
  }
  const std::size_t streams = 19 + 24 * static_cast<std::size_t>(count);
  std::string out(expected, '\0');
  for (std::int64_t i = 0; i < count; ++i) {
    const std::size_t entry = 19 + 24 * static_cast<std::size_t>(i);
    const auto uoffset = in.at<std::int64_t>(entry);
    const auto coffset = in.at<std::int64_t>(entry + 8);
    const auto csize = in.at<std::int64_t>(entry + 16);
    if (csize == 0) continue;  // a row that was never written
    if (uoffset < 0 || coffset < 0 || csize < 0 ||
        static_cast<std::uint64_t>(coffset) + static_cast<std::uint64_t>(csize) >
            bytes.size() - streams ||
        static_cast<std::uint64_t>(uoffset) > expected) {
      fail(member + ": compressed entry " + std::to_string(i) + " out of bounds");
    }
    uLongf length = static_cast<uLongf>(expected - static_cast<std::size_t>(uoffset));
    const int rc =
        uncompress(reinterpret_cast<Bytef*>(&out[static_cast<std::size_t>(uoffset)]), &length,
                   reinterpret_cast<const Bytef*>(bytes.data() + streams + coffset),
                   static_cast<uLong>(csize));
    if (rc != Z_OK) {
      fail(member + ": compressed entry " + std::to_string(i) + " does not inflate (zlib " +
           std::to_string(rc) + ")");
    }
  }
  return out;
}

enum class ValueType { Double, Int64, Uint64 };

ValueType value_type(const std::string& dtype, const std::string& metric, const Failure& fail) {
  if (dtype == "FLOAT" || dtype == "DOUBLE" || dtype == "MINDOUBLE" || dtype == "MAXDOUBLE") {
    return ValueType::Double;
  }
  if (dtype == "INTEGER" || dtype == "INT64") return ValueType::Int64;
  if (dtype == "UINT64") return ValueType::Uint64;
  fail("metric " + metric + " has unsupported dtype '" + dtype + "'");
}

void read_metric_data(const std::string& index_bytes, const std::string& data_bytes,
                      const CubeMetricInfo& info, MetricKind kind, const Anchor& anchor,
                      CubeFile& cube, const std::string& member, const Failure& fail) {
  if (kind == MetricKind::Derived)
    fail(member + ": data files for derived metric " + info.uniq_name);
  const ValueType type = value_type(info.dtype, info.uniq_name, fail);
  const Index index = read_index(index_bytes, anchor.cnodes.size(), member + ".index", fail);
  const std::size_t row_bytes = 8 * anchor.locations;
  const std::string payload = data_payload(data_bytes, index.positions.size() * row_bytes,
                                           index.swap, member + ".data", fail);
  const std::vector<std::size_t> order = enumerate(anchor, kind);
  const ByteReader in(payload, index.swap);
  auto& rows = cube.values[info.uniq_name];
  for (std::size_t r = 0; r < index.positions.size(); ++r) {
    const std::string& path = anchor.cnodes[order[index.positions[r]]].path;
    std::vector<double> row(anchor.locations);
    for (std::size_t l = 0; l < anchor.locations; ++l) {
      const std::size_t offset = r * row_bytes + 8 * l;
      switch (type) {
        case ValueType::Double:
          row[l] = in.at<double>(offset);
          break;
        case ValueType::Int64:
          row[l] = static_cast<double>(in.at<std::int64_t>(offset));
          break;
        case ValueType::Uint64:
          row[l] = static_cast<double>(in.at<std::uint64_t>(offset));
          break;
      }
    }
    if (!rows.emplace(path, std::move(row)).second) {
      fail(member + ": two rows for call path " + path + " (ambiguous call path)");
    }
  }
}

}  // namespace

double CubeFile::value(const std::string& metric_name, const std::string& callpath,
                       int location) const {
  if (location < 0 || static_cast<std::size_t>(location) >= location_names.size()) {
    throw std::out_of_range("location " + std::to_string(location) + " outside 0.." +
                            std::to_string(location_names.size()) + "-1");
  }
  const auto m = values.find(metric_name);
  if (m == values.end()) return 0.0;
  const auto row = m->second.find(callpath);
  if (row == m->second.end()) return 0.0;
  return row->second[static_cast<std::size_t>(location)];
}

const CubeMetricInfo* CubeFile::metric(const std::string& uniq) const {
  for (const CubeMetricInfo& m : metrics) {
    if (m.uniq_name == uniq) return &m;
  }
  return nullptr;
}

namespace {

/// The archive's regular members in archive order (a gzip-compressed archive is inflated).
std::vector<TarMember> load_archive(const std::string& path, const Failure& fail) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail("cannot open: " + std::string(std::strerror(errno)));
  std::string archive((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) fail("read error");
  if (archive.size() >= 2 && static_cast<unsigned char>(archive[0]) == 0x1f &&
      static_cast<unsigned char>(archive[1]) == 0x8b) {
    archive = gunzip(archive, fail);
  }
  return read_tar(archive, fail);
}

const std::string& anchor_member(const std::vector<TarMember>& members, const Failure& fail) {
  for (const TarMember& m : members) {
    if (m.name == "anchor.xml") return m.data;
  }
  fail("no anchor.xml in the archive");
}

}  // namespace

std::vector<std::string> cube_vocabulary_violations(const std::string& path) {
  const Failure fail(path);
  const std::vector<TarMember> members = load_archive(path, fail);
  const XmlNode root = XmlParser(anchor_member(members, fail), fail).parse_document();
  std::vector<std::string> violations = vocabulary_violations(root);
  for (std::string& v : violations) v = path + ": " + v;
  return violations;
}

CubeFile read_cube(const std::string& path, CallpathKey key) {
  const Failure fail(path);
  const std::vector<TarMember> members = load_archive(path, fail);
  CubeFile cube;
  std::map<std::string, const std::string*> by_name;
  for (const TarMember& m : members) {
    cube.member_names.push_back(m.name);
    if (!by_name.emplace(m.name, &m.data).second) fail("duplicate tar member " + m.name);
  }
  const XmlNode root = XmlParser(anchor_member(members, fail), fail).parse_document();
  Anchor anchor;
  anchor.mangled_keys = key == CallpathKey::MangledName;
  read_anchor(root, cube, anchor, fail);
  // Every report a test reads is also held to the vocabulary of Scalasca's reports: a name
  // outside it, or another case of one, is refused rather than read leniently.
  const std::vector<std::string> violations = vocabulary_violations(root);
  if (!violations.empty()) {
    fail(violations.front() +
         (violations.size() > 1 ? " (and " + std::to_string(violations.size() - 1) + " more)"
                                : std::string()));
  }

  // Every index/data member must belong to a declared metric, and come in pairs.
  for (const auto& [name, data] : by_name) {
    (void)data;
    const std::size_t dot = name.rfind('.');
    if (dot == std::string::npos) continue;
    const std::string ext = name.substr(dot + 1);
    if (ext != "index" && ext != "data") continue;
    const std::string stem = name.substr(0, dot);
    if (stem.empty() || stem.find_first_not_of("0123456789") != std::string::npos) continue;
    const long long id = std::stoll(stem);
    if (anchor.metrics.count(id) == 0) fail("member " + name + " belongs to no declared metric");
    const std::string partner = stem + (ext == "index" ? ".data" : ".index");
    if (by_name.count(partner) == 0) fail("member " + name + " has no " + partner);
  }
  for (const auto& [id, entry] : anchor.metrics) {
    const std::string stem = std::to_string(id);
    const auto index = by_name.find(stem + ".index");
    if (index == by_name.end()) continue;  // no data: all zero
    read_metric_data(*index->second, *by_name.at(stem + ".data"), cube.metrics[entry.info],
                     entry.kind, anchor, cube, stem, fail);
  }
  return cube;
}

}  // namespace cpreplay::testing
