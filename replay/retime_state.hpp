// SPDX-License-Identifier: BSD-3-Clause
// The re-timing replay's shared vocabulary (docs/what-if.md): the clock type, the record kinds
// on the transport, a collective's binding rule, the per-event bit sets and the small tables the
// phases (retime_prepare, retime_forward, retime_backward, retime_hosting, retime_openmp,
// retime_path) and the driver (retime.cpp) pass between them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cpreplay/definitions.hpp"
#include "cpreplay/events.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/retime.hpp"

namespace cpreplay::replay::detail::retiming {

using Clk = std::int64_t;

/// On functions whose loops run over every clock: built twice on x86-64 with GCC and glibc, for
/// AVX2 (four 64-bit clocks per instruction, and 64-bit compares for the maxima) and for the
/// default target, the loader picking one for the CPU (GCC's target_clones, a glibc ifunc).
/// Integer arithmetic and unfused double products (-ffp-contract=off) give the same values
/// either way. Not under clang (the sanitizer and fuzzing builds): the default build only. On
/// the definitions only (a clone is local to its file; other files call the dispatcher).
/// CPREPLAY_BIT_LOOPS, on the preparation's functions that rank events in their bit sets
/// (EventBits::rank, select) per message or per event: built for CPUs with the POPCNT
/// instruction too, which the default target lacks, so popcount64's bit arithmetic becomes one
/// instruction there (the same count either way).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define CPREPLAY_CLOCK_LOOPS __attribute__((target_clones("avx2", "default")))
#define CPREPLAY_BIT_LOOPS __attribute__((target_clones("popcnt", "default")))
#else
#define CPREPLAY_CLOCK_LOOPS
#define CPREPLAY_BIT_LOOPS
#endif

constexpr Clk kNeg = std::numeric_limits<Clk>::min() / 4;  // "no constraint" in max
constexpr Clk kPos = std::numeric_limits<Clk>::max() / 4;  // "no constraint" in min

/// Record kinds on the transport: forward (F) and backward (B).
enum Rec : std::uint8_t {
  kLsF = 1,  ///< sender -> receiver: the send call's Enter, per clock
  kLrF,      ///< receiver -> sender: the receive request call's Enter, per clock
  kUpF,      ///< member -> host: a collective begin, per clock (or "not a source")
  kReqF,     ///< binding member -> host: "tell me my constraint"
  kDownF,    ///< host -> binding member: its constraint, per clock
  kLsB,      ///< receiver -> sender: latest time for the send call's Enter
  kLrB,      ///< sender -> receiver: latest time for the request call's Enter
  kUpB,      ///< binding member -> host: latest time its begin sources allow
  kDownB,    ///< host -> source member: latest time for its begin
};

/// How a collective instance binds (the wait-state rules, scalasca-metrics.md §4).
enum class Bind : std::uint8_t {
  None,     ///< nobody waits (zero payload, non-blocking, Alltoallv/w, alone)
  All,      ///< binding members wait for the latest begin of all members
  Senders,  ///< binding members wait for the latest begin of the members that sent
  Root,     ///< binding members wait for the root's begin
  Scan,     ///< a binding member waits for the latest begin of the senders up to itself
  Reset,    ///< All, on all ranks, every rank binding: the run is cut into parts there
};

struct CollEntry {
  EventIdx begin = kNoEvent;
  EventIdx end = kNoEvent;
  std::uint32_t comm = 0;
  std::uint32_t k = 0;
  std::uint32_t local = 0;  ///< this rank's communicator-local rank
  Bind type = Bind::None;
  bool binds = false;   ///< this rank's end waits (rules)
  bool source = false;  ///< this rank's begin is a partner of the binding members
  bool up = false;      ///< this rank sends its begin (or a marker) to the host
};

/// The largest v with double(v) <= limit, so that the slack pass compares slacks (integer
/// ticks) with the limit (seconds times ticks per second, a double) in integers: the conversion
/// to double is monotonic, so double(v) <= limit iff v <= this. (The pass runs only with a
/// limit >= 0; NaN, which no comparison holds for, gives the lowest value.)
inline Clk slack_ticks(double limit) {
  if (std::isnan(limit)) return std::numeric_limits<Clk>::min();
  if (limit >= 0x1p63) return std::numeric_limits<Clk>::max();
  if (limit < -0x1p63) return std::numeric_limits<Clk>::min();
  auto v = static_cast<Clk>(limit);             // truncated toward zero...
  while (static_cast<double>(v) > limit) --v;  // ...which is upwards for a negative limit
  while (v < std::numeric_limits<Clk>::max() && static_cast<double>(v + 1) <= limit) ++v;
  return v;
}

/// Set bits of a word. x86-64 compilers without -mpopcnt (the default target) make
/// __builtin_popcountll a call into libgcc: 2.4 % of the what-if phase's instructions on the
/// bench stencil, with the call's overhead at each rank() beside it. Inline bit arithmetic there.
inline std::uint32_t popcount64(std::uint64_t x) {
#if defined(__x86_64__) && !defined(__POPCNT__)
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<std::uint32_t>((x * 0x0101010101010101ull) >> 56);
#else
  return static_cast<std::uint32_t>(__builtin_popcountll(x));
#endif
}

/// One bit per event, and the number of set bits before an event in O(1): the per-message and
/// per-synchronization tables are indexed by it, so no lookup searches (0.19 B per event).
class EventBits {
 public:
  void resize(std::size_t events) { words_.assign((events + 63) / 64 + 1, 0); }
  bool empty() const { return words_.empty(); }  ///< never resized (or released)
  void set(EventIdx e) { words_[e >> 6] |= std::uint64_t{1} << (e & 63); }
  void reset(EventIdx e) { words_[e >> 6] &= ~(std::uint64_t{1} << (e & 63)); }
  bool test(EventIdx e) const { return (words_[e >> 6] >> (e & 63)) & 1u; }
  /// Sets every bit set in o (sized alike or smaller; rank() needs finish() again).
  void merge(const EventBits& o) {
    for (std::size_t i = 0; i < o.words_.size() && i < words_.size(); ++i) words_[i] |= o.words_[i];
  }
  /// After the last set(): makes rank() work.
  void finish() {
    before_.resize(words_.size());
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < words_.size(); ++i) {
      before_[i] = count;
      count += popcount64(words_[i]);
    }
  }
  /// Set bits before e (the index of e's entry when e is set).
  std::uint32_t rank(EventIdx e) const {
    const std::uint64_t below = words_[e >> 6] & ((std::uint64_t{1} << (e & 63)) - 1);
    return before_[e >> 6] + popcount64(below);
  }
  /// After finish(): the set bit of rank i (i < the number of set bits), the inverse of rank().
  /// Lookups in increasing i go on from the previous one's word (amortized O(1)); others
  /// search.
  EventIdx select(std::uint32_t i) const {
    std::size_t w = hint_ < before_.size() && before_[hint_] <= i ? hint_ : 0;
    if (w == 0)
      w = static_cast<std::size_t>(std::upper_bound(before_.begin(), before_.end(), i) -
                                   before_.begin()) - 1;
    while (w + 1 < before_.size() && before_[w + 1] <= i) ++w;
    hint_ = w;
    std::uint64_t bits = words_[w];
    for (std::uint32_t k = before_[w]; k < i; ++k) bits &= bits - 1;
    return static_cast<EventIdx>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
  }
  /// The first set bit at or after e, or kNoEvent.
  EventIdx next(EventIdx e) const {
    std::size_t w = e >> 6;
    if (w >= words_.size()) return kNoEvent;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (e & 63));
    while (bits == 0) {
      if (++w >= words_.size()) return kNoEvent;
      bits = words_[w];
    }
    return static_cast<EventIdx>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
  }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint32_t> before_;
  mutable std::size_t hint_ = 0;  ///< select: the word of the last lookup
};

/// A synchronization whose time, in the profiled clock, came from a partner: the re-timed run's
/// critical path jumps from it to the partner's event. 20 B.
struct Hop {
  enum Kind : std::uint8_t {
    kCallOf,  ///< the Enter of the MPI call holding event a on `rank`
    kBegin,   ///< the begin of instance b on communicator a
    kCut,     ///< the begin of the a-th cut
    kThread,  ///< event b of thread a of the same rank (an OpenMP synchronization's partner)
  };
  EventIdx event = kNoEvent;  ///< the synchronization on this location
  Rank rank = -1;             ///< where the path continues
  std::uint8_t kind = kCallOf;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

/// Where a gate's new time came from in the profiled clock: its latest writer (ties to the
/// lower thread). Every reader of the gate that hops (Hop::kThread) hops there, so the rank
/// keeps this once per gate and a bit per hopping event, not a hop per reader.
struct GateFrom {
  std::uint32_t thread = 0;    ///< the thread whose event the path continues at
  EventIdx event = kNoEvent;  ///< that event
};

/// Set bits of an EventBits before event y: the index of the latest one strictly before y, or
/// UINT32_MAX (rank() and select() after finish()).
inline std::uint32_t latest_bit_before(const EventBits& bits, EventIdx y) {
  if (bits.empty()) return UINT32_MAX;
  const std::uint32_t r = bits.rank(y);
  return r == 0 ? UINT32_MAX : r - 1;
}

/// A hop as its target rank gets it: which of its events the path reaches.
struct HopTarget {
  std::uint32_t kind;
  std::uint32_t a;
  std::uint32_t b;
};

inline std::uint64_t key_of(Rec r, std::uint32_t hi, std::uint32_t lo) {
  return (std::uint64_t{r} << 56) | (std::uint64_t{hi} << 32) | lo;
}

/// Open-addressing map from non-zero 64-bit keys to values (records waiting for their event):
/// one probe sequence per lookup, no allocation per record. A key and its value share a slot
/// (16 B), so that a lookup touches one cache line, not one in each of two arrays.
class FlatMap {
 public:
  FlatMap() { slots_.assign(64, Slot{}); }
  bool find(std::uint64_t key, Clk& value) const {
    for (std::size_t i = slot(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) {
        value = slots_[i].value;
        return true;
      }
      if (slots_[i].key == 0) return false;
    }
  }
  /// Inserts; a key already present is overwritten (returns false).
  bool insert(std::uint64_t key, Clk value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return false;
      }
      if (slots_[i].key == 0) {
        slots_[i] = Slot{key, value};
        ++size_;
        return true;
      }
    }
  }
  void erase(std::uint64_t key) {
    std::size_t i = slot(key);
    for (;; i = (i + 1) & mask()) {
      if (slots_[i].key == 0) return;
      if (slots_[i].key == key) break;
    }
    // Backward shift: later entries of the probe run move up, so lookups never see a hole.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (slots_[j].key == 0) break;
      const std::size_t home = slot(slots_[j].key);
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].key = 0;
    --size_;
  }
  std::size_t size() const { return size_; }
  void clear() {
    slots_.assign(64, Slot{});
    size_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Clk value = 0;
  };
  std::size_t mask() const { return slots_.size() - 1; }
  /// The event (low 32 bits) plus an offset drawn from the kind and partner (high 32 bits):
  /// a part's records for nearby events lie in nearby slots, so a replay walking its events
  /// finds them in cache lines it just used (a multiplicative hash of the whole key put every
  /// lookup on a line of its own: 14 % of the slack pass's time was that cache miss).
  std::size_t slot(std::uint64_t key) const {
    const std::uint64_t offset = ((key >> 32) * 0x9E3779B97F4A7C15ull) >> 32;
    return static_cast<std::size_t>((key & 0xFFFFFFFFull) + offset) & mask();
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != 0) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

/// Per collective instance on its host (the member of local rank k mod size).
struct HostInstance {
  Bind type = Bind::None;
  std::uint32_t comm = 0;
  std::uint32_t size = 0;
  std::uint32_t expected = 0;  ///< begin records to wait for
  std::uint32_t got = 0;
  std::vector<Clk> clocks;     ///< max per clock; Scan: size x clocks, per local rank
  Rank argmax = -1;            ///< whose begin is latest in the profiled clock (not Scan)
  std::vector<std::uint8_t> arrived;  ///< Scan: per local rank
  std::vector<std::pair<Rank, std::uint32_t>> waiting;  ///< binders to answer (rank, local)
  std::uint32_t binders = 0;
  std::vector<std::uint32_t> binder_locals;  ///< Scan
  std::vector<std::uint32_t> source_locals;  ///< Senders, Scan, Root
  // Backward.
  std::uint32_t binders_in = 0;
  Clk min_value = kPos;
  std::vector<Clk> binder_values;  ///< Scan: per binder_locals entry
  std::vector<std::uint8_t> binder_in;  ///< Scan
  std::vector<std::uint8_t> replied;  ///< per source (All: per local rank)
  bool all_replied = false;
};

/// A matched send's note to its receiver: in which candidate segments the send and its binding
/// completion lie.
struct SendNote {
  Rank dest;             ///< the receiver
  EventIdx request;      ///< the receiver's request event
  std::uint32_t send;    ///< the send's segment
  std::uint32_t attach;  ///< the binding completion's segment, or UINT32_MAX
};

/// A collective member's note to the instance's host: in which segment it begins.
struct MemberNote {
  Rank dest;  ///< the host
  std::uint32_t comm, k, segment;
};

/// A scenario's change to one call path's time, on one clock.
struct Mod {
  std::uint32_t clock;
  int slot;  ///< Balance: its slot among the open visits; -1: a factor
  double factor;
};

/// A collective instance's rule on this rank, while preparing.
struct InstanceInfo {
  CollEntry entry;
  Ticks latest_begin = 0;
  Ticks ready = 0;        ///< binding: the original time of what it waits for
  bool reset_ok = false;  ///< this rank allows a cut here
};

/// The instance's binding rule on rank trace.rank (the wait-state pass's rules, decided on the
/// original run; the re-timed run recomputes only the times).
InstanceInfo classify_instance(const Definitions& defs, const LocalTrace& trace,
                               const CollInstance& inst, const CollTiming& t);

/// 12 B, not 16: one per receive and binding synchronization, all held until the end of the
/// preparation (the what-if phase's peak); x86-64 reads the unaligned time as fast.
#pragma pack(push, 4)
struct Ready {
  EventIdx event;
  Ticks time;
};
#pragma pack(pop)
static_assert(sizeof(Ready) == 12, "Ready is held per synchronization");

/// The marker of a 4-byte time that did not fit (kept exactly in a side map instead), and
/// whether a value fits: NearTimes and Gaps.
inline constexpr std::int32_t kFarTime = std::numeric_limits<std::int32_t>::min();
inline bool fits_near(std::int64_t v) {
  return v > kFarTime && v <= std::numeric_limits<std::int32_t>::max();
}

/// The original ready times the matching finds (a receive's send Enter, a Late Receiver's
/// request Enter), held from the forward replay to the what-if phase's preparation: each as its
/// distance before the time of the event it binds, 4 B instead of 8. A distance beyond 31 bits
/// (kFar) is kept exactly in a side map by event (the latest there: only the latest ready time
/// of an event counts).
class NearTimes {
 public:
  static constexpr std::int32_t kFar = kFarTime;
  std::int32_t encode(EventIdx e, Ticks at, Ticks ready) {
    const std::int64_t d = static_cast<std::int64_t>(at - ready);
    if (fits_near(d)) return static_cast<std::int32_t>(d);
    auto [it, fresh] = far_.emplace(e, ready);
    if (!fresh) it->second = std::max(it->second, ready);
    return kFar;
  }
  Ticks decode(EventIdx e, Ticks at, std::int32_t before) const {
    return before == kFar ? far_.at(e) : at - static_cast<Ticks>(static_cast<std::int64_t>(before));
  }
  void release() { std::unordered_map<EventIdx, Ticks>().swap(far_); }

 private:
  std::unordered_map<EventIdx, Ticks> far_;
};

/// Per synchronization, its original completion time (end minus the latest ready time, in
/// ticks): usually microseconds, so 4 B each; one beyond 31 bits is kept exactly in a side map.
/// Held through the what-if replay, read at every synchronization.
class Gaps {
 public:
  void reserve(std::size_t n) { near_.reserve(n); }
  std::size_t size() const { return near_.size(); }
  void push_back(Clk gap) {
    if (fits_near(gap)) {
      near_.push_back(static_cast<std::int32_t>(gap));
    } else {
      far_.emplace(static_cast<std::uint32_t>(near_.size()), gap);
      near_.push_back(kFarTime);
    }
  }
  Clk operator[](std::size_t i) const {
    const std::int32_t g = near_[i];
    return g != kFarTime ? g : far_.at(static_cast<std::uint32_t>(i));
  }

 private:
  std::vector<std::int32_t> near_;
  std::unordered_map<std::uint32_t, Clk> far_;
};

/// LocalTrace::call_of for events that come in event order, mostly a few completions of one
/// MPI call after another: the last call found, its Leave, and whether no region opens inside
/// it. Where none does, every event between its Enter and Leave lies directly in it, found
/// without call_of's scan back (66 instructions a completion on the bench reference trace).
struct LastCall {
  EventIdx enter = kNoEvent;
  EventIdx leave = kNoEvent;  ///< the call's Leave, or kNoEvent (not closed)
  bool flat = false;

  EventIdx of(const LocalTrace& trace, EventIdx e) {
    if (flat && enter < e && e < leave) return enter;
    const EventIdx call = trace.call_of(e);
    if (call == enter) return call;
    *this = LastCall{call, kNoEvent, call != kNoEvent};
    int depth = 0;
    for (EventIdx i = call + 1; call != kNoEvent && i < trace.size(); ++i) {
      const EventKind k = trace.kind[i];
      if (k == EventKind::Enter) {
        ++depth;
        flat = false;
      } else if (k == EventKind::Leave) {
        if (depth == 0) {
          leave = i;
          break;
        }
        --depth;
      }
    }
    return call;
  }
};

/// A column of values of which a location has few distinct ones: 1 B each while there are at
/// most 255 of them, an index into their table; 4 B each from the 256th on. A rank per matched
/// message (RankColumn: a rank talks to a handful of neighbours), a call path per OpenMP event
/// (PathColumn: the parallel regions and barriers a thread runs).
template <class V>
class CodeColumn {
 public:
  void reserve(std::size_t n) { codes_.reserve(n); }
  std::size_t size() const { return wide_mode_ ? wide_.size() : codes_.size(); }
  void push_back(V r) {
    if (wide_mode_) {
      wide_.push_back(r);
      return;
    }
    // A handful of distinct values (a rank's neighbours): a look through the table beats the
    // hash map's lookup.
    if (table_.size() <= kScan) {
      for (std::size_t c = 0; c < table_.size(); ++c)
        if (table_[c] == r) {
          codes_.push_back(static_cast<std::uint8_t>(c));
          return;
        }
    }
    auto it = index_.find(r);
    if (it == index_.end()) {
      if (table_.size() == kCodes) {
        widen();
        wide_.push_back(r);
        return;
      }
      it = index_.emplace(r, static_cast<std::uint8_t>(table_.size())).first;
      table_.push_back(r);
    }
    codes_.push_back(it->second);
  }
  /// After the last push_back: the lookup table goes.
  void finish() { std::unordered_map<V, std::uint8_t>().swap(index_); }
  V operator[](std::size_t i) const { return wide_mode_ ? wide_[i] : table_[codes_[i]]; }

 private:
  static constexpr std::size_t kCodes = 255;
  static constexpr std::size_t kScan = 8;
  void widen() {
    wide_.reserve(codes_.capacity());
    for (const std::uint8_t c : codes_) wide_.push_back(table_[c]);
    std::vector<std::uint8_t>().swap(codes_);
    finish();
    wide_mode_ = true;
  }
  bool wide_mode_ = false;
  std::vector<std::uint8_t> codes_;
  std::vector<V> table_;
  std::unordered_map<V, std::uint8_t> index_;
  std::vector<V> wide_;
};
using RankColumn = CodeColumn<Rank>;
using PathColumn = CodeColumn<std::uint32_t>;

/// A Late Receiver's binding completion and its ready time (NearTimes). 8 B.
struct LateEntry {
  EventIdx event;
  std::int32_t before;
};

/// What the re-timing replay keeps of one rank's message matching, taken as the matching hands
/// the messages over (the forward replay's, RetimeMatches, or the what-if phase's own); a
/// RankRetimer takes the tables over (take_matches). Bits per event, entries indexed by rank().
/// Held from the forward replay to the what-if phase: 4 B per matched send and 8 B per matched
/// receive, in vectors sized by the trace's sends and receives, and 4 B per binding Late
/// Receiver. The partners' ranks (RankColumn) come with the matched messages (the matching
/// knows them: looking them up again in the trace's message records cost 2.4 % of the what-if
/// phase's instructions on the bench reference trace); the Late Receivers' binding completions
/// are added at the what-if phase's start (resolve_peers), from the trace's message records,
/// which nothing needs after that (the pipeline then releases them); a send's event follows
/// from the bits (select).
class MatchRecorder final : public MessageSink {
 public:
  MatchRecorder(const Definitions& defs, const LocalTrace& trace);
  void receives(const MatchedRecv* m, std::size_t n, EventIdx) override;
  void sends(const MatchedSend* m, std::size_t n, EventIdx) override;
  /// After the matching, while the trace's message records are there: `late` (once; later
  /// calls do nothing).
  void resolve_peers();

  EventBits sent;   ///< matched sends
  std::vector<EventIdx> send_request;  ///< per matched send: the receiver's request event
  RankColumn send_dest;                ///< per matched send: the receiver
  EventBits lr;     ///< matched sends whose completion waits for the receiver (Late Receiver)
  EventBits recvd;  ///< matched receive completions
  std::vector<EventIdx> recv_sender;  ///< per matched receive: the sender's send event
  RankColumn recv_source;             ///< per matched receive: the sender
  /// per matched receive: the Enter of the send's call, before the receive (ready_times)
  std::vector<std::int32_t> recv_ready;
  /// Per Late Receiver send, in send order: the Enter of the receive request's call before the
  /// completion the send binds (ready_times); with that completion in `late` (resolve_peers).
  std::vector<std::int32_t> late_before;
  std::vector<LateEntry> late;
  NearTimes ready_times;
  /// The forward replay's collective timings as rules (collectives), in the order they came:
  /// the what-if phase takes them instead of reducing the timings again
  /// (RetimeMatches::collectives_done).
  std::vector<InstanceInfo> rules;
  void collectives(const CollInstance* inst, const CollTiming* timing, std::size_t n);

 private:
  /// Late Receiver (scalasca-metrics.md §5.3): a synchronous send's completion waits for the
  /// receive request when its call ends after the request was entered. `attach`: the event the
  /// constraint binds (the blocking send call's Leave, or the MpiIsendComplete).
  bool late_receiver_binds(EventIdx s, Ticks request_enter, EventIdx& attach) const;
  /// The `attach` of a send whose Late Receiver constraint binds.
  EventIdx binding_completion(EventIdx s) const {
    return trace_.kind[s] == EventKind::Isend ? trace_.message(s).partner
                                              : trace_.leave_of(trace_.call_of(s));
  }

  const Definitions& defs_;
  const LocalTrace& trace_;
  bool resolved_ = false;
  /// late_receiver_binds: the last MPI call looked at, and its class.
  mutable LastCall last_call_;
  mutable MpiClass last_class_ = MpiClass::None;
};

/// One gate, on the master: one OpenMP synchronization of a rank's threads. Its writers and
/// readers are events of different threads of one team instance (at most one each per thread,
/// or one each for a lock hand-over), so 16-bit counts hold them (prepare_openmp refuses
/// more). 12 B.
struct Gate {
  static constexpr std::uint16_t kMaxCount = UINT16_MAX;
  std::uint16_t writers = 0;  ///< events whose new times it combines
  std::uint16_t readers = 0;  ///< events it binds
  std::uint16_t got = 0;      ///< forward: writes so far; backward: readers' values so far
  std::uint16_t read = 0;     ///< forward: reads so far
  std::uint32_t slot = UINT32_MAX;  ///< forward: its clocks in gate_pool_, while in use
};
static_assert(sizeof(Gate) == 12, "one per OpenMP synchronization of a rank");

/// One part of the run (cut to cut) being replayed, forward or backward.
struct Part {
  std::uint32_t index = 0;
  EventIdx start = 0, stop = 0;
  EventIdx e = 0;
  std::uint32_t cc = 0;  ///< forward: next collective entry (by end); backward: last <= e, +1
  std::uint32_t cp = UINT32_MAX;
  Clk base = 0;  ///< the original latest begin of the cut that starts the part (0: the first)
  Clk prev = 0;  ///< original time of event e - 1
  Clk enter_lag = 0;  ///< forward (masters): ticks every clock of its MPI call's Enter lags
  bool done = false;
  EventIdx shipped = kNoEvent;   ///< event whose pre-wait records went out
  EventIdx requested = kNoEvent; ///< collective end whose request went to the host
  EventIdx released = kNoEvent;  ///< event replayed without its constraints (a stall)
  std::vector<std::pair<EventIdx, EventIdx>> pending;  ///< forward: (Leave, blocking send)
  struct Wait {
    EventIdx at;
    std::uint64_t key;
  };
  std::vector<Wait> waits;  ///< backward: records an earlier event needs
  Clk L = 0;                ///< backward: latest time of event e
  /// forward: the balance factors of the balanced visits nested in the last visit whose
  /// factor was found by walking it, in Enter order (RankRetimer::visit_factor(Part&, ...)).
  static constexpr std::uint8_t kMemo = 16;
  std::uint8_t memo_head = 0, memo_size = 0;
  EventIdx memo_enter[kMemo];
  double memo_factor[kMemo];
};

class Retimer;

/// What every held rank's replay shares.
struct Context {
  const Definitions& defs;
  const CallTree& tree;
  const RetimeRequest& req;
  std::uint32_t S;     ///< clocks
  std::size_t window;  ///< parts per window
  int path;            ///< the clock whose critical path is profiled, or -1
};

}  // namespace cpreplay::replay::detail::retiming
