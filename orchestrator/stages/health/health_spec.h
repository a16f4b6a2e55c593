// The health stage's row of the stage table (stages.h).
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& HealthSpec();
std::unique_ptr<Stage> MakeHealthStage();

}  // namespace cc
