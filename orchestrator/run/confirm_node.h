// Confirmation (confirm.h) for results that name one node or one group
// rather than a pair: the mpi stage's "launch"/"allreduce" per node, the
// nccl stage's "intra-node" and whole-cluster tests. The same rule as
// Confirm(): agreement stands with both attempts in the evidence,
// disagreement is `warn` flaky, a retest that could not run leaves the
// first result unconfirmed. Pure; thread-safe.
#pragma once

#include "orchestrator/run/confirm.h"
#include "orchestrator/store/store.h"

namespace cc {

// The merged result of a node result and its retest (same node and check).
NodeResult ConfirmNode(const NodeResult& first, const NodeResult& second);

// `merged` (from ConfirmNode) counted into `counts`.
void AddNodeRetest(const NodeResult& merged, RetestCounts* counts);

}  // namespace cc
