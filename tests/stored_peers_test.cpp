// The stored peers (gate/stored_peers.hpp) and `kgate peers record|reuse` on synthetic runs: what
// the file keeps, which differences of environment forbid reusing it and which do not, a suite
// that gained shapes, and what a run that reuses them says about where the figures came from.
#include "kgate/gate/stored_peers.hpp"

#include <gtest/gtest.h>

#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
using kgate::BenchmarkRecord;
using kgate::BenchmarkStatus;
using kgate::RunResults;
using kgate::cli_test::kgate_cli;

const std::string kGpu = "NVIDIA H100 80GB HBM3";
const std::string kKernel = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kPeer = "rmsnorm/torch-eager/m:4096/n:4096/bf16";
const std::string kLigerPeer = "rmsnorm/liger/m:4096/n:4096/bf16";

BenchmarkRecord peer(const std::string& name, std::uint64_t seed) {
  BenchmarkRecord r = syn::benchmark(name, {.median_s = 12e-6, .seed = seed});
  r.role = "peer";
  r.provenance = {{"call", "F.rms_norm(x, (n,), w, eps)"}, {"library", "torch 2.11.0"}};
  return r;
}

// A suite's run measured here, with the peers' suite merged in: the kernel and two peers.
RunResults run_with_peers() {
  RunResults run = syn::run({syn::benchmark(kKernel, {.seed = 1}), peer(kPeer, 2), peer(kLigerPeer, 3)}, kGpu);
  run.context.extra = {{"peers.torch", "2.11.0+cu130"},
                       {"peers.triton", "3.6.0"},
                       {"peers.liger_kernel", "0.6.4"},
                       {"peers.listing", "build/bench/kgate_bench"},
                       {"source:" + kKernel, "run.json"}};
  return run;
}

TEST(StoredPeers, KeepThePeersTheirProvenanceAndTheEnvironmentNotTheCeilings) {
  RunResults run = run_with_peers();
  run.benchmarks[2].status = BenchmarkStatus::failed;  // what this environment gave is kept too
  const RunResults stored = kgate::stored_peers_of(run, "runs/merged.json");
  ASSERT_EQ(stored.benchmarks.size(), 2u) << "the kernel is no peer";
  EXPECT_EQ(stored.benchmarks[0].name, kPeer);
  EXPECT_EQ(stored.benchmarks[1].status, BenchmarkStatus::failed);
  EXPECT_EQ(stored.benchmarks[0].provenance.at("call"), "F.rms_norm(x, (n,), w, eps)") << "the peer's own provenance stays";
  EXPECT_EQ(stored.benchmarks[0].provenance.at("date"), "2026-11-21T12:00:00Z");
  EXPECT_EQ(stored.benchmarks[0].provenance.at("host"), "synthetic-host");
  EXPECT_EQ(stored.benchmarks[0].provenance.at("source"), "runs/merged.json");
  EXPECT_EQ(stored.context.calibration.copy_bytes_per_s, 0) << "a reusing run places them on its own ceilings";
  EXPECT_EQ(stored.context.extra.size(), 4u) << "only the peers' entries: " << stored.context.extra.begin()->first;
  EXPECT_EQ(kgate::peer_environment(stored.context).at("peers.liger_kernel"), "0.6.4");

  RunResults no_peers = syn::run({syn::benchmark(kKernel, {})}, kGpu);
  EXPECT_THROW(
      {
        try {
          kgate::stored_peers_of(no_peers, "suite.json");
        } catch (const kgate::ResultsError& e) {
          EXPECT_EQ(std::string(e.what()).rfind("suite.json: $.benchmarks: no peer benchmark", 0), 0u) << e.what();
          throw;
        }
      },
      kgate::ResultsError);
}

TEST(StoredPeers, TheEnvironmentIsTheGpuItsClocksTheDriverAndTheLibraries) {
  const kgate::PeerEnvironment environment = kgate::peer_environment(run_with_peers().context);
  EXPECT_EQ(environment.at("gpu"), kGpu);
  EXPECT_EQ(environment.at("driver"), "13.0");
  EXPECT_EQ(environment.at("sm_clock_mhz_default"), "1980");
  EXPECT_EQ(environment.at("memory_clock_mhz"), "3201");
  EXPECT_EQ(environment.at("peers.torch"), "2.11.0+cu130");
  EXPECT_FALSE(environment.contains("peers.listing")) << "a run's own entries decide nothing";
  EXPECT_EQ(environment.size(), 7u);
}

TEST(StoredPeers, AnotherVersionForbidsReuseAMissingLibraryDoesNot) {
  const kgate::PeerEnvironment recorded = {{"driver", "13.0"}, {"peers.torch", "2.11.0"}, {"peers.liger_kernel", "0.6.4"}};
  EXPECT_TRUE(kgate::environment_differences(recorded, recorded).empty());
  // Liger-Kernel not installed here: its recorded figures are what this GPU's users are shown.
  EXPECT_TRUE(
      kgate::environment_differences(recorded, {{"driver", "13.0"}, {"peers.torch", "2.11.0"}, {"peers.liger_kernel", "not installed"}})
          .empty());
  EXPECT_EQ(kgate::environment_differences(recorded, {{"driver", "13.0"}, {"peers.torch", "2.10.0"}, {"peers.liger_kernel", "0.6.4"}}),
            std::vector<std::string>{"peers.torch: 2.11.0 recorded, 2.10.0 here"});
  EXPECT_EQ(kgate::environment_differences(recorded, {{"peers.torch", "2.11.0"}, {"peers.liger_kernel", "0.6.4"}}),
            std::vector<std::string>{"driver: 13.0 recorded, unknown here"});
  // A library installed here that the record lacks would be a peer nobody measured.
  EXPECT_EQ(kgate::environment_differences({{"peers.torch", "2.11.0"}}, {{"peers.torch", "2.11.0"}, {"peers.liger_kernel", "0.6.4"}}),
            std::vector<std::string>{"peers.liger_kernel: not recorded, 0.6.4 here"});
  EXPECT_TRUE(
      kgate::environment_differences({{"peers.torch", "2.11.0"}}, {{"peers.torch", "2.11.0"}, {"peers.liger_kernel", "not installed"}})
          .empty());
}

TEST(StoredPeers, ASuiteThatGainedAShapeHasNoStoredPeerThere) {
  const RunResults stored = kgate::stored_peers_of(run_with_peers(), "merged.json");
  RunResults now = syn::run({syn::benchmark(kKernel, {}), syn::benchmark("rmsnorm/vectorized/m:8192/n:4096/bf16", {}),
                             syn::benchmark("gemv/naive/m:1/n:4096/bf16", {})},
                            kGpu);
  EXPECT_EQ(kgate::shapes_without_peers(stored, now), std::vector<std::string>{"rmsnorm m:8192/n:4096/bf16"})
      << "a family without stored peers (gemv) has none to miss";
}

TEST(StoredPeers, ReusedPeersArePlacedOnTheRunsCeilingsAndSaySo) {
  const RunResults stored = kgate::stored_peers_of(run_with_peers(), "merged.json");
  RunResults now = syn::run({syn::benchmark(kKernel, {.seed = 9})}, kGpu);
  now.context.calibration.copy_bytes_per_s = 2e12;
  now.context.calibration.read_bytes_per_s = 2e12;
  kgate::add_stored_peers(now, stored, "baselines/nvidia-h100-80gb-hbm3/peers.json");
  ASSERT_EQ(now.benchmarks.size(), 3u);
  const BenchmarkRecord& reused = now.benchmarks[1];
  EXPECT_EQ(reused.provenance.at("figures"), "reused from baselines/nvidia-h100-80gb-hbm3/peers.json");
  EXPECT_EQ(reused.provenance.at("date"), "2026-11-21T12:00:00Z");
  EXPECT_NEAR(reused.pct_of_memory_ceiling, 100 * reused.bytes_per_s / 2e12, 1e-6) << "on this run's ceilings";
  EXPECT_EQ(now.context.extra.at("peers.torch"), "2.11.0+cu130");
  EXPECT_EQ(now.context.extra.at("peers.figures"),
            "reused from baselines/nvidia-h100-80gb-hbm3/peers.json, measured 2026-11-21T12:00:00Z on synthetic-host");
  EXPECT_THROW(kgate::add_stored_peers(now, stored, "peers.json"), kgate::ResultsError) << "a run with peers of its own";
}

TEST(StoredPeers, RecordThenReuseFromTheCommandLine) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  const std::string merged = dir.file("merged.json");
  kgate::write_results_file(merged, kgate::to_json(run_with_peers()));
  auto r = kgate_cli({"peers", "record", "--baseline-dir", baselines, merged});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string file = baselines + "/nvidia-h100-80gb-hbm3/peers.json";
  EXPECT_EQ(r.out.rfind("wrote " + file + ": 2 peer benchmarks of " + kGpu + "\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  peers.liger_kernel: 0.6.4\n"), std::string::npos) << r.out;

  // The next run, here, with Liger-Kernel not installed: reused, in place.
  const std::string next = dir.file("next.json");
  kgate::write_results_file(next, kgate::to_json(syn::run({syn::benchmark(kKernel, {.seed = 4})}, kGpu)));
  const std::string versions =
      dir.write("versions.json", R"({"peers.torch": "2.11.0+cu130", "peers.triton": "3.6.0", "peers.liger_kernel": "not installed"})");
  r = kgate_cli({"peers", "reuse", "--baseline-dir", baselines, "--versions", versions, next});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "reused 2 peer benchmarks from " + file + " (measured 2026-11-21T12:00:00Z on synthetic-host) into " + next + "\n");
  EXPECT_EQ(kgate::read_results_file(next).benchmarks.size(), 3u);

  // Another torch: not reused, the run untouched, the difference named.
  const std::string other = dir.file("other.json");
  kgate::write_results_file(other, kgate::to_json(syn::run({syn::benchmark(kKernel, {.seed = 5})}, kGpu)));
  const std::string newer = dir.write("newer.json", R"({"peers.torch": "2.12.0", "peers.triton": "3.6.0"})");
  r = kgate_cli({"peers", "reuse", "--baseline-dir", baselines, "--versions", newer, other});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("  peers.torch: 2.11.0+cu130 recorded, 2.12.0 here\n"), std::string::npos) << r.err;
  EXPECT_EQ(kgate::read_results_file(other).benchmarks.size(), 1u);

  // No stored peers for this GPU; a versions file that is not what torch_peers.py writes.
  kgate::write_results_file(other, kgate::to_json(syn::run({syn::benchmark(kKernel, {.seed = 5})}, "NVIDIA H200")));
  r = kgate_cli({"peers", "reuse", "--baseline-dir", baselines, "--versions", versions, other});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no stored peers for NVIDIA H200"), std::string::npos) << r.err;
  r = kgate_cli({"peers", "reuse", "--baseline-dir", baselines, "--versions", dir.write("bad.json", R"({"torch": "2.11"})"), next});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.json: $[\"torch\"]: a library's entry is named \"peers.<library>\""), std::string::npos) << r.err;
  r = kgate_cli({"peers", "reuse", "--baseline-dir", baselines, next});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("needs --versions FILE"), std::string::npos) << r.err;

  // The actions, and help before or after one.
  r = kgate_cli({"peers"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("expected an action: record or reuse"), std::string::npos) << r.err;
  r = kgate_cli({"peers", "show"});
  EXPECT_NE(r.err.find("unknown action 'show' (expected record or reuse)"), std::string::npos) << r.err;
  for (const char* action : {"--help", "reuse"}) {
    r = kgate_cli({"peers", action, "-h"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("usage: kgate peers record", 0), 0u) << r.out;
  }
}

}  // namespace
