// SPDX-License-Identifier: BSD-3-Clause
// cpreplay-mktrace: writes deterministic scenario traces (and the README's example) with TraceWriter.
//
// Each rank runs a list of operations; a small discrete-event simulator (a port of
// ../shared/tools/simtrace.py's) gives every operation causally consistent times in integer
// nanoseconds: a receive completes no earlier than its send's Enter + latency, a collective ends
// after the begins it depends on (all of them for N-to-N, the root's for 1-to-N, lower ranks' for
// Scan), and regions nest. No randomness: "jitter" is a fixed hash of rank and iteration.
#include "tests/support/trace_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using cpreplay::testing::CollOpT;
using cpreplay::testing::TraceWriter;

constexpr std::int64_t kLatency = 2'000;  // message latency, ns (as simtrace)
constexpr std::int64_t kOverhead = 500;   // MPI call overhead, ns (as simtrace)
constexpr std::int64_t kStart = 10;       // Enter main; ProgramBegin is at 0

/// Data flow of a collective, deciding when each member may leave it.
enum class Flow { AllToAll, OneToAll, AllToOne, Scan };

enum class OpKind {
  Enter, Leave, Busy, Send, Recv, Isend, Irecv, Waitall, Coll, Init, Finalize, ParallelLoop
};

struct Op {
  Op(OpKind k, std::string n) : kind(k), name(std::move(n)) {}

  OpKind kind;
  std::string name;  // region or MPI call
  std::int64_t ns = 0;
  int peer = 0;      // world rank (only MPI_COMM_WORLD is used) or collective root
  int tag = 0;
  std::uint64_t bytes = 0;
  std::uint64_t request = 0;
  std::vector<std::uint64_t> requests;
  CollOpT op = CollOpT::Barrier;
  Flow flow = Flow::AllToAll;
};

/// The operation list of one rank.
class Program {
 public:
  explicit Program(int rank) : rank_(rank) {}
  int rank() const { return rank_; }
  const std::vector<Op>& ops() const { return ops_; }

  void enter(const std::string& name) { ops_.push_back({OpKind::Enter, name}); }
  void leave(const std::string& name) { ops_.push_back({OpKind::Leave, name}); }
  void busy(std::int64_t ns) {
    Op o{OpKind::Busy, ""};
    o.ns = ns;
    ops_.push_back(o);
  }
  void compute(const std::string& name, std::int64_t ns) {
    enter(name);
    busy(ns);
    leave(name);
  }
  void send(int dest, int tag, std::uint64_t bytes) {
    Op o{OpKind::Send, "MPI_Send"};
    o.peer = dest;
    o.tag = tag;
    o.bytes = bytes;
    ops_.push_back(o);
  }
  void recv(int src, int tag) {
    Op o{OpKind::Recv, "MPI_Recv"};
    o.peer = src;
    o.tag = tag;
    ops_.push_back(o);
  }
  std::uint64_t isend(int dest, int tag, std::uint64_t bytes) {
    Op o{OpKind::Isend, "MPI_Isend"};
    o.peer = dest;
    o.tag = tag;
    o.bytes = bytes;
    o.request = ++requests_;
    ops_.push_back(o);
    return o.request;
  }
  std::uint64_t irecv(int src, int tag) {
    Op o{OpKind::Irecv, "MPI_Irecv"};
    o.peer = src;
    o.tag = tag;
    o.request = ++requests_;
    ops_.push_back(o);
    return o.request;
  }
  void waitall(std::vector<std::uint64_t> requests) {
    Op o{OpKind::Waitall, "MPI_Waitall"};
    o.requests = std::move(requests);
    ops_.push_back(o);
  }
  /// root is a world rank, ignored (written as "no root") for AllToAll flows.
  void coll(const std::string& call, CollOpT op, Flow flow, std::uint64_t bytes, int root = 0) {
    Op o{OpKind::Coll, call};
    o.op = op;
    o.flow = flow;
    o.bytes = bytes;
    o.peer = root;
    ops_.push_back(o);
  }
  /// An OpenMP `parallel { for { body } }` on every thread of the rank: thread t works
  /// ns + jitter(rank, t, iteration) in `body`. With one thread per rank: `body` on the master
  /// alone, no OpenMP events (the pure-MPI twin of the same program).
  void parallel_loop(const std::string& body, std::int64_t ns, std::int64_t spread, int iteration) {
    Op o{OpKind::ParallelLoop, body};
    o.ns = ns;
    o.bytes = static_cast<std::uint64_t>(spread);
    o.tag = iteration;
    ops_.push_back(o);
  }
  void init() { ops_.push_back({OpKind::Init, "MPI_Init"}); }
  void finalize() { ops_.push_back({OpKind::Finalize, "MPI_Finalize"}); }

 private:
  int rank_;
  std::vector<Op> ops_;
  std::uint64_t requests_ = 0;
};

/// Deterministic "noise" in [0, range) ns from rank and iteration.
std::int64_t jitter(int r, int i, std::int64_t range) {
  std::uint64_t x = static_cast<std::uint64_t>(r) * 0x9E3779B97F4A7C15ULL +
                    static_cast<std::uint64_t>(i) * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return static_cast<std::int64_t>(x % static_cast<std::uint64_t>(range));
}

double sec(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

/// Runs the programs against each other and records their events into the writer.
class Simulator {
 public:
  Simulator(std::vector<Program>& progs, TraceWriter& out, int threads = 1)
      : progs_(progs), out_(out), size_(static_cast<int>(progs.size())), threads_(threads) {}

  void run() {
    const auto P = static_cast<std::size_t>(size_);
    clock_.assign(P, kStart);
    pc_.assign(P, 0);
    entered_.assign(P, std::nullopt);
    stack_.assign(P, {});
    pending_.assign(P, {});
    coll_seq_.assign(P, 0);
    for (int r = 0; r < size_; ++r) out_.program_begin(r, 0.0);
    std::size_t done = 0;
    while (done < P) {
      bool progress = false;
      for (int r = 0; r < size_; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        const auto& ops = progs_[ri].ops();
        while (pc_[ri] < ops.size()) {
          if (!step(r, ops[pc_[ri]])) break;  // blocked
          ++pc_[ri];
          progress = true;
          if (pc_[ri] == ops.size()) ++done;
        }
      }
      if (!progress && done < P) throw std::logic_error("simulated program deadlocks");
    }
    for (int r = 0; r < size_; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      if (!stack_[ri].empty()) throw std::logic_error("unbalanced regions on rank " + std::to_string(r));
      out_.program_end(r, sec(clock_[ri] + 10));
    }
  }

 private:
  struct Message {
    std::int64_t sent;  // time the send became visible (its Enter for blocking sends)
    std::uint64_t bytes;
  };
  struct Pending {
    bool is_recv;
    int peer;
    int tag;
  };
  using Channel = std::tuple<int, int, int>;  // src, dst, tag

  /// Executes op on rank r; returns false (without side effects that matter) if r must wait.
  bool step(int r, const Op& op) {
    const auto ri = static_cast<std::size_t>(r);
    std::int64_t t = clock_[ri];
    switch (op.kind) {
      case OpKind::Enter:
        out_.enter(r, sec(t), op.name);
        stack_[ri].push_back(op.name);
        t += 1;
        break;
      case OpKind::Leave:
        if (stack_[ri].empty() || stack_[ri].back() != op.name) {
          throw std::logic_error("rank " + std::to_string(r) + " leaves " + op.name + " unentered");
        }
        stack_[ri].pop_back();
        out_.leave(r, sec(t), op.name);
        t += 1;
        break;
      case OpKind::Busy:
        t += op.ns;
        break;
      case OpKind::ParallelLoop:
        t = parallel_loop(r, t, op);
        break;
      case OpKind::Send: {  // eager: completes after the call overhead
        mailbox_[{r, op.peer, op.tag}].push_back({t, op.bytes});
        const std::int64_t tl = t + kOverhead;
        out_.send(r, sec(t), sec(tl), op.peer, op.tag, op.bytes);
        t = tl + 1;
        break;
      }
      case OpKind::Recv: {
        if (!entered_[ri]) entered_[ri] = t;
        auto& box = mailbox_[{op.peer, r, op.tag}];
        if (box.empty()) return false;
        const Message m = box.front();
        box.pop_front();
        const std::int64_t te = *entered_[ri];
        const std::int64_t tl = std::max(te + kOverhead, m.sent + kLatency) + kOverhead;
        out_.recv(r, sec(te), sec(tl), op.peer, op.tag, m.bytes);
        entered_[ri].reset();
        t = tl + 1;
        break;
      }
      case OpKind::Isend: {
        const std::int64_t ts = t + kOverhead / 2;
        mailbox_[{r, op.peer, op.tag}].push_back({ts, op.bytes});
        out_.enter(r, sec(t), op.name);
        out_.mpi_isend(r, sec(ts), op.peer, op.tag, op.bytes, op.request);
        out_.leave(r, sec(t + kOverhead), op.name);
        pending_[ri][op.request] = {false, op.peer, op.tag};
        t += kOverhead + 1;
        break;
      }
      case OpKind::Irecv:
        out_.enter(r, sec(t), op.name);
        out_.mpi_irecv_request(r, sec(t + kOverhead / 2), op.request);
        out_.leave(r, sec(t + kOverhead), op.name);
        pending_[ri][op.request] = {true, op.peer, op.tag};
        t += kOverhead + 1;
        break;
      case OpKind::Waitall: {
        if (!entered_[ri]) entered_[ri] = t;
        std::map<Channel, std::size_t> need;
        for (auto q : op.requests) {
          const Pending& p = pending_[ri].at(q);
          if (p.is_recv) ++need[{p.peer, r, p.tag}];
        }
        for (const auto& [channel, n] : need) {
          if (mailbox_[channel].size() < n) return false;
        }
        const std::int64_t te = *entered_[ri];
        std::int64_t tl = te + kOverhead;
        std::vector<std::function<void(std::int64_t)>> completions;
        for (auto q : op.requests) {
          const Pending p = pending_[ri].at(q);
          pending_[ri].erase(q);
          if (p.is_recv) {
            auto& box = mailbox_[{p.peer, r, p.tag}];
            const Message m = box.front();
            box.pop_front();
            tl = std::max(tl, m.sent + kLatency + kOverhead);
            completions.push_back([this, r, p, m, q](std::int64_t at) {
              out_.mpi_irecv(r, sec(at), p.peer, p.tag, m.bytes, q);
            });
          } else {
            completions.push_back([this, r, q](std::int64_t at) { out_.mpi_isend_complete(r, sec(at), q); });
          }
        }
        out_.enter(r, sec(te), op.name);
        const auto n = static_cast<std::int64_t>(completions.size());
        for (std::int64_t i = 0; i < n; ++i) completions[static_cast<std::size_t>(i)](tl - n + i);
        out_.leave(r, sec(tl), op.name);
        entered_[ri].reset();
        t = tl + 1;
        break;
      }
      case OpKind::Coll:
      case OpKind::Init:
      case OpKind::Finalize: {
        if (!entered_[ri]) {
          entered_[ri] = t;
          const std::size_t k = coll_seq_[ri]++;
          if (instances_.size() <= k) instances_.resize(k + 1);
          if (instances_[k].empty()) instances_[k].assign(static_cast<std::size_t>(size_), -1);
          instances_[k][ri] = t;
          current_[r] = k;
        }
        const auto& begins = instances_[current_[r]];
        if (std::any_of(begins.begin(), begins.end(), [](std::int64_t b) { return b < 0; })) {
          return false;
        }
        const std::int64_t te = *entered_[ri];
        const Flow flow = op.kind == OpKind::Coll ? op.flow : Flow::AllToAll;
        const int root = op.peer;
        const std::int64_t last = *std::max_element(begins.begin(), begins.end());
        std::int64_t tl = 0;
        switch (flow) {
          case Flow::AllToAll:
            tl = last + kLatency + kOverhead;
            break;
          case Flow::OneToAll:
            tl = r == root ? te + kOverhead
                           : std::max(te, begins[static_cast<std::size_t>(root)] + kLatency) + kOverhead;
            break;
          case Flow::AllToOne:
            tl = r == root ? last + kLatency + kOverhead : te + kOverhead;
            break;
          case Flow::Scan:
            tl = *std::max_element(begins.begin(), begins.begin() + r + 1) + kLatency + kOverhead;
            break;
        }
        if (op.kind == OpKind::Init) {
          out_.init(r, sec(te), sec(tl));
        } else if (op.kind == OpKind::Finalize) {
          out_.finalize(r, sec(te), sec(tl));
        } else {
          const std::uint64_t bytes = op.op == CollOpT::Barrier ? 0 : op.bytes;
          out_.collective(r, op.name, sec(te), sec(tl), op.op, bytes, bytes, out_.world(),
                          flow == Flow::AllToAll || flow == Flow::Scan ? -1 : root);
        }
        entered_[ri].reset();
        t = tl + 1;
        break;
      }
    }
    clock_[ri] = t;
    return true;
  }

  /// Score-P's OpenMP events of one parallel loop (../shared/conformance-hybrid/README.md):
  /// fork on the master, per thread team begin, parallel > for > body, the loop's implicit
  /// barrier, the region's closing implicit barrier, team end; join on the master. Threads start
  /// 10 ns apart and leave a barrier 5 ns apart (as real runtimes do). Returns the master's time
  /// after the join.
  std::int64_t parallel_loop(int r, std::int64_t f, const Op& op) {
    const auto spread = static_cast<std::int64_t>(op.bytes);
    if (threads_ == 1) {
      out_.enter(r, sec(f), op.name);
      const std::int64_t end = f + 1 + op.ns + jitter(r, op.tag, spread);
      out_.leave(r, sec(end), op.name);
      return end + 1;
    }
    static const std::string par = "!$omp parallel @mktrace.c:10";
    static const std::string loop = "!$omp for @mktrace.c:11";
    static const std::string ibar = "!$omp implicit barrier @mktrace.c:12";
    static const std::string pbar = "!$omp implicit barrier @mktrace.c:14";
    out_.omp_fork(r, sec(f), threads_);
    std::vector<std::int64_t> at(static_cast<std::size_t>(threads_));
    for (int th = 0; th < threads_; ++th) {
      const std::int64_t b = f + 100 + 10 * th;
      out_.omp_team_begin(r, th, sec(b));
      out_.thread_enter(r, th, sec(b), par);
      out_.thread_enter(r, th, sec(b + 1), loop);
      out_.thread_enter(r, th, sec(b + 2), op.name);
      const std::int64_t w = op.ns + jitter(r * 64 + th, op.tag, spread);
      out_.thread_leave(r, th, sec(b + 2 + w), op.name);
      at[static_cast<std::size_t>(th)] = b + 3 + w;
      out_.thread_enter(r, th, sec(b + 3 + w), ibar);
    }
    const std::int64_t release = *std::max_element(at.begin(), at.end()) + 200;
    std::int64_t join = 0;
    for (int th = 0; th < threads_; ++th) {
      const std::int64_t l = release + 5 * th;
      out_.thread_leave(r, th, sec(l), ibar);
      out_.thread_leave(r, th, sec(l + 1), loop);
      out_.thread_enter(r, th, sec(l + 2), pbar);
    }
    const std::int64_t release2 = release + 5 * (threads_ - 1) + 2 + 200;
    for (int th = 0; th < threads_; ++th) {
      const std::int64_t l = release2 + 5 * th;
      out_.thread_leave(r, th, sec(l), pbar);
      out_.thread_leave(r, th, sec(l + 1), par);
      out_.omp_team_end(r, th, sec(l + 2));
      join = std::max(join, l + 2);
    }
    out_.omp_join(r, sec(join + 50));
    return join + 51;
  }

  std::vector<Program>& progs_;
  TraceWriter& out_;
  int size_;
  int threads_;
  std::vector<std::int64_t> clock_;
  std::vector<std::size_t> pc_;
  std::vector<std::optional<std::int64_t>> entered_;  // Enter time of a blocked MPI call
  std::vector<std::vector<std::string>> stack_;
  std::vector<std::map<std::uint64_t, Pending>> pending_;
  std::map<Channel, std::deque<Message>> mailbox_;
  std::vector<std::size_t> coll_seq_;                 // next collective instance per rank
  std::vector<std::vector<std::int64_t>> instances_;  // per instance: Enter time per rank or -1
  std::map<int, std::size_t> current_;
};


/// Wraps per-rank bodies like simtrace's framed(): Enter main, some start-up work, MPI_Init,
/// body, MPI_Finalize, Leave main (ProgramBegin/End are added by the simulator).
std::vector<Program> framed(int P, const std::function<void(std::vector<Program>&)>& body) {
  std::vector<Program> progs;
  for (int r = 0; r < P; ++r) progs.emplace_back(r);
  for (auto& p : progs) {
    p.enter("main");
    p.busy(50'000 + 997 * p.rank());
    p.init();
  }
  body(progs);
  for (auto& p : progs) {
    p.finalize();
    p.leave("main");
  }
  return progs;
}

/// The README's example: compute with an imbalance that moves from rank to rank, a blocking ring
/// (every rank sends right, then receives from the left: the overloaded rank's right neighbour
/// waits as a Late Sender), then an MPI_Allreduce and an MPI_Barrier per iteration.
std::vector<Program> example(int P, int N) {
  return framed(P, [P, N](std::vector<Program>& progs) {
    for (int i = 0; i < N; ++i) {
      const int over = (3 * i + 1) % P;
      for (auto& p : progs) {
        const int r = p.rank();
        p.compute("compute", 20'000'000 + 250'000 * r + (r == over ? 8'000'000 : 0) + jitter(r, i, 200'000));
        p.send((r + 1) % P, i, 4096);
        p.recv((r + P - 1) % P, i);
        p.coll("MPI_Allreduce", CollOpT::Allreduce, Flow::AllToAll, 8);
        p.coll("MPI_Barrier", CollOpT::Barrier, Flow::AllToAll, 0);
      }
    }
  });
}

/// Blocking ring as simtrace's late-sender: even ranks work longer and send first; odd ranks
/// receive first and wait for their even left neighbour.
std::vector<Program> late_sender(int P, int N) {
  return framed(P, [P, N](std::vector<Program>& progs) {
    for (int i = 0; i < N; ++i) {
      for (auto& p : progs) {
        const int r = p.rank();
        const int dst = (r + 1) % P;
        const int src = (r + P - 1) % P;
        p.compute("work", 1'000'000 + (r % 2 == 0 ? 3'000'000 : 0) + jitter(r, i, 100'000));
        if (r % 2 == 0) {
          p.send(dst, i, 1024);
          p.recv(src, i);
        } else {
          p.recv(src, i);
          p.send(dst, i, 1024);
        }
      }
    }
  });
}

/// Barrier, Bcast, Reduce, Allreduce and Scan with a root that moves every iteration and works
/// 1 ms longer than the others before each operation.
std::vector<Program> collectives(int P, int N) {
  struct Call {
    const char* name;
    CollOpT op;
    Flow flow;
    std::uint64_t bytes;
  };
  const std::vector<Call> seq = {{"MPI_Barrier", CollOpT::Barrier, Flow::AllToAll, 0},
                                 {"MPI_Bcast", CollOpT::Bcast, Flow::OneToAll, 1024},
                                 {"MPI_Reduce", CollOpT::Reduce, Flow::AllToOne, 1024},
                                 {"MPI_Allreduce", CollOpT::Allreduce, Flow::AllToAll, 8},
                                 {"MPI_Scan", CollOpT::Scan, Flow::Scan, 8}};
  return framed(P, [P, N, seq](std::vector<Program>& progs) {
    for (int i = 0; i < N; ++i) {
      const int root = i % P;
      int k = 0;
      for (const auto& c : seq) {
        for (auto& p : progs) {
          const int r = p.rank();
          p.compute("work", 200'000 + jitter(r, i * 8 + k, 2'000'000) + (r == root ? 1'000'000 : 0));
          p.coll(c.name, c.op, c.flow, c.bytes, root);
        }
        ++k;
      }
    }
  });
}

/// Isend/Irecv halo exchange in a ring, completed by MPI_Waitall, as simtrace's nonblocking.
std::vector<Program> nonblocking(int P, int N) {
  return framed(P, [P, N](std::vector<Program>& progs) {
    for (int i = 0; i < N; ++i) {
      for (auto& p : progs) {
        const int r = p.rank();
        const int left = (r + P - 1) % P;
        const int right = (r + 1) % P;
        p.enter("exchange");
        std::vector<std::uint64_t> reqs = {p.irecv(left, 1), p.irecv(right, 2)};
        reqs.push_back(p.isend(right, 1, 65536));
        reqs.push_back(p.isend(left, 2, 65536));
        p.compute("interior", 2'000'000 + jitter(r, i, 3'000'000));
        p.waitall(reqs);
        p.leave("exchange");
        p.compute("boundary", 500'000 + 100'000 * r);
      }
      for (auto& p : progs) p.coll("MPI_Allreduce", CollOpT::Allreduce, Flow::AllToAll, 8);
    }
  });
}

/// A hybrid MPI+OpenMP code: per iteration an OpenMP parallel loop whose threads' work varies
/// (loop imbalance, `--threads`), then a halo exchange between the master threads of a ring
/// and an MPI_Allreduce. With --threads 1, the same program without OpenMP.
std::vector<Program> hybrid(int P, int N) {
  return framed(P, [P, N](std::vector<Program>& progs) {
    for (int i = 0; i < N; ++i) {
      for (auto& p : progs) {
        const int r = p.rank();
        p.parallel_loop("loop_body", 800'000, 400'000, i);
        p.send((r + 1) % P, i, 4096);
        p.recv((r + P - 1) % P, i);
        p.coll("MPI_Allreduce", CollOpT::Allreduce, Flow::AllToAll, 8);
      }
    }
  });
}

struct Scenario {
  const char* name;
  std::vector<Program> (*make)(int, int);
};

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> list = {{"example", example},
                                             {"late-sender", late_sender},
                                             {"collectives", collectives},
                                             {"nonblocking", nonblocking},
                                             {"hybrid", hybrid}};
  return list;
}

int usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "cpreplay-mktrace: " << problem << "\n";
  std::cerr << "usage: cpreplay-mktrace {example|late-sender|collectives|nonblocking|hybrid} "
               "OUTDIR [--ranks P (default 4)] [--iters N (default 10)] [--threads T (default 1; "
               "OpenMP threads per rank, hybrid only)] [--skew RANK:NS]\n";
  return 2;
}

bool parse_int(const std::string& s, int lo, int hi, int& out) {
  try {
    std::size_t used = 0;
    const long v = std::stol(s, &used);
    if (used != s.size() || v < lo || v > hi) return false;
    out = static_cast<int>(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  int ranks = 4;
  int iters = 10;
  int threads = 1;
  int skew_rank = -1;
  long skew_ns = 0;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--skew") {
      // RANK:NS shifts one rank's clock, like simtrace.py --skew (clock-condition violations).
      if (a + 1 >= argc) return usage("--skew needs RANK:NS");
      const std::string v = argv[++a];
      const auto colon = v.find(':');
      if (colon == std::string::npos || !parse_int(v.substr(0, colon), 0, 4095, skew_rank))
        return usage("invalid value for --skew: " + v);
      try {
        skew_ns = std::stol(v.substr(colon + 1));
      } catch (const std::exception&) {
        return usage("invalid value for --skew: " + v);
      }
    } else if (arg == "--ranks" || arg == "--iters" || arg == "--threads") {
      if (a + 1 >= argc) return usage(arg + " needs a value");
      int& target = arg == "--ranks" ? ranks : arg == "--iters" ? iters : threads;
      const int hi = arg == "--ranks" ? 4096 : arg == "--iters" ? 1'000'000 : 64;
      if (!parse_int(argv[++a], 1, hi, target)) {
        return usage("invalid value for " + arg + ": " + argv[a]);
      }
    } else if (arg == "-h" || arg == "--help") {
      usage("");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage("unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return usage("expected SCENARIO and OUTDIR");
  const auto& list = scenarios();
  const auto it = std::find_if(list.begin(), list.end(),
                               [&](const Scenario& s) { return positional[0] == s.name; });
  if (it == list.end()) return usage("unknown scenario " + positional[0]);
  const std::string& outdir = positional[1];
  if (threads > 1 && positional[0] != "hybrid") return usage("--threads is for the hybrid scenario");
  try {
    TraceWriter writer(ranks);
    if (threads > 1) writer.set_threads_per_process(threads);
    std::vector<Program> progs = it->make(ranks, iters);
    Simulator(progs, writer, threads).run();
    if (skew_rank >= 0) {
      if (skew_rank >= ranks) return usage("--skew names a rank the trace does not have");
      writer.set_clock_skew(skew_rank, static_cast<double>(skew_ns) * 1e-9);
    }
    writer.write(outdir);
    std::printf("%s: %d ranks x %d threads, %zu events -> %s/traces.otf2\n", it->name, ranks,
                threads, writer.total_events(), outdir.c_str());
  } catch (const std::exception& e) {
    std::cerr << "cpreplay-mktrace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
