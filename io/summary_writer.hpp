// SPDX-License-Identifier: BSD-3-Clause
// Renders the summary as terminal text (fits 100 columns) and as JSON (docs/json-schema.md).
#pragma once

#include <string>

#include "cpreplay/summary.hpp"

namespace cpreplay::io {

std::string summary_text(const Summary& summary);
std::string summary_json(const Summary& summary);

/// Throws UsageError naming the file if `path` cannot be created (checked before any work, so
/// an unwritable --json never leaves a report behind).
void check_json_writable(const std::string& path);

/// Writes the JSON to `path` through a temporary file and a rename; throws UsageError naming
/// the file when it cannot be written.
void write_summary_json(const std::string& path, const Summary& summary);

}  // namespace cpreplay::io
