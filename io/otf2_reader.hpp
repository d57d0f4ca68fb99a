// SPDX-License-Identifier: BSD-3-Clause
// Reads OTF2 archives: global definitions on every rank, then one rank's own events.
#pragma once

#include <string>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay::io {

/// Reads the global definitions of the archive whose anchor file is `anchor`.
/// Throws TraceError naming the file on any problem (missing, not OTF2, corrupt).
/// MPI: local (every rank reads the definitions itself).
Definitions read_definitions(const std::string& anchor);

/// Reads the events of `rank`'s location into compact storage (see LocalTrace) and links
/// requests to their completions (Isend<->IsendComplete, IrecvRequest<->Irecv, cancels) and
/// CollBegin<->CollEnd. Enter/Leave events carry their call path in a rank-local call tree
/// (`tree`, unified later). ProgramBegin/End become Enter/Leave of the program region.
/// Metric and other records are skipped. Throws TraceError (file, rank, event) on bad input
/// and IncompleteTraceError when the events stop with regions still open. With `partial`, such
/// a rank (and one whose event file breaks off) is returned with `incomplete` set instead.
/// MPI: local.
LocalTrace read_events(const std::string& anchor, const Definitions& defs, Rank rank,
                       CallTree& tree, bool partial = false);

/// Only decodes the events of `rank` (counting them); the floor for benchmarks.
std::uint64_t decode_events_only(const std::string& anchor, const Definitions& defs, Rank rank);

}  // namespace cpreplay::io
