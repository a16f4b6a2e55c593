#include "orchestrator/stages/facts/facts_fields.h"

#include <gtest/gtest.h>

#include <fstream>

#include "build_paths.h"

namespace cc {
namespace {

using nlohmann::json;

// A node's facts as the agent reports them (agent/facts_command.cc).
json GpuNodeFacts() {
  return json::parse(R"({
    "system": {"hostname": "gpu001", "os": {"id": "ubuntu", "version_id": "22.04",
               "pretty_name": "Ubuntu 22.04.4 LTS"}, "kernel": "5.15.0-105-generic",
               "glibc": "2.35", "arch": "x86_64",
               "cpu": {"model": "Xeon", "sockets": 2, "cores": 112, "threads": 224},
               "memory_bytes": 2164391292928, "shm_bytes": 1082195644416,
               "memlock": "unlimited"},
    "gpu": {"status": "ok", "driver_version": "550.54.15", "nvml_version": "12.550.54.15",
            "count": 3, "gpus": [
              {"index": 0, "name": "NVIDIA H200", "vbios": "96.00.AF.00.01",
               "ecc_mode": "enabled", "persistence_mode": "enabled"},
              {"index": 1, "name": "NVIDIA H200", "vbios": "96.00.AF.00.02",
               "ecc_mode": "enabled", "persistence_mode": "disabled"},
              {"index": 2, "name": "NVIDIA H200", "vbios": "96.00.AF.00.01",
               "ecc_mode": "enabled", "persistence_mode": "enabled"}]},
    "cuda": {"status": "ok", "driver_api_version": "12.4"},
    "nccl": {"status": "ok", "version": "2.21.5", "version_full": "2.21.5+cuda12.4"},
    "rdma": {"ib_devices": [{"name": "mlx5_0", "ports": []}, {"name": "mlx5_1", "ports": []}],
             "rdma_core_version": "39.0", "ofed_version": null, "nvidia_peermem": true,
             "dmabuf_possible": false},
    "mpi": {"status": "ok", "openmpi_version": "4.1.6"},
    "nccl_env": {"effective": {"NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "", "PATH": "/bin"},
                 "warnings": ["NCCL_IB_DISABLE=1 disables InfiniBand/RoCE"]},
    "torch": {"status": "ok", "version": "2.3.0", "cuda": "12.1", "cuda_available": true,
              "device_count": 3, "nccl": "2.20.5"}
  })");
}

TEST(FactsFields, EveryKnownFieldIsFlattened) {
  auto f = FlattenFacts(GpuNodeFacts());
  EXPECT_EQ(f["driver"], "550.54.15");
  EXPECT_EQ(f["cuda_driver"], "12.4");
  EXPECT_EQ(f["nccl"], "2.21.5+cuda12.4");
  EXPECT_EQ(f["gpu_model"], "NVIDIA H200");
  EXPECT_EQ(f["gpu_count"], "3");
  EXPECT_EQ(f["vbios"], "96.00.AF.00.01, 96.00.AF.00.02");
  EXPECT_EQ(f["ecc"], "enabled");
  EXPECT_EQ(f["persistence"], "disabled, enabled");
  EXPECT_EQ(f["kernel"], "5.15.0-105-generic");
  EXPECT_EQ(f["os"], "ubuntu 22.04");
  EXPECT_EQ(f["glibc"], "2.35");
  EXPECT_EQ(f["rdma_core"], "39.0");
  EXPECT_EQ(f["peermem"], "loaded");
  EXPECT_EQ(f["dmabuf"], "no");
  EXPECT_EQ(f["ib_devices"], "2");
  EXPECT_EQ(f["shm_bytes"], "1082195644416");
  EXPECT_EQ(f["memlock"], "unlimited");
  EXPECT_EQ(f["openmpi"], "4.1.6");
  EXPECT_EQ(f["torch"], "2.3.0");
  EXPECT_EQ(f["torch_cuda"], "12.1");
  EXPECT_EQ(f["torch_cuda_available"], "true");
  EXPECT_EQ(f["torch_nccl"], "2.20.5");
  EXPECT_EQ(f["nccl_env.NCCL_IB_HCA"], "mlx5");
}

TEST(FactsFields, UnknownValuesAreOmittedNotEmpty) {
  auto f = FlattenFacts(GpuNodeFacts());
  EXPECT_EQ(f.count("ofed"), 0u);                 // null: not found
  EXPECT_EQ(f.count("nccl_env.NCCL_DEBUG"), 0u);  // set but empty
  EXPECT_EQ(f.count("nccl_env.PATH"), 0u);        // not an NCCL variable
  for (const auto& [k, v] : f) EXPECT_FALSE(v.empty()) << k;
}

TEST(FactsFields, NcclWithoutABuildStringUsesThePlainVersion) {
  json facts = GpuNodeFacts();
  facts["nccl"].erase("version_full");
  EXPECT_EQ(FlattenFacts(facts)["nccl"], "2.21.5");
}

TEST(FactsFields, AbsentOrSkippedSectionsGiveNoFields) {
  json facts = GpuNodeFacts();
  facts["gpu"] = {{"status", "absent"},
                  {"reason", "libnvidia-ml.so.1 not found"},
                  {"searched", {"/usr/lib64/libnvidia-ml.so.1: no such file"}}};
  facts["nccl"] = {{"status", "absent"}};
  facts["torch"] = {{"status", "skip"}, {"reason", "no python given for this node"}};
  facts["mpi"] = {{"status", "absent"}, {"openmpi_version", nullptr}};
  facts.erase("system");
  auto f = FlattenFacts(facts);
  for (const char* k : {"driver", "gpu_count", "gpu_model", "vbios", "nccl", "torch", "torch_cuda",
                        "openmpi", "kernel", "os", "memlock", "shm_bytes"}) {
    EXPECT_EQ(f.count(k), 0u) << k;
  }
  EXPECT_EQ(f["cuda_driver"], "12.4");
}

TEST(FactsFields, FailedSourcesAreErrorsNotAbsences) {
  json facts = GpuNodeFacts();
  facts["mpi"] = {{"status", "error"},
                  {"openmpi_version", nullptr},
                  {"reason", "ompi_info --parsable did not finish within 5 s"}};
  facts["gpu"] = {{"status", "absent"}, {"reason", "libnvidia-ml.so.1 not found"}};
  facts["torch"] = {{"status", "skip"}, {"reason", "no python given for this node"}};
  facts["nccl_env"]["login_env"] = {{"status", "error"},
                                    {"reason", "bash -lc 'env -0': did not finish within 5 s"}};
  auto failed = FailedSources(facts);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed["mpi"], "ompi_info --parsable did not finish within 5 s");
  EXPECT_EQ(failed["nccl_env"], "login shell: bash -lc 'env -0': did not finish within 5 s");
  auto unknown = UnknownFields(facts);
  EXPECT_EQ(unknown.size(), 2u);
  EXPECT_EQ(unknown["openmpi"], "mpi: ompi_info --parsable did not finish within 5 s");
  EXPECT_EQ(unknown["nccl_env.*"],
            "nccl_env: login shell: bash -lc 'env -0': did not finish within 5 s");
  // The agent's own environment is not what a login job sees: not voted.
  auto f = FlattenFacts(facts);
  EXPECT_EQ(f.count("nccl_env.NCCL_IB_HCA"), 0u);
  EXPECT_EQ(f.count("openmpi"), 0u);
  EXPECT_EQ(f.count("driver"), 0u);  // absent: an answer, not unknown
}

TEST(FactsFields, FieldsAFailedSectionStillReportedAreKnown) {
  json facts = GpuNodeFacts();
  facts["gpu"]["status"] = "error";
  facts["gpu"]["reason"] = "nvmlDeviceGetHandleByIndex(2): GPU is lost";
  facts["gpu"].erase("gpus");
  auto unknown = UnknownFields(facts);
  EXPECT_EQ(unknown.count("driver"), 0u);
  EXPECT_EQ(unknown.count("gpu_count"), 0u);
  EXPECT_EQ(unknown["gpu_model"], "gpu: nvmlDeviceGetHandleByIndex(2): GPU is lost");
  EXPECT_TRUE(UnknownFields(GpuNodeFacts()).empty());
  EXPECT_TRUE(FailedSources(json::array()).empty());
}

TEST(FactsFields, CudaVersionIsKeptWhenCuInitFails) {
  json facts = {{"cuda",
                 {{"status", "absent"},
                  {"driver_api_version", "13.0"},
                  {"reason", "cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100)"}}}};
  EXPECT_EQ(FlattenFacts(facts)["cuda_driver"], "13.0");
}

TEST(FactsFields, CpuOnlyTorchHasCudaNone) {
  json facts = {
      {"torch",
       {{"status", "ok"}, {"version", "2.3.0+cpu"}, {"cuda", nullptr}, {"cuda_available", false}}}};
  auto f = FlattenFacts(facts);
  EXPECT_EQ(f["torch_cuda"], "none");
  EXPECT_EQ(f["torch_cuda_available"], "false");
}

TEST(FactsFields, NumericMemlockAndMissingOsVersion) {
  json facts = {
      {"system", {{"memlock", 65536}, {"os", {{"id", "debian"}}}}},
      {"rdma",
       {{"nvidia_peermem", false}, {"dmabuf_possible", true}, {"ib_devices", json::array()}}}};
  auto f = FlattenFacts(facts);
  EXPECT_EQ(f["memlock"], "65536");
  EXPECT_EQ(f["os"], "debian");
  EXPECT_EQ(f["peermem"], "absent");
  EXPECT_EQ(f["dmabuf"], "yes");
  EXPECT_EQ(f["ib_devices"], "0");
}

TEST(FactsFields, OddShapesNeverThrow) {
  EXPECT_TRUE(FlattenFacts(json()).empty());
  EXPECT_TRUE(FlattenFacts(json::array()).empty());
  json odd = {{"gpu", "ok"},
              {"system", {{"os", 3}}},
              {"nccl_env", {{"effective", 1}}},
              {"rdma", {{"ib_devices", "two"}}}};
  EXPECT_NO_THROW(FlattenFacts(odd));
  EXPECT_TRUE(FactWarnings(odd).empty());
}

// What the agent reported on a real H200 VM (Ubuntu 24.04, driver 580,
// CUDA 13.0, NCCL 2.28.3, torch 2.11), kept as a fixture.
TEST(FactsFields, RealH200NodeFlattensToWhatNvidiaSmiShows) {
  std::ifstream in(std::string(CLUSTERCHECK_FIXTURES) + "/facts-h200-node.json");
  ASSERT_TRUE(in.good());
  auto f = FlattenFacts(json::parse(in));
  EXPECT_EQ(f["driver"], "580.159.04");
  EXPECT_EQ(f["cuda_driver"], "13.0");
  EXPECT_EQ(f["nccl"], "2.28.3+cuda13.0");
  EXPECT_EQ(f["gpu_model"], "NVIDIA H200");
  EXPECT_EQ(f["gpu_count"], "1");
  EXPECT_EQ(f["vbios"], "96.00.A5.00.1A");
  EXPECT_EQ(f["ecc"], "enabled");
  EXPECT_EQ(f["persistence"], "enabled");
  EXPECT_EQ(f["os"], "ubuntu 24.04");
  EXPECT_EQ(f["glibc"], "2.39");
  EXPECT_EQ(f["rdma_core"], "50.0");
  EXPECT_EQ(f["peermem"], "absent");
  EXPECT_EQ(f["dmabuf"], "yes");
  EXPECT_EQ(f["ib_devices"], "0");
  EXPECT_EQ(f["memlock"], "unlimited");
  EXPECT_EQ(f["openmpi"], "4.1.6");
  EXPECT_EQ(f["torch"], "2.11.0+cu130");
  EXPECT_EQ(f["torch_cuda"], "13.0");
  EXPECT_EQ(f["torch_cuda_available"], "true");
  EXPECT_EQ(f["torch_nccl"], "2.28.9");
  EXPECT_EQ(f.count("ofed"), 0u);
}

TEST(FactsFields, WarningsComeFromNcclEnv) {
  auto w = FactWarnings(GpuNodeFacts());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("NCCL_IB_DISABLE=1"), std::string::npos);
  EXPECT_TRUE(FactWarnings(json::object()).empty());
}

}  // namespace
}  // namespace cc
