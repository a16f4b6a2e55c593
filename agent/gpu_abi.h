// CUDA driver API and NCCL types for the agent, which dlopens both
// libraries at run time: declared in agent/gpu_abi_decls.inc rather than
// taken from cuda.h / nccl.h, so that building the agent needs no CUDA
// toolkit on the build machine.
#pragma once

#include <climits>
#include <cstddef>

namespace cc::agent {

// In a namespace of their own (inline: agent code names them plainly), so
// that agent/gpu_abi_test.cc can hold them beside the real headers.
inline namespace gpu_abi {
#include "agent/gpu_abi_decls.inc"
}  // namespace gpu_abi

// NCCL_CONFIG_INITIALIZER of nccl.h 2.28: every attribute "undefined" (NCCL
// picks its default), stamped with the layout's size and version.
inline ncclConfig_t DefaultNcclConfig() {
  constexpr int kUndef = INT_MIN;  // NCCL_CONFIG_UNDEF_INT
  ncclConfig_t c{};
  c.size = sizeof(ncclConfig_t);
  c.magic = 0xcafebeef;
  c.version = 22800;  // NCCL_VERSION(2, 28, 0): the layout above
  c.blocking = c.cgaClusterSize = c.minCTAs = c.maxCTAs = kUndef;
  c.netName = nullptr;
  c.splitShare = c.trafficClass = kUndef;
  c.commName = nullptr;
  c.collnetEnable = c.CTAPolicy = c.shrinkShare = c.nvlsCTAs = kUndef;
  c.nChannelsPerNetPeer = c.nvlinkCentricSched = kUndef;
  return c;
}

}  // namespace cc::agent
