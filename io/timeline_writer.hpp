// SPDX-License-Identifier: BSD-3-Clause
// Formats the Chrome trace-event JSON of --timeline (the format Perfetto and chrome://tracing
// open): complete events, flow events and the metadata naming processes and threads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"

namespace cpreplay::io {

/// Appends JSON text for one event at a time. Times are integer nanoseconds, written as
/// microseconds with three decimals (exact). Every event but the file's first starts with a
/// comma, so chunks of events from any rank can be concatenated in any order.
/// MPI: local.
class TimelineFormat {
 public:
  /// Longest event name before shorten_names shortens it (the full name is in the path).
  static constexpr std::size_t kNameWidth = 60;

  /// Precomputes each call path's name and path text ("main/foo/MPI_Send"), demangled.
  TimelineFormat(const Definitions& defs, const CallTree& tree);

  /// The file's opening, up to and including its first event (the name of process `pid`).
  static std::string header(int pid, const std::string& process_name, int sort_index);
  /// The file's end: closes traceEvents, then "stackFrames" (every call path once: frame id =
  /// call path id, its region's name and its parent's id), displayTimeUnit and "otherData"
  /// with the (key, JSON value) pairs of `other` (known only once everything is written).
  std::string footer(const std::vector<std::pair<std::string, std::string>>& other) const;

  /// A region visit on thread `tid` of process `pid`: name = region, sf = its call path's
  /// stack frame (each call path's text is written once, in stackFrames, not per event).
  void activity(std::string& out, int pid, int tid, std::uint64_t ts_ns, std::uint64_t dur_ns,
                std::uint32_t callpath) const;
  /// A wait-state instance on thread `tid` of process `pid`: args.partner_rank = `partner`, or
  /// args.partner_thread for an OpenMP wait state (`partner_is_thread`); sf = its call path.
  void wait_state(std::string& out, int pid, int tid, std::uint64_t ts_ns, std::uint64_t dur_ns,
                  const char* name, int partner, bool partner_is_thread, double wait_s,
                  std::uint32_t callpath) const;
  /// An owned stretch of the critical path on thread `tid` of process `pid`: named "rank R"
  /// (args.rank) or, with `thread` >= 0 (hybrid traces), "rank R thread T" (args.thread too);
  /// sf = the call path at the stretch's end.
  void stretch(std::string& out, int pid, int tid, int rank, int thread, std::uint64_t ts_ns,
               std::uint64_t dur_ns, std::uint32_t callpath) const;
  /// Flow start ('s') or end ('f', bound to the enclosing slice) of hand-over `id`.
  static void flow(std::string& out, char phase, std::uint64_t id, int pid, int tid,
                   std::uint64_t ts_ns);
  static void process_name(std::string& out, int pid, const std::string& name, int sort_index);
  static void thread_name(std::string& out, int pid, int tid, const std::string& name);
  /// Where viewers list thread `tid` within its process (ascending).
  static void thread_sort_index(std::string& out, int pid, int tid, int sort_index);

  /// `text` as a JSON string literal (quotes included; invalid UTF-8 becomes U+FFFD).
  static std::string quote(const std::string& text);

 private:
  /// `,"sf":<callpath>`, nothing for a call path outside the tree.
  void append_frame(std::string& out, std::uint32_t callpath) const;
  std::vector<std::string> name_;  ///< per call path: "\"name\":\"foo\""
  std::string frames_;             ///< "\"stackFrames\":{...}"
  std::string unknown_name_ = "\"name\":\"(unknown)\"";
};

}  // namespace cpreplay::io
