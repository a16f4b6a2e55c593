// The mpi stage's row of the stage table (stages.h): mpi_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& MpiSpec();

// The stage itself (mpi_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeMpiStage();

}  // namespace cc
