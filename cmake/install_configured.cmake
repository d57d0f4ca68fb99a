# SPDX-License-Identifier: BSD-3-Clause
# Runs inside `cmake --install`: writes the files that must name the install prefix.
#
# CMAKE_INSTALL_PREFIX here is the --prefix given to cmake --install (DESTDIR, if any, is added by
# file(INSTALL) alone: the files name the final location, not the staging one).

foreach(dir BINDIR DATADIR MANDIR)
  if(IS_ABSOLUTE "${CPREPLAY_${dir}}")
    set(full_${dir} "${CPREPLAY_${dir}}")
  else()
    set(full_${dir} "${CMAKE_INSTALL_PREFIX}/${CPREPLAY_${dir}}")
  endif()
endforeach()
set(installed_cpreplay "${full_BINDIR}/cpreplay")

# Job scripts: the line `installed_cpreplay=` (`installed_cpreplay_run=` in the jobs that
# measure too) names the installed command, so they find it from there and also where Slurm
# copies the job script to its spool directory. In single quotes for the shell; a quote in the
# path is closed, escaped and reopened.
file(MAKE_DIRECTORY "${CPREPLAY_STAGING_DIR}/cluster-jobs")
set(job_files)
foreach(name cpreplay.slurm cpreplay.pbs submit-slurm.sh submit-pbs.sh
             cpreplay-run.slurm cpreplay-run.pbs)
  if(name MATCHES "^cpreplay-run")
    set(variable installed_cpreplay_run)
    set(command "${full_BINDIR}/cpreplay-run")
  else()
    set(variable installed_cpreplay)
    set(command "${installed_cpreplay}")
  endif()
  string(REPLACE "'" "'\\''" quoted "${command}")
  file(READ "${CPREPLAY_SOURCE_DIR}/cluster-jobs/${name}" text)
  string(REGEX MATCHALL "\n${variable}=\n" marker "${text}")
  list(LENGTH marker n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "cluster-jobs/${name}: expected one line `${variable}=` to fill in, found ${n}")
  endif()
  string(REPLACE "\n${variable}=\n" "\n${variable}='${quoted}'\n" text "${text}")
  file(WRITE "${CPREPLAY_STAGING_DIR}/cluster-jobs/${name}" "${text}")
  list(APPEND job_files "${CPREPLAY_STAGING_DIR}/cluster-jobs/${name}")
endforeach()
# Sourced by the submit scripts, beside them; names no path of its own.
list(APPEND job_files "${CPREPLAY_SOURCE_DIR}/cluster-jobs/submit-common.sh")
file(INSTALL ${job_files} DESTINATION "${full_DATADIR}/cpreplay/cluster-jobs"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                      WORLD_READ WORLD_EXECUTE)

# Module file: Tcl, which Lmod and Environment Modules both read. Tcl braces keep the paths
# literal (spaces, $), so a brace in the prefix cannot be written safely.
if(CMAKE_INSTALL_PREFIX MATCHES "[{}]")
  message(FATAL_ERROR "cannot write a module file for a prefix containing { or }: ${CMAKE_INSTALL_PREFIX}")
endif()
set(MODULE_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(MODULE_BINDIR "${full_BINDIR}")
set(MODULE_MANDIR "${full_MANDIR}")
set(MODULE_JOBSDIR "${full_DATADIR}/cpreplay/cluster-jobs")
configure_file("${CPREPLAY_SOURCE_DIR}/packaging/modules/cpreplay.tcl.in"
               "${CPREPLAY_STAGING_DIR}/modulefiles/${CPREPLAY_VERSION}" @ONLY)
file(INSTALL "${CPREPLAY_STAGING_DIR}/modulefiles/${CPREPLAY_VERSION}"
     DESTINATION "${full_DATADIR}/modulefiles/cpreplay")
