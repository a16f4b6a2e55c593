// The nics stage's row of the stage table (stages.h): nics_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& NicsSpec();

// The stage itself (nics_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeNicsStage();

}  // namespace cc
