// SPDX-License-Identifier: BSD-3-Clause
// One all-to-all of counts per round, then one block per process pair with bytes, point to
// point; frames per pair of ranks inside.
#include "replay/record_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {
namespace {
constexpr std::size_t kNoFrame = static_cast<std::size_t>(-1);
// A round's blocks (the other tags: replay/stream, rank_sum, views).
constexpr int kRoundTag = 7506;
}

RecordExchange::RecordExchange(const World& world, const RankBlocks& blocks)
    : world_(world),
      blocks_(blocks),
      first_(blocks.first(world.rank())),
      out_(static_cast<std::size_t>(world.size())),
      open_(static_cast<std::size_t>(world.size()), kNoFrame),
      open_pair_(static_cast<std::size_t>(world.size())),
      inbox_(static_cast<std::size_t>(blocks.count(world.rank()))) {}

void ByteBuffer::grow(std::size_t at_least) {
  std::size_t cap = capacity_ < 256 ? 256 : capacity_ * 2;
  while (cap < at_least) cap *= 2;
  grow_exactly(cap);
}

void ByteBuffer::grow_exactly(std::size_t n) {
  std::unique_ptr<char[]> bigger(new char[n]);
  if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_.swap(bigger);
  capacity_ = n;
}

void RecordExchange::close(std::size_t p) {
  if (open_[p] == kNoFrame) return;
  ByteBuffer& out = out_[p];
  Head head;
  std::memcpy(&head, out.data() + open_[p], sizeof head);
  const std::size_t bytes = out.size() - open_[p] - sizeof head;
  if (bytes > UINT32_MAX) throw ReplayError("backward replay: more than 4 GiB of records in one frame");
  head.bytes = static_cast<std::uint32_t>(bytes);
  std::memcpy(out.data() + open_[p], &head, sizeof head);
  open_[p] = kNoFrame;
}

ByteBuffer& RecordExchange::to(Rank source, Rank dest) {
  const auto p = static_cast<std::size_t>(blocks_.owner(dest));
  ByteBuffer& out = out_[p];
  if (open_[p] != kNoFrame) {
    // The open frame's pair, kept beside it: its head may lie far back in the block, on a
    // cache line long gone (reading it there cost a miss per record).
    if (open_pair_[p].first == source && open_pair_[p].second == dest) return out;
    close(p);
  }
  open_[p] = out.size();
  open_pair_[p] = {source, dest};
  const Head head{source, dest, 0};
  out.append(&head, sizeof head);
  return out;
}

void RecordExchange::release_buffers() {
  for (ByteBuffer& o : out_) o.release();
  in_.release();
  for (auto& list : inbox_) std::vector<Frame>().swap(list);
}

bool RecordExchange::outbox_empty() const {
  for (const auto& o : out_)
    if (!o.empty()) return false;
  return true;
}

void RecordExchange::exchange() {
  int any[2];
  const int none[2] = {0, 0};
  exchange(none, any);
}

void RecordExchange::exchange(const int flags[2], int any[2]) {
  const int n = world_.size();
  const auto me = static_cast<std::size_t>(world_.rank());
  for (std::size_t p = 0; p < out_.size(); ++p) close(p);
  // Per destination process: the byte count and this process's two flags.
  std::vector<int> send_head(3 * static_cast<std::size_t>(n), 0);
  std::vector<int> recv_head(3 * static_cast<std::size_t>(n), 0);
  std::vector<int> send_counts(n, 0), recv_counts(n, 0), recv_displs(n, 0);
  for (int r = 0; r < n; ++r) {
    if (static_cast<std::size_t>(r) == me) continue;
    if (out_[r].size() > static_cast<std::size_t>(INT_MAX))
      throw ReplayError("backward replay: more than 2 GiB of records in one round");
    send_counts[r] = static_cast<int>(out_[r].size());
  }
  // The block to this process itself goes first, in memory.
  in_.swap(out_[me]);
  out_[me].clear();
  const std::size_t own = in_.size();
  any[0] = flags[0];
  any[1] = flags[1];
  if (n > 1) {
    for (int r = 0; r < n; ++r) {
      send_head[3 * r] = send_counts[r];
      send_head[3 * r + 1] = flags[0];
      send_head[3 * r + 2] = flags[1];
    }
    MPI_Alltoall(send_head.data(), 3, MPI_INT, recv_head.data(), 3, MPI_INT, world_.comm());
    long long total = 0;
    for (int r = 0; r < n; ++r) {
      recv_counts[r] = recv_head[3 * r];
      any[0] |= recv_head[3 * r + 1];
      any[1] |= recv_head[3 * r + 2];
      recv_displs[r] = static_cast<int>(total);
      total += recv_counts[r];
    }
    if (total > static_cast<long long>(INT_MAX))
      throw ReplayError("backward replay: more than 2 GiB of records in one round");
    in_.resize(own + static_cast<std::size_t>(total));
    // Each block goes from its destination's buffer, point to point: no copy of the round's
    // blocks into one send buffer (a fresh one per round was an allocation and a copy of
    // every byte; what-if's rounds are 100-400 KiB each on the bench reference trace). The
    // bytes land where an all-to-all-v would put them; a round's messages are all received
    // before the next round sends (non-overtaking per source and tag).
    requests_.clear();
    for (int r = 0; r < n; ++r)
      if (static_cast<std::size_t>(r) != me && recv_counts[r] > 0) {
        requests_.emplace_back();
        MPI_Irecv(in_.data() + own + recv_displs[r], recv_counts[r], MPI_BYTE, r, kRoundTag,
                  world_.comm(), &requests_.back());
      }
    for (int r = 0; r < n; ++r)
      if (static_cast<std::size_t>(r) != me && send_counts[r] > 0) {
        requests_.emplace_back();
        MPI_Isend(out_[r].data(), send_counts[r], MPI_BYTE, r, kRoundTag, world_.comm(),
                  &requests_.back());
      }
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }
  for (auto& o : out_) o.clear();
  // Frames by destination, then by source (stable: a source's frames stay in posting order).
  for (auto& list : inbox_) list.clear();
  for (std::size_t at = 0; at + sizeof(Head) <= in_.size();) {
    Head head;
    std::memcpy(&head, in_.data() + at, sizeof head);
    at += sizeof head;
    inbox_[static_cast<std::size_t>(head.dest - first_)].push_back(Frame{head.source, at, head.bytes});
    at += head.bytes;
  }
  for (auto& list : inbox_)
    std::stable_sort(list.begin(), list.end(),
                     [](const Frame& a, const Frame& b) { return a.source < b.source; });
}

}  // namespace cpreplay::replay
