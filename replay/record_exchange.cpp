// SPDX-License-Identifier: BSD-3-Clause
// One block per process pair per round, point to point, its size found by a matched probe; the
// round's two flags at the head of each block; frames per pair of ranks inside.
#include "replay/record_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

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
      inbox_(static_cast<std::size_t>(blocks.count(world.rank()))) {
  for (ByteBuffer& o : out_) clear_block(o);
  const char* sized = std::getenv("CPREPLAY_TEST_EXCHANGE_SIZED");
  sized_ = sized != nullptr && *sized != '\0' && std::string(sized) != "0";
}

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

void RecordExchange::clear_block(ByteBuffer& out) {
  out.clear();
  out.resize(kPrefix);  // the flags, written when the block goes
}

void RecordExchange::release_buffers() {
  for (ByteBuffer& o : out_) {
    o.release();
    clear_block(o);
  }
  in_.release();
  for (auto& list : inbox_) std::vector<Frame>().swap(list);
}

bool RecordExchange::outbox_empty() const {
  for (const auto& o : out_)
    if (o.size() > kPrefix) return false;
  return true;
}

void RecordExchange::exchange() {
  int any[2];
  const int none[2] = {0, 0};
  exchange(none, any);
}

void RecordExchange::exchange_probed() {
  const int n = world_.size();
  const auto me = static_cast<std::size_t>(world_.rank());
  // Every other process gets a block each round, at least the flags: one message per pair,
  // whose size a matched probe tells. Each block goes from its destination's buffer: no copy
  // of the round's blocks into one send buffer (what-if's rounds are 100-400 KiB each on the
  // bench reference trace).
  for (int r = 0; r < n; ++r) {
    if (static_cast<std::size_t>(r) == me) continue;
    ByteBuffer& out = out_[static_cast<std::size_t>(r)];
    requests_.emplace_back();
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, r, kRoundTag, world_.comm(),
              &requests_.back());
  }
  // The blocks land in source order, as an all-to-all-v would place them; a round's messages
  // are all received before the next round sends (non-overtaking per source and tag).
  messages_.resize(static_cast<std::size_t>(n));
  const std::size_t first = received_.size();
  std::size_t total = in_.size();
  for (int r = 0; r < n; ++r) {
    if (static_cast<std::size_t>(r) == me) continue;
    MPI_Status status;
    MPI_Mprobe(r, kRoundTag, world_.comm(), &messages_[static_cast<std::size_t>(r)], &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    received_.push_back(Block{total, static_cast<std::size_t>(count)});
    total += static_cast<std::size_t>(count);
  }
  in_.resize(total);
  for (std::size_t b = first, r = 0; b < received_.size(); ++b, ++r) {
    if (r == me) ++r;
    requests_.emplace_back();
    MPI_Imrecv(in_.data() + received_[b].offset, static_cast<int>(received_[b].bytes), MPI_BYTE,
               &messages_[r], &requests_.back());
  }
}

void RecordExchange::exchange_sized(int any[2]) {
  const int n = world_.size();
  const auto me = static_cast<std::size_t>(world_.rank());
  // Per destination process: the block's size (0: nothing but the flags, not sent) and the
  // flags, in one all-to-all; then the blocks with records, point to point.
  std::vector<int> send_head(3 * static_cast<std::size_t>(n), 0);
  std::vector<int> recv_head(3 * static_cast<std::size_t>(n), 0);
  for (std::size_t r = 0; r < out_.size(); ++r) {
    if (r == me) continue;
    const std::size_t bytes = out_[r].size() > kPrefix ? out_[r].size() : 0;
    send_head[3 * r] = static_cast<int>(bytes);
    std::memcpy(&send_head[3 * r + 1], out_[r].data(), kPrefix);
  }
  MPI_Alltoall(send_head.data(), 3, MPI_INT, recv_head.data(), 3, MPI_INT, world_.comm());
  std::size_t total = in_.size();
  for (int r = 0; r < n; ++r) {
    any[0] |= recv_head[3 * static_cast<std::size_t>(r) + 1];
    any[1] |= recv_head[3 * static_cast<std::size_t>(r) + 2];
    const auto bytes = static_cast<std::size_t>(recv_head[3 * static_cast<std::size_t>(r)]);
    if (static_cast<std::size_t>(r) == me || bytes == 0) continue;
    received_.push_back(Block{total, bytes});
    total += bytes;
  }
  in_.resize(total);
  for (std::size_t b = 1, r = 0; r < static_cast<std::size_t>(n); ++r) {
    if (r == me || recv_head[3 * r] == 0) continue;
    requests_.emplace_back();
    MPI_Irecv(in_.data() + received_[b].offset, recv_head[3 * r], MPI_BYTE, static_cast<int>(r),
              kRoundTag, world_.comm(), &requests_.back());
    ++b;
  }
  for (std::size_t r = 0; r < out_.size(); ++r)
    if (send_head[3 * r] > 0) {
      requests_.emplace_back();
      MPI_Isend(out_[r].data(), send_head[3 * r], MPI_BYTE, static_cast<int>(r), kRoundTag,
                world_.comm(), &requests_.back());
    }
}

void RecordExchange::exchange(const int flags[2], int any[2]) {
  const int n = world_.size();
  const auto me = static_cast<std::size_t>(world_.rank());
  for (std::size_t p = 0; p < out_.size(); ++p) close(p);
  any[0] = flags[0];
  any[1] = flags[1];
  // The block to this process itself goes first, in memory.
  in_.swap(out_[me]);
  clear_block(out_[me]);
  received_.clear();
  received_.push_back(Block{0, in_.size()});
  if (n > 1) {
    for (std::size_t p = 0; p < out_.size(); ++p) {
      if (p == me) continue;
      if (out_[p].size() > static_cast<std::size_t>(INT_MAX))
        throw ReplayError("backward replay: more than 2 GiB of records in one round");
      std::memcpy(out_[p].data(), flags, kPrefix);
    }
    requests_.clear();
    if (n <= kProbedUpTo && !sized_)
      exchange_probed();
    else
      exchange_sized(any);
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }
  for (std::size_t p = 0; p < out_.size(); ++p)
    if (p != me) clear_block(out_[p]);
  // Frames by destination, then by source (stable: a source's frames stay in posting order).
  for (auto& list : inbox_) list.clear();
  for (std::size_t b = 0; b < received_.size(); ++b) {
    const Block& block = received_[b];
    if (block.bytes < kPrefix)
      throw ReplayError("backward replay: a round's block of " + std::to_string(block.bytes) +
                        " bytes has no flags");
    if (b > 0) {
      int theirs[2];
      std::memcpy(theirs, in_.data() + block.offset, kPrefix);
      any[0] |= theirs[0];
      any[1] |= theirs[1];
    }
    const std::size_t end = block.offset + block.bytes;
    for (std::size_t at = block.offset + kPrefix; at + sizeof(Head) <= end;) {
      Head head;
      std::memcpy(&head, in_.data() + at, sizeof head);
      at += sizeof head;
      inbox_[static_cast<std::size_t>(head.dest - first_)].push_back(
          Frame{head.source, at, head.bytes});
      at += head.bytes;
    }
  }
  // Usually in order already (blocks come by source process, a process's ranks post in rank
  // order): then the check is all it costs.
  const auto by_source = [](const Frame& a, const Frame& b) { return a.source < b.source; };
  for (auto& list : inbox_)
    if (!std::is_sorted(list.begin(), list.end(), by_source))
      std::stable_sort(list.begin(), list.end(), by_source);
}

}  // namespace cpreplay::replay
