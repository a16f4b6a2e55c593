#include "orchestrator/stages/parity/parity.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <set>

#include "common/hostlist.h"
#include "orchestrator/stages/parity/cuda_compat.h"
#include "orchestrator/stages/parity/per_node_env.h"
#include "orchestrator/stages/parity/version_pin.h"

namespace cc {
namespace {

using Json = nlohmann::json;

// Per field: how a deviation from the majority counts, and whether the
// majority judges it at all (shm_bytes and memlock are judged by rules:
// what matters is enough, not the same). Table order is report order.
struct FieldPolicy {
  const char* field;
  Outcome deviation;
  bool majority;
};
const FieldPolicy kFieldPolicies[] = {
    {"driver", Outcome::kFail, true},
    {"cuda_driver", Outcome::kFail, true},
    {"nccl", Outcome::kFail, true},
    {"gpu_model", Outcome::kFail, true},
    {"gpu_count", Outcome::kFail, true},
    {"vbios", Outcome::kWarn, true},
    {"ecc", Outcome::kWarn, true},
    {"persistence", Outcome::kWarn, true},
    {"kernel", Outcome::kWarn, true},
    {"os", Outcome::kWarn, true},
    {"glibc", Outcome::kWarn, true},
    {"rdma_core", Outcome::kFail, true},
    {"ofed", Outcome::kFail, true},
    {"peermem", Outcome::kFail, true},
    // DMA-BUF is the other road to GPUDirect RDMA; peermem decides more.
    {"dmabuf", Outcome::kWarn, true},
    // Which HCAs exist is the nics stage's to judge in depth.
    {"ib_devices", Outcome::kWarn, true},
    {"shm_bytes", Outcome::kWarn, false},
    {"memlock", Outcome::kWarn, false},
    {"openmpi", Outcome::kFail, true},
    {"torch", Outcome::kFail, true},
    {"torch_cuda", Outcome::kFail, true},
    {"torch_cuda_available", Outcome::kFail, true},
    {"torch_nccl", Outcome::kFail, true},
};
constexpr const char* kEnvPrefix = "nccl_env.";

bool IsEnvField(const std::string& field) { return field.rfind(kEnvPrefix, 0) == 0; }

const FieldPolicy* PolicyOf(const std::string& field) {
  for (const FieldPolicy& p : kFieldPolicies) {
    if (field == p.field) return &p;
  }
  return nullptr;
}

bool Ignored(const std::string& name, const std::vector<std::string>& ignore) {
  for (const std::string& i : ignore) {
    if (i == name) return true;
    if (i.size() >= 2 && i.compare(i.size() - 2, 2, ".*") == 0 &&
        name.rfind(i.substr(0, i.size() - 1), 0) == 0) {
      return true;
    }
  }
  return false;
}

const std::string* Get(const NodeFacts& n, const std::string& field) {
  auto it = n.fields.find(field);
  return it == n.fields.end() ? nullptr : &it->second;
}

// Why `field` is unknown on n (its source failed), or null when it is not.
const std::string* Unknown(const NodeFacts& n, const std::string& field) {
  if (auto it = n.unknown.find(field); it != n.unknown.end()) return &it->second;
  for (const auto& [pattern, why] : n.unknown) {
    if (pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0 &&
        field.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0) {
      return &why;
    }
  }
  return nullptr;
}

// The finding of a node where `field` is unknown: not judged, and why.
ParityFinding UnknownFinding(const NodeFacts& n, const std::string& check, const std::string& field,
                             const std::string& why) {
  ParityFinding f;
  f.node = n.node;
  f.check = check;
  f.outcome = Outcome::kSkip;
  f.message = field + " unknown, not judged (" + why + ")";
  f.evidence = Json{{"unknown", why}};
  return f;
}

// What a node that reported nothing "has", in messages.
std::string MissingLabel(const std::string& field) {
  return IsEnvField(field) ? "unset" : "not reported";
}

// Known fields in table order, then every other field by name.
std::vector<std::string> FieldOrder(const std::vector<NodeFacts>& nodes,
                                    const ParityOptions& opts) {
  std::set<std::string> all;
  for (const NodeFacts& n : nodes) {
    for (const auto& [field, value] : n.fields) all.insert(field);
  }
  for (const auto& [field, pin] : opts.expect) all.insert(field);
  std::vector<std::string> out;
  for (const FieldPolicy& p : kFieldPolicies) {
    if (all.erase(p.field)) out.push_back(p.field);
  }
  out.insert(out.end(), all.begin(), all.end());
  return out;
}

ParityFinding Finding(const NodeFacts& n, const std::string& check, Outcome outcome,
                      std::string message) {
  ParityFinding f;
  f.node = n.node;
  f.check = check;
  f.outcome = outcome;
  f.message = std::move(message);
  return f;
}

// ---- 1. pins ---------------------------------------------------------------

void JudgePin(const std::string& field, const std::string& pin_text,
              const std::vector<NodeFacts>& nodes, std::vector<ParityFinding>& out) {
  const std::string check = "expect." + field;
  Result<VersionPin> pin = ParseVersionPin(pin_text);
  bool anyone = std::any_of(nodes.begin(), nodes.end(),
                            [&](const NodeFacts& n) { return Get(n, field) != nullptr; });
  for (const NodeFacts& n : nodes) {
    if (const std::string* why = Unknown(n, field); why && pin.ok()) {
      out.push_back(UnknownFinding(n, check, field, *why));
      continue;
    }
    const std::string* value = Get(n, field);
    ParityFinding f = Finding(n, check, Outcome::kError, "");
    f.value = value ? *value : "";
    f.expected = pin_text;
    f.evidence = Json{{"pin", pin_text}};
    if (!pin.ok()) {
      f.message = "bad pin for " + field + ": " + pin.status().message();
    } else if (!value && !anyone) {
      f.message = "no node reported " + field + "; cannot check pin " + pin->text;
    } else if (!value) {
      f.outcome = Outcome::kFail;
      f.message = field + " not reported; pinned to " + pin->text;
    } else if (Matches(*pin, *value)) {
      f.outcome = Outcome::kPass;
      f.message = field + " " + *value + " matches pin " + pin->text;
    } else {
      f.outcome = Outcome::kFail;
      f.message = field + " " + *value + " does not match pin " + pin->text;
    }
    out.push_back(std::move(f));
  }
}

// ---- 2. the cluster majority ----------------------------------------------

struct ValueGroup {
  bool reported = false;
  std::string value;
  std::vector<std::string> nodes;
};

void JudgeMajority(const std::string& field, Outcome deviation, const std::vector<NodeFacts>& nodes,
                   std::vector<ParityFinding>& out) {
  std::vector<ValueGroup> groups;  // first appearance order
  std::vector<size_t> group_of;
  for (const NodeFacts& n : nodes) {
    const std::string* v = Get(n, field);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const ValueGroup& g) {
      return g.reported == (v != nullptr) && (!v || g.value == *v);
    });
    if (it == groups.end()) {
      it = groups.insert(groups.end(), ValueGroup{v != nullptr, v ? *v : "", {}});
    }
    it->nodes.push_back(n.node);
    group_of.push_back(static_cast<size_t>(it - groups.begin()));
  }
  // Largest first; the order of first appearance breaks ties.
  std::vector<size_t> by_size(groups.size());
  for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    return groups[a].nodes.size() > groups[b].nodes.size();
  });
  auto label = [&](const ValueGroup& g) { return g.reported ? g.value : MissingLabel(field); };
  const size_t top = by_size[0];
  const bool tie =
      by_size.size() > 1 && groups[by_size[1]].nodes.size() == groups[top].nodes.size();

  Json values = Json::array();
  std::string split;
  for (size_t i : by_size) {
    const ValueGroup& g = groups[i];
    std::string folded = FoldHostlist(g.nodes);
    values.push_back({{"value", g.reported ? Json(g.value) : Json(nullptr)},
                      {"count", g.nodes.size()},
                      {"nodes", folded}});
    split += (split.empty() ? "" : "; ") + label(g) + " on " + folded;
  }
  Json evidence = {{"nodes", nodes.size()}, {"values", values}};
  const ValueGroup& major = groups[top];
  if (!tie) {
    evidence["majority"] = major.reported ? Json(major.value) : Json(nullptr);
    evidence["majority_count"] = major.nodes.size();
    evidence["majority_nodes"] = FoldHostlist(major.nodes);
  }
  const std::string major_where = label(major) + " on " + (tie ? "" : FoldHostlist(major.nodes));

  for (size_t i = 0; i < nodes.size(); ++i) {
    const ValueGroup& g = groups[group_of[i]];
    ParityFinding f = Finding(nodes[i], field, Outcome::kWarn, "");
    f.value = g.value;
    f.evidence = evidence;
    if (tie) {
      f.message = field + " is split with no majority: " + split;
    } else if (group_of[i] == top) {
      f.outcome = Outcome::kPass;
      f.expected = major.value;
      f.message = field + " " + label(g) + ", like the cluster (" + std::to_string(g.nodes.size()) +
                  " of " + std::to_string(nodes.size()) + " nodes)";
    } else {
      f.outcome = deviation;
      f.expected = major.value;
      f.message = g.reported
                      ? field + " " + g.value + " differs from the cluster (" + major_where + ")"
                      : field + " " + MissingLabel(field) + "; the cluster has " + major_where;
    }
    out.push_back(std::move(f));
  }
}

// The majority among the nodes where `field` is known; the others get a
// `skip` finding in their place (input order is kept). Nothing when fewer
// than 2 nodes know the field or none reported it.
void JudgeMajorityOfKnown(const std::string& field, const std::vector<NodeFacts>& nodes,
                          std::vector<ParityFinding>& out) {
  std::vector<NodeFacts> known;
  for (const NodeFacts& n : nodes) {
    if (!Unknown(n, field)) known.push_back(n);
  }
  bool reported = std::any_of(known.begin(), known.end(),
                              [&](const NodeFacts& n) { return Get(n, field) != nullptr; });
  if (known.size() < 2 || !reported) return;
  if (known.size() == nodes.size()) {
    JudgeMajority(field, DeviationSeverity(field), nodes, out);
    return;
  }
  std::vector<ParityFinding> judged;
  JudgeMajority(field, DeviationSeverity(field), known, judged);
  size_t next = 0;
  for (const NodeFacts& n : nodes) {
    if (const std::string* why = Unknown(n, field)) {
      out.push_back(UnknownFinding(n, field, field, *why));
    } else {
      out.push_back(std::move(judged[next++]));
    }
  }
}

// ---- 3. compatibility rules -----------------------------------------------

// A rule judges one node; nullopt when it does not apply there (no torch,
// no InfiniBand, ...). The caller fills in node and check.
using RuleFn = std::optional<ParityFinding> (*)(const NodeFacts&);

std::optional<ParityFinding> Judged(Outcome o, std::string value, std::string expected,
                                    std::string message, Json evidence = Json::object()) {
  ParityFinding f;
  f.outcome = o;
  f.value = std::move(value);
  f.expected = std::move(expected);
  f.message = std::move(message);
  f.evidence = std::move(evidence);
  return f;
}

bool ParseUint(const std::string& s, uint64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// The CUDA runtime this node must run, and who needs it: the newer of the
// CUDA that torch and that NCCL ("2.21.5+cuda12.4") were built for.
struct CudaNeed {
  std::string cuda;
  std::string by;
};

std::optional<CudaNeed> CudaNeeded(const NodeFacts& n) {
  std::optional<CudaNeed> need;
  const std::string* torch_cuda = Get(n, "torch_cuda");
  if (torch_cuda) {
    // torch.version.cuda is None on CPU builds: nothing needed.
    if (std::optional<std::string> c = CudaMajorMinor(*torch_cuda)) {
      const std::string* torch = Get(n, "torch");
      need =
          CudaNeed{*c, "torch " + (torch ? *torch + " " : std::string()) + "built for CUDA " + *c};
    }
  }
  if (const std::string* nccl = Get(n, "nccl")) {
    std::optional<std::string> c = CudaFromNcclVersion(*nccl);
    if (c && (!need || CompareVersions(*c, need->cuda) > 0)) {
      need = CudaNeed{*c, "NCCL " + *nccl};
    }
  }
  return need;
}

// A node without a driver can only be judged by what it is meant to be:
// one the inventory gives GPUs fails (its NCCL/torch cannot run), a node
// without GPUs (a login or CPU node) has nothing to check, which is a skip
// with the reason, not an error that would make the run unjudgeable.
std::optional<ParityFinding> NoDriver(const NodeFacts& n, const std::string& field,
                                      const std::string& want, const std::string& why,
                                      const Json& evidence) {
  if (n.expected_gpus && *n.expected_gpus > 0) {
    return Judged(Outcome::kFail, "", want,
                  field + " not reported on a node the inventory gives " +
                      std::to_string(*n.expected_gpus) + " GPUs; " + why,
                  evidence);
  }
  return Judged(Outcome::kSkip, "", want,
                "no NVIDIA driver here and the inventory gives this node no "
                "GPUs; " +
                    why,
                evidence);
}

std::optional<ParityFinding> DriverForCuda(const NodeFacts& n) {
  std::optional<CudaNeed> need = CudaNeeded(n);
  if (!need) return std::nullopt;
  Json evidence = {{"cuda", need->cuda}, {"needed_by", need->by}};
  const std::string* driver = Get(n, "driver");
  if (!driver && Unknown(n, "driver")) {
    return Judged(Outcome::kSkip, "", "",
                  "driver unknown, not judged (" + *Unknown(n, "driver") + ")", evidence);
  }
  if (!driver) return NoDriver(n, "driver", "", need->by + " needs a driver", evidence);
  CompatVerdict v = JudgeDriverForCuda(*driver, need->cuda, need->by);
  if (std::optional<std::string> d = MinimumDriverFor(need->cuda)) {
    evidence["toolkit_driver"] = *d;
  }
  if (std::optional<std::string> d = MinorCompatDriverFor(need->cuda)) {
    evidence["minor_compat_driver"] = *d;
  }
  return Judged(v.outcome, *driver, v.required, v.message, evidence);
}

std::optional<ParityFinding> CudaDriverForCuda(const NodeFacts& n) {
  std::optional<CudaNeed> need = CudaNeeded(n);
  if (!need) return std::nullopt;
  Json evidence = {{"cuda", need->cuda}, {"needed_by", need->by}};
  const std::string* have = Get(n, "cuda_driver");
  if (!have && Unknown(n, "cuda_driver")) {
    return Judged(Outcome::kSkip, "", ">=" + need->cuda,
                  "cuda_driver unknown, not judged (" + *Unknown(n, "cuda_driver") + ")", evidence);
  }
  if (!have) {
    return NoDriver(n, "cuda_driver", ">=" + need->cuda, need->by + " needs CUDA " + need->cuda,
                    evidence);
  }
  CompatVerdict v = JudgeCudaDriverVersion(*have, need->cuda, need->by);
  return Judged(v.outcome, *have, v.required, v.message, evidence);
}

std::optional<ParityFinding> GpusExpected(const NodeFacts& n) {
  if (!n.expected_gpus) return std::nullopt;
  const std::string want = std::to_string(*n.expected_gpus);
  const std::string* count = Get(n, "gpu_count");
  uint64_t have = 0;
  if (!count && Unknown(n, "gpu_count")) {
    return Judged(Outcome::kSkip, "", want,
                  "GPU count unknown, not judged (" + *Unknown(n, "gpu_count") + ")");
  }
  if (!count && *n.expected_gpus == 0) {
    // No NVIDIA driver reports a count on a CPU node: that is what the
    // inventory says it is.
    return Judged(Outcome::kPass, "0", want, "has no GPU, as the inventory says");
  }
  if (!count) {
    return Judged(Outcome::kFail, "", want, "reports no GPU count, inventory says " + want);
  }
  if (!ParseUint(*count, have)) {
    return Judged(Outcome::kError, *count, want, "gpu_count \"" + *count + "\" is not a number");
  }
  if (have != static_cast<uint64_t>(*n.expected_gpus)) {
    return Judged(Outcome::kFail, *count, want, "has " + *count + " GPUs, inventory says " + want);
  }
  return Judged(Outcome::kPass, *count, want, "has " + *count + " GPUs, as the inventory says");
}

bool IsUnlimited(const std::string& v) {
  // RLIM_INFINITY printed as a number is UINT64_MAX.
  return v == "unlimited" || v == "infinity" || v == "18446744073709551615";
}

std::optional<ParityFinding> MemlockForRdma(const NodeFacts& n) {
  if (!n.has_ib) return std::nullopt;
  const std::string* v = Get(n, "memlock");
  if (!v && Unknown(n, "memlock")) {
    return Judged(Outcome::kSkip, "", "unlimited",
                  "memlock unknown, not judged (" + *Unknown(n, "memlock") + ")");
  }
  if (!v) {
    return Judged(Outcome::kError, "", "unlimited",
                  "memlock not reported; RDMA needs memlock unlimited");
  }
  if (IsUnlimited(*v)) {
    return Judged(Outcome::kPass, *v, "unlimited", "memlock is unlimited");
  }
  return Judged(Outcome::kFail, *v, "unlimited",
                "memlock is " + *v +
                    "; RDMA needs memlock unlimited (ulimit -l, "
                    "/etc/security/limits.conf)");
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v == static_cast<double>(static_cast<uint64_t>(v)) ? "%.0f %s" : "%.1f %s", v,
                kUnits[u]);
  return buf;
}

constexpr uint64_t kMinShmBytes = uint64_t{1} << 30;

std::optional<ParityFinding> ShmSize(const NodeFacts& n) {
  const std::string* v = Get(n, "shm_bytes");
  if (!v) return std::nullopt;
  uint64_t bytes = 0;
  if (!ParseUint(*v, bytes)) {
    return Judged(Outcome::kError, *v, ">=1 GiB", "shm_bytes \"" + *v + "\" is not a number");
  }
  if (bytes < kMinShmBytes) {
    return Judged(Outcome::kWarn, *v, ">=1 GiB",
                  "/dev/shm is " + FormatBytes(bytes) +
                      ", less than 1 GiB; NCCL's shared-memory transport and "
                      "data loader workers need more");
  }
  return Judged(Outcome::kPass, *v, ">=1 GiB", "/dev/shm is " + FormatBytes(bytes));
}

std::optional<ParityFinding> TorchSeesGpus(const NodeFacts& n) {
  const std::string* avail = Get(n, "torch_cuda_available");
  const std::string* count = Get(n, "gpu_count");
  uint64_t gpus = 0;
  if (!avail || !count || !ParseUint(*count, gpus) || gpus == 0) return std::nullopt;
  if (*avail == "true" || *avail == "True" || *avail == "1") {
    return Judged(Outcome::kPass, *avail, "true", "torch sees CUDA");
  }
  if (*avail == "false" || *avail == "False" || *avail == "0") {
    return Judged(Outcome::kFail, *avail, "true",
                  "torch.cuda.is_available() is false on a node with " + *count + " GPUs");
  }
  return Judged(Outcome::kError, *avail, "true",
                "torch_cuda_available \"" + *avail + "\" is not true or false");
}

// `next_step`: what to do where the rule fails; "{}" is the nodes, "{=}"
// the finding's expected value.
struct ParityRule {
  const char* check;
  RuleFn judge;
  const char* next_step;
};
const ParityRule kParityRules[] = {
    // driver vs the CUDA runtime
    {"driver_for_cuda", DriverForCuda,
     "upgrade the NVIDIA driver on {} to {=}, or install a torch/NCCL built for a "
     "CUDA that its driver runs"},
    // cuDriverGetVersion vs it
    {"cuda_driver_for_cuda", CudaDriverForCuda,
     "upgrade the NVIDIA driver on {} to one for CUDA {=}, or install a torch/NCCL "
     "built for an older CUDA"},
    // gpu_count vs inventory
    {"gpus_expected", GpusExpected,
     "find the missing GPUs of {} (nvidia-smi, dmesg for Xid or \"fallen off the "
     "bus\", lspci), or correct the inventory's gpus"},
    // RDMA pins memory
    {"memlock_for_rdma", MemlockForRdma,
     "set memlock unlimited on {} (/etc/security/limits.conf; LimitMEMLOCK=infinity "
     "for services and containers)"},
    // /dev/shm >= 1 GiB
    {"shm_size", ShmSize,
     "grow /dev/shm on {} to at least 1 GiB (mount -o remount,size=...; docker "
     "--shm-size)"},
    // torch.cuda.is_available()
    {"torch_sees_gpus", TorchSeesGpus,
     "run python -c 'import torch; torch.cuda.init()' on {} and read why (a driver "
     "too old for torch's CUDA, CUDA_VISIBLE_DEVICES, missing /dev/nvidia*)"},
};

const ParityRule* RuleOf(const std::string& check) {
  for (const ParityRule& r : kParityRules) {
    if (check == r.check) return &r;
  }
  return nullptr;
}

std::string FillNextStep(std::string tmpl, const std::string& who, const std::string& expected) {
  for (size_t p; (p = tmpl.find("{=}")) != std::string::npos;) tmpl.replace(p, 3, expected);
  for (size_t p; (p = tmpl.find("{}")) != std::string::npos;) tmpl.replace(p, 2, who);
  return tmpl;
}

}  // namespace

ParityCheckKind ParityCheckKindOf(const std::string& check) {
  if (check.rfind("expect.", 0) == 0) return ParityCheckKind::kPin;
  return RuleOf(check) ? ParityCheckKind::kRule : ParityCheckKind::kMajority;
}

std::string ParityNextStep(const std::string& check, const std::string& who,
                           const std::string& expected) {
  if (ParityCheckKindOf(check) == ParityCheckKind::kPin) {
    return FillNextStep("make " + check.substr(7) +
                            " on {} match the inventory's pin {=} "
                            "([expect]), or drain {}",
                        who, expected);
  }
  const ParityRule* rule = RuleOf(check);
  if (!rule) return "";
  // "{=}" reads ">=580.65.06"; the advice says "to 580.65.06 or newer".
  std::string want = expected.rfind(">=", 0) == 0 ? expected.substr(2) + " or newer" : expected;
  return FillNextStep(rule->next_step, who, want);
}

Outcome DeviationSeverity(const std::string& field) {
  const FieldPolicy* p = PolicyOf(field);
  return p ? p->deviation : Outcome::kWarn;
}

std::vector<ParityFinding> JudgeParity(const std::vector<NodeFacts>& nodes,
                                       const ParityOptions& opts) {
  std::vector<ParityFinding> out;
  if (nodes.empty()) return out;
  for (const std::string& field : FieldOrder(nodes, opts)) {
    if (Ignored(field, opts.ignore)) continue;
    auto pin = opts.expect.find(field);
    if (pin != opts.expect.end()) JudgePin(field, pin->second, nodes, out);
    const FieldPolicy* policy = PolicyOf(field);
    if (policy && !policy->majority) continue;
    if (IsPerNodeEnv(EnvVarOfField(field))) continue;  // meant to differ
    JudgeMajorityOfKnown(field, nodes, out);
  }
  for (const ParityRule& rule : kParityRules) {
    if (Ignored(rule.check, opts.ignore)) continue;
    for (const NodeFacts& n : nodes) {
      std::optional<ParityFinding> f = rule.judge(n);
      if (!f) continue;
      f->node = n.node;
      f->check = rule.check;
      out.push_back(std::move(*f));
    }
  }
  return out;
}

std::vector<std::string> SummarizeParity(const std::vector<ParityFinding>& findings) {
  struct Group {
    Outcome outcome;
    std::string value, expected, message;
    std::vector<std::string> nodes;
  };
  struct Line {
    std::string check;
    Outcome worst = Outcome::kPass;
    std::vector<Group> groups;
  };
  std::vector<Line> lines;
  for (const ParityFinding& f : findings) {
    auto line =
        std::find_if(lines.begin(), lines.end(), [&](const Line& l) { return l.check == f.check; });
    if (line == lines.end()) line = lines.insert(lines.end(), Line{f.check, f.outcome, {}});
    line->worst = Worse(line->worst, f.outcome);
    // Alike findings fold: same outcome and value (and message, when there
    // is no value to show).
    auto g = std::find_if(line->groups.begin(), line->groups.end(), [&](const Group& g) {
      return g.outcome == f.outcome && g.value == f.value &&
             (!f.value.empty() || g.message == f.message);
    });
    if (g == line->groups.end()) {
      g = line->groups.insert(line->groups.end(),
                              Group{f.outcome, f.value, f.expected, f.message, {}});
    }
    g->nodes.push_back(f.node);
  }
  auto worse_first = [](Outcome a, Outcome b) { return OutcomeSeverity(a) > OutcomeSeverity(b); };
  std::stable_sort(lines.begin(), lines.end(),
                   [&](const Line& a, const Line& b) { return worse_first(a.worst, b.worst); });
  std::vector<std::string> out;
  for (Line& l : lines) {
    std::stable_sort(l.groups.begin(), l.groups.end(), [&](const Group& a, const Group& b) {
      return worse_first(a.outcome, b.outcome);
    });
    std::string verdict = OutcomeName(l.worst);
    std::transform(verdict.begin(), verdict.end(), verdict.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    std::string text = verdict + " " + l.check + ": ";
    for (size_t i = 0; i < l.groups.size(); ++i) {
      const Group& g = l.groups[i];
      if (i > 0) text += "; ";
      text += FoldHostlist(g.nodes);
      if (g.value.empty()) {
        text += ": " + g.message;
        continue;
      }
      text += (g.nodes.size() == 1 ? " has " : " have ") + g.value;
      bool shown = std::any_of(l.groups.begin(), l.groups.end(),
                               [&](const Group& o) { return o.value == g.expected; });
      if (g.outcome != Outcome::kPass && !g.expected.empty() && !shown) {
        text += " (expected " + g.expected + ")";
      }
    }
    out.push_back(std::move(text));
  }
  return out;
}

Status CheckExpectPins(const std::map<std::string, std::string>& expect) {
  for (const auto& [field, pin] : expect) {
    Result<VersionPin> p = ParseVersionPin(pin);
    if (!p.ok()) return Status::BadInventory("expect." + field + ": " + p.status().message());
  }
  return Status::Ok();
}

}  // namespace cc
