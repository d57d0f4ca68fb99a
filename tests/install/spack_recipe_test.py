# SPDX-License-Identifier: BSD-3-Clause
"""Checks that packaging/spack/package.py agrees with the CMake build: version, dependencies, options.

usage: spack_recipe_test.py SOURCE_DIR

The recipe is executed as Spack executes it (`from spack.package import *`, then the class body
runs its directives), against a stand-in `spack.package` whose directives accept only the
arguments Spack's do. Then, from the CMake files:
  project(VERSION)            is the recipe's newest version
  cmake_minimum_required      is depends_on("cmake@X:", type="build")
  each find_package(Name ...) is one depends_on, with the same minimum version and components
                              (Boost COMPONENTS program_options -> boost+program_options), of
                              type "test" when only the test suite needs it;
and nothing else is depended upon. cmake_args() passes CPREPLAY_TESTS as Spack's define() does.
"""
import os
import re
import sys
import types

SOURCE = sys.argv[1]
errors = []


def error(message):
    errors.append(message)


# --- a stand-in for Spack's package API (directives record; unknown arguments fail) ----------
recorded = {"version": [], "depends_on": [], "license": [], "variant": []}

VERSION_KWARGS = {"sha256", "md5", "url", "git", "tag", "branch", "commit", "submodules",
                  "preferred", "deprecated", "expand", "extension", "get_full_repo"}
DEP_TYPES = {"build", "link", "run", "test"}


def version(ver, checksum=None, **kwargs):
    unknown = set(kwargs) - VERSION_KWARGS
    if unknown:
        raise TypeError(f"version({ver!r}): unknown arguments {sorted(unknown)}")
    recorded["version"].append((str(ver), kwargs))


def depends_on(spec, when=None, type=("build", "link"), patches=None):
    types_ = (type,) if isinstance(type, str) else tuple(type)
    if not set(types_) <= DEP_TYPES:
        raise ValueError(f"depends_on({spec!r}): type must be among {sorted(DEP_TYPES)}")
    recorded["depends_on"].append((spec, when, frozenset(types_)))


def license(license_identifier, checked_by=None, when=None):
    recorded["license"].append(license_identifier)


def variant(name, default=None, description="", values=None, multi=None, validator=None,
            when=None, sticky=False):
    recorded["variant"].append(name)


class CMakePackage:
    run_tests = False

    @staticmethod
    def define(cmake_var, value):
        # Spack's CMakeBuilder.define: booleans become BOOL ON/OFF, lists STRING joined by ';'.
        if isinstance(value, bool):
            return f"-D{cmake_var}:BOOL={'ON' if value else 'OFF'}"
        if isinstance(value, (list, tuple)):
            return f"-D{cmake_var}:STRING={';'.join(map(str, value))}"
        return f"-D{cmake_var}:STRING={value}"


api = types.ModuleType("spack.package")
for obj in (version, depends_on, license, variant, CMakePackage):
    setattr(api, obj.__name__, obj)
api.__all__ = [name for name in vars(api) if not name.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = api

recipe_path = os.path.join(SOURCE, "packaging", "spack", "package.py")
namespace = {"__name__": "spack.pkg.site.cpreplay"}
exec(compile(open(recipe_path).read(), recipe_path, "exec"), namespace)
Cpreplay = namespace.get("Cpreplay")
if not (isinstance(Cpreplay, type) and issubclass(Cpreplay, CMakePackage)):
    sys.exit("FAIL: package.py defines no class Cpreplay(CMakePackage) (Spack names the class "
             "after the package)")

# --- what the CMake files ask for ---------------------------------------------------------
def cmake_text(relative):
    text = open(os.path.join(SOURCE, relative)).read()
    return re.sub(r"#[^\n]*", "", text)  # no bracket comments in this project


top = cmake_text("CMakeLists.txt")
project_version = re.search(r"project\(\s*cpreplay\s+VERSION\s+([0-9.]+)", top).group(1)
cmake_minimum = re.search(r"cmake_minimum_required\(\s*VERSION\s+([0-9.]+)", top).group(1)

# Every CMake file of the main build (tests/fuzz is a project of its own, not built by Spack).
build_files = ["CMakeLists.txt"]
for root, dirs, files in os.walk(SOURCE):
    dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "fuzz"]
    rel = os.path.relpath(root, SOURCE)
    for f in files:
        if rel != "." and (f == "CMakeLists.txt" or f.endswith(".cmake")):
            build_files.append(os.path.join(rel, f))

SPACK_NAME = {"MPI": "mpi", "OTF2": "otf2", "Boost": "boost", "ZLIB": "zlib-api",
              "GTest": "googletest"}
KEYWORDS = {"REQUIRED", "QUIET", "COMPONENTS", "OPTIONAL_COMPONENTS", "CONFIG", "MODULE",
            "NO_MODULE", "EXACT"}
wanted = {}  # spack name -> {"version", "variants", "test_only"}
for relative in build_files:
    test_only = relative.startswith("tests" + os.sep)
    for args in re.findall(r"find_package\(([^)]*)\)", cmake_text(relative)):
        words = args.split()
        name = words[0]
        if name not in SPACK_NAME:
            error(f"{relative}: find_package({name}) has no Spack package in this test's map "
                  "(add it here and a depends_on to the recipe)")
            continue
        version_ = words[1] if len(words) > 1 and re.fullmatch(r"[0-9.]+", words[1]) else None
        components = []
        # Boost's components are Spack variants; MPI's are languages (its C API serves C++).
        if name == "Boost" and "COMPONENTS" in words:
            for w in words[words.index("COMPONENTS") + 1:]:
                if w in KEYWORDS:
                    break
                components.append(w)
        entry = wanted.setdefault(SPACK_NAME[name],
                                  {"version": None, "variants": set(), "test_only": True})
        entry["version"] = entry["version"] or version_
        entry["variants"] |= set(components)
        entry["test_only"] = entry["test_only"] and test_only
# The top-level GTest lookup only serves CPREPLAY_TESTS: test-only as well.
if "googletest" in wanted and re.search(r"if\(cpreplay_tests", top):
    wanted["googletest"]["test_only"] = True


def version_key(v):
    parts = [int(p) for p in v.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


# --- compare ------------------------------------------------------------------------------
numeric = [v for v, kw in recorded["version"] if re.fullmatch(r"[0-9.]+", v)]
if not numeric:
    error("package.py declares no numbered version")
elif max(numeric, key=version_key) != project_version:
    error(f"package.py's newest version is {max(numeric, key=version_key)}, "
          f"CMakeLists.txt's project VERSION is {project_version}")

SPEC = re.compile(r"^([a-z0-9][a-z0-9-]*)(?:@([0-9.]+):)?((?:\+[a-z0-9_]+)*)$")
seen = {}
for spec, when, types_ in recorded["depends_on"]:
    m = SPEC.match(spec)
    if not m:
        error(f"depends_on({spec!r}): not of the form name[@X.Y:][+variant...]")
        continue
    name, minimum, variants = m.group(1), m.group(2), set(filter(None, m.group(3).split("+")))
    if name in ("c", "cxx"):
        if types_ != {"build"}:
            error(f"depends_on({spec!r}) should be type='build' (the compiler)")
        continue
    if name == "cmake":
        if version_key(minimum or "0") != version_key(cmake_minimum) or types_ != {"build"}:
            error(f"depends_on({spec!r}, type={sorted(types_)}): CMakeLists.txt needs "
                  f"cmake_minimum_required {cmake_minimum}, a build dependency")
        seen[name] = True
        continue
    if name not in wanted:
        error(f"depends_on({spec!r}): no find_package in the CMake files asks for it")
        continue
    seen[name] = True
    w = wanted[name]
    if (minimum and version_key(minimum)) != (w["version"] and version_key(w["version"])):
        error(f"depends_on({spec!r}): CMake asks for version {w['version'] or 'any'}")
    if variants != w["variants"]:
        error(f"depends_on({spec!r}): CMake asks for components {sorted(w['variants'])}")
    expected_types = {"test"} if w["test_only"] else {"build", "link"}
    if types_ != expected_types:
        error(f"depends_on({spec!r}): type {sorted(types_)}, expected {sorted(expected_types)}")
for name in sorted(set(wanted) - set(seen)):
    error(f"CMake looks for {name} (find_package) but package.py has no depends_on for it")
if "cmake" not in seen:
    error("package.py has no depends_on('cmake@...', type='build')")

# cmake_args: CPREPLAY_TESTS exactly as the build understands it, ON with --test, OFF without.
if not re.search(r"set\(CPREPLAY_TESTS\b", top):
    error("CMakeLists.txt has no CPREPLAY_TESTS cache entry for cmake_args() to set")
for run_tests, value in ((True, "ON"), (False, "OFF")):
    pkg = Cpreplay.__new__(Cpreplay)
    pkg.run_tests = run_tests
    args = pkg.cmake_args()
    if args != [f"-DCPREPLAY_TESTS:BOOL={value}"]:
        error(f"cmake_args() with run_tests={run_tests}: {args}")

print("versions:", [v for v, _ in recorded["version"]], "project VERSION", project_version)
print("depends_on:", [(s, sorted(t)) for s, _, t in recorded["depends_on"]])
print("find_package:", {k: (v["version"], sorted(v["variants"]), v["test_only"])
                        for k, v in wanted.items()})
if errors:
    for e in errors:
        print("FAIL:", e)
    sys.exit(1)
print("package.py agrees with the CMake files")
