#include "orchestrator/local_next_step.h"

namespace cc {

std::string ExampleInventoryPath(const std::string& inventory_path) {
  size_t slash = inventory_path.rfind('/');
  return (slash == std::string::npos ? "" : inventory_path.substr(0, slash + 1)) + "example.toml";
}

std::string NextStepAfterLocalRun(const std::string& inventory_path, const std::string& transport,
                                  bool example_exists) {
  if (transport != "local") return "";
  std::string example = example_exists
                            ? ExampleInventoryPath(inventory_path)
                            : "the example inventory (inventories/example.toml in the source)";
  return "\nnext step: that was this machine alone. To check a cluster, "
         "describe it:\n"
         "  cp " +
         example +
         " my-cluster.toml    # nodes (hostlists like gpu[001-016]), ssh "
         "login, stages\n"
         "  clustercheck run my-cluster.toml     # over ssh; the agent is "
         "pushed, nothing to install on the nodes\n";
}

}  // namespace cc
