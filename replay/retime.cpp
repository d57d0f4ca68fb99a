// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay: a forward dataflow over messages and collectives with one clock per
// scenario, and a backward one for the slack, in rounds on the record transport. This file is
// the per-process driver (Retimer): it runs each phase for all held locations and does the
// reductions; the phases are RankRetimer's (rank_retimer.hpp, retime_*.cpp).
#include "replay/retime.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cpreplay/error.hpp"
#include "replay/collectives.hpp"
#include "replay/messages.hpp"
#include "replay/pointer_jump.hpp"
#include "replay/rank_retimer.hpp"
#include "replay/record_exchange.hpp"

namespace cpreplay::replay {
namespace detail::retiming {

/// Parts replayed at a time. A part ships a few records per round, each with a value per
/// clock: a quarter of --window, so that a round ships about --window records per rank. And no
/// more than keep a rank's clocks of the window (its master's and its threads', per part)
/// within about a core's L2 cache: with 31 clocks, 1024 parts (0.5 MB of clocks per rank)
/// replayed 15-25 % slower than 256 or 512 on the bench reference trace (bench/RESULTS.md,
/// session 13). At least 64, as fewer parts mean more rounds. The same on every process and
/// for every number of processes (from the definitions alone), as the rounds are; the values
/// do not depend on it.
std::size_t parts_per_window(const RetimeRequest& request, const Definitions& defs,
                             std::uint32_t S) {
  constexpr std::size_t kClockBudget = 192 * 1024;
  std::size_t threads = 1;
  for (const Process& p : defs.processes)
    threads = std::max<std::size_t>(threads, p.workers.size() + 1);
  // A master's clocks, its MPI call's and balance factors; each worker thread's clocks and
  // balance factors.
  const std::size_t per_part = (3 + 2 * (threads - 1)) * std::size_t{S} * sizeof(Clk);
  const std::size_t fit = std::max<std::size_t>(kClockBudget / per_part, 64);
  return std::max<std::size_t>(std::min(request.window / 4, fit), 1);
}

/// The per-process driver: every phase for all held ranks in rank order, one exchange per
/// round, and each reduction once per process over the held ranks' values combined first (all
/// integer sums, maxima and minima: exact in any order, so every value is the same for every M).
class Retimer {
 public:
  Retimer(const World& world, const Definitions& defs, const CallTree& tree, const Shard& shard,
          const RetimeRequest& request)
      : world_(world), defs_(defs), shard_(shard), req_(request),
        S_(std::max<std::uint32_t>(request.clocks, 1)),
        ctx_{defs, tree, request, S_, parts_per_window(request, defs, S_),
             request.path_clock >= 0 && request.path_clock < static_cast<int>(S_)
                 ? request.path_clock
                 : -1} {
    for (const LocalTrace& trace : shard.traces) ranks_.emplace_back(ctx_, trace);
    for (RankRetimer& r : ranks_) r.walk_every_visit_ = unshared_;
    for (std::size_t i = 0; !unshared_ && i < ranks_.size() &&
                            i < request.profile_exclusive.size() &&
                            i < request.profile_visits.size();
         ++i) {
      ranks_[i].profile_exclusive_ = request.profile_exclusive[i];
      ranks_[i].profile_visits_ = request.profile_visits[i];
    }
    // Hybrid traces: each held rank's worker threads, replayed beside their master.
    for (std::size_t i = 0; i < shard.workers.size() && i < ranks_.size(); ++i)
      for (const LocalTrace& thread : shard.workers[i]) {
        workers_.emplace_back(ctx_, thread, &ranks_[i]);
        ranks_[i].team_.push_back(&workers_.back());
      }
    for (RankRetimer& r : ranks_) {
      locs_.push_back(&r);
      for (RankRetimer* w : r.team_) locs_.push_back(w);
    }
    for (std::size_t l = 0; l < locs_.size(); ++l) locs_[l]->loc_index_ = l;
  }

  RetimeResult run() {
    RetimeResult result;
    const double t0 = MPI_Wtime();
    prepare();
    plan_changes();
    for (RankRetimer* r : locs_) r->part_visits();
    const double t2 = MPI_Wtime();
    result.parts = ranks_.front().resets_.size() + 1;
    forward(result);
    if (ctx_.path >= 0) result.path_profile = path_profile();
    const double t3 = MPI_Wtime();
    if (req_.slack_limit >= 0.0) backward(result);
    const double t4 = MPI_Wtime();
    result.prepare_seconds = t2 - t0;
    result.forward_seconds = t3 - t2;
    result.backward_seconds = t4 - t3;
    std::uint64_t released = 0;
    for (const RankRetimer* r : locs_) released += r->released();
    MPI_Allreduce(&released, &result.released, 1, MPI_UINT64_T, MPI_SUM, world_.comm());
    // The lowest rank's error, as at one process per rank; of a rank's threads, the one at
    // the earliest event (the master's on a tie).
    world_.agree([&] {
      for (const RankRetimer& r : ranks_) {
        const RankRetimer* first = r.error().empty() ? nullptr : &r;
        for (const RankRetimer* w : r.team_)
          if (!w->error().empty() && (first == nullptr || w->error_time_ < first->error_time_))
            first = w;
        if (first != nullptr) throw ReplayError(first->error());
      }
    });
    result.runtime = ranks_.front().runtime_;
    // Sums in ticks: exact, so they do not depend on the order parts and rounds add them.
    for (const RankRetimer& r : ranks_)
      for (const Clk ticks : r.near_critical_) result.near_critical.push_back(r.seconds(ticks));
    if (!workers_.empty() && req_.slack_limit >= 0.0) {
      for (const RankRetimer& w : workers_)
        for (const Clk ticks : w.near_critical_)
          result.thread_near_critical.push_back(w.seconds(ticks));
      for (const RankRetimer& r : ranks_)
        for (std::size_t c = 0; c < r.near_critical_.size(); ++c) {
          Clk ticks = r.near_critical_[c];
          for (const RankRetimer* w : r.team_) ticks += w->near_critical_[c];
          result.rank_near_critical.push_back(r.seconds(ticks));
        }
    }
    return result;
  }

 private:
  // ---- Preparation -----------------------------------------------------------------------
  void prepare() {
    const std::uint32_t ncomms = static_cast<std::uint32_t>(defs_.comms.size());
    if (ncomms + 1 >= (1u << 24))
      throw ReplayError(defs_.anchor_path + ": more communicators than the what-if replay "
                                            "handles (2^24)");
    for (RankRetimer* r : locs_) r->prepare_begin();
    if (defs_.hybrid())
      for (RankRetimer& r : ranks_)
        if (r.team_.empty()) r.index_openmp_events();
    // (1) Collective rules and the cut candidates: the forward replay's, where it kept them
    // (the same reduction of the same timestamps), else reduced here.
    std::vector<CollectiveTable> tables;
    if (!unshared_ && req_.matches != nullptr && req_.matches->collective_tables() != nullptr &&
        req_.matches->collective_tables()->size() == ranks_.size()) {
      tables = *req_.matches->collective_tables();
      for (std::size_t i = 0; i < ranks_.size(); ++i)
        ranks_[i].infos_ = std::move(req_.matches->recorder(i).rules);
    } else {
      for (RankRetimer& r : ranks_) r.infos_.reserve(r.trace_.coll.size() + 2);  // + Init, Finalize
      const TimingSink sink = [&](std::size_t i, const CollInstance* inst,
                                  const CollTiming* timing, std::size_t count) {
        RankRetimer& r = ranks_[i];
        for (std::size_t j = 0; j < count; ++j)
          r.infos_.push_back(classify_instance(defs_, r.trace_, inst[j], timing[j]));
      };
      tables =
          reduce_collectives(world_, defs_, shard_, req_.window, req_.tolerate_unmatched, sink);
    }
    int complete = 1;
    for (std::size_t i = 0; i < ranks_.size(); ++i)
      if (!ranks_[i].prepare_candidates(std::move(tables[i]))) complete = 0;
    std::vector<CollectiveTable>().swap(tables);
    MPI_Allreduce(MPI_IN_PLACE, &complete, 1, MPI_INT, MPI_MIN, world_.comm());
    for (RankRetimer& r : ranks_) r.prepare_messages(complete != 0);
    // (2) Messages: the forward replay's matching where it was kept, else matched here.
    {
      std::unique_ptr<RetimeMatches> own;
      RetimeMatches* matches = req_.matches;
      if (matches == nullptr) {
        own = std::make_unique<RetimeMatches>(defs_, shard_);
        std::vector<MessageSink*> sinks;
        for (std::size_t i = 0; i < ranks_.size(); ++i) sinks.push_back(own->sink(i));
        match_messages(world_, defs_, shard_, sinks, req_.tolerate_unmatched, req_.window);
        matches = own.get();
      }
      for (std::size_t i = 0; i < ranks_.size(); ++i) ranks_[i].take_matches(matches->recorder(i));
    }
    // (3) The candidates a constraint crosses.
    for (RankRetimer& r : ranks_) r.prepare_separate();
    separate_partners();
    for (RankRetimer& r : ranks_) r.separate_members();
    for (RankRetimer& r : ranks_)
      if (!r.team_.empty()) r.openmp_disqualify();
    // (4) The cuts every rank allows. Test hook (tests/e2e/what_if_test.cpp):
    // CPREPLAY_TEST_RETIME_NO_CUTS replays the run as one part, which must give the same values.
    std::vector<std::uint8_t> disq(ranks_.front().disq_.size(), 0);
    if (std::getenv("CPREPLAY_TEST_RETIME_NO_CUTS") != nullptr)
      std::fill(disq.begin(), disq.end(), std::uint8_t{1});
    for (const RankRetimer& r : ranks_)
      for (std::size_t j = 0; j < disq.size() && j < r.disq_.size(); ++j) disq[j] |= r.disq_[j];
    if (!disq.empty())
      MPI_Allreduce(MPI_IN_PLACE, disq.data(), static_cast<int>(disq.size()), MPI_UINT8_T,
                    MPI_MAX, world_.comm());
    for (RankRetimer& r : ranks_) r.prepare_finish(disq);
  }

  /// Calls f(r, j) for the j-th of count(r) items of each held rank r, as one flat index.
  template <class Count>
  std::vector<std::size_t> offsets(Count&& count) const {
    std::vector<std::size_t> first(ranks_.size() + 1, 0);
    for (std::size_t i = 0; i < ranks_.size(); ++i) first[i + 1] = first[i] + count(ranks_[i]);
    return first;
  }
  static std::size_t holder(const std::vector<std::size_t>& first, std::size_t k) {
    if (first.size() <= 2) return 0;  // one held rank (M = N): no search per item
    return static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), k) -
                                    first.begin() - 1);
  }

  /// Senders tell receivers, members tell hosts, in which candidate segment they are: batched
  /// exchanges per kind for the process (in slices of kNoteSliceBytes: the notes' order does
  /// not matter), records to co-located ranks in memory.
  static constexpr std::size_t kNoteSliceBytes = std::size_t{64} << 10;
  void separate_partners() {
    const RankBlocks& blocks = shard_.blocks;
    {
      const std::vector<std::size_t> first =
          offsets([](const RankRetimer& r) { return r.matched_sends(); });
      auto note = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return ranks_[i].send_note(k - first[i]);
      };
      auto dest = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return blocks.owner(ranks_[i].send_dest(k - first[i]));
      };
      if (blocks.processes() < blocks.ranks()) {
        send_each_sliced<SendNote>(world_, first.back(), kNoteSliceBytes, dest, note,
                                   [&](Rank, const SendNote& n) {
                                     ranks_[shard_.index(n.dest)].take_send_note(n);
                                   });
      } else {
        // One rank per process: the receiver is that rank, so the note travels without it
        // (12 B instead of 16 per matched send, in both buffers of the exchange).
        struct Unaddressed {
          EventIdx request;
          std::uint32_t send, attach;
        };
        send_each_sliced<Unaddressed>(
            world_, first.back(), kNoteSliceBytes, dest,
            [&](std::size_t k) {
              const SendNote n = note(k);
              return Unaddressed{n.request, n.send, n.attach};
            },
            [&](Rank, const Unaddressed& u) {
              ranks_.front().take_send_note(
                  SendNote{ranks_.front().me_, u.request, u.send, u.attach});
            });
      }
    }
    {
      const std::vector<std::size_t> first =
          offsets([](const RankRetimer& r) { return r.colls_.size(); });
      auto note = [&](std::size_t k) {
        const std::size_t i = holder(first, k);
        return ranks_[i].member_note(k - first[i]);
      };
      send_each_sliced<MemberNote>(
          world_, first.back(), kNoteSliceBytes,
          [&](std::size_t k) { return blocks.owner(note(k).dest); }, note,
          [&](Rank, const MemberNote& m) { ranks_[shard_.index(m.dest)].take_member_note(m); });
    }
  }

  /// Balance and rebalance need every rank's ticks and visits of their call paths.
  /// Every thread location counts as one (docs/what-if.md, "Threads").
  void plan_changes() {
    for (RankRetimer* r : locs_) r->plan_stats();
    std::vector<std::int64_t> global(ranks_.front().stats_.size(), 0);
    for (const RankRetimer* r : locs_)
      for (std::size_t i = 0; i < global.size(); ++i) global[i] += r->stats_[i];
    if (!global.empty())
      MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()), MPI_INT64_T,
                    MPI_SUM, world_.comm());
    for (RankRetimer* r : locs_) r->plan_finish(global);
  }

  // ---- Rounds ----------------------------------------------------------------------------------
  /// Whether some location anywhere is unfinished, and whether the round moved anywhere.
  struct RoundFlags {
    bool unfinished;
    bool moved;
  };
  /// Ends a round of the forward or the backward replay: its exchange, and every held rank
  /// reads what came. A round moved if a step did or a record goes out (every record posted is
  /// delivered in this exchange); both flags ride at the head of every block.
  RoundFlags end_round(RecordExchange& ex, bool unfinished, bool moved) {
    const int flags[2] = {unfinished ? 1 : 0, moved || !ex.outbox_empty() ? 1 : 0};
    int any[2];
    ex.exchange(flags, any);
    for (RankRetimer& r : ranks_) r.receive(ex);
    return RoundFlags{any[0] != 0, any[1] != 0};
  }

  // ---- Forward -------------------------------------------------------------------------------
  void forward(RetimeResult& result) {
    RecordExchange ex(world_, shard_.blocks);
    const std::uint32_t S = S_;
    const int path = ctx_.path;
    const int none = defs_.ranks();
    for (RankRetimer* r : locs_) {
      r->fwd_ex_ = &ex;
      r->forward_begin();
    }
    const std::vector<EventIdx>& resets = ranks_.front().resets_;
    const std::size_t nparts = resets.size() + 1;
    for (std::size_t w0 = 0; w0 < nparts; w0 += ctx_.window) {
      const std::size_t w1 = std::min(nparts, w0 + ctx_.window);
      for (RankRetimer* r : locs_) r->forward_window(w0, w1);
      for (;;) {
        // Masters step their threads too (forward_round); records come to masters only.
        bool moved = false, unfinished = false;
        for (RankRetimer& r : ranks_) moved = r.forward_round(unfinished) || moved;
        const RoundFlags any = end_round(ex, unfinished, moved);
        ++result.forward_rounds;
        if (!any.unfinished) break;
        if (!any.moved)
          for (RankRetimer* r : locs_) r->release_forward();
      }
      // Join the parts: each cut's latest begin, per clock, relative to the previous cut.
      const std::size_t cuts = w0 < resets.size() ? std::min(w1, resets.size()) - w0 : 0;
      // Reduced in place into the first held rank's cut clocks (the profiled clock's own
      // values are kept aside for the question below).
      std::vector<Clk>& global = ranks_.front().cut_clk_;
      std::vector<Clk> mine;
      if (path >= 0)
        for (const RankRetimer& r : ranks_)
          for (std::size_t i = 0; i < cuts; ++i) mine.push_back(r.cut_clk_[i * S + path]);
      for (std::size_t h = 1; h < ranks_.size(); ++h)
        for (std::size_t j = 0; j < cuts * S; ++j)
          global[j] = std::max(global[j], ranks_[h].cut_clk_[j]);
      if (cuts > 0)
        MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(cuts * S), MPI_INT64_T,
                      MPI_MAX, world_.comm());
      // Whose begin is latest at each cut (ties: the lower rank): every other rank's part
      // starts from it.
      std::vector<int> who;
      if (path >= 0 && cuts > 0) {
        who.assign(cuts, none);
        for (std::size_t h = 0; h < ranks_.size(); ++h)
          for (std::size_t i = 0; i < cuts; ++i)
            if (mine[h * cuts + i] == global[i * S + path])
              who[i] = std::min(who[i], ranks_[h].me_);
        MPI_Allreduce(MPI_IN_PLACE, who.data(), static_cast<int>(cuts), MPI_INT, MPI_MIN,
                      world_.comm());
      }
      for (RankRetimer* r : locs_) r->forward_join(w0, w1, global, who);
    }
    // Runtime: latest end minus earliest start over all locations, per clock (a master's
    // first event keeps its time; a worker thread's first one follows its fork).
    std::vector<Clk> global(2 * S, kNeg);
    for (const RankRetimer* r : locs_) {
      for (std::uint32_t c = 0; c < S; ++c) global[c] = std::max(global[c], r->last_[c]);
      if (r->trace_.size() == 0) continue;
      for (std::uint32_t c = 0; c < S; ++c)
        global[S + c] = std::max(global[S + c], r->thread_ == 0 ? -r->T(0) : -r->first_[c]);
    }
    MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(2 * S), MPI_INT64_T, MPI_MAX,
                  world_.comm());
    std::vector<Clk> runtime(S, 0);
    for (std::uint32_t c = 0; c < S; ++c) runtime[c] = global[c] + global[S + c];
    // The profiled clock's run ends on the lowest (rank, thread) whose last event is latest.
    Rank sink = 0;
    int sink_thread = 0;
    if (path >= 0) {
      const std::int64_t nobody = std::numeric_limits<std::int64_t>::max();
      std::int64_t who = nobody;
      for (const RankRetimer* r : locs_)
        if (r->trace_.size() > 0 && r->last_[path] == global[path])
          who = std::min(who, (std::int64_t{r->me_} << 32) | r->thread_);
      MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT64_T, MPI_MIN, world_.comm());
      if (who != nobody) {
        sink = static_cast<Rank>(who >> 32);
        sink_thread = static_cast<int>(who & 0xFFFFFFFF);
      }
    }
    for (RankRetimer* r : locs_) {
      r->forward_end(runtime, global[0], sink, sink_thread);
      r->fwd_ex_ = nullptr;
    }
  }

  // ---- The profiled clock's critical path ---------------------------------------------------
  /// A hop on its way to its target rank.
  struct AddressedTarget {
    Rank to;    ///< the rank the path continues on
    Rank from;  ///< the rank of the hop
    HopTarget target;
  };

  /// Per held rank, per call path (rank-major): seconds of the profiled clock's critical path.
  std::vector<double> path_profile() {
    const RankBlocks& blocks = shard_.blocks;
    for (RankRetimer* r : locs_) r->path_begin();
    // The list spans processes: a process's nodes are the hops of its ranks to other ranks,
    // one rank after another (node = first[i] + hop index); hops between the threads of a rank
    // are followed in memory (resolve, credit_from).
    const std::vector<std::size_t> first =
        offsets([](const RankRetimer& r) { return r.hops_.size(); });
    const std::size_t n = first.back();
    std::uint64_t total = n;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, world_.comm());
    if (total >= (std::uint64_t{1} << 31))
      world_.agree([&] {
        if (world_.rank() == 0)
          throw ReplayError(defs_.anchor_path + ": the scenario's critical path has " +
                            std::to_string(total) + " hops, more than it can rank (2^31)");
      });
    auto hop = [&](std::size_t k) -> const Hop& {
      const std::size_t i = holder(first, k);
      return ranks_[i].hops_[k - first[i]];
    };
    auto addressed = [&](std::size_t k) {
      const std::size_t i = holder(first, k);
      const Hop& h = ranks_[i].hops_[k - first[i]];
      return AddressedTarget{h.rank, ranks_[i].me_, HopTarget{h.kind, h.a, h.b}};
    };
    std::vector<NodeRef> next(n);
    world_.agree([&] {
      ask_each<AddressedTarget, std::uint32_t>(
          world_, n, [&](std::size_t k) { return blocks.owner(hop(k).rank); }, addressed,
          [&](Rank, const AddressedTarget& t) {
            const std::size_t i = shard_.index(t.to);
            RankRetimer& r = ranks_[i];
            const std::uint32_t succ = r.resolve(&r, r.hop_target(t.target, t.from));
            return succ == UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(first[i] + succ);
          },
          [&](std::size_t k, std::uint32_t succ) {
            if (succ != UINT32_MAX) next[k] = NodeRef{blocks.owner(hop(k).rank), succ};
          });
    });
    // The path ends where the run does: the last event of the lowest (rank, thread) whose
    // run ends last.
    const Rank sink = ranks_.front().sink_;
    const auto sink_thread = static_cast<std::uint32_t>(ranks_.front().sink_thread_);
    NodeRef head;
    world_.agree([&] {
      if (!shard_.holds(sink)) return;
      const std::size_t i = shard_.index(sink);
      RankRetimer& end = ranks_[i].thread_location(sink_thread);
      const std::uint32_t last =
          ranks_[i].resolve(&end, static_cast<EventIdx>(end.trace_.size()));
      if (last != UINT32_MAX)
        head = NodeRef{world_.rank(), static_cast<std::uint32_t>(first[i] + last)};
    });
    MPI_Bcast(&head, sizeof head, MPI_BYTE, blocks.owner(sink), world_.comm());
    const ListRanking ranked = rank_list(world_, std::move(next), head, [&](std::uint32_t k) {
      const std::size_t i = holder(first, k);
      return defs_.anchor_path + ": rank " + std::to_string(ranks_[i].me_) + ", event " +
             std::to_string(ranks_[i].hops_[k - first[i]].event) +
             ": the re-timed run's critical path comes back here (a cycle)";
    });
    if (shard_.holds(sink)) {
      RankRetimer& r = ranks_[shard_.index(sink)];
      RankRetimer& end = r.thread_location(sink_thread);
      r.credit_from(&end, static_cast<EventIdx>(end.trace_.size()));
    }
    send_each<AddressedTarget>(
        world_, n,
        [&](std::size_t k) {
          return ranked.position[k] == kOffList ? Rank{-1} : blocks.owner(hop(k).rank);
        },
        addressed,
        [&](Rank, const AddressedTarget& t) {
          RankRetimer& r = ranks_[shard_.index(t.to)];
          r.credit_from(&r, r.hop_target(t.target, t.from));
        });
    std::vector<double> out;
    for (RankRetimer& r : ranks_) r.path_end(out);
    for (RankRetimer& w : workers_) w.thread_path_end();
    return out;
  }

  // ---- Backward (slack of the unchanged run) --------------------------------------------------
  void backward(RetimeResult& result) {
    RecordExchange ex(world_, shard_.blocks);
    for (RankRetimer* r : locs_) {
      r->bwd_ex_ = &ex;
      r->backward_begin();
    }
    const std::size_t nparts = ranks_.front().resets_.size() + 1;
    const std::size_t window = ctx_.window;
    const std::size_t windows = (nparts + window - 1) / window;
    // The parts whose slack some location needs replayed (RankRetimer::slack_bound); the others
    // are walked once, without records or rounds. Test hook (tests/e2e/what_if_test.cpp):
    // CPREPLAY_TEST_RETIME_FULL_SLACK replays every part, which must give the same values.
    std::vector<std::uint8_t> replay(nparts, 0);
    if (std::getenv("CPREPLAY_TEST_RETIME_FULL_SLACK") != nullptr)
      std::fill(replay.begin(), replay.end(), std::uint8_t{1});
    else
      for (const RankRetimer* r : locs_) r->slack_bound(replay);
    MPI_Allreduce(MPI_IN_PLACE, replay.data(), static_cast<int>(nparts), MPI_UINT8_T, MPI_MAX,
                  world_.comm());
    const bool none =
        std::all_of(replay.begin(), replay.end(), [](std::uint8_t x) { return x == 0; });
    for (RankRetimer* r : locs_) {
      r->slack_replay_ = &replay;
      r->near_done_ = none && !unshared_ && r->near_from_profile();
    }
    for (std::size_t w = windows; w-- > 0;) {
      const std::size_t w0 = w * window;
      const std::size_t w1 = std::min(nparts, w0 + window);
      for (RankRetimer* r : locs_) r->backward_window(w0, w1);
      // A window with nothing to replay needs no round: the records posted for it (a host's
      // answer where no member binds) are never read.
      if (std::all_of(replay.begin() + static_cast<std::ptrdiff_t>(w0),
                      replay.begin() + static_cast<std::ptrdiff_t>(w1),
                      [](std::uint8_t x) { return x == 0; }))
        continue;
      for (;;) {
        bool moved = false, unfinished = false;
        for (RankRetimer& r : ranks_) moved = r.backward_round(unfinished) || moved;
        const RoundFlags any = end_round(ex, unfinished, moved);
        ++result.backward_rounds;
        if (!any.unfinished) break;
        if (!any.moved)
          for (RankRetimer* r : locs_) r->release_backward();
      }
    }
    for (RankRetimer* r : locs_) {
      r->backward_end();
      r->bwd_ex_ = nullptr;
      r->slack_replay_ = nullptr;
      r->near_done_ = false;
    }
  }

  const World& world_;
  const Definitions& defs_;
  const Shard& shard_;
  const RetimeRequest& req_;
  /// Test hook (tests/e2e/what_if_test.cpp): CPREPLAY_TEST_RETIME_UNSHARED counts the balance
  /// statistics and reduces the collective timings here, as without the profile's ticks and
  /// the forward replay's rules: the same values.
  const bool unshared_ = std::getenv("CPREPLAY_TEST_RETIME_UNSHARED") != nullptr;
  const std::uint32_t S_;
  Context ctx_;
  std::deque<RankRetimer> ranks_;  ///< one per held rank (its master thread), in rank order
  std::deque<RankRetimer> workers_;  ///< hybrid traces: the held ranks' worker threads
  std::vector<RankRetimer*> locs_;   ///< every location: a rank's master, then its threads
};

}  // namespace detail::retiming

RetimeMatches::RetimeMatches(const Definitions& defs, const Shard& shard) {
  for (const LocalTrace& trace : shard.traces)
    recorders_.push_back(std::make_unique<detail::retiming::MatchRecorder>(defs, trace));
}

RetimeMatches::~RetimeMatches() = default;

MessageSink* RetimeMatches::sink(std::size_t i) { return recorders_[i].get(); }

void RetimeMatches::resolve_peers() {
  for (auto& r : recorders_) r->resolve_peers();
}

void RetimeMatches::collectives(std::size_t i, const CollInstance* instances,
                                const CollTiming* timings, std::size_t n) {
  recorders_[i]->collectives(instances, timings, n);
}

RetimeResult retime(const World& world, const Definitions& defs, const CallTree& tree,
                    const Shard& shard, const RetimeRequest& request) {
  detail::retiming::Retimer r(world, defs, tree, shard, request);
  return r.run();
}

}  // namespace cpreplay::replay
