// The nccl stage's row of the stage table (stages.h): nccl_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& NcclSpec();

// The stage itself (nccl_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeNcclStage();

}  // namespace cc
