// The ports stage's plan without its probes held (issue 14): 256 nodes
// with 10 ports each plan 652,800 probes, and a PlannedProbe with its
// three strings is ~180 bytes, so the plan alone was 117 MB. ProbePlan
// keeps each receiver's port slots once and maps a plan index to
// (sender, receiver, slot) and back by prefix sums: memory per node, not
// per probe. Its indices and probes are exactly PlanProbes' (ports_plan.h):
// grouped by sender, receivers and their ports in the given order, no
// sender probing itself. Pure; thread-safe once built.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/stages/ports/ports_plan.h"

namespace cc {

class ProbePlan {
 public:
  ProbePlan() = default;
  ProbePlan(const std::vector<std::string>& senders, const std::vector<ReceiverInfo>& receivers,
            const std::vector<int>& listed);

  size_t size() const { return sender_base_.empty() ? 0 : sender_base_.back(); }
  // The probe at plan index i < size(), as PlanProbes(...)[i].
  PlannedProbe At(size_t i) const;
  // The names of plan index i's sender and receiver (no copy).
  const std::string& SrcOf(size_t i) const { return senders_[SenderOf(i)]; }
  const std::string& DstOf(size_t i) const { return slots_[ReceiverOf(i)].node; }
  // The plan indices [first, last) of src probing dst; empty when either
  // is not in the plan or src == dst.
  std::pair<size_t, size_t> Range(const std::string& src, const std::string& dst) const;

 private:
  struct Slot {
    int port = 0;
    PortKind kind = PortKind::kListed;
    bool plain = false;
    std::string bind_error;
  };
  struct Receiver {
    std::string node, addr;
    std::vector<Slot> slots;
  };
  size_t SenderOf(size_t i) const;
  size_t ReceiverOf(size_t i) const;
  // Offset of receiver r's block within sender s's probes.
  size_t OffsetIn(size_t s, size_t r) const;
  // Receiver and slot of offset `o` within sender s's probes.
  std::pair<size_t, size_t> Locate(size_t s, size_t o) const;

  std::vector<std::string> senders_;
  std::vector<Receiver> slots_;
  std::vector<size_t> cum_;          // cum_[r]: slots of receivers before r
  std::vector<size_t> self_;         // sender s's receiver index, or npos
  std::vector<size_t> sender_base_;  // sender s's first index; back() = size
  std::map<std::string, size_t> sender_index_, receiver_index_;
};

}  // namespace cc
