// SPDX-License-Identifier: BSD-3-Clause
// Region names as people read them: C++ symbols demangled.
#pragma once

#include <string>

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

}  // namespace cpreplay
