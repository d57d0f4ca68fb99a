// SPDX-License-Identifier: BSD-3-Clause
// Region and call-path names as people read them: demangled C++ symbols, and call paths
// shortened from the middle for the summary, the timeline and the overview's legend.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cpreplay {

/// The name to show for a region the trace names `name`. A mangled C++ symbol (Itanium ABI,
/// `_Z...`, as Score-P stores names when it was built without a demangler) comes back
/// demangled by the C++ runtime's own demangler (abi::__cxa_demangle, as c++filt shows it):
/// `_Z18exchange_externalsP24HPC_Sparse_Matrix_STRUCTPKd` ->
/// `exchange_externals(HPC_Sparse_Matrix_STRUCT*, double const*)`. GCC's static-initializer
/// functions `_GLOBAL__sub_I_<symbol>` keep their prefix with the symbol demangled
/// (`_GLOBAL__sub_I_mytimer()`). Anything else, or a symbol the demangler rejects, is returned
/// unchanged. MPI: local.
std::string demangle(const std::string& name);

/// True when `name` still holds a mangled C++ symbol (`_Z` followed by a digit or one of
/// N, L, S, Z), anywhere in it: what demangle() must never leave behind. MPI: local.
bool looks_mangled(const std::string& name);

/// One region name in at most `width` characters where it can be (docs: README "The
/// summary"). The callee's own name stays whole: of a C++ name, its template arguments and
/// then its parameters give way to "..." first (`std::map<...>::map()`, `foo(...)`), then its
/// enclosing scopes (`...::insert(...)`); of an OpenMP construct (`!$omp for @lulesh.cc:1162`)
/// the `@file:line` stays, the `!$omp ` goes first (`for @lulesh.cc:1162`), then the
/// construct's words give way (`implicit b... @lulesh.cc:1164`). A name that still does not fit
/// is returned in its shortest form, longer than `width`. MPI: local.
std::string shorten_name(const std::string& name, std::size_t width);

/// shorten_name for names shown side by side (the timeline's event names): where two
/// different names would read the same, both are shown whole. One text per input, in order.
std::vector<std::string> shorten_names(const std::vector<std::string>& names, std::size_t width);

/// The components of a call path written as `a/b/c` (as analysis::callpath_name writes it). A
/// '/' inside brackets or right after `operator` belongs to a C++ name, not between two.
std::vector<std::string> split_callpath(const std::string& path);

/// The last component of a call path: its callee's name.
std::string callee_of(const std::string& path);

/// How long a region name may be in a sentence (findings, wait-state lines): shorten_name's
/// width there.
constexpr std::size_t kSentenceNameWidth = 40;

/// A call path `prog/main/.../callee` for a table or a legend: the program root (the first
/// component) is left out; when the rest is longer than `width`, the middle components give
/// way to `...` (the first, e.g. `main`, and as many of the last as fit stay), the callee's
/// name is shortened as shorten_name does, and at least `tail` components are kept from the
/// end (even if that exceeds `width`). MPI: local.
std::string shorten_callpath(const std::string& path, std::size_t width, std::size_t tail = 1);

/// shorten_callpath for a set of call paths shown together: where two different paths would
/// read the same, both show more of their paths (more components from the end, then their
/// names unshortened, at last the whole path) until they differ. Returns one text per input,
/// in order; equal inputs get equal texts. MPI: local.
std::vector<std::string> shorten_callpaths(const std::vector<std::string>& paths,
                                           std::size_t width);

/// shorten_callpaths for one set of call paths at several widths: the paths are split once.
/// MPI: local.
class CallpathSet {
 public:
  explicit CallpathSet(std::vector<std::string> paths);
  std::vector<std::string> shorten(std::size_t width) const;

 private:
  std::vector<std::string> paths_;
  std::vector<std::vector<std::string>> comps_;  ///< each path's components, no program root
};

}  // namespace cpreplay
