// The `kgate` command line, run in-process: exit statuses, one-line errors for bad input, report
// files, baselines and merging.
#include "cli.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "args.hpp"
#include "baseline.hpp"
#include "kgate/provenance.hpp"
#include "kgate/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::RunResults;
using nlohmann::json;
namespace syn = kgate::synthetic;
namespace fs = std::filesystem;

struct Outcome {
  int status;
  std::string out, err;
};

Outcome kgate_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "kgate");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  const int status = kgate::kgate_main(static_cast<int>(args.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

std::string write_run(const syn::TempDir& dir, const std::string& name, const RunResults& run) {
  kgate::write_results_file(dir.file(name), kgate::to_json(run));
  return dir.file(name);
}

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "fused_add_rmsnorm/vectorized/m:1/n:8192/bf16";

RunResults two_benchmarks(double a_median, std::uint64_t seed) {
  return syn::run({syn::benchmark(kA, {.median_s = a_median, .seed = seed}), syn::benchmark(kB, {.median_s = 3e-6, .seed = seed + 7})});
}

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of('\n');
  return text.substr(text.rfind('\n', end) + 1, end - text.rfind('\n', end));
}

TEST(KgateCli, IdenticalRunsPass) {
  const syn::TempDir dir;
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", two_benchmarks(10e-6, 2))});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out).rfind("0 slower, 0 faster, 2 same, 0 noisy; geomean speedup ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);  // not a terminal: no colour
}

TEST(KgateCli, PlantedSlowdownFailsTheGate) {
  const syn::TempDir dir;
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", two_benchmarks(11e-6, 2)), "--min-change-us", "0"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(last_line(r.out).rfind("1 slower, 0 faster, 1 same, 0 noisy", 0), 0u) << r.out;
}

TEST(KgateCli, SmallChangeInsideNoisePasses) {
  const syn::TempDir dir;
  auto base = syn::run({syn::benchmark(kA, {.rel_noise = 0.03, .seed = 1})});
  auto next = syn::run({syn::benchmark(kA, {.median_s = 10.2e-6, .rel_noise = 0.03, .seed = 2})});
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", base), write_run(dir, "b.json", next)});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(KgateCli, ClockDropIsNotARegression) {
  const syn::TempDir dir;
  auto base = syn::run({syn::benchmark(kA, {.clock_mhz = 1980, .seed = 1})});
  auto next = syn::run({syn::benchmark(kA, {.median_s = 10e-6 * 1980 / 1600, .clock_mhz = 1600, .seed = 2})});
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", base), write_run(dir, "b.json", next)});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("clock 1980 → 1600 MHz: time +2"), std::string::npos) << r.out;  // +23.75% planted
}

TEST(KgateCli, FailedVariantFailsTheGate) {
  const syn::TempDir dir;
  RunResults next = two_benchmarks(10e-6, 2);
  next.benchmarks[1].status = kgate::BenchmarkStatus::failed;
  next.benchmarks[1].error = "misaligned address";
  next.benchmarks[1].cold.reset();
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", next)});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("error: misaligned address"), std::string::npos) << r.out;
  EXPECT_EQ(last_line(r.out).rfind("0 slower, 0 faster, 1 same, 0 noisy, 1 failed", 0), 0u) << r.out;
}

TEST(KgateCli, BadInputExitsTwoWithOneLine) {
  const syn::TempDir dir;
  const std::string good = write_run(dir, "good.json", two_benchmarks(10e-6, 1));
  const std::string h100 = write_run(dir, "h100.json", syn::run({syn::benchmark(kA, {})}, "NVIDIA H100 80GB HBM3"));
  json negative = kgate::to_json(two_benchmarks(10e-6, 2));
  negative["benchmarks"][1]["kgate"]["cold"]["samples_s"][3] = -1;
  json newer = kgate::to_json(two_benchmarks(10e-6, 2));
  newer["context"]["kgate"]["schema_version"] = 9;
  const std::string thresholds = dir.write("thresholds.json", R"({"default": 0.05, "familes": {}})");

  struct Case {
    std::vector<std::string> args;
    std::string expected;  // the whole of stderr starts with this
  };
  const std::vector<Case> cases = {
      {{"compare", good, dir.file("missing.json")}, "kgate compare: " + dir.file("missing.json") + ": cannot open: No such file or directory"},
      {{"compare", good, dir.write("empty.json", "")}, "kgate compare: " + dir.file("empty.json") + ": file is empty"},
      {{"compare", good, dir.write("cut.json", R"({"context": {"kgate": {"schema)")},
       "kgate compare: " + dir.file("cut.json") + ": truncated JSON at line 1, column 31 (byte 31): syntax error while parsing object key - invalid string: missing closing quote"},
      {{"compare", good, dir.write("list.json", "[]")}, "kgate compare: " + dir.file("list.json") + ": $: expected a JSON object"},
      {{"compare", good, dir.write("pkg.json", R"({"name": "left-pad"})")},
       "kgate compare: " + dir.file("pkg.json") + ": $: not a benchmark results file"},
      {{"compare", good, dir.write("neg.json", negative.dump())},
       "kgate compare: " + dir.file("neg.json") + ": $.benchmarks[1].kgate.cold.samples_s[3]: time must be positive and finite, got -1"},
      {{"compare", good, dir.write("newer.json", newer.dump())},
       "kgate compare: " + dir.file("newer.json") + ": $.context.kgate.schema_version: schema version 9 is newer"},
      {{"compare", good, h100}, "kgate compare: different GPU models: baseline " + good + " ran on NVIDIA H200, new " + h100 +
                                    " on NVIDIA H100 80GB HBM3"},
      {{"compare", good, good, "--thresholds", thresholds}, "kgate compare: " + thresholds + ": $.familes: unknown field"},
      {{"compare", good}, "kgate compare: one results file given"},
      {{"compare", good, good, good}, "kgate compare: expected BASELINE.json NEW.json, got 3 files"},
      {{"compare", good, good, "--threshold", "five"}, "kgate compare: --threshold: expected a number in [0, 1], got 'five'"},
      {{"compare", good, good, "--threshold", "0"}, "kgate compare: --threshold must be above 0"},
      {{"compare", good, good, "--json"}, "kgate compare: --json needs a value"},
      {{"compare", good, good, "--frobnicate"}, "kgate compare: unknown option --frobnicate"},
      {{"compare", "--baseline-dir", dir.file("baselines"), good}, "kgate compare: " + dir.file("baselines") + "/nvidia-h200/kgate.json: no baseline for NVIDIA H200"},
      {{"compare", "--baseline-dir", dir.path().string(), KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json"},
       "kgate compare: " KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json: $.context.kgate: required field is missing"},
      {{"frobnicate"}, "kgate: unknown command 'frobnicate'"},
      {{}, "kgate: no command given"},
      {{"baseline"}, "kgate baseline: expected an action: update or show"},
      {{"baseline", "update"}, "kgate baseline: baseline update takes one results file, got 0"},
      {{"baseline", "show", "--force"}, "kgate baseline: unknown option --force"},
      {{"merge", good}, "kgate merge: missing -o OUT.json"},
      {{"merge", "-o", dir.file("out.json")}, "kgate merge: no input files"},
      {{"merge", good, h100, "-o", dir.file("out.json")},
       "kgate merge: " + h100 + ": $.context.kgate.gpu.name: ran on NVIDIA H100 80GB HBM3, but " + good + " on NVIDIA H200"},
  };
  for (const Case& c : cases) {
    const Outcome r = kgate_cli(c.args);
    std::string joined;
    for (const std::string& a : c.args) joined += a + " ";
    EXPECT_EQ(r.status, 2) << joined << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << joined << "\n  got:      " << r.err << "\n  expected: " << c.expected;
    if (c.args.size() > 1) {
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << joined << ": not one line:\n" << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(dir.file("out.json")));
}

TEST(KgateCli, HelpForEveryCommand) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"compare", "--help"}, {"baseline", "--help"}, {"baseline", "update", "--help"}, {"merge", "-h"}}) {
    const Outcome r = kgate_cli(args);
    EXPECT_EQ(r.status, 0) << args[0];
    EXPECT_EQ(r.out.rfind("usage: kgate", 0), 0u) << r.out;
    EXPECT_TRUE(r.err.empty());
  }
}

TEST(KgateCli, PlainGoogleBenchmarkIsComparedOnTimeOnly) {
  const syn::TempDir dir;
  json slower = kgate::read_json_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  for (json& row : slower["benchmarks"])
    if (row["name"] == "BM_Copy/4096") row["real_time"] = row["real_time"].get<double>() * 1.5;
  const std::string plain = KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json";
  const auto r = kgate_cli({"compare", plain, dir.write("slower.json", slower.dump()), "--min-change-us", "0"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // BM_Broken failed in the new file too
  EXPECT_NE(r.out.find("time-only comparison: " + plain + " has no kgate block"), std::string::npos) << r.out;
  // Three repetitions a side: a U test cannot reach p < 0.01, so a 50% slowdown is only noisy,
  // and the unchanged benchmark's interval is too wide to call it the same.
  EXPECT_EQ(last_line(r.out).rfind("0 slower, 0 faster, 0 same, 2 noisy, 1 failed", 0), 0u) << r.out;
}

TEST(KgateCli, ReportFiles) {
  const syn::TempDir dir;
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", two_benchmarks(11e-6, 2)),
                            "--min-change-us", "0", "--json", dir.file("v.json"), "--junit", dir.file("j.xml"), "--markdown", dir.file("m.md")});
  EXPECT_EQ(r.status, 1) << r.err;
  const json verdicts = kgate::read_json_file(dir.file("v.json"));
  EXPECT_EQ(verdicts["benchmarks"][0]["verdict"], "slower");
  EXPECT_EQ(verdicts["summary"]["same"], 1);
  const std::string junit = syn::read_text(dir.file("j.xml"));
  EXPECT_NE(junit.find("<failure type=\"regression\""), std::string::npos);
  EXPECT_NE(syn::read_text(dir.file("m.md")).find("**slower**"), std::string::npos);
  // Well-formed XML, by a real parser where one is at hand.
  if (std::system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") == 0) {
    const std::string check = "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + dir.file("j.xml");
    EXPECT_EQ(std::system(check.c_str()), 0) << junit;
  }
}

TEST(KgateCli, ThresholdsFileAndCommandLineDefault) {
  const syn::TempDir dir;
  const std::string a = write_run(dir, "a.json", two_benchmarks(10e-6, 1));
  const std::string b = write_run(dir, "b.json", two_benchmarks(10.7e-6, 2));  // kA 7% slower
  EXPECT_EQ(kgate_cli({"compare", a, b, "--min-change-us", "0"}).status, 1);
  EXPECT_EQ(kgate_cli({"compare", a, b, "--threshold", "0.1", "--min-change-us", "0"}).status, 0);
  // A family entry outranks --threshold, which replaces only the default.
  dir.write("t.json", R"({"schema_version": 1, "default": 0.05, "families": {"rmsnorm": 0.03}})");
  EXPECT_EQ(kgate_cli({"compare", a, b, "--thresholds", dir.file("t.json"), "--threshold", "0.1", "--min-change-us", "0"}).status, 1);
  // DIR/thresholds.json is read by default.
  fs::create_directories(dir.file("baselines"));
  dir.write("baselines/thresholds.json", R"({"families": {"rmsnorm": 0.1}})");
  EXPECT_EQ(kgate_cli({"compare", a, b, "--baseline-dir", dir.file("baselines")}).status, 0);
}

TEST(KgateCli, BaselineUpdateShowAndCompare) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  // A first run records both benchmarks; the slug comes from the GPU name.
  RunResults first = two_benchmarks(10e-6, 1);
  first.context.gpu_name = "NVIDIA H100 80GB HBM3";
  first.context.git_commit = "1111111";
  auto r = kgate_cli({"baseline", "update", write_run(dir, "first.json", first), "--baseline-dir", baselines});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string file = baselines + "/nvidia-h100-80gb-hbm3/kgate.json";
  EXPECT_EQ(r.out, "wrote " + file + ": 0 updated, 2 added, 0 kept\n");

  // A second run with only kA updates it and keeps kB.
  RunResults second = syn::run({syn::benchmark(kA, {.median_s = 9e-6, .seed = 5})}, "NVIDIA H100 80GB HBM3");
  second.context.git_commit = "2222222";
  r = kgate_cli({"baseline", "update", write_run(dir, "second.json", second), "--baseline-dir", baselines});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + file + ": 1 updated, 0 added, 1 kept\n");
  const RunResults stored = kgate::read_results_file(file);
  ASSERT_EQ(stored.benchmarks.size(), 2u);
  EXPECT_EQ(stored.benchmarks[0].name, kA);
  EXPECT_EQ(stored.benchmarks[0].provenance.at("commit"), "2222222");
  EXPECT_EQ(stored.benchmarks[0].provenance.at("sm_clock_mhz"), "1980");
  EXPECT_EQ(stored.benchmarks[0].provenance.at("driver_version"), "13.0");
  EXPECT_EQ(stored.benchmarks[1].provenance.at("commit"), "1111111");
  EXPECT_DOUBLE_EQ(stored.benchmarks[0].headline_median_s(), second.benchmarks[0].headline_median_s());

  // Shown, per GPU and per entry.
  r = kgate_cli({"baseline", "show", "--baseline-dir", baselines});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("nvidia-h100-80gb-hbm3/kgate.json  NVIDIA H100 80GB HBM3  2 benchmarks"), std::string::npos) << r.out;
  r = kgate_cli({"baseline", "show", "--baseline-dir", baselines, "nvidia-h100-80gb-hbm3"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2222222"), std::string::npos) << r.out;
  r = kgate_cli({"baseline", "show", "--baseline-dir", baselines, "nvidia-b200"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no baselines for GPU 'nvidia-b200' (have: nvidia-h100-80gb-hbm3)"), std::string::npos) << r.err;

  // compare --baseline-dir finds it from the new run's GPU and suite.
  RunResults next = two_benchmarks(9e-6, 9);
  next.context.gpu_name = "NVIDIA H100 80GB HBM3";
  r = kgate_cli({"compare", "--baseline-dir", baselines, write_run(dir, "next.json", next)});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out).rfind("0 slower, 0 faster, 2 same, 0 noisy", 0), 0u) << r.out;
}

TEST(KgateCli, BaselineFoldersAreNamedByGpuSlug) {
  EXPECT_EQ(kgate::gpu_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(kgate::gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(kgate::gpu_slug("NVIDIA A100-SXM4-40GB"), "nvidia-a100-sxm4-40gb");
  RunResults run = two_benchmarks(10e-6, 1);
  run.context.gpu_name = "NVIDIA A100-SXM4-40GB";
  run.context.suite = "nightly";
  EXPECT_EQ(kgate::cli::baseline_file_for("baselines", run, "run.json", std::nullopt), "baselines/nvidia-a100-sxm4-40gb/nightly.json");
  EXPECT_EQ(kgate::cli::baseline_file_for("b", run, "run.json", "smoke"), "b/nvidia-a100-sxm4-40gb/smoke.json");
  EXPECT_THROW((void)kgate::cli::baseline_file_for("b", run, "run.json", "../escape"), kgate::cli::UsageError);
}

TEST(KgateCli, BaselineUpdateRefusesUnfitRunsUnlessForced) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  RunResults run = syn::run({syn::benchmark(kA, {}), syn::benchmark(kB, {}), syn::benchmark("rmsnorm/c/m:1/bf16", {}),
                             syn::benchmark("rmsnorm/d/m:1/bf16", {})});
  run.benchmarks[1].status = kgate::BenchmarkStatus::failed;
  run.benchmarks[1].error = "launch failed";
  run.benchmarks[1].cold.reset();
  run.benchmarks[2].cold->target_met = false;
  run.benchmarks[2].cold->stop_reason = "time-cap";
  run.benchmarks[3].cold->throttled_samples = 4;
  const std::string path = write_run(dir, "run.json", run);

  auto r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("refused, 3 benchmark(s) unfit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kB + ": failed: launch failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rmsnorm/c/m:1/bf16: stopping target not met in the cold mode"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped by time-cap"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rmsnorm/d/m:1/bf16: 4 throttled samples in the cold mode"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(baselines));

  r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines, "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("0 updated, 3 added, 0 kept"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not recorded: " + kB), std::string::npos) << r.out;
  const RunResults stored = kgate::read_results_file(baselines + "/nvidia-h200/kgate.json");
  EXPECT_EQ(stored.benchmarks.size(), 3u);
  for (const BenchmarkRecord& b : stored.benchmarks) EXPECT_NE(b.name, kB);
}

TEST(KgateCli, MergeShards) {
  const syn::TempDir dir;
  const std::string a = write_run(dir, "shard0.json", syn::run({syn::benchmark(kA, {.samples = 20, .seed = 1})}));
  const std::string b = write_run(dir, "shard1.json", syn::run({syn::benchmark(kB, {.seed = 2})}));
  // A repetition: kA measured again, successfully, on another shard.
  const std::string c = write_run(dir, "shard2.json", syn::run({syn::benchmark(kA, {.samples = 30, .seed = 3})}));
  auto r = kgate_cli({"merge", a, b, c, "-o", dir.file("merged.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "merged 3 file(s) into " + dir.file("merged.json") + ": 2 benchmarks (1 repetition(s) pooled)\n");
  const RunResults merged = kgate::read_results_file(dir.file("merged.json"));
  ASSERT_EQ(merged.benchmarks.size(), 2u);
  EXPECT_EQ(merged.benchmarks[0].cold->samples_s.size(), 50u);
  EXPECT_EQ(merged.benchmarks[0].cold->summary.count, 50u);
  EXPECT_NEAR(merged.benchmarks[0].bytes_per_s, merged.benchmarks[0].min_bytes / merged.benchmarks[0].headline_median_s(), 1);
  EXPECT_EQ(merged.context.extra.at("source:" + kA), a + " " + c);
  EXPECT_EQ(merged.context.extra.at("source:" + kB), b);
  EXPECT_EQ(merged.context.extra.at("merged_from"), a + " " + b + " " + c);

  // The same name, once failed: not a repetition.
  RunResults failed = syn::run({syn::benchmark(kA, {})});
  failed.benchmarks[0].status = kgate::BenchmarkStatus::failed;
  const std::string f = write_run(dir, "failed.json", failed);
  r = kgate_cli({"merge", a, f, "-o", dir.file("bad.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("kgate merge: " + f + ": $.benchmarks[0]: duplicate benchmark \"" + kA + "\", also in " + a, 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("bad.json")));

  // Plain Google Benchmark JSON is not a shard of a kgate run.
  r = kgate_cli({"merge", a, KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json", "-o", dir.file("bad.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("$.context.kgate: required field is missing"), std::string::npos) << r.err;
}

}  // namespace
