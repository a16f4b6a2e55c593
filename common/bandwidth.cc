#include "common/bandwidth.h"

namespace cc {

double BusBandwidthFactor(Collective c, int nranks) {
  if (nranks < 1) return 0.0;
  const double n = nranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1.0;
  }
  return 0.0;
}

double AlgBandwidthGBps(uint64_t bytes, double seconds) {
  if (seconds <= 0) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double BusBandwidthGBps(Collective c, uint64_t bytes, double seconds, int nranks) {
  return AlgBandwidthGBps(bytes, seconds) * BusBandwidthFactor(c, nranks);
}

}  // namespace cc
