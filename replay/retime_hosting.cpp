// SPDX-License-Identifier: BSD-3-Clause
// Re-timing replay, records and collective hosting: the clocks' encoding on the record
// transport, one round's records taken in, and the host of each collective instance (the member
// of local rank k mod size), which combines its members' begins and answers the binding ones,
// forward and backward.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "replay/rank_retimer.hpp"

namespace cpreplay::replay::detail::retiming {

CPREPLAY_CLOCK_LOOPS Clk RankRetimer::pool_store(const char*& p, Rank partner) {
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(pool_.size() / (S_ + 1));
    pool_.resize(pool_.size() + S_ + 1);
  }
  Clk* to = &pool_[static_cast<std::size_t>(slot) * (S_ + 1)];
  get_clocks(p, to);
  to[S_] = partner;
  return slot;
}

CPREPLAY_CLOCK_LOOPS void RankRetimer::receive(RecordExchange& ex) {
  rx_.resize(S_);
  ex.for_each_from(me_, [&](Rank source, const char* data, std::size_t size) {
    const char* p = data;
    const char* end = p + size;
    while (p < end) {
      const Rec type = static_cast<Rec>(get<std::uint8_t>(p));
      switch (type) {
        case kLsF: {
          const EventIdx send = get<EventIdx>(p);
          const EventIdx request = get<EventIdx>(p);
          const std::uint8_t lr = get<std::uint8_t>(p);
          inbox_.insert(key_of(kLsF, static_cast<std::uint32_t>(source), send), pool_store(p));
          if (lr && request < trace_.size())
            lr_req_.set(request);  // the backward replay hears from the sender here
          break;
        }
        case kLrF: {
          const EventIdx key = get<EventIdx>(p);
          // Only a completion that binds waits for it (its send knows).
          if (key < trace_.size() && lr_.test(key))
            inbox_.insert(key_of(kLrF, 0, key), pool_store(p));
          else
            get_clocks(p, rx_.data());
          break;
        }
        case kUpF: {
          const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
          const std::uint32_t local = get<std::uint32_t>(p);
          const std::uint8_t source = get<std::uint8_t>(p);
          if (source) get_clocks(p, rx_.data());
          host_up(comm, k, local, source ? rx_.data() : nullptr);
          break;
        }
        case kReqF: {
          const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
          const std::uint32_t local = get<std::uint32_t>(p);
          host_request(comm, k, Rank{source}, local);
          break;
        }
        case kDownF: {
          const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
          const std::int32_t argmax = get<std::int32_t>(p);
          inbox_.insert(key_of(kDownF, comm, k), pool_store(p, argmax));
          break;
        }
        case kLsB: case kLrB: {
          const EventIdx key = get<EventIdx>(p);
          inbox_.insert(key_of(type, 0, key), get<Clk>(p));
          break;
        }
        case kUpB: {
          const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
          const std::uint32_t local = get<std::uint32_t>(p);
          host_up_backward(comm, k, local, get<Clk>(p));
          break;
        }
        case kDownB: {
          const std::uint32_t comm = get<std::uint32_t>(p), k = get<std::uint32_t>(p);
          inbox_.insert(key_of(kDownB, comm, k), get<Clk>(p));
          break;
        }
        default:
          // Only this code writes these records: a wrong kind is a bug, not a bad trace.
          if (error_.empty())
            error_ = "what-if replay: rank " + std::to_string(me_) +
                     ": a record of unknown kind from rank " + std::to_string(source);
          p = end;
      }
    }
  });
}

HostInstance& RankRetimer::host_instance(std::uint32_t comm, std::uint32_t k) {
  HostInstance& h = hosted_[(std::uint64_t{comm} << 32) | k];
  if (h.size == 0) {
    h.comm = comm;
    h.size = comm_size(comm);
    // The host is a member: its own rule for the instance says which kind it is.
    const EventIdx end = table_.on(comm)[k];
    auto it = std::lower_bound(colls_.begin(), colls_.end(), end,
                               [](const CollEntry& c, EventIdx e) { return c.end < e; });
    h.type = it != colls_.end() && it->end == end ? it->type : Bind::None;
    h.expected = h.type == Bind::Root ? 1 : h.size;
    if (h.type == Bind::Scan) {
      h.clocks.assign(static_cast<std::size_t>(h.size) * S_, kNeg);
      h.arrived.assign(h.size, 0);
    } else {
      h.clocks.assign(S_, kNeg);
    }
  }
  return h;
}

void RankRetimer::host_up(std::uint32_t comm, std::uint32_t k, std::uint32_t local,
                          const Clk* clocks) {
  HostInstance& h = host_instance(comm, k);
  ++h.got;
  if (h.type == Bind::Scan && local < h.size) h.arrived[local] = 1;
  if (clocks != nullptr) {
    if (h.type != Bind::All) h.source_locals.push_back(local);
    Clk* to = h.type == Bind::Scan ? &h.clocks[static_cast<std::size_t>(local) * S_]
                                   : h.clocks.data();
    if (path_ >= 0 && h.type != Bind::Scan) {
      // Ties go to the lower rank, so the path does not depend on arrival order.
      const Rank who = world_of(comm, local);
      if (h.argmax < 0 || clocks[path_] > to[path_] ||
          (clocks[path_] == to[path_] && who < h.argmax))
        h.argmax = who;
    }
    for (std::uint32_t s = 0; s < S_; ++s) to[s] = std::max(to[s], clocks[s]);
  }
  host_answer(h, comm, k);
}

void RankRetimer::host_request(std::uint32_t comm, std::uint32_t k, Rank from,
                               std::uint32_t local) {
  HostInstance& h = host_instance(comm, k);
  ++h.binders;
  if (h.type == Bind::Scan) h.binder_locals.push_back(local);
  h.waiting.push_back({from, local});
  host_answer(h, comm, k);
}

void RankRetimer::host_answer(HostInstance& h, std::uint32_t comm, std::uint32_t k) {
  if (h.waiting.empty()) return;
  std::vector<Clk>& value = scratch_;
  for (std::size_t i = 0; i < h.waiting.size();) {
    const auto [rank, local] = h.waiting[i];
    if (h.type == Bind::Scan) {
      bool ready = true;
      for (std::uint32_t j = 0; j <= local && ready; ++j) ready = h.arrived[j] != 0;
      if (!ready) {
        ++i;
        continue;
      }
      value.assign(S_, kNeg);
      Rank argmax = -1;
      for (std::uint32_t j = 0; j <= local; ++j) {
        const Clk* c = &h.clocks[static_cast<std::size_t>(j) * S_];
        if (path_ >= 0 && c[path_] > kNeg && (argmax < 0 || c[path_] > value[path_]))
          argmax = world_of(comm, j);
        for (std::uint32_t s = 0; s < S_; ++s) value[s] = std::max(value[s], c[s]);
      }
      value.push_back(argmax);
    } else {
      if (h.got < h.expected) return;
      value.assign(h.clocks.begin(), h.clocks.begin() + S_);
      value.push_back(h.argmax);
    }
    ByteBuffer& out = fwd_ex_->to(me_, rank);
    put(out, static_cast<std::uint8_t>(kDownF));
    put(out, comm);
    put(out, k);
    put(out, static_cast<std::int32_t>(value[S_]));
    put_clocks(out, value.data());
    h.waiting[i] = h.waiting.back();
    h.waiting.pop_back();
  }
}

void RankRetimer::host_up_backward(std::uint32_t comm, std::uint32_t k, std::uint32_t local,
                                   Clk value) {
  auto it = hosted_.find((std::uint64_t{comm} << 32) | k);
  if (it == hosted_.end()) return;
  HostInstance& h = it->second;
  ++h.binders_in;
  h.min_value = std::min(h.min_value, value);
  if (h.type == Bind::Scan) {
    if (h.binder_values.empty()) {
      h.binder_values.assign(h.binder_locals.size(), kPos);
      h.binder_in.assign(h.binder_locals.size(), 0);
    }
    for (std::size_t i = 0; i < h.binder_locals.size(); ++i)
      if (h.binder_locals[i] == local && !h.binder_in[i]) {
        h.binder_values[i] = value;
        h.binder_in[i] = 1;
        break;
      }
  }
  host_reply_backward(h, comm, k);
}

void RankRetimer::host_reply_backward(HostInstance& h, std::uint32_t comm, std::uint32_t k) {
  if (h.all_replied) return;
  auto send = [&](std::uint32_t local, Clk value) {
    ByteBuffer& out = bwd_ex_->to(me_, world_of(comm, local));
    put(out, static_cast<std::uint8_t>(kDownB));
    put(out, comm);
    put(out, k);
    put(out, value);
  };
  if (h.type != Bind::Scan) {
    if (h.binders_in < h.binders) return;
    if (h.type == Bind::All) {
      for (std::uint32_t l = 0; l < h.size; ++l) send(l, h.min_value);
    } else {
      for (std::uint32_t l : h.source_locals) send(l, h.min_value);
    }
    h.all_replied = true;
    return;
  }
  if (h.replied.empty()) h.replied.assign(h.source_locals.size(), 0);
  if (h.binder_in.empty()) h.binder_in.assign(h.binder_locals.size(), 0);
  if (h.binder_values.empty()) h.binder_values.assign(h.binder_locals.size(), kPos);
  bool all = true;
  for (std::size_t i = 0; i < h.source_locals.size(); ++i) {
    if (h.replied[i]) continue;
    const std::uint32_t src = h.source_locals[i];
    bool ready = true;
    Clk value = kPos;
    for (std::size_t j = 0; j < h.binder_locals.size(); ++j)
      if (h.binder_locals[j] >= src) {
        if (!h.binder_in[j]) ready = false;
        value = std::min(value, h.binder_values[j]);
      }
    if (!ready) {
      all = false;
      continue;
    }
    send(src, value);
    h.replied[i] = 1;
  }
  h.all_replied = all;
}

}  // namespace cpreplay::replay::detail::retiming
