// Merging the shards of a run (results/merge.hpp) from synthetic shard files: repetitions pooled,
// each benchmark's origin kept, what one process described dropped, and an incomplete or mixed
// set of shards refused with the file and JSON path named. kgate merge's command line is tested in
// kgate_cli_test.cpp.
#include "kgate/results/merge.hpp"

#include <gtest/gtest.h>

#include "kgate/results/detectable.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"
#include "tests/synthetic_results.hpp"
#include "tests/thrown.hpp"

namespace {

namespace syn = kgate::synthetic;
using kgate::RunResults;

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "gemv/tiled/m:4096/n:4096/bf16";

// A synthetic shard `shard` ("i/n") that measured `benchmark` on GPU `index`.
std::string write_shard(const syn::TempDir& dir, const std::string& name, const std::string& benchmark, const std::string& shard,
                        const std::string& index, std::uint64_t seed) {
  RunResults run = syn::run({syn::benchmark(benchmark, {.samples = 20, .seed = seed})});
  run.context.gpu_uuid = "GPU-" + index;
  run.context.extra = {{"shard", shard}, {"cuda_visible_devices", index}, {"l2_flush", "read"}};
  run.context.wall_s = {{"timing", 12.5}};
  run.context.job_s = {{"suite", 40}};
  kgate::write_results_file(dir.file(name), kgate::to_json(run));
  return dir.file(name);
}

std::string refusal(const std::vector<std::string>& paths, bool partial = false) {
  return kgate::testing_support::message_thrown<kgate::ResultsError>([&] { kgate::merge_results_files(paths, partial); });
}

TEST(Merge, ShardsBecomeOneRunThatSaysWhereEachBenchmarkRan) {
  const syn::TempDir dir;
  const std::string s0 = write_shard(dir, "s0.json", kA, "0/2", "0", 1), s1 = write_shard(dir, "s1.json", kB, "1/2", "1", 2);
  const std::string again = write_shard(dir, "again.json", kA, "1/2", "1", 3);  // kA measured once more, on GPU 1
  const kgate::MergedRun merged = kgate::merge_results_files({s0, s1, again}, false);
  ASSERT_EQ(merged.run.benchmarks.size(), 2u);
  EXPECT_EQ(merged.pooled, 1u);
  EXPECT_EQ(merged.run.benchmarks[0].cold->samples_s.size(), 40u);
  EXPECT_EQ(merged.run.benchmarks[0].provenance.at("gpu_uuid"), "GPU-0 GPU-1");
  EXPECT_EQ(merged.run.benchmarks[1].provenance.at("gpu_index"), "1");
  EXPECT_EQ(merged.run.context.extra.at("source:" + kA), s0 + " " + again);
  EXPECT_EQ(merged.run.context.extra.at("merged_from"), s0 + " " + s1 + " " + again);
  for (const char* key : {"shard", "cuda_visible_devices"}) EXPECT_FALSE(merged.run.context.extra.contains(key)) << key;
  EXPECT_TRUE(merged.run.context.wall_s.empty()) << "a shard's wall time is its process's";
  EXPECT_TRUE(merged.run.context.job_s.empty()) << "a shard's job is not the merged run's";
  EXPECT_EQ(merged.run.context.extra.at("l2_flush"), "read");
}

TEST(Merge, ShardsWithoutCeilingsArePlacedOnTheFirstShardDonesWhicheverInputItIs) {
  // Shards that claim their benchmarks as they run: only the first shard done measures the
  // ceilings (SuiteProcess::claim_calibration), here shard 1 of 2, the second input.
  const syn::TempDir dir;
  const auto shard = [&](const std::string& name, const std::string& benchmark, const std::string& text, bool calibrated) {
    RunResults run = syn::run({syn::benchmark(benchmark, {.median_s = 20e-6, .samples = 200, .seed = 7})});
    kgate::BenchmarkRecord& r = run.benchmarks[0];
    r.cold->timer = "cupti";
    run.context.extra = {{"shard", text}};
    if (calibrated) {
      run.context.calibration.timer_resolution_s = 32e-9;
      run.context.extra["ceilings_measured_by"] = "shard " + text;
      kgate::derive_from_calibration(r, run.context.calibration);
    } else {
      run.context.calibration = {};
      r.bytes_per_s = r.flops_per_s = r.arithmetic_intensity = r.pct_of_memory_ceiling = r.pct_of_compute_ceiling = 0;
      r.roofline = kgate::RooflineClass::below_roofs;
      kgate::note_detectable_change(r, 0);
    }
    kgate::write_results_file(dir.file(name), kgate::to_json(run));
    return dir.file(name);
  };
  const std::string s0 = shard("s0.json", kA, "0/2", false), s1 = shard("s1.json", kB, "1/2", true);
  const kgate::MergedRun merged = kgate::merge_results_files({s0, s1}, false);
  const kgate::Calibration& ceilings = merged.run.context.calibration;
  EXPECT_EQ(ceilings.copy_bytes_per_s, syn::context().calibration.copy_bytes_per_s);
  EXPECT_EQ(ceilings.timer_resolution_s, 32e-9);
  EXPECT_EQ(merged.run.context.extra.at("ceilings_measured_by"), "shard 1/2");
  const kgate::BenchmarkRecord& placed = merged.run.benchmarks[0];
  ASSERT_EQ(placed.name, kA);
  EXPECT_NEAR(placed.pct_of_memory_ceiling, 100 * placed.min_bytes / placed.cold->summary.median / ceilings.copy_bytes_per_s, 1e-9);
  EXPECT_EQ(placed.roofline, kgate::RooflineClass::memory_bound) << "67 MB in 20 us: 84% of 4 TB/s";
  // The tick is part of the change a CUPTI-timed record can show.
  EXPECT_GT(placed.cold->min_detectable_change, 0);
  EXPECT_EQ(placed.cold->min_detectable_change, kgate::detectable_change(*placed.cold, 32e-9).fraction());
}

TEST(Merge, AShardThatMeasuredNothingJoinsButSomethingMustBeMeasured) {
  // Of a small suite, a claiming shard may claim none and take none of the others' last rounds.
  const syn::TempDir dir;
  const std::string s0 = write_shard(dir, "s0.json", kA, "0/2", "0", 1);
  RunResults empty = syn::run({});
  empty.context.extra = {{"shard", "1/2"}};
  kgate::write_results_file(dir.file("s1.json"), kgate::to_json(empty));
  EXPECT_EQ(kgate::merge_results_files({s0, dir.file("s1.json")}, false).run.benchmarks.size(), 1u);
  EXPECT_EQ(refusal({dir.file("s1.json")}, true), dir.file("s1.json") + ": no benchmarks in any input");
}

TEST(Merge, RefusesAnIncompleteOrMixedSetOfShards) {
  const syn::TempDir dir;
  const std::string s0 = write_shard(dir, "s0.json", kA, "0/3", "0", 1), s2 = write_shard(dir, "s2.json", kB, "2/3", "1", 2);
  EXPECT_EQ(refusal({s0, s2}).rfind("shard(s) 1/3 missing", 0), 0u) << refusal({s0, s2});
  EXPECT_EQ(refusal({s0, s2}, true), "") << "--partial merges the shards given";
  const std::string of_two = write_shard(dir, "of-two.json", kB, "1/2", "1", 3);
  EXPECT_NE(refusal({s0, of_two}).find("$.context.kgate.extra.shard: shard 0/3, but "), std::string::npos) << refusal({s0, of_two});
  EXPECT_NE(refusal({s0, of_two}).find("(shards of one run share their count)"), std::string::npos);

  RunResults failed = syn::run({syn::benchmark(kA, {})});
  failed.benchmarks[0].status = kgate::BenchmarkStatus::failed;
  kgate::write_results_file(dir.file("failed.json"), kgate::to_json(failed));
  const std::string duplicate = refusal({s0, dir.file("failed.json")});
  EXPECT_EQ(duplicate.rfind(dir.file("failed.json") + ": $.benchmarks[0]: duplicate benchmark \"" + kA, 0), 0u) << duplicate;
}

}  // namespace
