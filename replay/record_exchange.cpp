// SPDX-License-Identifier: BSD-3-Clause
// One all-to-all of counts and one of bytes per round.
#include "replay/record_exchange.hpp"

#include <climits>

#include "cpreplay/error.hpp"

namespace cpreplay::replay {

RecordExchange::RecordExchange(const World& world)
    : world_(world), out_(world.size()), in_(world.size()) {}

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
  const int me = world_.rank();
  // Per destination: the byte count and this rank's two flags.
  std::vector<int> send_head(3 * static_cast<std::size_t>(n), 0);
  std::vector<int> recv_head(3 * static_cast<std::size_t>(n), 0);
  std::vector<int> send_counts(n, 0), recv_counts(n, 0), send_displs(n, 0), recv_displs(n, 0);
  std::vector<char> send_buf;
  for (int r = 0; r < n; ++r) {
    send_head[3 * r + 1] = flags[0];
    send_head[3 * r + 2] = flags[1];
    if (r == me) continue;
    if (out_[r].size() > static_cast<std::size_t>(INT_MAX) - send_buf.size())
      throw ReplayError("backward replay: more than 2 GiB of records in one round");
    send_displs[r] = static_cast<int>(send_buf.size());
    send_counts[r] = static_cast<int>(out_[r].size());
    send_head[3 * r] = send_counts[r];
    send_buf.insert(send_buf.end(), out_[r].begin(), out_[r].end());
  }
  MPI_Alltoall(send_head.data(), 3, MPI_INT, recv_head.data(), 3, MPI_INT, world_.comm());
  any[0] = any[1] = 0;
  long long total = 0;
  for (int r = 0; r < n; ++r) {
    recv_counts[r] = recv_head[3 * r];
    any[0] |= recv_head[3 * r + 1];
    any[1] |= recv_head[3 * r + 2];
    recv_displs[r] = static_cast<int>(total);
    total += recv_counts[r];
  }
  std::vector<char> recv_buf(static_cast<std::size_t>(total));
  MPI_Alltoallv(send_buf.data(), send_counts.data(), send_displs.data(), MPI_BYTE,
                recv_buf.data(), recv_counts.data(), recv_displs.data(), MPI_BYTE, world_.comm());
  for (int r = 0; r < n; ++r) {
    if (r == me) {
      in_[r].swap(out_[r]);
    } else {
      in_[r].assign(recv_buf.begin() + recv_displs[r],
                    recv_buf.begin() + recv_displs[r] + recv_counts[r]);
    }
    out_[r].clear();
  }
}

}  // namespace cpreplay::replay
