// Internals of the inventory parser shared by inventory.cc (top level,
// [ssh], [expect], [stages]) and inventory_nodes.cc (defaults, groups,
// nodes). Not for use outside those files.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "orchestrator/inventory/inventory.h"

namespace cc::inventory_internal {

// Collects located errors; the parser goes on after one so that an
// operator sees every mistake of a file at once.
class ErrorList {
 public:
  explicit ErrorList(std::string path) : path_(std::move(path)) {}
  // "path:line:column: key_path: what". A region without a position (a
  // table TOML made implicitly) is reported at 1:1.
  void Add(const toml::source_region& where, const std::string& key_path, const std::string& what);
  bool empty() const { return errors_.empty(); }
  // kBadInventory with the errors in file order, one per line.
  Status ToStatus() const;
  const std::string& path() const { return path_; }

 private:
  struct Error {
    uint32_t line, column;
    std::string text;
  };
  std::string path_;
  std::vector<Error> errors_;
};

// `s` quoted for a message: control bytes escaped, cut to 64 bytes with
// "..." so that a 1 MB value cannot make a 1 MB message.
std::string Shown(const std::string& s);
// "a string", "an integer", "a table", ... for messages.
std::string TypeName(const toml::node& node);
// " (did you mean 'port'?)" when `key` is a likely typo of one of `known`.
std::string DidYouMean(const std::string& key, const std::vector<std::string>& known);
// "unknown key" and DidYouMean's hint.
std::string UnknownKey(const std::string& key, const std::vector<std::string>& known);
// [slurm] (inventory_slurm.cc).
void ParseSlurm(const toml::table& t, SlurmSettings& slurm, ErrorList& err);
// "ssh" + "port" -> "ssh.port"; "" + "name" -> "name".
std::string Join(const std::string& path, const std::string& key);

// Typed getters: report a wrong type at the value and return nullopt.
std::optional<std::string> GetString(const toml::node& node, const std::string& path,
                                     ErrorList& err);
// Integer within [lo, hi].
std::optional<int64_t> GetInt(const toml::node& node, const std::string& path, int64_t lo,
                              int64_t hi, ErrorList& err);
// "ADDR" or "ADDR:PORT" (port 1..65535 when given): where agents dial back.
bool IsListenAddress(const std::string& s);
std::optional<bool> GetBool(const toml::node& node, const std::string& path, ErrorList& err);
// Finite number (integer or float) > 0.
std::optional<double> GetPositive(const toml::node& node, const std::string& path, ErrorList& err);
std::optional<std::vector<std::string>> GetStringArray(const toml::node& node,
                                                       const std::string& path, ErrorList& err);
// A table whose values are strings and whose keys are valid environment
// variable names.
std::optional<std::map<std::string, std::string>> GetEnvTable(const toml::node& node,
                                                              const std::string& path,
                                                              ErrorList& err);
// The table of an array-of-tables element or a [table]; wrong type -> null.
const toml::table* GetTable(const toml::node& node, const std::string& path, ErrorList& err);

// TOML -> JSON for [stages.*]; tables nested deeper than `max_depth` are
// reported (dotted keys can nest without bound).
std::optional<nlohmann::json> ToJson(const toml::node& node, const std::string& path,
                                     ErrorList& err, int max_depth = 32);

// Per-node settings as written in [defaults], a [[groups]] or a [[nodes]]
// entry; unset fields do not override.
struct NodeOverrides {
  std::optional<std::string> address, user, identity, python, root;
  std::optional<int> port, gpus;
  std::optional<std::map<std::string, std::string>> env;
  std::optional<std::vector<std::string>> library_paths;
};

// Which kind of table the node settings are read from; decides which keys
// besides the node settings are allowed.
enum class SettingsTable { kDefaults, kGroup, kNode };

// Reads the node settings of `table`; reports unknown keys (allowing the
// entry's own keys: name/nodes for groups, name/address for nodes).
NodeOverrides ParseNodeSettings(const toml::table& table, const std::string& path,
                                SettingsTable kind, ErrorList& err);

// Builds Inventory::nodes from nodes_from_env (read from `env`), [defaults],
// [[groups]] and [[nodes]] of the document root. `inv.ssh` must already be
// parsed.
void BuildNodes(const toml::table& root, Inventory& inv, const Environment& env, ErrorList& err);

}  // namespace cc::inventory_internal
