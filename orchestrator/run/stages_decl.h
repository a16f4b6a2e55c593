// Factories of the stages in the table (stages.cc).
#pragma once

#include <memory>

#include "orchestrator/run/stage.h"

namespace cc {

std::unique_ptr<Stage> MakeFactsStage();
std::unique_ptr<Stage> MakeParityStage();
std::unique_ptr<Stage> MakeNicsStage();
std::unique_ptr<Stage> MakePortsStage();
std::unique_ptr<Stage> MakeNcclStage();
std::unique_ptr<Stage> MakeMpiStage();
std::unique_ptr<Stage> MakeSleepStage();

}  // namespace cc
