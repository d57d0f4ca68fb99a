// SPDX-License-Identifier: BSD-3-Clause
// What `cpreplay --version` prints: the version, the libraries it was built against, the revision.
#pragma once

#include <string>

namespace cpreplay::tools {

/// "cpreplay X.Y.Z" and one line each for the git revision (builds from a checkout only), the
/// OTF2 version and the MPI library the build was configured with. Ends with a newline.
/// MPI: local.
std::string version_text();

}  // namespace cpreplay::tools
