// The facts stage's row of the stage table (stages.h): facts_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& FactsSpec();

// The stage itself (facts_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeFactsStage();

}  // namespace cc
