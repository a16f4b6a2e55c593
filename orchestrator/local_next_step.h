// The closing line of a run on this machine alone (inventories/local.toml,
// `make run`): what to do next, which is to describe a real cluster. Pure.
#pragma once

#include <string>

namespace cc {

// Where the example inventory is: next to the local inventory
// (inventories/ in the source tree, the same folder when installed).
std::string ExampleInventoryPath(const std::string& inventory_path);

// "" unless `transport` is "local". Otherwise lines such as
//   next step: describe your cluster: cp inventories/example.toml
//   my-cluster.toml,
//   ...
// `example_exists` says whether ExampleInventoryPath exists.
std::string NextStepAfterLocalRun(const std::string& inventory_path, const std::string& transport,
                                  bool example_exists);

}  // namespace cc
