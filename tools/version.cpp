// SPDX-License-Identifier: BSD-3-Clause
// The --version text: cmake/build_info.cmake's generated headers (their only reader) and mpi.h.
#include "tools/version.hpp"

#include <mpi.h>

#include "build_info.hpp"
#include "git_revision.hpp"

namespace cpreplay::tools {
namespace {

/// The MPI implementation mpi.h belongs to, from the macros each one defines; a cluster's
/// `module load` must bring the same one at run time.
std::string mpi_library() {
#if defined(OMPI_MAJOR_VERSION)
  return "Open MPI " + std::to_string(OMPI_MAJOR_VERSION) + "." +
         std::to_string(OMPI_MINOR_VERSION) + "." + std::to_string(OMPI_RELEASE_VERSION);
#elif defined(I_MPI_VERSION)
  return std::string("Intel MPI ") + I_MPI_VERSION;
#elif defined(MVAPICH2_VERSION)
  return std::string("MVAPICH2 ") + MVAPICH2_VERSION;
#elif defined(MPICH_VERSION)
  return std::string("MPICH ") + MPICH_VERSION;
#else
  return "an MPI library";
#endif
}

}  // namespace

std::string version_text() {
  // CPREPLAY_VERSION is project(VERSION) in CMakeLists.txt, as for the report's Creator.
  std::string text = "cpreplay " CPREPLAY_VERSION "\n";
  const std::string revision = CPREPLAY_GIT_REVISION;
  if (!revision.empty()) text += "git revision " + revision + "\n";
  text += "built with OTF2 " CPREPLAY_OTF2_VERSION "\n";
  text += "built with " + mpi_library() + " (MPI " + std::to_string(MPI_VERSION) + "." +
          std::to_string(MPI_SUBVERSION) + ")\n";
  return text;
}

}  // namespace cpreplay::tools
