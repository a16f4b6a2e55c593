// The parity stage's row of the stage table (stages.h): parity_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& ParitySpec();

// The stage itself (parity_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeParityStage();

}  // namespace cc
