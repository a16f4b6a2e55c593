// `run --set STAGE.KEY=VALUE`: one stage setting from the command line,
// over the inventory's [stages.<stage>] table, checked against the same
// rows (stage_settings.h) so a typo is an error naming the key. For the
// settings that change from run to run, not from cluster to cluster: a
// Slurm prolog's `--stages health --set health.since=1h`.
#pragma once

#include <string>

#include "common/status.h"
#include "orchestrator/inventory/inventory.h"

namespace cc {

// VALUE is read as JSON where it parses (30, true, [29500], "x"), else as a
// plain string (24h). kBadArgument naming --set and the key when the stage,
// the key or the value is wrong.
Status ApplySettingOverride(Inventory& inventory, const std::string& text);

}  // namespace cc
