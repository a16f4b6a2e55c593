// Nodes of an inventory: nodes_from_env, [defaults], [[groups]], [[nodes]].
// Precedence, lowest first: [ssh], [defaults], the node's group, its
// [[nodes]] entry. A node belongs to at most one group and has at most one
// [[nodes]] entry.
#include <algorithm>
#include <tuple>

#include "common/hostlist.h"
#include "orchestrator/inventory/inventory_toml.h"

namespace cc::inventory_internal {

namespace {

const std::vector<std::string>& NodeSettingKeys() {
  static const std::vector<std::string> kKeys = {"user",          "port", "identity", "env",
                                                 "library_paths", "gpus", "python",   "root"};
  return kKeys;
}

// Reads one node setting into `out`; false when `key` is not one.
bool ReadNodeSetting(const std::string& key, const toml::node& value, const std::string& path,
                     NodeOverrides& out, ErrorList& err) {
  if (key == "user") {
    out.user = GetString(value, path, err);
  } else if (key == "identity") {
    out.identity = GetString(value, path, err);
  } else if (key == "python") {
    out.python = GetString(value, path, err);
  } else if (key == "root") {
    out.root = GetString(value, path, err);
  } else if (key == "port") {
    if (auto v = GetInt(value, path, 1, 65535, err)) out.port = int(*v);
  } else if (key == "gpus") {
    if (auto v = GetInt(value, path, 0, 4096, err)) out.gpus = int(*v);
  } else if (key == "env") {
    out.env = GetEnvTable(value, path, err);
  } else if (key == "library_paths") {
    out.library_paths = GetStringArray(value, path, err);
  } else {
    return false;
  }
  return true;
}

}  // namespace

NodeOverrides ParseNodeSettings(const toml::table& table, const std::string& path,
                                SettingsTable kind, ErrorList& err) {
  NodeOverrides out;
  std::vector<std::string> own;  // keys the caller reads itself
  if (kind == SettingsTable::kGroup) own = {"name", "nodes"};
  if (kind == SettingsTable::kNode) own = {"name", "address"};
  for (auto&& [key, value] : table) {
    std::string k(key.str());
    std::string p = Join(path, k);
    if (std::find(own.begin(), own.end(), k) != own.end()) {
      if (k == "address") out.address = GetString(value, p, err);
      continue;
    }
    if (ReadNodeSetting(k, value, p, out, err)) continue;
    if (k == "address") {
      err.Add(key.source(), p, "an address belongs to one host: set it in a [[nodes]] entry");
      continue;
    }
    std::vector<std::string> known = NodeSettingKeys();
    known.insert(known.end(), own.begin(), own.end());
    err.Add(key.source(), p, "unknown key" + DidYouMean(k, known));
  }
  return out;
}

namespace {

// Where a node came from, while the node list is being assembled.
struct Declared {
  std::string name;
  toml::source_region where;  // the name's hostlist string (file order)
  size_t seq = 0;             // expansion order within that string
  std::string group;
  std::string group_path;  // "groups[1]" or "" (or "nodes_from_env")
  const NodeOverrides* group_settings = nullptr;
  std::string node_path;  // "nodes[2]" once a [[nodes]] entry names it
  uint32_t node_line = 0;
  const NodeOverrides* node_settings = nullptr;
};

struct Builder {
  Builder(const Environment& environment, ErrorList& e) : env(environment), err(e) {}
  const Environment& env;
  ErrorList& err;
  NodeOverrides defaults;
  std::vector<NodeOverrides> group_settings;  // stable after reserve()
  std::vector<NodeOverrides> node_settings;
  std::vector<Declared> nodes;
  std::map<std::string, size_t> index;
  std::map<std::string, std::string> group_paths;  // group name -> path
  size_t seq = 0;

  // Expands one hostlist string; reports a bad one at the string.
  std::optional<std::vector<std::string>> Expand(const toml::node& value, const std::string& path) {
    std::optional<std::string> text = GetString(value, path, err);
    if (!text) return std::nullopt;
    Result<std::vector<std::string>> names = ExpandHostlist(*text);
    if (!names.ok()) {
      err.Add(value.source(), path,
              "bad hostlist " + Shown(*text) + ": " + names.status().message());
      return std::nullopt;
    }
    return std::move(*names);
  }

  Declared& Add(const std::string& name, const toml::source_region& where) {
    index[name] = nodes.size();
    Declared& d = nodes.emplace_back();
    d.name = name;
    d.where = where;
    d.seq = seq++;
    return d;
  }

  void FromEnv(const toml::node& value) {
    std::optional<std::string> var = GetString(value, "nodes_from_env", err);
    if (!var) return;
    std::optional<std::string> list = env(*var);
    if (!list || list->empty()) {
      err.Add(value.source(), "nodes_from_env",
              "environment variable " + *var + " is " + (list ? "empty" : "not set"));
      return;
    }
    Result<std::vector<std::string>> names = ExpandHostlist(*list);
    if (!names.ok()) {
      err.Add(value.source(), "nodes_from_env",
              "bad hostlist in $" + *var + " " + Shown(*list) + ": " + names.status().message());
      return;
    }
    for (const std::string& n : *names) {
      if (index.count(n) == 0) Add(n, value.source()).group_path = "nodes_from_env";
    }
  }

  void Group(const toml::table& t, const std::string& path, const NodeOverrides& settings) {
    std::optional<std::string> name;
    if (const toml::node* n = t.get("name")) {
      name = GetString(*n, path + ".name", err);
      if (name && name->empty()) {
        err.Add(n->source(), path + ".name", "a group name must not be empty");
        name.reset();
      } else if (name && !group_paths.emplace(*name, path).second) {
        err.Add(n->source(), path + ".name",
                "group " + Shown(*name) + " is already defined (" + group_paths[*name] + ")");
        name.reset();
      }
    } else {
      err.Add(t.source(), path, "a group needs a name");
    }
    const toml::node* list = t.get("nodes");
    if (list == nullptr) {
      err.Add(t.source(), path, "a group needs nodes = [\"host[01-04]\", ...]");
      return;
    }
    const toml::array* arr = list->as_array();
    if (arr == nullptr || arr->empty()) {
      err.Add(list->source(), path + ".nodes",
              arr ? "a group needs at least one node"
                  : "expected an array of hostlists, got " + TypeName(*list));
      return;
    }
    if (!name) return;
    for (size_t i = 0; i < arr->size(); ++i) {
      std::string p = path + ".nodes[" + std::to_string(i) + "]";
      std::optional<std::vector<std::string>> names = Expand((*arr)[i], p);
      if (!names) continue;
      for (const std::string& n : *names) {
        ClaimForGroup(n, (*arr)[i].source(), p, *name, path, settings);
      }
    }
  }

  void ClaimForGroup(const std::string& n, const toml::source_region& where, const std::string& p,
                     const std::string& group, const std::string& group_path,
                     const NodeOverrides& settings) {
    auto it = index.find(n);
    Declared* d = nullptr;
    if (it == index.end()) {
      d = &Add(n, where);
    } else if (nodes[it->second].group.empty()) {
      d = &nodes[it->second];  // named by nodes_from_env: the group claims it
    } else {
      const Declared& first = nodes[it->second];
      err.Add(where, p,
              "node " + Shown(n) + " is already in group " + Shown(first.group) + " (" +
                  first.group_path + ", line " + std::to_string(first.where.begin.line) + ")");
      return;
    }
    d->group = group;
    d->group_path = group_path;
    d->group_settings = &settings;
  }

  void NodeEntry(const toml::table& t, const std::string& path, const NodeOverrides& settings) {
    const toml::node* name = t.get("name");
    if (name == nullptr) {
      err.Add(t.source(), path, "a node needs a name");
      return;
    }
    std::optional<std::vector<std::string>> names = Expand(*name, path + ".name");
    if (!names) return;
    if (settings.address && names->size() > 1) {
      err.Add(t.get("address")->source(), path + ".address",
              "an address needs a single node, but " + Shown(name->as_string()->get()) +
                  " expands to " + std::to_string(names->size()) + " nodes");
      return;
    }
    for (const std::string& n : *names) {
      auto it = index.find(n);
      Declared& d = it == index.end() ? Add(n, name->source()) : nodes[it->second];
      if (d.node_settings != nullptr) {
        err.Add(name->source(), path + ".name",
                "node " + Shown(n) + " is already declared in [[nodes]] (" + d.node_path +
                    ", line " + std::to_string(d.node_line) + ")");
        continue;
      }
      d.node_path = path;
      d.node_line = name->source().begin.line;
      d.node_settings = &settings;
    }
  }

  // Reads an array of tables ([[groups]] / [[nodes]]); calls `entry` for
  // each with the settings parsed from it.
  template <typename F>
  void EachEntry(const toml::node& node, const std::string& key, SettingsTable kind,
                 std::vector<NodeOverrides>& settings, F entry) {
    const toml::array* arr = node.as_array();
    if (arr == nullptr) {
      err.Add(node.source(), key,
              "expected an array of tables ([[" + key + "]]), got " + TypeName(node));
      return;
    }
    settings.reserve(arr->size());  // entries point into it
    for (size_t i = 0; i < arr->size(); ++i) {
      std::string path = key + "[" + std::to_string(i) + "]";
      const toml::table* t = GetTable((*arr)[i], path, err);
      if (t == nullptr) continue;
      settings.push_back(ParseNodeSettings(*t, path, kind, err));
      entry(*t, path, settings.back());
    }
  }
};

void Apply(const NodeOverrides& o, Node& n) {
  if (o.address) n.address = *o.address;
  if (o.user) n.ssh.user = *o.user;
  if (o.port) n.ssh.port = *o.port;
  if (o.identity) n.ssh.identity = *o.identity;
  if (o.python) n.python = *o.python;
  if (o.root) n.root = *o.root;
  if (o.gpus) n.gpus = *o.gpus;
  // Environments merge key by key; a list replaces the one before it.
  if (o.env) {
    for (const auto& [k, v] : *o.env) n.env[k] = v;
  }
  if (o.library_paths) n.library_paths = *o.library_paths;
}

}  // namespace

void BuildNodes(const toml::table& root, Inventory& inv, const Environment& env, ErrorList& err) {
  Builder b(env, err);
  if (const toml::node* d = root.get("defaults")) {
    if (const toml::table* t = GetTable(*d, "defaults", err)) {
      b.defaults = ParseNodeSettings(*t, "defaults", SettingsTable::kDefaults, err);
    }
  }
  if (const toml::node* e = root.get("nodes_from_env")) b.FromEnv(*e);
  // All groups before any [[nodes]] entry, wherever they stand in the file,
  // so that an entry refines its node's group settings.
  if (const toml::node* g = root.get("groups")) {
    b.EachEntry(*g, "groups", SettingsTable::kGroup, b.group_settings,
                [&](const toml::table& t, const std::string& p, const NodeOverrides& s) {
                  b.Group(t, p, s);
                });
  }
  if (const toml::node* n = root.get("nodes")) {
    b.EachEntry(*n, "nodes", SettingsTable::kNode, b.node_settings,
                [&](const toml::table& t, const std::string& p, const NodeOverrides& s) {
                  b.NodeEntry(t, p, s);
                });
  }
  if (b.nodes.empty()) {
    if (err.empty()) {
      err.Add(root.source(), "nodes",
              "the inventory declares no nodes; add [[groups]] or [[nodes]]");
    }
    return;
  }
  std::stable_sort(b.nodes.begin(), b.nodes.end(), [](const Declared& x, const Declared& y) {
    return std::tie(x.where.begin.line, x.where.begin.column, x.seq) <
           std::tie(y.where.begin.line, y.where.begin.column, y.seq);
  });
  inv.nodes.clear();
  inv.nodes.reserve(b.nodes.size());
  for (const Declared& d : b.nodes) {
    Node n;
    n.name = d.name;
    n.address = d.name;
    n.group = d.group;
    n.ssh = inv.ssh;
    n.line = static_cast<int>(d.where.begin.line);
    Apply(b.defaults, n);
    if (d.group_settings) Apply(*d.group_settings, n);
    if (d.node_settings) Apply(*d.node_settings, n);
    inv.nodes.push_back(std::move(n));
  }
}

}  // namespace cc::inventory_internal
