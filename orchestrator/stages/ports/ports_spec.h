// The ports stage's row of the stage table (stages.h): ports_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& PortsSpec();

// The stage itself (ports_stage.cc), the row's factory.
std::unique_ptr<Stage> MakePortsStage();

}  // namespace cc
