# SPDX-License-Identifier: BSD-3-Clause
# Spack recipe for cpreplay; tests/install/spack_recipe_test.py keeps it in step with CMakeLists.txt.
#
# Written for Spack 0.22 or later (license(), compilers as "c"/"cxx" dependencies, zlib-api).
# To use it, put it in a Spack repository of the site's own:
#     spack repo create site-repo && mkdir site-repo/packages/cpreplay
#     cp packaging/spack/package.py site-repo/packages/cpreplay/ && spack repo add site-repo
# There is no published source URL yet, so build from a clone:
#     spack develop --path /path/to/cpreplay cpreplay@=0.1.0 && spack install
# (inside a Spack environment). Spack's module generation then writes the module file.

from spack.package import *


class Cpreplay(CMakePackage):
    """Parallel trace replay analyzer for MPI programs: reads a Score-P OTF2 trace with one rank
    per traced rank, finds wait states and the critical path, and writes a Cube4 report with
    Scalasca 2.6's metrics."""

    license("BSD-3-Clause")

    version("0.1.0")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")

    depends_on("mpi")
    depends_on("otf2@3.0:")
    depends_on("boost+program_options")
    depends_on("zlib-api")

    # The test suite (spack install --test=root) uses GoogleTest and runs MPI jobs with mpirun.
    depends_on("googletest", type="test")

    def cmake_args(self):
        # ON/OFF, never the AUTO default: a GoogleTest that happens to be visible in the build
        # environment must not decide whether the tests are built.
        return [self.define("CPREPLAY_TESTS", self.run_tests)]
