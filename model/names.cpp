// SPDX-License-Identifier: BSD-3-Clause
// Demangled region names and call paths shortened for display.
#include "cpreplay/names.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <unordered_map>
#include <utility>

namespace cpreplay {
namespace {

constexpr const char kGlobalInit[] = "_GLOBAL__sub_I_";  // GCC's per-file static initializer
constexpr const char kEllipsis[] = "...";

/// The C++ runtime's demangler; empty when `symbol` is no mangled name it accepts.
std::string cxa_demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string();
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// Matching closer of the bracket at s[open] ('<', '(', '[', '{'), or npos.
std::size_t closing(const std::string& s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

/// `s` with the contents of every outermost bracket group of the kinds in `kinds` replaced by
/// "..." (groups whose contents are already that short stay).
std::string collapse(const std::string& s, const char* kinds) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool wanted = std::string(kinds).find(c) != std::string::npos;
    const std::size_t end = wanted ? closing(s, i) : std::string::npos;
    if (end == std::string::npos || end - i - 1 <= 3) {
      out += c;
      continue;
    }
    out += c;
    out += kEllipsis;
    out += s[end];
    i = end;
  }
  return out;
}

/// A demangled function name in parts: scope (up to and including the last "::" before its
/// own name), own name (with its template arguments), parameter list, and the rest
/// (" const", ...). Names that are no function have empty params.
struct CxxParts {
  std::string scope, own, params, rest;
};

CxxParts split_cxx(const std::string& s) {
  CxxParts p;
  std::size_t paren = std::string::npos;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' && depth == 0 && i > 0) {
      paren = i;
      break;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
  }
  std::string head = s;
  if (paren != std::string::npos) {
    const std::size_t end = closing(s, paren);
    if (end != std::string::npos) {
      head = s.substr(0, paren);
      p.params = s.substr(paren, end - paren + 1);
      p.rest = s.substr(end + 1);
    }
  }
  // The last "::" outside brackets separates the scope from the own name.
  std::size_t own = 0;
  depth = 0;
  for (std::size_t i = 0; i + 1 < head.size(); ++i) {
    const char c = head[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && c == ':' && head[i + 1] == ':') own = i + 2;
  }
  p.scope = head.substr(0, own);
  p.own = head.substr(own);
  return p;
}

std::string join(const std::vector<std::string>& parts, std::size_t from = 0) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) out += (i > from ? "/" : "") + parts[i];
  return out;
}

}  // namespace

std::string demangle(const std::string& name) {
  if (starts_with(name, "_Z")) {
    std::string d = cxa_demangle(name);
    return d.empty() ? name : d;
  }
  if (starts_with(name, kGlobalInit) && name.compare(sizeof kGlobalInit - 1, 2, "_Z") == 0) {
    const std::string d = cxa_demangle(name.substr(sizeof kGlobalInit - 1));
    return d.empty() ? name : kGlobalInit + d;
  }
  return name;
}

bool looks_mangled(const std::string& name) {
  for (std::size_t i = name.find("_Z"); i != std::string::npos; i = name.find("_Z", i + 1)) {
    if (i + 2 >= name.size()) return false;
    const char c = name[i + 2];
    if ((c >= '0' && c <= '9') || c == 'N' || c == 'L' || c == 'S' || c == 'Z') return true;
  }
  return false;
}

std::string shorten_name(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  if (starts_with(name, "!$omp")) {
    // OpenMP constructs: "!$omp implicit barrier @lulesh.cc:1164"; the location tells them
    // apart and stays whole.
    // First without the "!$omp " every construct has, then with its words cut short.
    const std::size_t at = name.rfind(" @");
    if (at == std::string::npos || at < 6) return name;
    const std::string where = name.substr(at);
    const std::string words = name.substr(6, at - 6);  // "parallel", "implicit barrier"
    if (words.size() + where.size() <= width) return words + where;
    if (width >= where.size() + 4)
      return words.substr(0, width - where.size() - 3) + kEllipsis + where;
    return words.substr(0, 1) + kEllipsis + where;
  }
  const CxxParts p = split_cxx(name);
  const std::string scope = collapse(p.scope, "<");
  const std::string own = collapse(p.own, "<");
  const std::string params = collapse(p.params, "(");
  const std::string candidates[] = {
      scope + p.own + p.params + p.rest,
      scope + own + p.params + p.rest,
      scope + own + params + p.rest,
  };
  for (const std::string& c : candidates)
    if (c.size() <= width) return c;
  // Then the outer scopes: "...::_Rb_tree_impl<...>::_Rb_tree_impl()".
  const std::string tail = own + params + p.rest;
  std::vector<std::size_t> cuts;  // after each "::" outside brackets
  int depth = 0;
  for (std::size_t i = 0; i + 1 < scope.size(); ++i) {
    const char c = scope[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && c == ':' && scope[i + 1] == ':') cuts.push_back(i + 2);
  }
  for (const std::size_t cut : cuts) {
    const std::string c = std::string(kEllipsis) + "::" + scope.substr(cut) + tail;
    if (c.size() <= width || cut == scope.size()) return c;
  }
  return tail;
}

std::vector<std::string> shorten_names(const std::vector<std::string>& names,
                                       std::size_t width) {
  std::vector<std::string> out(names.size());
  std::map<std::string, std::vector<std::size_t>> readers;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out[i] = shorten_name(names[i], width);
    readers[out[i]].push_back(i);
  }
  for (const auto& [shown, ids] : readers)
    for (const std::size_t i : ids)
      if (names[i] != names[ids[0]]) {
        for (const std::size_t k : ids) out[k] = names[k];
        break;
      }
  return out;
}

std::vector<std::string> split_callpath(const std::string& path) {
  // Components are cut out whole (call paths of C++ templates run to thousands of characters).
  std::vector<std::string> parts;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c != '/' || depth != 0) continue;
    // "operator/" is a name, not a separator.
    if (i - start >= 8 && path.compare(i - 8, 8, "operator") == 0) continue;
    parts.push_back(path.substr(start, i - start));
    start = i + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

std::string callee_of(const std::string& path) { return split_callpath(path).back(); }

namespace {

/// shorten_callpath on a path already split, without its program root; `name` shortens one
/// component as shorten_name does (shorten_callpaths remembers what it returned).
template <class Name>
std::string shorten_split(const std::vector<std::string>& c, std::size_t width, std::size_t tail,
                          Name&& name) {
  const std::size_t n = c.size();
  // The joined path's length, without joining it (paths of HPCCG's call tree are kilobytes
  // long: joined for this test alone, they took a third of the summary's time).
  std::size_t whole = n > 0 ? n - 1 : 0;
  for (const std::string& part : c) whole += part.size();
  if (whole <= width || tail >= n) {
    if (tail < n || whole <= width) return join(c);
    // Every component is wanted: each name shortened, none left out.
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
      out += (i ? "/" : "") + name(c[i], i + 1 == n ? width : width / 2);
    return out;
  }
  tail = std::max<std::size_t>(tail, 1);
  // The forced tail: the callee shortened to what is left of `width`, the others to half.
  const std::string head = c[0] + "/" + kEllipsis + "/";
  const std::string dots = std::string(kEllipsis) + "/";
  std::string kept;
  for (std::size_t i = n - tail; i + 1 < n; ++i) kept += name(c[i], width / 2) + "/";
  // The callee is never cut shorter than it would be behind ".../" alone; the first component
  // stays only where it costs the callee nothing.
  auto room = [&](std::size_t before) {
    const std::size_t alone = width > dots.size() ? width - dots.size() : 0;
    return std::max(width > before ? width - before : 0, alone);
  };
  const std::string callee_alone = name(c[n - 1], room(kept.size() + dots.size()));
  const std::string callee_with_head = name(c[n - 1], room(kept.size() + head.size()));
  const bool keep_head = callee_with_head == callee_alone &&
                         head.size() + kept.size() + callee_alone.size() <= width;
  const std::string prefix = keep_head ? head : dots;
  const std::string callee = callee_alone;
  std::string text = kept + callee;
  // More components from the end while they fit; when all between the first and the kept
  // ones fit, no "..." is left.
  std::size_t first_kept = n - tail;
  while (first_kept > 1) {
    const std::string more = c[first_kept - 1] + "/" + text;
    const std::string with_head = (first_kept - 1 == 1 ? c[0] + "/" : prefix) + more;
    if (with_head.size() > width) break;
    text = more;
    --first_kept;
  }
  if (first_kept == 1 && prefix == head) return c[0] + "/" + text;
  return prefix + text;
}

/// shorten_name's results by width and name, for one shorten_callpaths call.
class NameCache {
 public:
  const std::string& operator()(const std::string& name, std::size_t width) {
    auto& texts = by_width_[width];
    auto it = texts.find(name);
    if (it == texts.end()) it = texts.emplace(name, shorten_name(name, width)).first;
    return it->second;
  }

 private:
  std::unordered_map<std::size_t, std::unordered_map<std::string, std::string>> by_width_;
};

}  // namespace

std::string shorten_callpath(const std::string& path, std::size_t width, std::size_t tail) {
  std::vector<std::string> c = split_callpath(path);
  if (c.size() > 1) c.erase(c.begin());  // the program root
  return shorten_split(c, width, tail,
                       [](const std::string& n, std::size_t w) { return shorten_name(n, w); });
}

CallpathSet::CallpathSet(std::vector<std::string> paths)
    : paths_(std::move(paths)), comps_(paths_.size()) {
  // Each path's components without the program root.
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    comps_[i] = split_callpath(paths_[i]);
    if (comps_[i].size() > 1) comps_[i].erase(comps_[i].begin());
  }
}

std::vector<std::string> shorten_callpaths(const std::vector<std::string>& paths,
                                           std::size_t width) {
  return CallpathSet(paths).shorten(width);
}

std::vector<std::string> CallpathSet::shorten(std::size_t width) const {
  const std::vector<std::string>& paths = paths_;
  const std::vector<std::vector<std::string>>& comps = comps_;
  // The ancestors each path shows besides the callee (as distances from the callee: 1 = its
  // caller); none at first.
  const std::size_t count = paths.size();
  std::vector<std::set<std::size_t>> ancestors(count);
  // 1: every component with its whole name; 2: the path as given, program root included.
  std::vector<int> whole(count, 0);
  NameCache name;
  auto text = [&](std::size_t i) {
    if (whole[i] == 1) return join(comps[i]);
    if (whole[i] == 2) return paths[i];
    if (ancestors[i].empty()) return shorten_split(comps[i], width, 1, name);
    // The callee as shorten_callpath cuts it, the ancestors that tell it apart with their names
    // cut to `width`, "..." for each gap between them.
    const std::vector<std::string>& c = comps[i];
    const std::size_t n = c.size();
    std::vector<std::size_t> shown;
    for (const std::size_t k : ancestors[i])
      if (k < n) shown.push_back(n - 1 - k);
    std::sort(shown.begin(), shown.end());
    shown.push_back(n - 1);
    std::string out;
    std::size_t next = 0;  // the first component not yet written or elided
    for (const std::size_t at : shown) {
      if (at > next) out += at == 1 && c[0].size() <= 8 ? c[0] + "/" : std::string(kEllipsis) + "/";
      out += at + 1 == n ? name(c[at], width > 4 ? width - 4 : width)
                         : name(c[at], width) + "/";
      next = at + 1;
    }
    return out;
  };
  std::vector<std::string> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = text(i);
  // Where different paths read the same, each shows the nearest ancestor at which they differ;
  // where none is left to show, every component whole, at last the program root too.
  // Each round groups the paths that read the same: by the hash of their text (kept from round
  // to round, only a changed text hashed again), then by the text within a run of equal
  // hashes; each group in index order. Groups are processed in no particular order: a group's
  // changes depend on its own members alone. (A map keyed by copies of the texts took 15 ms a
  // width over HPCCG's 944 call paths, most of them kilobytes long.)
  const std::hash<std::string> hasher{};
  std::vector<std::size_t> hash(count), order(count);
  for (std::size_t i = 0; i < count; ++i) hash[i] = hasher(out[i]);
  std::vector<std::vector<std::size_t>> groups;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return hash[a] != hash[b] ? hash[a] < hash[b] : a < b;
    });
    groups.clear();
    for (std::size_t a = 0; a < count;) {
      std::size_t b = a + 1;
      while (b < count && hash[order[b]] == hash[order[a]]) ++b;
      const std::size_t first = groups.size();
      if (b - a > 1) {  // a path alone with its hash reads like no other
        for (std::size_t k = a; k < b; ++k) {
          const std::size_t i = order[k];
          std::size_t g = first;
          while (g < groups.size() && out[groups[g][0]] != out[i]) ++g;
          if (g == groups.size()) groups.emplace_back();
          groups[g].push_back(i);
        }
      }
      a = b;
    }
    for (const std::vector<std::size_t>& ids : groups) {
      if (ids.size() < 2) continue;
      bool differ = false;
      for (const std::size_t i : ids) differ = differ || paths[i] != paths[ids[0]];
      if (!differ) continue;
      std::size_t deepest = 0;
      for (const std::size_t i : ids) deepest = std::max(deepest, comps[i].size());
      auto at = [&](std::size_t i, std::size_t k) -> const std::string* {
        return k < comps[i].size() ? &comps[i][comps[i].size() - 1 - k] : nullptr;
      };
      std::size_t pick = 0;
      for (std::size_t k = 1; k < deepest && pick == 0; ++k) {
        bool taken = true;
        for (const std::size_t i : ids) taken = taken && ancestors[i].count(k);
        if (taken) continue;
        for (const std::size_t i : ids) {
          const std::string* a = at(i, k);
          const std::string* b = at(ids[0], k);
          if ((a == nullptr) != (b == nullptr) || (a && *a != *b)) pick = k;
        }
      }
      for (const std::size_t i : ids) {
        if (pick == 0)
          whole[i] = std::min(whole[i] + 1, 2);
        else
          ancestors[i].insert(pick);
        std::string again = text(i);
        if (again == out[i]) continue;
        changed = true;
        out[i] = std::move(again);
        hash[i] = hasher(out[i]);
      }
    }
  }
  return out;
}

}  // namespace cpreplay
