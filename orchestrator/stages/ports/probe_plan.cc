#include "orchestrator/stages/ports/probe_plan.h"

#include <algorithm>

namespace cc {

namespace {
constexpr size_t kNone = static_cast<size_t>(-1);
}

ProbePlan::ProbePlan(const std::vector<std::string>& senders,
                     const std::vector<ReceiverInfo>& receivers, const std::vector<int>& listed)
    : senders_(senders) {
  // The same slots, in the same order, as PlanProbes gives every sender.
  for (const ReceiverInfo& r : receivers) {
    Receiver rec{r.node, r.addr, {}};
    if (r.ssh_port) rec.slots.push_back({*r.ssh_port, PortKind::kSsh, true, ""});
    for (int port : listed) {
      if (r.ssh_port && port == *r.ssh_port) continue;
      auto err = r.bind_errors.find(port);
      if (err != r.bind_errors.end()) {
        rec.slots.push_back({port, PortKind::kListed, true, err->second});
      } else if (r.bound.count(port)) {
        rec.slots.push_back({port, PortKind::kListed, false, ""});
      }
    }
    for (int port : r.ephemeral) rec.slots.push_back({port, PortKind::kEphemeral, false, ""});
    receiver_index_.emplace(r.node, slots_.size());
    slots_.push_back(std::move(rec));
  }
  cum_.assign(slots_.size() + 1, 0);
  for (size_t r = 0; r < slots_.size(); ++r) cum_[r + 1] = cum_[r] + slots_[r].slots.size();
  sender_base_.assign(1, 0);
  for (size_t s = 0; s < senders_.size(); ++s) {
    sender_index_.emplace(senders_[s], s);
    size_t self = kNone;
    // PlanProbes skips every receiver named like the sender; names are
    // unique in a run, so there is at most one.
    for (size_t r = 0; r < slots_.size() && self == kNone; ++r) {
      if (slots_[r].node == senders_[s]) self = r;
    }
    self_.push_back(self);
    size_t own = self == kNone ? 0 : slots_[self].slots.size();
    sender_base_.push_back(sender_base_.back() + cum_.back() - own);
  }
}

size_t ProbePlan::SenderOf(size_t i) const {
  return static_cast<size_t>(std::upper_bound(sender_base_.begin(), sender_base_.end(), i) -
                             sender_base_.begin()) -
         1;
}

size_t ProbePlan::OffsetIn(size_t s, size_t r) const {
  size_t self = self_[s];
  return self != kNone && r > self ? cum_[r] - slots_[self].slots.size() : cum_[r];
}

std::pair<size_t, size_t> ProbePlan::Locate(size_t s, size_t o) const {
  size_t self = self_[s];
  // Offsets past the sender's own receiver skip its block.
  if (self != kNone && o >= cum_[self]) o += slots_[self].slots.size();
  size_t r = static_cast<size_t>(std::upper_bound(cum_.begin(), cum_.end(), o) - cum_.begin()) - 1;
  return {r, o - cum_[r]};
}

size_t ProbePlan::ReceiverOf(size_t i) const {
  size_t s = SenderOf(i);
  return Locate(s, i - sender_base_[s]).first;
}

PlannedProbe ProbePlan::At(size_t i) const {
  size_t s = SenderOf(i);
  auto [r, k] = Locate(s, i - sender_base_[s]);
  const Receiver& rec = slots_[r];
  const Slot& slot = rec.slots[k];
  return {senders_[s], rec.node, rec.addr, slot.port, slot.kind, slot.plain, slot.bind_error};
}

std::pair<size_t, size_t> ProbePlan::Range(const std::string& src, const std::string& dst) const {
  auto s = sender_index_.find(src);
  auto r = receiver_index_.find(dst);
  if (s == sender_index_.end() || r == receiver_index_.end() || r->second == self_[s->second]) {
    return {0, 0};
  }
  size_t first = sender_base_[s->second] + OffsetIn(s->second, r->second);
  return {first, first + slots_[r->second].slots.size()};
}

}  // namespace cc
