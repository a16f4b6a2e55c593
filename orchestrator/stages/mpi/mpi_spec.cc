#include "orchestrator/stages/mpi/mpi_spec.h"

namespace cc {
namespace {

using K = StageSettingKey;

constexpr const char* kName = "mpi";

StageEstimate Estimate(const PlanInput& in) {
  constexpr double kRoundS = 10;  // one round of ping-pongs; the allreduce about as long
  return {"one mpirun: MPI_Allreduce, then ping-pong " + RoundsPhrase(in),
          static_cast<double>(in.rounds) * kRoundS + kRoundS};
}

}  // namespace

const StageSpec& MpiSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "Open MPI across the nodes: launch, exact MPI_Allreduce, pair ping-pong",
      .settings =
          {
              {kName, "mpirun", K::kString, 0, "path of Open MPI's mpirun (default: from PATH)"},
              {kName, "probe", K::kString, 0,
               "clustercheck-mpi-probe on the nodes, the same path on each "
               "(default: beside clustercheck)"},
              {kName, "timeout_s", K::kFloat, 0.001,
               "deadline for one mpirun; past it its process group is killed: hang", "120"},
              {kName, "pair_timeout_s", K::kFloat, 0.001,
               "time per round of ping-pongs (and for the allreduce) inside the probe", "10"},
              {kName, "message_size", K::kString, 0, "bandwidth ping-pong size, e.g. \"4M\"",
               "\"4M\""},
              {kName, "iters", K::kInt, 1, "timed ping-pong round trips per size", "20"},
              {kName, "btl_tcp_if_include", K::kString, 0,
               "--mca btl_tcp_if_include (default: the nics stage's choice)"},
              {kName, "oob_tcp_if_include", K::kString, 0,
               "--mca oob_tcp_if_include (default: the nics stage's choice)"},
              {kName, "extra_args", K::kStringArray, 0, "added to mpirun's argv before the probe",
               "[]"},
          },
      .make = MakeMpiStage,
      .estimate = Estimate,
  };
  return kSpec;
}

}  // namespace cc
