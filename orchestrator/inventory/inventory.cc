// The inventory's top level, [ssh], [expect] and [stages]; the nodes are
// assembled in inventory_nodes.cc, the TOML helpers live in
// inventory_toml.cc.
#include "orchestrator/inventory/inventory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/hostlist.h"
#include "orchestrator/inventory/inventory_toml.h"
#include "orchestrator/inventory/stage_settings.h"
#include "orchestrator/transport/sha256.h"

namespace cc {

using Json = nlohmann::json;
using namespace inventory_internal;

namespace {

// Inventories are hand-written; anything bigger is a wrong file.
constexpr size_t kMaxInventoryBytes = 16 << 20;

void ParseSsh(const toml::table& t, SshSettings& ssh, ErrorList& err) {
  static const std::vector<std::string> kKeys = {
      "user",        "port",      "identity",          "host_key_policy",   "known_hosts",
      "config_file", "fanout",    "connect_timeout_s", "command_timeout_s", "keepalive_s",
      "agent_dir",   "dial_back", "dial_back_listen"};
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    std::string p = "ssh." + k;
    auto set_string = [&](std::string& field) {
      if (auto s = GetString(value, p, err)) field = *s;
    };
    auto set_positive = [&](double& field) {
      if (auto v = GetPositive(value, p, err)) field = *v;
    };
    if (k == "user") {
      set_string(ssh.user);
    } else if (k == "identity") {
      set_string(ssh.identity);
    } else if (k == "known_hosts") {
      set_string(ssh.known_hosts);
    } else if (k == "config_file") {
      set_string(ssh.config_file);
    } else if (k == "agent_dir") {
      std::optional<std::string> s = GetString(value, p, err);
      if (s && s->empty()) {
        err.Add(value.source(), p, "must not be empty");
      } else if (s) {
        ssh.agent_dir = *s;
      }
    } else if (k == "dial_back") {
      if (auto v = GetBool(value, p, err)) {
        ssh.dial_back = *v;
        ssh.dial_back_given = true;
      }
    } else if (k == "dial_back_listen") {
      std::optional<std::string> s = GetString(value, p, err);
      if (s && !IsListenAddress(*s)) {
        err.Add(value.source(), p, Shown(*s) + " is not ADDRESS or ADDRESS:PORT");
      } else if (s) {
        ssh.dial_back_listen = *s;
      }
    } else if (k == "port") {
      if (auto v = GetInt(value, p, 1, 65535, err)) ssh.port = int(*v);
    } else if (k == "fanout") {
      if (auto v = GetInt(value, p, 1, 100000, err)) ssh.fanout = int(*v);
    } else if (k == "connect_timeout_s") {
      set_positive(ssh.connect_timeout_s);
    } else if (k == "command_timeout_s") {
      set_positive(ssh.command_timeout_s);
    } else if (k == "keepalive_s") {
      set_positive(ssh.keepalive_s);
    } else if (k == "host_key_policy") {
      std::optional<std::string> s = GetString(value, p, err);
      if (s && *s != "strict" && *s != "accept-new" && *s != "off") {
        err.Add(value.source(), p,
                Shown(*s) + " is not a host key policy (strict, accept-new, off)");
      } else if (s) {
        ssh.host_key_policy = *s;
      }
    } else {
      err.Add(key.source(), p, UnknownKey(k, kKeys));
    }
  }
}

void ParseBurnIn(const toml::table& t, BurnInSettings& b, ErrorList& err) {
  static const std::vector<std::string> kKeys = {"max_failure_rate"};
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    std::string p = "burnin." + k;
    if (k != "max_failure_rate") {
      err.Add(key.source(), p, UnknownKey(k, kKeys));
      continue;
    }
    std::optional<double> v;
    if (const auto* i = value.as_integer()) v = static_cast<double>(i->get());
    if (const auto* f = value.as_floating_point()) v = f->get();
    if (!v || !(*v >= 0 && *v <= 1)) {
      err.Add(value.source(), p, "expected a share from 0 to 1 (0.05 is 5 %)");
    } else {
      b.max_failure_rate = *v;
    }
  }
}

// [expect]: any key (pins are judged by the parity stage); values are
// strings, or numbers that are turned into the string they were written as.
void ParseExpect(const toml::table& t, Inventory& inv, ErrorList& err) {
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    if (const auto* s = value.as_string()) {
      inv.expect[k] = s->get();
    } else if (const auto* i = value.as_integer()) {
      inv.expect[k] = std::to_string(i->get());
    } else if (const auto* f = value.as_floating_point()) {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f->get());
      inv.expect[k] = std::string(buf, ec == std::errc() ? end : buf);
    } else {
      err.Add(value.source(), "expect." + k,
              "expected a string or a number, got " + TypeName(value));
    }
  }
}

void ParseStageRun(const toml::node& value, Inventory& inv, ErrorList& err) {
  std::optional<std::vector<std::string>> run = GetStringArray(value, "stages.run", err);
  if (!run) return;
  const toml::array& arr = *value.as_array();
  std::set<std::string> seen;
  for (size_t i = 0; i < run->size(); ++i) {
    const std::string& s = (*run)[i];
    std::string p = "stages.run[" + std::to_string(i) + "]";
    if (!IsKnownStage(s)) {
      std::string known;
      for (const std::string& k : KnownStages()) known += (known.empty() ? "" : ", ") + k;
      err.Add(
          arr[i].source(), p,
          "unknown stage " + Shown(s) + DidYouMean(s, KnownStages()) + "; known stages: " + known);
    } else if (!seen.insert(s).second) {
      err.Add(arr[i].source(), p, "stage '" + s + "' is listed twice");
    } else {
      inv.stages.push_back(s);
    }
  }
}

void ParseStageTable(const std::string& stage, const toml::table& t, Inventory& inv,
                     ErrorList& err) {
  Json settings = Json::object();
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    std::string p = "stages." + stage + "." + k;
    const StageSettingKey* spec = FindStageSettingKey(stage, k);
    if (spec == nullptr) {
      std::vector<std::string> known = StageSettingKeyNames(stage);
      std::string list;
      for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
      err.Add(key.source(), p,
              UnknownKey(k, known) + "; stage '" + stage + "' knows " +
                  (list.empty() ? "no settings" : list));
      continue;
    }
    std::optional<Json> v = ToJson(value, p, err);
    if (!v) continue;
    std::string why = CheckStageSetting(*spec, *v);
    if (!why.empty()) {
      err.Add(value.source(), p, why);
      continue;
    }
    if (spec->type == StageSettingKey::kFloat) *v = v->get<double>();
    settings[k] = std::move(*v);
  }
  inv.stage_settings[stage] = std::move(settings);
}

void ParseStages(const toml::table& t, Inventory& inv, ErrorList& err) {
  std::vector<std::string> known = KnownStages();
  known.push_back("run");
  known.push_back("containment");
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    if (k == "run") {
      ParseStageRun(value, inv, err);
    } else if (k == "containment") {
      if (auto v = GetBool(value, "stages.containment", err)) inv.containment = *v;
    } else if (!IsKnownStage(k)) {
      err.Add(key.source(), "stages." + k, "unknown stage" + DidYouMean(k, known));
    } else if (const toml::table* st = GetTable(value, "stages." + k, err)) {
      ParseStageTable(k, *st, inv, err);
    }
  }
}

// Default inventory name: the file name without directory and extension.
std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

void ParseTop(const toml::table& root, Inventory& inv, const Environment& env, ErrorList& err) {
  static const std::vector<std::string> kKeys = {
      "name",   "transport",      "ssh",    "defaults", "groups", "nodes", "expect",
      "stages", "nodes_from_env", "burnin", "slurm"};
  for (auto&& [key, value] : root) {
    std::string k(key.str());
    if (k == "name") {
      if (auto s = GetString(value, k, err)) inv.name = *s;
    } else if (k == "transport") {
      std::optional<std::string> s = GetString(value, k, err);
      if (s && *s != "ssh" && *s != "local" && *s != "slurm") {
        err.Add(value.source(), k, Shown(*s) + " is not a transport (ssh, local, slurm)");
      } else if (s) {
        inv.transport = *s;
      }
    } else if (k == "ssh") {
      if (const toml::table* t = GetTable(value, k, err)) ParseSsh(*t, inv.ssh, err);
    } else if (k == "expect") {
      if (const toml::table* t = GetTable(value, k, err)) ParseExpect(*t, inv, err);
    } else if (k == "stages") {
      if (const toml::table* t = GetTable(value, k, err)) ParseStages(*t, inv, err);
    } else if (k == "burnin") {
      if (const toml::table* t = GetTable(value, k, err)) ParseBurnIn(*t, inv.burnin, err);
    } else if (k == "slurm") {
      if (const toml::table* t = GetTable(value, k, err)) ParseSlurm(*t, inv.slurm, err);
    } else if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      err.Add(key.source(), k, UnknownKey(k, kKeys));
    }
    // defaults, groups, nodes, nodes_from_env: BuildNodes, after [ssh].
  }
  BuildNodes(root, inv, env, err);
  if (inv.transport == "ssh" && !inv.ssh.dial_back_given &&
      inv.nodes.size() > kDialBackAboveNodes) {
    inv.ssh.dial_back = inv.ssh.dial_back_auto = true;
    for (Node& n : inv.nodes) n.ssh.dial_back = n.ssh.dial_back_auto = true;
  }
}

std::string DisplayPath(const std::string& path) { return path.empty() ? "<inventory>" : path; }

}  // namespace

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Environment EnvironmentOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Result<Inventory> ParseInventory(const std::string& text, const std::string& path,
                                 const Environment& env) {
  Inventory inv;
  inv.path = path;
  inv.name = Stem(path);
  inv.sha256 = Sha256Hex(text);
  ErrorList err(DisplayPath(path));
  if (text.size() > kMaxInventoryBytes) {
    err.Add({}, "",
            "file is larger than " + std::to_string(kMaxInventoryBytes >> 20) +
                " MiB; not an inventory");
    return err.ToStatus();
  }
  toml::table root;
  try {
    root = toml::parse(text, DisplayPath(path));
  } catch (const toml::parse_error& e) {
    err.Add(e.source(), "", "TOML syntax error: " + std::string(e.description()));
    return err.ToStatus();
  }
  ParseTop(root, inv, env ? env : EnvironmentOf({}), err);
  if (!err.empty()) return err.ToStatus();
  return inv;
}

Result<Inventory> LoadInventory(const std::string& path, const Environment& env) {
  auto fail = [&](const std::string& why) {
    return Status::BadInventory(DisplayPath(path) + ": cannot read inventory: " + why);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    // The first thing a newcomer types wrong: say what to do next.
    return fail(std::string(std::strerror(ENOENT)) +
                "; to describe a cluster, copy inventories/example.toml and edit it "
                "(inventories/local.toml checks this machine alone)");
  }
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return fail(std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxInventoryBytes) break;  // ParseInventory refuses it
  }
  ::close(fd);
  return ParseInventory(text, path, env);
}

Status LimitNodes(Inventory& inventory, const std::string& hostlist) {
  Result<std::vector<std::string>> names = ExpandHostlist(hostlist);
  if (!names.ok()) {
    return Status::BadArgument("bad node list '" + hostlist + "': " + names.status().message());
  }
  std::set<std::string> wanted(names->begin(), names->end());
  std::vector<std::string> missing;
  for (const std::string& n : *names) {
    if (inventory.FindNode(n) == nullptr) missing.push_back(n);
  }
  if (!missing.empty()) {
    return Status::BadArgument("not in inventory " + DisplayPath(inventory.path) + ": " +
                               FoldHostlist(missing));
  }
  std::vector<Node> kept;
  for (Node& n : inventory.nodes) {
    if (wanted.count(n.name)) kept.push_back(std::move(n));
  }
  inventory.nodes = std::move(kept);
  return Status::Ok();
}

const Node* Inventory::FindNode(const std::string& name) const {
  for (const Node& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

Json Inventory::StageSettings(const std::string& stage) const {
  auto it = stage_settings.find(stage);
  return it == stage_settings.end() ? Json::object() : it->second;
}

}  // namespace cc
