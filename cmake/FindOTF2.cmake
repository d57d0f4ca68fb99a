# SPDX-License-Identifier: BSD-3-Clause
# Finds OTF2 (the trace library Score-P writes with) the three ways HPC sites provide it.
#
#   -DOTF2_ROOT=<prefix>         that installation only: a wrong root is an error, not a silent
#                                fall-back to some other OTF2 on the system
#   CMAKE_PREFIX_PATH=<prefix>   (cache or environment variable, as Spack and modules set it)
#   otf2-config on PATH          as a Score-P / OTF2 installation provides; its --cppflags and
#                                --ldflags name the include and library directories
# and then the system's default places (Debian's libotf2-trace-dev).
#
# Result: OTF2_FOUND, OTF2_VERSION (from OTF2_GeneralDefinitions.h), the cache entries
# OTF2_INCLUDE_DIR and OTF2_LIBRARY, and the imported target OTF2::OTF2.

set(_otf2_ways
  "Point CMake at OTF2 (Score-P's trace library, version ${OTF2_FIND_VERSION} or later) in one of three ways: -DOTF2_ROOT=<prefix> (the directory holding include/otf2/otf2.h), CMAKE_PREFIX_PATH=<prefix>, or put otf2-config (shipped with Score-P and OTF2) on PATH.")

if(NOT OTF2_ROOT AND DEFINED ENV{OTF2_ROOT})
  set(OTF2_ROOT "$ENV{OTF2_ROOT}")
endif()

# A changed OTF2_ROOT searches again instead of keeping the cached result of the last one.
if(DEFINED _OTF2_SEARCHED_ROOT AND NOT "${_OTF2_SEARCHED_ROOT}" STREQUAL "${OTF2_ROOT}")
  unset(OTF2_INCLUDE_DIR CACHE)
  unset(OTF2_LIBRARY CACHE)
endif()
set(_OTF2_SEARCHED_ROOT "${OTF2_ROOT}" CACHE INTERNAL "OTF2_ROOT of the last search")

if(OTF2_ROOT)
  # An explicit root is authoritative: look nowhere else.
  find_path(OTF2_INCLUDE_DIR otf2/otf2.h PATHS "${OTF2_ROOT}" PATH_SUFFIXES include
            NO_DEFAULT_PATH)
  find_library(OTF2_LIBRARY otf2 PATHS "${OTF2_ROOT}" PATH_SUFFIXES lib64 lib
               NO_DEFAULT_PATH)
  set(_otf2_where "OTF2_ROOT=${OTF2_ROOT} has no include/otf2/otf2.h and lib/libotf2")
else()
  # PATH only, as a loaded Score-P module or a shell profile sets it up.
  find_program(OTF2_CONFIG otf2-config DOC "otf2-config of the OTF2 installation to use"
               NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_CMAKE_SYSTEM_PATH)
  set(_otf2_include_hints)
  set(_otf2_library_hints)
  if(OTF2_CONFIG)
    execute_process(COMMAND "${OTF2_CONFIG}" --cppflags OUTPUT_VARIABLE _otf2_cppflags
                    RESULT_VARIABLE _otf2_rc1 OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${OTF2_CONFIG}" --ldflags OUTPUT_VARIABLE _otf2_ldflags
                    RESULT_VARIABLE _otf2_rc2 OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _otf2_rc1 EQUAL 0 OR NOT _otf2_rc2 EQUAL 0)
      message(WARNING "${OTF2_CONFIG} --cppflags/--ldflags failed; ignoring it")
    else()
      separate_arguments(_otf2_cppflags UNIX_COMMAND "${_otf2_cppflags}")
      separate_arguments(_otf2_ldflags UNIX_COMMAND "${_otf2_ldflags}")
      foreach(_flag IN LISTS _otf2_cppflags)
        if(_flag MATCHES "^-I(.+)")
          list(APPEND _otf2_include_hints "${CMAKE_MATCH_1}")
        endif()
      endforeach()
      foreach(_flag IN LISTS _otf2_ldflags)
        if(_flag MATCHES "^-L(.+)")
          list(APPEND _otf2_library_hints "${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endif()
  endif()
  # Search order (CMake's): CMAKE_PREFIX_PATH, then these hints, then PATH's prefixes and the
  # system directories.
  find_path(OTF2_INCLUDE_DIR otf2/otf2.h HINTS ${_otf2_include_hints})
  find_library(OTF2_LIBRARY otf2 HINTS ${_otf2_library_hints})
  if(OTF2_CONFIG)
    set(_otf2_where "neither CMAKE_PREFIX_PATH, ${OTF2_CONFIG} nor the system directories have it")
  else()
    set(_otf2_where "neither CMAKE_PREFIX_PATH nor the system directories have it, and no otf2-config is on PATH")
  endif()
endif()

if(OTF2_INCLUDE_DIR AND EXISTS "${OTF2_INCLUDE_DIR}/otf2/OTF2_GeneralDefinitions.h")
  file(STRINGS "${OTF2_INCLUDE_DIR}/otf2/OTF2_GeneralDefinitions.h" _otf2_version_line
       REGEX "^#define OTF2_VERSION +\"[^\"]*\"")
  if(_otf2_version_line MATCHES "\"([^\"]*)\"")
    set(OTF2_VERSION "${CMAKE_MATCH_1}")
  endif()
endif()

# Not found: one message that says where we looked and the three ways to point us elsewhere
# (find_package_handle_standard_args would bury it under "Reason given by package"). The leading
# space makes CMake print it as one line instead of re-wrapping it.
if(NOT OTF2_INCLUDE_DIR OR NOT OTF2_LIBRARY)
  if(OTF2_FIND_REQUIRED)
    message(FATAL_ERROR " OTF2 not found: ${_otf2_where}. ${_otf2_ways}")
  elseif(NOT OTF2_FIND_QUIETLY)
    message(STATUS "OTF2 not found: ${_otf2_where}")
  endif()
endif()
if(OTF2_INCLUDE_DIR AND OTF2_LIBRARY AND OTF2_VERSION AND OTF2_FIND_VERSION
   AND OTF2_VERSION VERSION_LESS OTF2_FIND_VERSION AND OTF2_FIND_REQUIRED)
  message(FATAL_ERROR " OTF2 ${OTF2_VERSION} (${OTF2_INCLUDE_DIR}) is too old. ${_otf2_ways}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OTF2
  REQUIRED_VARS OTF2_LIBRARY OTF2_INCLUDE_DIR
  VERSION_VAR OTF2_VERSION
  REASON_FAILURE_MESSAGE "${_otf2_ways}")

if(OTF2_FOUND AND NOT TARGET OTF2::OTF2)
  add_library(OTF2::OTF2 UNKNOWN IMPORTED)
  set_target_properties(OTF2::OTF2 PROPERTIES
    IMPORTED_LOCATION "${OTF2_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${OTF2_INCLUDE_DIR}")
endif()
mark_as_advanced(OTF2_INCLUDE_DIR OTF2_LIBRARY OTF2_CONFIG)
