// SPDX-License-Identifier: BSD-3-Clause
// Terminal and JSON renderings of the analysis summary.
#include "io/summary_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cpreplay/error.hpp"
#include "cpreplay/names.hpp"

namespace cpreplay::io {
namespace {

constexpr std::size_t kWidth = 100;

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

/// Seconds with a unit that keeps three significant digits readable.
std::string seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0.0) return "0 s";
  if (a >= 100.0) return format("%.1f s", s);
  if (a >= 0.1) return format("%.2f s", s);
  if (a >= 1e-3) return format("%.2f ms", s * 1e3);
  return format("%.2f us", s * 1e6);
}

/// "1 rank", "3 ranks".
std::string count(std::uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string percent(double fraction) { return format("%.1f %%", fraction * 100.0); }

/// The call paths the text shows, each as one text per width: without the program root,
/// shortened from the middle with the callee's name whole, and never two different paths
/// reading the same at one width (cpreplay/names.hpp, shorten_callpaths). Holds views of the
/// summary's paths: the summary outlives it.
class ShownPaths {
 public:
  explicit ShownPaths(const Summary& s) {
    std::vector<std::string> paths;
    const auto add = [&](const std::string& path) {
      if (index_.try_emplace(path, paths.size()).second) paths.push_back(path);
    };
    std::size_t shown = 0;
    for (const SummaryCallpath& c : s.callpaths) {
      if (shown++ == 8 || c.critical_path_share < 0.001) break;
      add(c.path);
    }
    for (std::size_t i = 0; i < s.waits.size() && i < 6; ++i) {
      for (const auto& c : s.waits[i].callpaths) add(c.path);
      for (const auto& c : s.waits[i].caused_by) add(c.path);
    }
    for (const SummaryWaitInstance& w : s.worst) add(w.path);
    for (const SummaryOmpBarrier& b : s.openmp.barriers) add(b.path);
    // The what-if block's rows, and the first three of the other near-critical call paths
    // (what_if_text): not all of those, hundreds on a large call tree, none of them shown.
    std::size_t others = 0;
    for (const SummaryWhatIfCallpath& c : s.what_if.callpaths)
      if (c.has_gains || others++ < 3) add(c.path);
    for (const SummaryWhatIfScenario& sc : s.what_if.scenarios)
      for (const auto& c : sc.critical_path) add(c.path);
    set_ = std::make_unique<CallpathSet>(std::move(paths));  // split once for every width
  }

  /// `path` (one of those the text shows) in about `width` characters.
  const std::string& operator()(const std::string& path, std::size_t width) const {
    const auto at = index_.find(path);
    if (at == index_.end()) {
      auto& texts = others_[width];
      auto it = texts.find(path);
      if (it == texts.end()) it = texts.emplace(path, shorten_callpath(path, width)).first;
      return it->second;
    }
    std::vector<std::string>& texts = by_width_[width];
    if (texts.empty()) texts = set_->shorten(width);
    return texts[at->second];
  }

 private:
  /// Each path's index in the set, by a view of the summary's own string (HPCCG's 944 call
  /// paths, kilobytes long, were copied as keys for each width before).
  std::unordered_map<std::string_view, std::size_t> index_;
  std::unique_ptr<CallpathSet> set_;
  mutable std::map<std::size_t, std::vector<std::string>> by_width_;  ///< in index order
  mutable std::map<std::size_t, std::map<std::string, std::string>> others_;  ///< not in the set
};

std::string pad(const std::string& s, std::size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

/// A table's call-path column: `text` padded to `width`, or, when it does not fit, the rest of
/// the row on the next line below the following columns (`before`: the line's width up to it).
std::string path_cell(const std::string& text, std::size_t width, std::size_t before) {
  if (text.size() < width) return pad(text, width);
  return text + "\n" + std::string(before + width, ' ');
}

/// True for "s", "ms", "us", "%" (and with trailing punctuation, "s),"): a unit that must stay
/// on the line of its number.
bool is_unit(const std::string& word) {
  const std::string w = word.substr(0, word.find_last_not_of(",;:.)") + 1);
  return w == "s" || w == "ms" || w == "us" || w == "%";
}

/// Word-wraps `text` to kWidth with `first` before the first line and spaces before the rest;
/// never between a number and its unit.
std::string wrap(const std::string& first, const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> tokens;
  for (std::string word; in >> word;) {
    if (is_unit(word) && !tokens.empty())
      tokens.back() += " " + word;
    else
      tokens.push_back(word);
  }
  std::string out, line = first;
  const std::string indent(first.size(), ' ');
  bool empty = true;
  for (const std::string& word : tokens) {
    if (!empty && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = indent;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// "work=0.5, MPI_Recv=0".
std::string changes_text(const SummaryWhatIfScenario& sc) {
  std::string text;
  for (const auto& [region, factor] : sc.changes) {
    char f[32];
    std::snprintf(f, sizeof f, "%g", factor);
    text += (text.empty() ? "" : ", ") + region + "=" + f;
  }
  return text;
}

/// The "What if" block: the top call paths' gains beside their critical-path time and
/// imbalance, other near-critical call paths, and the user's scenario.
std::string what_if_text(const Summary& s, const ShownPaths& shown) {
  const SummaryWhatIf& w = s.what_if;
  if (!w.computed) return "";
  std::string out = "\nWhat if (re-timed replay of the run; runtime " + seconds(w.runtime) +
                    "; near-critical: slack within " + percent(w.near_critical_fraction) +
                    " of it)\n";
  std::string others;
  std::size_t shown_others = 0;
  bool any = false;
  for (const SummaryWhatIfCallpath& c : w.callpaths) {
    if (!c.has_gains) {
      if (shown_others++ < 3)
        others += (others.empty() ? "" : ", ") + shown(c.path, 30) + " " +
                  seconds(c.near_critical);
      continue;
    }
    if (!any) {
      out += "  " + pad("call path", 30) + pad("on path", 10, true) + pad("imbalance", 10, true) +
             pad("zeroed", 11, true) + pad("balanced", 11, true) + pad("rebalanced", 11, true) +
             pad("near-crit", 10, true) + "\n";
      any = true;
    }
    out += "  " + path_cell(shown(c.path, 29), 30, 2) + pad(seconds(c.critical_path), 10, true) +
           pad(seconds(c.imbalance), 10, true) + pad(seconds(c.zeroing_gain), 11, true) +
           pad(seconds(c.balance_gain), 11, true) + pad(seconds(c.rebalance_gain), 11, true) +
           pad(seconds(c.near_critical), 10, true) + "\n";
  }
  if (any)
    out += "  (the run's gain if the call path took no time, if every visit took its mean time,\n"
           "   if each rank's total were the average; near-crit: its time with that little "
           "slack)\n";
  if (!others.empty()) out += wrap("  also near-critical: ", others);
  for (const SummaryWhatIfScenario& sc : w.scenarios) {
    std::string text = "runtime " + seconds(sc.runtime) + " (" +
                       (sc.runtime <= w.runtime ? "-" : "+") +
                       seconds(std::fabs(w.runtime - sc.runtime)) + ", " +
                       (sc.runtime <= w.runtime ? "-" : "+") +
                       percent(w.runtime > 0.0 ? std::fabs(w.runtime - sc.runtime) / w.runtime
                                               : 0.0) +
                       ")";
    if (!sc.critical_path.empty()) {
      text += "; its critical path:";
      for (std::size_t i = 0; i < sc.critical_path.size(); ++i)
        text += std::string(i ? "," : "") + " " + shown(sc.critical_path[i].path, 30) + " " +
                percent(sc.critical_path[i].share);
    }
    out += wrap("  scenario " + changes_text(sc) + ": ", text);
  }
  return out;
}

/// The "what_if" object (docs/json-schema.md); null when it was not computed.
std::string what_if_json(const SummaryWhatIf& w) {
  if (!w.computed) return "null";
  auto gain = [&](bool has, double v) { return has ? json_number(v) : std::string("null"); };
  std::string cps = "[";
  for (std::size_t i = 0; i < w.callpaths.size(); ++i) {
    const SummaryWhatIfCallpath& c = w.callpaths[i];
    cps += std::string(i ? "," : "") + "\n      {\"path\": " + json_string(c.path) +
           ", \"zeroing_gain_s\": " + gain(c.has_gains, c.zeroing_gain) +
           ", \"balance_gain_s\": " + gain(c.has_gains, c.balance_gain) +
           ", \"rebalance_gain_s\": " + gain(c.has_gains, c.rebalance_gain) +
           ", \"near_critical_s\": " + json_number(c.near_critical) + "}";
  }
  cps += w.callpaths.empty() ? "]" : "\n    ]";
  std::string scs = "[";
  for (std::size_t i = 0; i < w.scenarios.size(); ++i) {
    const SummaryWhatIfScenario& sc = w.scenarios[i];
    std::string changes = "{";
    for (std::size_t j = 0; j < sc.changes.size(); ++j)
      changes += std::string(j ? ", " : "") + json_string(sc.changes[j].first) + ": " +
                 json_number(sc.changes[j].second);
    std::string path = "[";
    for (std::size_t j = 0; j < sc.critical_path.size(); ++j)
      path += std::string(j ? ", " : "") + "{\"path\": " + json_string(sc.critical_path[j].path) +
              ", \"seconds\": " + json_number(sc.critical_path[j].seconds) +
              ", \"share\": " + json_number(sc.critical_path[j].share) + "}";
    scs += std::string(i ? "," : "") + "\n      {\"changes\": " + changes +
           "}, \"runtime_s\": " + json_number(sc.runtime) + ", \"critical_path\": " + path +
           "]}";
  }
  scs += w.scenarios.empty() ? "]" : "\n    ]";
  return "{\"runtime_s\": " + json_number(w.runtime) +
         ", \"near_critical_fraction\": " + json_number(w.near_critical_fraction) +
         ",\n    \"callpaths\": " + cps + ",\n    \"scenarios\": " + scs + "}";
}

}  // namespace

std::string summary_text(const Summary& s) {
  const ShownPaths paths(s);
  std::string out;
  out += "cpreplay summary: " + s.trace + "\n";
  // Hybrid traces: the thread count is in the OpenMP section's title (the line stays within
  // kWidth as for pure MPI).
  out += "  ranks " + std::to_string(s.ranks) + "   events " + std::to_string(s.events) + "   wall-clock " + seconds(s.wall_clock) +
         "   critical path " + seconds(s.critical_path_length) + "   analysis " +
         seconds(s.analysis_seconds) + "\n";
  // How the ranks were shared out: each process analyzed a contiguous block of them.
  out += "  analyzed by " + std::to_string(s.processes) +
         (s.processes == 1 ? " process, " : " processes, ") +
         (s.ranks_per_process_min == s.ranks_per_process_max
              ? count(static_cast<std::uint64_t>(s.ranks_per_process_max), "rank")
              : std::to_string(s.ranks_per_process_max) + " or " +
                    count(static_cast<std::uint64_t>(s.ranks_per_process_min), "rank")) +
         " each\n";
  if (!s.report.empty()) out += "  report " + s.report + "\n";
  if (!s.json.empty()) out += "  json   " + s.json + "\n";
  if (s.partial)
    out += wrap("  PARTIAL: ",
                "rank " + std::to_string(s.partial_first_rank) + " stopped mid-run (" +
                    count(s.partial_incomplete_ranks, "incomplete rank") +
                    "); every rank was analyzed up to " + seconds(s.wall_clock) +
                    " after the start; " + count(s.partial_events_cut, "event") +
                    " after that cut, " + count(s.partial_regions_closed, "open region") +
                    " closed there, " + count(s.partial_unmatched_messages, "unmatched message") +
                    " and " +
                    count(s.partial_collectives_dropped, "unfinished collective instance") +
                    " left out");
  if (s.time_corrected)
    out += wrap("  ", "time correction: moved " + count(s.corrected_events, "event") + " on " +
                          count(static_cast<std::uint64_t>(s.corrected_ranks), "rank") +
                          " by at most " + seconds(s.max_correction) +
                          (s.correction_consistent
                               ? std::string(" (constant clock offsets; local intervals kept)")
                               : std::string(" (the clocks drift: no constant offsets fit)")) +
                          (s.jumped_events > 0
                               ? "; then " + std::to_string(s.jumped_events) +
                                     " event moves by forward jumps of at most " +
                                     seconds(s.max_jump)
                               : std::string()));
  if (s.p2p_clock_violations + s.coll_clock_violations > 0)
    out += wrap("  warning: ",
                std::to_string(s.p2p_clock_violations + s.coll_clock_violations) +
                    " clock-condition violations (" + std::to_string(s.p2p_clock_violations) +
                    " point-to-point, " + std::to_string(s.coll_clock_violations) +
                    " collective); waiting times near them are unreliable" +
                    (s.time_corrected ? "" : "; rerun with --time-correct"));

  if (s.openmp.hybrid) {
    const SummaryOpenMp& o = s.openmp;
    out += "\nOpenMP (" + std::to_string(o.locations) + " thread locations; % of " +
           seconds(s.allocation_time) + " total allocation time)\n";
    const double total = s.allocation_time > 0.0 ? s.allocation_time : 1.0;
    auto line = [&](const std::string& name, double v) {
      out += "  " + pad(name, 36) + pad(seconds(v), 10, true) + pad(percent(v / total), 8, true) +
             "\n";
    };
    line("idle threads (serial code)", o.idle_serial);
    line("idle threads (limited parallelism)", o.limited_parallelism);
    line("thread management (fork/join)", o.management);
    line("wait at implicit barriers", o.ibarrier_wait);
    line("wait at explicit barriers", o.ebarrier_wait);
    line("critical-section contention", o.lock_critical);
    line("lock API contention", o.lock_api);
    for (const SummaryOmpBarrier& b : o.barriers) {
      std::string slow;
      for (const std::string& k : b.last_to_arrive) slow += (slow.empty() ? "" : ", ") + k;
      out += wrap("  barrier " + paths(b.path, 40) + " " + seconds(b.seconds) + ": ",
                  b.construct + (slow.empty() ? std::string() : "; last to arrive " + slow));
    }
  }
  // Hybrid traces: every thread is a location of the table (docs/json-schema.md).
  const std::string per = s.openmp.hybrid ? "thread" : "rank";
  out += "\nCritical path: where the runtime goes (top call paths)\n";
  out += "  " + pad("call path", 30) + pad("on path", 10, true) + pad("share", 8, true) +
         pad("imbalance", 11, true) + pad("of path", 9, true) + pad("of avg", 8, true) +
         pad("max-avg", 10, true) + pad("total time", 12, true) + "\n";
  std::size_t shown = 0;
  for (const SummaryCallpath& c : s.callpaths) {
    if (shown == 8 || c.critical_path_share < 0.001) break;
    ++shown;
    out += "  " + path_cell(paths(c.path, 29), 30, 2) + pad(seconds(c.critical_path), 10, true) +
           pad(percent(c.critical_path_share), 8, true) + pad(seconds(c.imbalance), 11, true) +
           pad(percent(c.imbalance_share), 9, true) + pad(percent(c.imbalance_percent), 8, true) +
           pad(seconds(c.profile_imbalance), 10, true) + pad(seconds(c.time_total), 12, true) +
           "\n";
  }
  out += "  (imbalance: critical-path imbalance, also as % of the path and of the call path's\n"
         "   average time per " + per + "; max-avg: the profile's view of the same imbalance" +
         (s.openmp.hybrid ? ";\n   time: allocation time, a worker's idle time included" : "") +
         ")\n";

  if (!s.waits.empty()) {
    out += "\nWait states (% of " + seconds(s.allocation_time) + " total allocation time)\n";
    for (std::size_t i = 0; i < s.waits.size() && i < 6; ++i) {
      const SummaryWaitMetric& w = s.waits[i];
      std::string where;
      for (const auto& c : w.callpaths)
        where += (where.empty() ? "" : ", ") + paths(c.path, 30) + " " + seconds(c.seconds);
      out += wrap("  " + pad(w.name, 26) + pad(seconds(w.seconds), 10, true) +
                      pad(percent(w.share), 8, true) + "  ",
                  "in " + where);
      if (!w.caused_by.empty()) {
        std::string causes;
        for (const SummaryWaitMetric::Cause& c : w.caused_by) {
          std::string amounts;
          if (c.short_term > 0.0) amounts = seconds(c.short_term) + " direct";
          if (c.long_term > 0.0)
            amounts += (amounts.empty() ? "" : ", ") + seconds(c.long_term) + " through other waits";
          causes += (causes.empty() ? "" : "; ") + paths(c.path, 30) + " on " +
                    c.rank_names + " (" + amounts + ")";
        }
        out += wrap("      caused by ", causes);
      }
      // Only when it matters: a wait state of at least 1 % of the allocation time, and a class
      // of at least 10 % of it, as for a cause.
      if (w.share >= 0.01 && std::max(w.indirect, w.propagating) >= 0.1 * w.seconds)
        out += wrap("      ", seconds(w.indirect) + " of it indirect (caused by other waiting), " +
                                 seconds(w.propagating) + " propagating (causes waiting elsewhere)");
    }
  } else {
    out += "\nWait states: none found\n";
  }

  const SummaryImpact& im = s.impact;
  if (im.total > 0.0) {
    out += "\nPerformance impact (" +
           (s.openmp.hybrid ? std::to_string(s.openmp.locations) + " thread locations"
                            : std::to_string(s.ranks) + " ranks") +
           " x " +
           seconds(s.critical_path_length) + " = " + seconds(im.total) + ")\n";
    out += "  " + pad("critical-path activities", 30) +
           pad(seconds(im.critical_path_activities), 10, true) +
           pad(percent(im.critical_path_activities / im.total), 9, true) + "\n";
    {
      // Its split on the same line, or the inter-partition part below when that is too long.
      const std::string line = "  " + pad("imbalance impact", 30) +
                               pad(seconds(im.imbalance_impact), 10, true) +
                               pad(percent(im.imbalance_impact / im.total), 9, true) +
                               "   intra-partition " + seconds(im.intra_partition) + ",";
      const std::string inter = "inter-partition " + seconds(im.inter_partition);
      out += line + (line.size() + 1 + inter.size() <= kWidth
                         ? " " + inter
                         : "\n" + std::string(line.find("intra-partition"), ' ') + inter) +
             "\n";
    }
    out += "  " + pad("non-critical-path activities", 30) +
           pad(seconds(im.non_critical_path_activities), 10, true) +
           pad(percent(im.non_critical_path_activities / im.total), 9, true) + "\n";
  }

  out += what_if_text(s, paths);

  if (!s.findings.empty()) {
    out += "\nFindings\n";
    for (const std::string& f : s.findings) out += wrap("  * ", f);
  }

  if (!s.worst.empty()) {
    out += "\nMost severe wait states (for a timeline viewer)\n";
    out += "  " + pad("wait state", 26) + pad("call path", 30) + pad("rank", 6, true) +
           pad("start", 14, true) + pad("duration", 12, true) + "\n";
    for (const SummaryWaitInstance& w : s.worst)
      out += "  " + pad(w.name, 26) + path_cell(paths(w.path, 29), 30, 28) +
             pad(std::to_string(w.rank), 6, true) + pad(format("%.6f s", w.start), 14, true) +
             pad(seconds(w.duration), 12, true) + "\n";
  }
  return out;
}

std::string summary_json(const Summary& s) {
  std::string o = "{\n";
  auto field = [&](const std::string& k, const std::string& v, bool last = false) {
    o += "  " + json_string(k) + ": " + v + (last ? "\n" : ",\n");
  };
  field("schema", json_string("cpreplay-summary/1"));
  field("trace", json_string(s.trace));
  field("report", json_string(s.report));
  field("ranks", std::to_string(s.ranks));
  field("processes", "{\"count\": " + std::to_string(s.processes) + ", \"ranks_min\": " +
                        std::to_string(s.ranks_per_process_min) + ", \"ranks_max\": " +
                        std::to_string(s.ranks_per_process_max) + "}");
  field("events", std::to_string(s.events));
  field("wall_clock_s", json_number(s.wall_clock));
  field("critical_path_length_s", json_number(s.critical_path_length));
  field("allocation_time_s", json_number(s.allocation_time));
  field("analysis_s", json_number(s.analysis_seconds));
  field("clock_violations", "{\"point_to_point\": " + std::to_string(s.p2p_clock_violations) +
                                ", \"collective\": " + std::to_string(s.coll_clock_violations) +
                                "}");
  field("time_correction",
        std::string("{\"applied\": ") + (s.time_corrected ? "true" : "false") +
            ", \"moved_events\": " + std::to_string(s.corrected_events) +
            ", \"moved_ranks\": " + std::to_string(s.corrected_ranks) +
            ", \"max_shift_s\": " + json_number(s.max_correction) +
            ", \"consistent\": " + (s.correction_consistent ? "true" : "false") +
            ", \"jumped_events\": " + std::to_string(s.jumped_events) +
            ", \"max_jump_s\": " + json_number(s.max_jump) + "}");
  field("partial",
        std::string("{\"applied\": ") + (s.partial ? "true" : "false") +
            ", \"first_rank_to_stop\": " + std::to_string(s.partial ? s.partial_first_rank : -1) +
            ", \"incomplete_ranks\": " + std::to_string(s.partial_incomplete_ranks) +
            ", \"events_cut\": " + std::to_string(s.partial_events_cut) +
            ", \"regions_closed\": " + std::to_string(s.partial_regions_closed) +
            ", \"unmatched_messages\": " + std::to_string(s.partial_unmatched_messages) +
            ", \"collectives_dropped\": " + std::to_string(s.partial_collectives_dropped) + "}");
  std::string cps = "[";
  for (std::size_t i = 0; i < s.callpaths.size(); ++i) {
    const SummaryCallpath& c = s.callpaths[i];
    cps += std::string(i ? "," : "") + "\n    {\"path\": " + json_string(c.path) +
           ", \"name\": " + json_string(c.name) +
           ", \"critical_path_s\": " + json_number(c.critical_path) +
           ", \"critical_path_share\": " + json_number(c.critical_path_share) +
           ", \"imbalance_s\": " + json_number(c.imbalance) +
           ", \"imbalance_share\": " + json_number(c.imbalance_share) +
           ", \"imbalance_of_average\": " + json_number(c.imbalance_percent) +
           ", \"profile_imbalance_s\": " + json_number(c.profile_imbalance) +
           ", \"time_total_s\": " + json_number(c.time_total) +
           ", \"time_average_s\": " + json_number(c.time_average) +
           ", \"time_max_s\": " + json_number(c.time_max) + "}";
  }
  field("callpaths", cps + (s.callpaths.empty() ? "]" : "\n  ]"));
  std::string ws = "[";
  for (std::size_t i = 0; i < s.waits.size(); ++i) {
    const SummaryWaitMetric& w = s.waits[i];
    std::string where = "[";
    for (std::size_t j = 0; j < w.callpaths.size(); ++j)
      where += std::string(j ? ", " : "") + "{\"path\": " + json_string(w.callpaths[j].path) +
               ", \"seconds\": " + json_number(w.callpaths[j].seconds) + "}";
    std::string causes;
    if (w.has_causes) {
      causes = ", \"delay_short_term_s\": " + json_number(w.delay_short_term) +
               ", \"delay_long_term_s\": " + json_number(w.delay_long_term) +
               ", \"caused_by\": [";
      for (std::size_t j = 0; j < w.caused_by.size(); ++j) {
        const SummaryWaitMetric::Cause& c = w.caused_by[j];
        std::string ranks;
        for (std::size_t r = 0; r < c.ranks.size(); ++r)
          ranks += std::string(r ? ", " : "") + "{\"rank\": " + std::to_string(c.ranks[r].rank) +
                   ", \"seconds\": " + json_number(c.ranks[r].seconds) + "}";
        causes += std::string(j ? "," : "") + "\n      {\"path\": " + json_string(c.path) +
                  ", \"short_term_s\": " + json_number(c.short_term) +
                  ", \"long_term_s\": " + json_number(c.long_term) + ", \"ranks\": [" + ranks +
                  "], \"rank_count\": " + std::to_string(c.rank_count) +
                  ", \"named_ranks\": " + std::to_string(c.named_ranks) +
                  ", \"rank_names\": " + json_string(c.rank_names) + "}";
      }
      causes += "]";
    }
    if (w.has_classes)
      causes += ", \"indirect_s\": " + json_number(w.indirect) +
                ", \"propagating_s\": " + json_number(w.propagating);
    ws += std::string(i ? "," : "") + "\n    {\"metric\": " + json_string(w.metric) +
          ", \"name\": " + json_string(w.name) + ", \"seconds\": " + json_number(w.seconds) +
          ", \"share\": " + json_number(w.share) + ", \"callpaths\": " + where + "]" + causes +
          "}";
  }
  field("wait_states", ws + (s.waits.empty() ? "]" : "\n  ]"));
  const SummaryImpact& im = s.impact;
  field("impact", "{\"total_s\": " + json_number(im.total) +
                      ", \"critical_path_activities_s\": " +
                      json_number(im.critical_path_activities) +
                      ", \"imbalance_impact_s\": " + json_number(im.imbalance_impact) +
                      ", \"intra_partition_s\": " + json_number(im.intra_partition) +
                      ", \"inter_partition_s\": " + json_number(im.inter_partition) +
                      ", \"non_critical_path_activities_s\": " +
                      json_number(im.non_critical_path_activities) + "}");
  std::string fs = "[";
  for (std::size_t i = 0; i < s.findings.size(); ++i)
    fs += std::string(i ? "," : "") + "\n    " + json_string(s.findings[i]);
  field("findings", fs + (s.findings.empty() ? "]" : "\n  ]"));
  if (s.openmp.hybrid) {
    const SummaryOpenMp& om = s.openmp;
    auto names = [](const std::vector<std::string>& v) {
      std::string r = "[";
      for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + json_string(v[i]);
      return r + "]";
    };
    std::string bars = "[";
    for (std::size_t i = 0; i < om.barriers.size(); ++i) {
      const SummaryOmpBarrier& b = om.barriers[i];
      std::string most = "[";
      for (std::size_t k = 0; k < b.waiting_most.size(); ++k)
        most += std::string(k ? ", " : "") + "{\"thread\": " + json_string(b.waiting_most[k]) +
                ", \"seconds\": " + json_number(b.waiting_most_s[k]) + "}";
      bars += std::string(i ? "," : "") + "\n    {\"path\": " + json_string(b.path) +
              ", \"construct\": " + json_string(b.construct) +
              ", \"seconds\": " + json_number(b.seconds) +
              ", \"last_to_arrive\": " + names(b.last_to_arrive) + ", \"waiting_most\": " +
              most + "]}";
    }
    bars += om.barriers.empty() ? "]" : "\n  ]";
    field("openmp", "{\"thread_locations\": " + std::to_string(om.locations) +
                        ", \"idle_threads_serial_s\": " + json_number(om.idle_serial) +
                        ", \"limited_parallelism_s\": " + json_number(om.limited_parallelism) +
                        ", \"management_s\": " + json_number(om.management) +
                        ", \"ibarrier_wait_s\": " + json_number(om.ibarrier_wait) +
                        ", \"ebarrier_wait_s\": " + json_number(om.ebarrier_wait) +
                        ", \"lock_contention_critical_s\": " + json_number(om.lock_critical) +
                        ", \"lock_contention_api_s\": " + json_number(om.lock_api) +
                        ", \"worker_time_s\": " + json_number(om.worker_time) +
                        ",\n  \"barriers\": " + bars + "}");
  }
  std::string worst = "[";
  for (std::size_t i = 0; i < s.worst.size(); ++i) {
    const SummaryWaitInstance& w = s.worst[i];
    worst += std::string(i ? "," : "") + "\n    {\"metric\": " + json_string(w.metric) +
             ", \"name\": " + json_string(w.name) + ", \"path\": " + json_string(w.path) +
             ", \"rank\": " + std::to_string(w.rank) + ", \"start_s\": " + json_number(w.start) +
             ", \"duration_s\": " + json_number(w.duration) + "}";
  }
  field("worst_wait_states", worst + (s.worst.empty() ? "]" : "\n  ]"));
  field("what_if", what_if_json(s.what_if), true);
  return o + "}\n";
}

void check_json_writable(const std::string& path) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw UsageError("cannot write JSON summary " + path + ": " + std::strerror(errno));
  std::fclose(f);
  std::remove(tmp.c_str());
}

void write_summary_json(const std::string& path, const Summary& summary) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw UsageError("cannot write JSON summary " + path + ": " + std::strerror(errno));
  const std::string text = summary_json(summary);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write JSON summary " + path + ": " + std::strerror(err ? err : errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw UsageError("cannot write JSON summary " + path + ": " + std::strerror(e));
  }
}

}  // namespace cpreplay::io
