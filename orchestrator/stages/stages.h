// The table of stages (stage_spec.h), in run order, and the questions the
// rest of the controller asks of it. Each row lives in its stage's folder.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

// In run order: facts, parity, health, nics, ports, nccl, mpi, then diagnostic
// stages (sleep) that run only when asked for.
const std::vector<const StageSpec*>& StageSpecs();
// nullptr for a name that is no stage ("connect", a typo).
const StageSpec* FindStageSpec(const std::string& name);
// The stages `run` uses when neither --stages nor [stages].run says.
std::vector<std::string> DefaultStageNames();

// Whether the pair checks of `stage` are directed (StageSpec); false for
// a name that is no stage.
bool PairsDirected(const std::string& stage);

// The matrix a pair result belongs to: its check, unless its stage says
// otherwise (the ports stage's ephemeral samples, a different random port
// per receiver, share one "tcp/ephemeral").
std::string MatrixCheck(const PairResult& r);

}  // namespace cc
