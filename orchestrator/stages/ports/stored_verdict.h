// A ports verdict as the stage records it (StageContext::Record): in the
// kinds every stage and analysis share (analysis.h), so that nothing
// downstream needs the ports stage's own words.
#pragma once

#include "orchestrator/stages/ports/ports_verdict.h"
#include "orchestrator/store/verdict.h"

namespace cc {

// Kind mapped (receiver, ephemeral and port-everywhere -> port-blocked;
// isolated and sender -> bad-node; pair -> bad-link; nothing ->
// widespread; others as they are), the ports' own kind kept as evidence
// "stage_kind"; check the ports involved ("tcp/22,29500", cut at 200
// characters). A failing verdict of a node's own (isolated, sender,
// receiver, ephemeral, wrong-host, node-lost) is a node cause, one of a
// pair (pair, one-way) a link cause (verdict.h CauseScope).
Verdict StoredVerdict(const PortVerdict& v);

}  // namespace cc
