#include "orchestrator/stages/facts/facts_fields.h"

#include <set>

namespace cc {

using nlohmann::json;

namespace {

// facts[section][key...] or null, without throwing on a wrong shape.
const json& At(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// A scalar as text; "" for null, objects and arrays (unknown).
std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return v.dump();
  return "";
}

// A section is usable unless it failed or was skipped; "absent" sections
// still carry facts (e.g. the searched paths) but no values we flatten.
bool Usable(const json& section) {
  if (!section.is_object()) return false;
  const json& s = At(section, {"status"});
  return !s.is_string() || s == "ok" || s == "error";
}

void Put(std::map<std::string, std::string>* out, const std::string& field, const json& v) {
  std::string t = Text(v);
  if (!t.empty()) (*out)[field] = t;
}

// Distinct values of gpus[*][key], sorted and joined.
void PutDistinct(std::map<std::string, std::string>* out, const std::string& field,
                 const json& gpus, const char* key) {
  if (!gpus.is_array()) return;
  std::set<std::string> values;
  for (const auto& g : gpus) {
    std::string t = Text(At(g, {key}));
    if (!t.empty()) values.insert(t);
  }
  std::string joined;
  for (const auto& v : values) joined += (joined.empty() ? "" : ", ") + v;
  if (!joined.empty()) (*out)[field] = joined;
}

void FlattenGpu(const json& facts, std::map<std::string, std::string>* out) {
  const json& gpu = At(facts, {"gpu"});
  if (Usable(gpu)) {
    Put(out, "driver", At(gpu, {"driver_version"}));
    Put(out, "gpu_count", At(gpu, {"count"}));
    const json& gpus = At(gpu, {"gpus"});
    PutDistinct(out, "gpu_model", gpus, "name");
    PutDistinct(out, "vbios", gpus, "vbios");
    PutDistinct(out, "ecc", gpus, "ecc_mode");
    PutDistinct(out, "persistence", gpus, "persistence_mode");
  }
  const json& cuda = At(facts, {"cuda"});
  // cuInit may fail while the version is still known: keep it.
  if (cuda.is_object()) Put(out, "cuda_driver", At(cuda, {"driver_api_version"}));
  const json& nccl = At(facts, {"nccl"});
  if (Usable(nccl)) {
    // "2.28.3+cuda12.9" when the agent found the build string: parity reads
    // the CUDA NCCL needs from it.
    const json& full = At(nccl, {"version_full"});
    Put(out, "nccl", full.is_string() ? full : At(nccl, {"version"}));
  }
}

void FlattenSystem(const json& facts, std::map<std::string, std::string>* out) {
  const json& sys = At(facts, {"system"});
  if (!sys.is_object()) return;
  Put(out, "kernel", At(sys, {"kernel"}));
  Put(out, "glibc", At(sys, {"glibc"}));
  std::string id = Text(At(sys, {"os", "id"}));
  std::string ver = Text(At(sys, {"os", "version_id"}));
  if (!id.empty()) (*out)["os"] = ver.empty() ? id : id + " " + ver;
  Put(out, "shm_bytes", At(sys, {"shm_bytes"}));
  Put(out, "memlock", At(sys, {"memlock"}));
}

void FlattenRdma(const json& facts, std::map<std::string, std::string>* out) {
  const json& rdma = At(facts, {"rdma"});
  if (!Usable(rdma)) return;
  Put(out, "rdma_core", At(rdma, {"rdma_core_version"}));
  Put(out, "ofed", At(rdma, {"ofed_version"}));
  const json& peermem = At(rdma, {"nvidia_peermem"});
  if (peermem.is_boolean()) (*out)["peermem"] = peermem.get<bool>() ? "loaded" : "absent";
  const json& dmabuf = At(rdma, {"dmabuf_possible"});
  if (dmabuf.is_boolean()) (*out)["dmabuf"] = dmabuf.get<bool>() ? "yes" : "no";
  const json& ib = At(rdma, {"ib_devices"});
  if (ib.is_array()) (*out)["ib_devices"] = std::to_string(ib.size());
}

void FlattenSoftware(const json& facts, std::map<std::string, std::string>* out) {
  const json& mpi = At(facts, {"mpi"});
  if (Usable(mpi)) Put(out, "openmpi", At(mpi, {"openmpi_version"}));

  const json& torch = At(facts, {"torch"});
  if (torch.is_object() && At(torch, {"status"}) == "ok") {
    Put(out, "torch", At(torch, {"version"}));
    const json& cuda = At(torch, {"cuda"});
    // A CPU-only wheel: torch.version.cuda is None. That is a fact, not an
    // unknown.
    (*out)["torch_cuda"] = cuda.is_null() ? "none" : Text(cuda);
    Put(out, "torch_cuda_available", At(torch, {"cuda_available"}));
    Put(out, "torch_nccl", At(torch, {"nccl"}));
  }

  const json& env = At(facts, {"nccl_env"});
  if (At(env, {"login_env", "status"}) == "error") return;
  const json& eff = At(env, {"effective"}).is_object() ? At(env, {"effective"}) : At(env, {"env"});
  if (eff.is_object()) {
    for (const auto& [k, v] : eff.items()) {
      if (k.rfind("NCCL_", 0) == 0) Put(out, "nccl_env." + k, v);
    }
  }
}

// The flat fields each section gives (FlattenFacts), for UnknownFields.
struct SectionFields {
  const char* section;
  std::vector<const char*> fields;
};
const SectionFields kSectionFields[] = {
    {"gpu", {"driver", "gpu_count", "gpu_model", "vbios", "ecc", "persistence"}},
    {"cuda", {"cuda_driver"}},
    {"nccl", {"nccl"}},
    {"system", {"kernel", "glibc", "os", "shm_bytes", "memlock"}},
    {"rdma", {"rdma_core", "ofed", "peermem", "dmabuf", "ib_devices"}},
    {"mpi", {"openmpi"}},
    {"torch", {"torch", "torch_cuda", "torch_cuda_available", "torch_nccl"}},
    {"nccl_env", {"nccl_env.*"}},
};

std::string ReasonOf(const json& section) {
  std::string r = Text(At(section, {"reason"}));
  return r.empty() ? "failed without a reason" : r;
}

}  // namespace

std::map<std::string, std::string> FailedSources(const json& facts) {
  std::map<std::string, std::string> out;
  if (!facts.is_object()) return out;
  for (const auto& [name, section] : facts.items()) {
    if (!section.is_object()) continue;
    if (At(section, {"status"}) == "error") {
      out[name] = ReasonOf(section);
    } else if (name == "nccl_env" && At(section, {"login_env", "status"}) == "error") {
      out[name] = "login shell: " + ReasonOf(At(section, {"login_env"}));
    }
  }
  return out;
}

std::map<std::string, std::string> UnknownFields(const json& facts) {
  std::map<std::string, std::string> out;
  std::map<std::string, std::string> failed = FailedSources(facts);
  if (failed.empty()) return out;
  std::map<std::string, std::string> known = FlattenFacts(facts);
  for (const SectionFields& sf : kSectionFields) {
    auto f = failed.find(sf.section);
    if (f == failed.end()) continue;
    for (const char* field : sf.fields) {
      if (!known.count(field)) out[field] = std::string(sf.section) + ": " + f->second;
    }
  }
  return out;
}

std::map<std::string, std::string> FlattenFacts(const json& facts) {
  std::map<std::string, std::string> out;
  if (!facts.is_object()) return out;
  FlattenGpu(facts, &out);
  FlattenSystem(facts, &out);
  FlattenRdma(facts, &out);
  FlattenSoftware(facts, &out);
  return out;
}

std::vector<std::string> FactWarnings(const json& facts) {
  std::vector<std::string> out;
  const json& w = At(facts, {"nccl_env", "warnings"});
  if (!w.is_array()) return out;
  for (const auto& s : w) {
    if (s.is_string()) out.push_back(s);
  }
  return out;
}

}  // namespace cc
