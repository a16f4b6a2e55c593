// The health command's "ib" section (docs/health-readings.md): per IB/RoCE
// port its link (state, rate) and the error counters that grow when a
// cable or port is going bad (symbol errors, link downs, ...), and whether
// its uverbs device file exists for user-space verbs (NCCL, MPI). The
// controller takes two snapshots around the load stages and compares the
// counters.
#pragma once

#include <nlohmann/json.hpp>

#include "agent/sysroot.h"

namespace cc::agent {

// The counters of ports/<n>/counters/ the section reports.
inline constexpr const char* kIbHealthCounters[] = {"symbol_error",
                                                    "link_downed",
                                                    "link_error_recovery",
                                                    "port_rcv_errors",
                                                    "local_link_integrity_errors",
                                                    "excessive_buffer_overrun_errors",
                                                    "port_xmit_discards"};

// {"status": "ok", "ports": [{"device", "port", "state", "phys_state",
// "rate", "rate_gbps", "link_layer", "counters", "uverbs",
// "uverbs_present"}]}; {"status": "absent", "reason", "ports": []} without
// /sys/class/infiniband. A counter whose file is missing or unreadable is
// left out of "counters".
nlohmann::json CollectIbHealth(const Sysroot& root);

}  // namespace cc::agent
