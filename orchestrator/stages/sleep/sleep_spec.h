// The sleep stage's row of the stage table (stages.h): sleep_spec.cc.
#pragma once

#include <memory>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

const StageSpec& SleepSpec();

// How long each agent sleeps when [stages.sleep] seconds is unset.
inline constexpr double kDefaultSleepSeconds = 5;

// The stage itself (sleep_stage.cc), the row's factory.
std::unique_ptr<Stage> MakeSleepStage();

}  // namespace cc
