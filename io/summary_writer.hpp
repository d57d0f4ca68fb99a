// SPDX-License-Identifier: BSD-3-Clause
// Renders the summary as terminal text (fits 100 columns) and as JSON (docs/json-schema.md).
#pragma once

#include <string>

#include "cpreplay/summary.hpp"

namespace cpreplay::io {

std::string summary_text(const Summary& summary);
std::string summary_json(const Summary& summary);

/// Writes the JSON to `path` through a temporary file and a rename; throws UsageError naming
/// the file when it cannot be written.
void write_summary_json(const std::string& path, const Summary& summary);

}  // namespace cpreplay::io
