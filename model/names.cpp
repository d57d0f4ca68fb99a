// SPDX-License-Identifier: BSD-3-Clause
// Demangled region names.
#include "cpreplay/names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace cpreplay {
namespace {

constexpr const char kGlobalInit[] = "_GLOBAL__sub_I_";  // GCC's per-file static initializer

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

}  // namespace cpreplay
