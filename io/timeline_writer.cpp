// SPDX-License-Identifier: BSD-3-Clause
// Chrome trace-event JSON text for --timeline.
#include "io/timeline_writer.hpp"

#include <charconv>

#include "cpreplay/names.hpp"

namespace cpreplay::io {
namespace {

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// Nanoseconds as microseconds with three decimals: exact, and monotone like the input.
void append_us(std::string& out, std::uint64_t ns) {
  append_uint(out, ns / 1000);
  const auto frac = static_cast<unsigned>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

void append_double(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xE  ? 3
                  : (c >> 3) == 0x1E ? 4
                                     : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

/// The head every complete ("X") event shares: phase, process, thread, start and duration.
void complete_head(std::string& out, int pid, int tid, std::uint64_t ts_ns, std::uint64_t dur_ns) {
  out += ",\n{\"ph\":\"X\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"ts\":";
  append_us(out, ts_ns);
  out += ",\"dur\":";
  append_us(out, dur_ns);
}

}  // namespace

std::string TimelineFormat::quote(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    } else if (const std::size_t n = utf8_length(text, i); n > 0) {
      out.append(text, i, n);
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

TimelineFormat::TimelineFormat(const Definitions& defs, const CallTree& tree) {
  // Event names: the regions' demangled names, shortened where long (never two alike); the
  // stack frames hold them whole, once per call path.
  std::vector<std::string> regions(defs.regions.size());
  for (std::size_t r = 0; r < regions.size(); ++r) regions[r] = demangle(defs.regions[r].name);
  const std::vector<std::string> shown = shorten_names(regions, kNameWidth);
  const std::size_t n = tree.size();
  name_.resize(n);
  frames_ = "\"stackFrames\":{";
  for (std::size_t c = 0; c < n; ++c) {
    const CallTree::Node& node = tree.node(CallpathId{static_cast<std::uint32_t>(c)});
    const bool known = node.region.value < regions.size();
    const std::string& region = known ? regions[node.region.value] : std::string("(unknown)");
    name_[c] = "\"name\":" + quote(known ? shown[node.region.value] : region);
    frames_ += (c ? ",\n\"" : "\n\"") + std::to_string(c) + "\":{\"name\":" + quote(region);
    if (node.parent.valid() && node.parent.value < c)
      frames_ += ",\"parent\":\"" + std::to_string(node.parent.value) + "\"";
    frames_ += "}";
  }
  frames_ += "\n}";
}

void TimelineFormat::append_frame(std::string& out, std::uint32_t callpath) const {
  if (callpath >= name_.size()) return;
  out += ",\"sf\":";
  append_uint(out, callpath);
}

std::string TimelineFormat::header(int pid, const std::string& process_name, int sort_index) {
  std::string first;
  TimelineFormat::process_name(first, pid, process_name, sort_index);
  return "{\"traceEvents\":[\n" + first.substr(2);  // the first event has no leading comma
}

std::string TimelineFormat::footer(
    const std::vector<std::pair<std::string, std::string>>& other) const {
  std::string out = "\n],\n" + frames_ + ",\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{";
  for (std::size_t i = 0; i < other.size(); ++i)
    out += (i ? ",\n" : "\n") + quote(other[i].first) + ":" + other[i].second;
  return out + "\n}}\n";
}

void TimelineFormat::activity(std::string& out, int pid, int tid, std::uint64_t ts_ns,
                              std::uint64_t dur_ns, std::uint32_t callpath) const {
  complete_head(out, pid, tid, ts_ns, dur_ns);
  out += ',';
  out += callpath < name_.size() ? name_[callpath] : unknown_name_;
  append_frame(out, callpath);
  out += '}';
}

void TimelineFormat::wait_state(std::string& out, int pid, int tid, std::uint64_t ts_ns,
                                std::uint64_t dur_ns, const char* name, int partner,
                                bool partner_is_thread, double wait_s,
                                std::uint32_t callpath) const {
  complete_head(out, pid, tid, ts_ns, dur_ns);
  out += ",\"name\":\"";
  out += name;  // a metric's display name: plain ASCII
  out += '"';
  append_frame(out, callpath);
  out += partner_is_thread ? ",\"args\":{\"partner_thread\":" : ",\"args\":{\"partner_rank\":";
  append_int(out, partner);
  out += ",\"waiting_time_s\":";
  append_double(out, wait_s);
  out += "}}";
}

void TimelineFormat::stretch(std::string& out, int pid, int tid, int rank, int thread,
                             std::uint64_t ts_ns, std::uint64_t dur_ns,
                             std::uint32_t callpath) const {
  complete_head(out, pid, tid, ts_ns, dur_ns);
  out += ",\"name\":\"rank ";
  append_int(out, rank);
  if (thread >= 0) {
    out += " thread ";
    append_int(out, thread);
  }
  out += '"';
  append_frame(out, callpath);
  out += ",\"args\":{\"rank\":";
  append_int(out, rank);
  if (thread >= 0) {
    out += ",\"thread\":";
    append_int(out, thread);
  }
  out += "}}";
}

void TimelineFormat::flow(std::string& out, char phase, std::uint64_t id, int pid, int tid,
                          std::uint64_t ts_ns) {
  out += ",\n{\"ph\":\"";
  out += phase;
  out += phase == 'f' ? "\",\"bp\":\"e\",\"id\":" : "\",\"id\":";
  append_uint(out, id);
  out += ",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"ts\":";
  append_us(out, ts_ns);
  out += ",\"name\":\"critical path\",\"cat\":\"critical_path\"}";
}

void TimelineFormat::process_name(std::string& out, int pid, const std::string& name,
                                  int sort_index) {
  out += ",\n{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":0,\"ts\":0,\"name\":\"process_name\",\"args\":{\"name\":" + quote(name) + "}}";
  out += ",\n{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":0,\"ts\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":";
  append_int(out, sort_index);
  out += "}}";
}

void TimelineFormat::thread_sort_index(std::string& out, int pid, int tid, int sort_index) {
  out += ",\n{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"ts\":0,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":";
  append_int(out, sort_index);
  out += "}}";
}

void TimelineFormat::thread_name(std::string& out, int pid, int tid, const std::string& name) {
  out += ",\n{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"ts\":0,\"name\":\"thread_name\",\"args\":{\"name\":" + quote(name) + "}}";
}

}  // namespace cpreplay::io
