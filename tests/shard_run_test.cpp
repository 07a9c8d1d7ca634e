// kgate shard-run without a GPU: a synthetic benchmark binary (tests/data/synthetic-kgate-bench.sh)
// and a synthetic nvidia-smi stand in for the GPU side; the real kgate binary runs them and merges.
// Checks which GPU each shard ran on, the flags each got, and the merged file's record of it.
#include <gtest/gtest.h>

#include <thread>
#include <sys/wait.h>

#include <cstdlib>

#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
namespace fs = std::filesystem;

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "fused_add_rmsnorm/vectorized/m:1/n:8192/bf16";

void make_executable(const std::string& path) { fs::permissions(path, fs::perms::owner_all); }

// A suite's benchmark binary, mykernels_bench, that is the synthetic one, a baseline of it for
// balancing by durations, and an nvidia-smi that lists `gpus` H200s.
struct FakeMachine {
  const syn::TempDir& dir;
  FakeMachine(const syn::TempDir& d, int gpus) : dir(d) {
    fs::create_directories(dir.file("bin"));
    fs::create_directories(dir.file("baselines/nvidia-h200"));
    make_executable(dir.write("mykernels_bench", "#!/bin/sh\nSYNTHETIC_BENCH_DIR='" + dir.path().string() +
                                                     "' SYNTHETIC_BENCH_SIDE=bench exec /bin/sh '" KGATE_TEST_DATA_DIR
                                                     "/synthetic-kgate-bench.sh' \"$@\"\n"));
    kgate::write_results_file(dir.file("baselines/nvidia-h200/mykernels.json"), kgate::to_json(syn::run({syn::benchmark(kA, {})})));
    std::string listing;
    for (int i = 0; i < gpus; ++i)
      listing += "echo 'GPU " + std::to_string(i) + ": NVIDIA H200 (UUID: GPU-synthetic-" + std::to_string(i) + ")'\n";
    make_executable(dir.write("bin/nvidia-smi",
                              "#!/bin/sh\n"
                              "case \"$*\" in\n"
                              "  -L) " +
                                  listing +
                                  " ;;\n"
                                  "  *) exit 1 ;;\n"
                                  "esac\n"));
    // Each shard's canned results, as kgate_bench --kgate_shard writes them.
    const std::vector<std::string> names = {kA, kB};
    for (std::size_t s = 0; s < names.size(); ++s) {
      kgate::RunResults run = syn::run({syn::benchmark(names[s], {.seed = s + 1})});
      run.context.extra = {{"shard", std::to_string(s) + "/2"}, {"cuda_visible_devices", "@CUDA_VISIBLE_DEVICES@"}};
      run.context.wall_s = {{"timing", 20.0 + static_cast<double>(s)}, {"timing.cold", 15.0}, {"startup", 4.5}, {"counters", 3.25}};
      kgate::write_results_file(dir.file("bench-shard-" + std::to_string(s) + ".json"), kgate::to_json(run));
    }
  }

  // Runs kgate shard-run in the directory with `environment` (e.g. "CUDA_VISIBLE_DEVICES=GPU-x";
  // CUDA_VISIBLE_DEVICES is unset otherwise) and returns its exit status; its output is in run.log.
  int shard_run(const std::string& arguments, const std::string& environment = "") const {
    const std::string command = "cd '" + dir.path().string() + "' && env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER PATH='" +
                                dir.file("bin") + "':\"$PATH\" " + environment +
                                " '" KGATE_CLI_PATH "' shard-run --bench mykernels_bench " + arguments + " > run.log 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string log() const { return syn::read_text(dir.file("run.log")); }
  std::string gpus() const { return syn::read_text(dir.file("gpus.log")); }
};

TEST(ShardRun, OneShardPerGpuThenMerged) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  ASSERT_EQ(machine.shard_run("--out-dir out -- --kgate_counters=off"), 0) << machine.log();
  const std::string gpus = machine.gpus();
  // Each process's share of the cores for its host references (parallel.hpp).
  const std::string threads = " threads " + std::to_string(std::max(1u, std::thread::hardware_concurrency() / 2));
  EXPECT_NE(gpus.find("shard 0/2 on 0 order PCI_BUS_ID" + threads), std::string::npos) << gpus;
  EXPECT_NE(gpus.find("shard 1/2 on 1 order PCI_BUS_ID" + threads), std::string::npos) << gpus;
  // Shards that run at once claim their benchmarks as they run, in a folder they share.
  const std::string calls = syn::read_text(dir.file("calls.log"));
  EXPECT_NE(calls.find("bench --kgate_shard=0/2 --kgate_shard_claims=" + fs::absolute(dir.file("out/claims")).string() +
                       " --kgate_out=out/shard-0-of-2.json --kgate_counters=off\n"),
            std::string::npos)
      << calls;
  EXPECT_EQ(calls.find("--kgate_shard_durations"), std::string::npos) << calls;
  EXPECT_NE(machine.log().find("2 of 2 shard(s) on 2 GPU(s), each benchmark to the first shard free to claim it"), std::string::npos)
      << machine.log();

  const kgate::RunResults merged = kgate::read_results_file(dir.file("out/merged.json"));
  ASSERT_EQ(merged.benchmarks.size(), 2u);
  EXPECT_EQ(merged.benchmarks[0].name, kA);
  EXPECT_EQ(merged.benchmarks[0].provenance.at("gpu_index"), "0");
  EXPECT_EQ(merged.benchmarks[1].provenance.at("gpu_index"), "1");
  EXPECT_EQ(merged.benchmarks[1].provenance.at("shard"), "1/2");
  EXPECT_NE(machine.log().find("kgate shard-run: shard 1/2 on GPU 1 (NVIDIA H200, GPU-synthetic-1): exit 0"), std::string::npos)
      << machine.log();
  // Where each shard's time went, from its results: the top-level phases, in the processes' order.
  EXPECT_NE(machine.log().find(" (its processes 28.8 s: startup 4.50 s, timing 21.0 s, counters 3.25 s)\n"), std::string::npos)
      << machine.log();
}

TEST(ShardRun, NamesTheMergedRunAsTheBenchmarkBinaryNamesARun) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  ASSERT_EQ(machine.shard_run("--out-dir out --runs-dir runs --suite other"), 0) << machine.log();
  EXPECT_TRUE(fs::exists(dir.file("runs/20261121T120000Z-nvidia-h200.json"))) << machine.log();
  EXPECT_FALSE(fs::exists(dir.file("out/merged.json")));
  EXPECT_EQ(machine.shard_run("--out-dir out --runs-dir runs --out merged.json"), 2);
}

TEST(ShardRun, ShardsThatDoNotAllRunAtOnceAreSplitAheadByTheBaseline) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  ASSERT_EQ(machine.shard_run("--gpus 1 --shards 2 --out-dir out --out merged.json"), 0) << machine.log();
  EXPECT_NE(machine.log().find("split ahead by baselines/nvidia-h200/mykernels.json"), std::string::npos) << machine.log();
  EXPECT_NE(syn::read_text(dir.file("calls.log")).find("--kgate_shard_durations=baselines/nvidia-h200/mykernels.json"), std::string::npos);
  EXPECT_EQ(syn::read_text(dir.file("calls.log")).find("--kgate_shard_claims"), std::string::npos);
  ASSERT_EQ(machine.shard_run("--shards 2 --only 0 --suite other --out-dir out2"), 0) << machine.log();
  EXPECT_NE(machine.log().find("split ahead by count"), std::string::npos) << "no baseline of suite 'other': " << machine.log();
}

TEST(ShardRun, MoreShardsThanGpusRunOneAfterTheOther) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  ASSERT_EQ(machine.shard_run("--gpus 1 --shards 2 --durations none.json --out-dir out --out merged.json"), 0) << machine.log();
  const std::string gpus = machine.gpus();
  EXPECT_NE(gpus.find("shard 0/2 on 0 "), std::string::npos) << gpus;
  EXPECT_NE(gpus.find("shard 1/2 on 0 "), std::string::npos) << gpus;
  EXPECT_NE(syn::read_text(dir.file("calls.log")).find("--kgate_shard_durations=none.json"), std::string::npos);
  const kgate::RunResults merged = kgate::read_results_file(dir.file("merged.json"));
  ASSERT_EQ(merged.benchmarks.size(), 2u);
  EXPECT_EQ(merged.benchmarks[1].provenance.at("gpu_index"), "0");
}

TEST(ShardRun, OnlySomeShardsForACiJobAndVisibleDevicesRespected) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  ASSERT_EQ(machine.shard_run("--shards 2 --only 1 --out-dir out", "CUDA_VISIBLE_DEVICES=GPU-x,GPU-y KGATE_HOST_THREADS=7"), 0)
      << machine.log();
  EXPECT_EQ(machine.gpus(), "shard 1/2 on GPU-x order  threads 7\n")
      << "the first visible GPU, in the order CUDA was given; KGATE_HOST_THREADS as given";
  EXPECT_TRUE(fs::exists(dir.file("out/shard-1-of-2.json")));
  EXPECT_FALSE(fs::exists(dir.file("out/shard-0-of-2.json")));
  EXPECT_FALSE(fs::exists(dir.file("out/merged.json"))) << "a CI job's shard is merged by the final job";

  EXPECT_EQ(machine.shard_run("--shards 2 --only 2 --out-dir out"), 2);
  EXPECT_NE(machine.log().find("shards count from 0 to 1"), std::string::npos) << machine.log();
}

TEST(ShardRun, VisibleDevicesNeedNoNvidiaSmiButAMachineWithoutEitherHasNoGpu) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  make_executable(dir.write("bin/nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n"));
  ASSERT_EQ(machine.shard_run("--out-dir out", "CUDA_VISIBLE_DEVICES=0,1"), 0) << machine.log();
  EXPECT_NE(machine.log().find("shard 1/2 on GPU 1 (?): exit 0"), std::string::npos) << machine.log();
  EXPECT_EQ(machine.shard_run("--out-dir out"), 2);
  EXPECT_NE(machine.log().find("no GPU visible: nvidia-smi -L failed (exit status 9): NVIDIA-SMI has failed"), std::string::npos)
      << machine.log();
}

TEST(ShardRun, AShardThatDoesNotRunFailsTheRun) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  fs::remove(dir.file("bench-shard-1.json"));
  EXPECT_EQ(machine.shard_run("--out-dir out"), 2);
  EXPECT_NE(machine.log().find("kgate shard-run: shard 1/2 failed (exit 1)"), std::string::npos) << machine.log();
  EXPECT_NE(machine.log().find("no canned results"), std::string::npos) << "its log's end is shown: " << machine.log();
  EXPECT_FALSE(fs::exists(dir.file("out/merged.json")));
}

TEST(ShardRun, AClaimingShardThatMeasuredNothingIsMergedWithTheOthers) {
  // Of a small suite, one shard may claim none and take none of the others' last rounds.
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  kgate::RunResults empty = syn::run({});
  empty.context.extra = {{"shard", "1/2"}};
  kgate::write_results_file(dir.file("bench-shard-1.json"), kgate::to_json(empty));
  ASSERT_EQ(machine.shard_run("--out-dir out"), 0) << machine.log();
  const kgate::RunResults merged = kgate::read_results_file(dir.file("out/merged.json"));
  ASSERT_EQ(merged.benchmarks.size(), 1u);
  EXPECT_EQ(merged.benchmarks[0].name, kA);
}

TEST(ShardRun, AShardsResultsThatCannotBeReadAreNamedAndNothingIsMerged) {
  const syn::TempDir dir;
  const FakeMachine machine(dir, 2);
  dir.write("bench-shard-1.json", "{\"context\": {\"kgate\": ");  // cut short, as a full disk leaves it
  EXPECT_EQ(machine.shard_run("--out-dir out"), 2);
  EXPECT_NE(machine.log().find("out/shard-1-of-2.json"), std::string::npos) << machine.log();
  EXPECT_FALSE(fs::exists(dir.file("out/merged.json")));
}

}  // namespace
