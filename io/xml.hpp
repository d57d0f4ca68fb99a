// SPDX-License-Identifier: BSD-3-Clause
// XML 1.0 escaping, shared by the Cube report and the SVG overview.
#pragma once

#include <string>

namespace cpreplay::io {

/// Text and attribute values for XML 1.0: & < > " ' as entities, tab, newline and carriage
/// return as character references (they survive attribute-value normalization); other control
/// characters cannot be represented in XML 1.0 at all and become '?'.
std::string xml_escape(const std::string& text);

}  // namespace cpreplay::io
