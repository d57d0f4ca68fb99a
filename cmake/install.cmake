# SPDX-License-Identifier: BSD-3-Clause
# Install rules: `cmake --install build --prefix P` lays out P the way HPC sites expect.
#
#   P/bin/cpreplay, P/bin/cpreplay-run (measurement and analysis in one command; runs the
#                                       cpreplay beside it)
#   P/share/man/man1/cpreplay.1, cpreplay-run.1
#   P/share/doc/cpreplay/{README.md,json-schema.md}
#   P/share/cpreplay/cluster-jobs/   Slurm and PBS jobs, told where P/bin/cpreplay(-run) is
#   P/share/modulefiles/cpreplay/<version>   Tcl modulefile (Lmod and Environment Modules)
#
# The prefix is only known when `cmake --install --prefix` runs, so the job scripts and the module
# file are written then (cmake/install_configured.cmake), not at configure time.

include(GNUInstallDirs)

# An OTF2 or MPI outside the system directories (a Score-P or Spack prefix) stays found at run time
# without LD_LIBRARY_PATH; system directories are left out of the RUNPATH as usual.
set_target_properties(cpreplay PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS cpreplay RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(PROGRAMS tools/cpreplay-run DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES docs/cpreplay.1 docs/cpreplay-run.1 DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES README.md docs/json-schema.md DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(FILES cluster-jobs/README.md DESTINATION "${CMAKE_INSTALL_DATADIR}/cpreplay/cluster-jobs")

install(CODE "
  set(CPREPLAY_SOURCE_DIR [[${PROJECT_SOURCE_DIR}]])
  set(CPREPLAY_STAGING_DIR [[${PROJECT_BINARY_DIR}/install-staging]])
  set(CPREPLAY_VERSION [[${PROJECT_VERSION}]])
  set(CPREPLAY_BINDIR [[${CMAKE_INSTALL_BINDIR}]])
  set(CPREPLAY_DATADIR [[${CMAKE_INSTALL_DATADIR}]])
  set(CPREPLAY_MANDIR [[${CMAKE_INSTALL_MANDIR}]])
  include([[${CMAKE_CURRENT_LIST_DIR}/install_configured.cmake]])
")
