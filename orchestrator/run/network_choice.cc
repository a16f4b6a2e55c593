#include "orchestrator/run/network_choice.h"

namespace cc {

std::string NetworkChoice::AddressOr(const std::string& node, const std::string& fallback) const {
  auto it = address_of.find(node);
  return it == address_of.end() ? fallback : it->second;
}

std::map<std::string, nlohmann::json> NetworkChoiceMeta(const NetworkChoice& choice) {
  return {{"selection.nccl_env", choice.nccl_env},
          {"selection.mpi_mca",
           {{"btl_tcp_if_include", choice.btl_tcp_if_include}, {"note", choice.mpi_note}}},
          {"selection.addresses", choice.address_of}};
}

}  // namespace cc
