// nvbench's --json output read as a run (kgate/results/nvbench_results.hpp) and gated by kgate compare,
// report and baseline update. The documents are synthetic, written here in nvbench's format
// (nvbench/json_printer.cu: meta, devices, benchmarks[].states[].summaries, --jsonbin sample files
// of little-endian float32 beside the JSON file); recorded ones come from the GPU machine.
#include "kgate/results/nvbench_results.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
namespace syn = kgate::synthetic;
using kgate::cli_test::kgate_cli;
using nlohmann::json;

constexpr double kDefaultClockHz = 1.98e9;
constexpr double kNoise = 0.003;  // relative, within nvbench's default 0.5% noise target

struct State {
  long long elements;
  double median_s;
  double clock_hz = kDefaultClockHz;
  bool skipped = false;
};

json named_value(const std::string& name, const std::string& type, const std::string& value) {
  return {{"name", name}, {"type", type}, {"value", value}};
}

json summary(const std::string& tag, const std::string& hint, std::vector<json> data) {
  return {{"tag", tag}, {"name", tag}, {"hint", hint}, {"description", "synthetic"}, {"data", std::move(data)}};
}

json float_summary(const std::string& tag, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return summary(tag, "duration", {named_value("value", "float64", text)});
}

// Writes count float32 values as nvbench --jsonbin does; returns the name relative to the JSON's directory.
std::string write_bin(const fs::path& json_path, const std::string& suffix, std::size_t id, const std::vector<double>& values) {
  const std::string folder = json_path.filename().string() + suffix;
  fs::create_directories(json_path.parent_path() / folder);
  const std::string relative = folder + "/" + std::to_string(id) + ".bin";
  std::ofstream out(json_path.parent_path() / relative, std::ios::binary);
  for (const double v : values) {
    const float f = static_cast<float>(v);
    std::uint32_t word;
    std::memcpy(&word, &f, sizeof word);
    for (int b = 0; b < 4; ++b) out.put(static_cast<char>((word >> (8 * b)) & 0xff));  // little-endian
  }
  return relative;
}

// A synthetic nvbench document: benchmark "copy" over an Elements axis and a type axis T=F32, one
// state per entry, 200 cold samples each around its median (kNoise); with `jsonbin` the samples
// and their SM clocks go to sample files, otherwise only nvbench's summaries are written.
std::string write_nvbench(const syn::TempDir& dir, const std::string& name, const std::vector<State>& states, bool jsonbin,
                          std::uint64_t seed) {
  const fs::path path = dir.file(name);
  json states_json = json::array();
  std::size_t file_id = 0;
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> noise(0.0, kNoise);
  for (const State& s : states) {
    json state = {{"name", "Device=0 T=F32 Elements=" + std::to_string(s.elements)},
                  {"min_samples", 10},
                  {"cold_warmup_runs", 1},
                  {"cold_max_warmup_walltime", 5.0},
                  {"batch_target_time", 0.5},
                  {"skip_time", -1.0},
                  {"timeout", 15.0},
                  {"device", 0},
                  {"type_config_index", 0},
                  {"axis_values", {named_value("T", "string", "F32"), named_value("Elements", "int64", std::to_string(s.elements))}}};
    json summaries = json::array();
    if (!s.skipped) {
      std::vector<double> times, clocks;
      for (int i = 0; i < 200; ++i) {
        times.push_back(s.median_s * (1 + noise(engine)));
        clocks.push_back(s.clock_hz * (1 + 0.001 * noise(engine)));
      }
      const kgate::SampleSummary stats = kgate::summarize(times);
      summaries.push_back(summary("nv/cold/sample_size", "sample_size", {named_value("value", "int64", "200")}));
      summaries.push_back(float_summary("nv/cold/time/gpu/mean", stats.mean));
      summaries.push_back(float_summary("nv/cold/time/gpu/median", stats.median));
      summaries.push_back(float_summary("nv/cold/time/gpu/min", stats.min));
      summaries.push_back(float_summary("nv/cold/time/gpu/max", stats.max));
      summaries.push_back(float_summary("nv/cold/time/gpu/stdev/relative", stats.rel_stddev()));
      summaries.push_back(float_summary("nv/cold/sm_clock_rate/mean", s.clock_hz));
      summaries.push_back(float_summary("nv/cold/walltime", 0.5));
      summaries.push_back(float_summary("nv/cold/bw/global/bytes_per_second", 8.0 * s.elements / stats.mean));
      if (jsonbin) {
        summaries.push_back(
            summary("nv/json/bin:nv/cold/sample_times", "file/sample_times",
                    {named_value("filename", "string", write_bin(path, "-bin", file_id, times)), named_value("size", "int64", "200")}));
        summaries.push_back(summary("nv/json/freqs-bin:nv/cold/sample_freqs", "file/sample_freqs",
                                    {named_value("filename", "string", write_bin(path, "-freqs-bin", file_id, clocks)),
                                     named_value("size", "int64", "200")}));
        ++file_id;
      }
    }
    state["summaries"] = summaries;
    state["is_skipped"] = s.skipped;
    if (s.skipped) state["skip_reason"] = "Warmup time did not meet skip_time limit";
    states_json.push_back(state);
  }
  const json doc = {{"meta",
                     {{"argv", {"./build/copy_bench", "--json", name}},
                      {"version",
                       {{"json", {{"major", 1}, {"minor", 0}, {"patch", 0}, {"string", "1.0.0"}}},
                        {"nvbench",
                         {{"major", 0},
                          {"minor", 3},
                          {"patch", 0},
                          {"string", "0.3.0"},
                          {"git_branch", ""},
                          {"git_sha", ""},
                          {"git_version", ""},
                          {"git_is_dirty", false}}}}}}},
                    {"devices",
                     {{{"id", 0},
                       {"name", "NVIDIA H100 80GB HBM3"},
                       {"sm_version", 900},
                       {"ptx_version", 900},
                       {"sm_default_clock_rate", 1980000000},
                       {"number_of_sms", 132},
                       {"max_blocks_per_sm", 32},
                       {"max_threads_per_sm", 2048},
                       {"max_threads_per_block", 1024},
                       {"registers_per_sm", 65536},
                       {"registers_per_block", 65536},
                       {"global_memory_size", 84934656000},
                       {"global_memory_bus_peak_clock_rate", 2619000000},
                       {"global_memory_bus_width", 5120},
                       {"global_memory_bus_bandwidth", 3352320000000},
                       {"l2_cache_size", 52428800},
                       {"shared_memory_per_sm", 233472},
                       {"shared_memory_per_block", 49152},
                       {"ecc_state", true}}}},
                    {"benchmarks",
                     {{{"name", "copy"},
                       {"index", 0},
                       {"min_samples", 10},
                       {"skip_time", -1.0},
                       {"timeout", 15.0},
                       {"devices", {0}},
                       {"axes",
                        {{{"name", "T"},
                          {"type", "type"},
                          {"flags", ""},
                          {"values", {{{"input_string", "F32"}, {"description", "float"}, {"is_active", true}}}}},
                         {{"name", "Elements"}, {"type", "int64"}, {"flags", "pow2"}, {"values", json::array()}}}},
                       {"states", states_json}}}}};
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

const std::vector<State> kTwoSizes = {{1 << 20, 20e-6}, {1 << 24, 200e-6}};

TEST(NvbenchResults, EachStateIsABenchmarkWithItsSamplesAndClock) {
  const syn::TempDir dir;
  const kgate::RunResults run = kgate::read_results_file(write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, true, 1));
  EXPECT_FALSE(run.has_kgate_block);
  EXPECT_EQ(run.context.gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(run.context.compute_capability, 90);
  EXPECT_DOUBLE_EQ(run.context.sm_clock_mhz_default, 1980);
  EXPECT_EQ(run.context.suite, "nvbench");  // not the executable's name: renaming it keeps the baseline
  ASSERT_EQ(run.benchmarks.size(), 2u);
  const kgate::BenchmarkRecord& r = run.benchmarks[0];
  EXPECT_EQ(r.name, "copy/T:F32/Elements:1048576");
  EXPECT_EQ(r.family, "copy");
  EXPECT_EQ(r.shape, "T:F32/Elements:1048576");
  ASSERT_TRUE(r.cold.has_value());
  EXPECT_EQ(r.cold->samples_s.size(), 200u);
  EXPECT_NEAR(r.cold->summary.median, 20e-6, 0.2e-6);
  EXPECT_NEAR(r.cold->sm_clock_mhz, 1980, 5);
  EXPECT_GT(r.bytes_per_s, 0);
  EXPECT_NE(run.source_note.find("--jsonbin sample files"), std::string::npos) << run.source_note;
}

TEST(NvbenchResults, SummariesAloneGiveOneFigureAndSaySo) {
  const syn::TempDir dir;
  const kgate::RunResults run = kgate::read_results_file(write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, false, 1));
  ASSERT_EQ(run.benchmarks.size(), 2u);
  const kgate::TimingRecord& t = *run.benchmarks[1].cold;
  ASSERT_EQ(t.samples_s.size(), 1u);
  EXPECT_NEAR(t.samples_s[0], 200e-6, 5e-6);
  EXPECT_EQ(t.summary.count, 200u);
  EXPECT_NEAR(t.summary.rel_stddev(), kNoise, 0.001);
  EXPECT_TRUE(t.target_met);
  EXPECT_NEAR(t.sm_clock_mhz, 1980, 1e-6);  // the mean clock summary
  EXPECT_EQ(run.source_note.rfind("time-only, low-confidence comparison: 2 of 2", 0), 0u) << run.source_note;
}

TEST(NvbenchResults, SkippedStatesAndBadFilesAreReported) {
  const syn::TempDir dir;
  const std::string path = write_nvbench(dir, "synthetic-nvbench-a.json", {{1024, 5e-6, kDefaultClockHz, true}, {2048, 5e-6}}, true, 1);
  const kgate::RunResults run = kgate::read_results_file(path);
  EXPECT_EQ(run.benchmarks[0].status, kgate::BenchmarkStatus::skipped);
  EXPECT_EQ(run.benchmarks[0].error, "Warmup time did not meet skip_time limit");
  EXPECT_EQ(run.benchmarks[1].status, kgate::BenchmarkStatus::ok);

  // The sample files travel with the JSON file; without them kgate says which one is missing.
  fs::remove_all(dir.file("synthetic-nvbench-a.json-bin"));
  try {
    kgate::read_results_file(path);
    FAIL() << "expected a ResultsError";
  } catch (const kgate::ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("$.benchmarks[0].states[1].summaries[9]: cannot open the sample file"), std::string::npos)
        << e.what();
  }
  json doc = kgate::read_json_file(path);
  doc["meta"]["version"]["json"]["major"] = 2;
  EXPECT_THROW(kgate::parse_results(doc, path), kgate::ResultsError);
}

TEST(NvbenchResults, CompareGatesSameBuildAndPlantedSlowdown) {
  const syn::TempDir dir;
  const std::string a = write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, true, 1);
  const std::string b = write_nvbench(dir, "synthetic-nvbench-b.json", kTwoSizes, true, 2);
  auto r = kgate_cli({"compare", a, b});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("--jsonbin sample files"), std::string::npos) << r.err;  // notes go to stderr, before the table

  const std::string slow = write_nvbench(dir, "synthetic-nvbench-slow.json", {{1 << 20, 20e-6}, {1 << 24, 230e-6}}, true, 3);
  r = kgate_cli({"compare", a, slow});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("copy/T:F32/Elements:16777216"), std::string::npos) << r.out;

  // 15% slower at a 15% lower clock is the same number of cycles: not a regression.
  const std::string throttled =
      write_nvbench(dir, "synthetic-nvbench-throttled.json", {{1 << 20, 20e-6}, {1 << 24, 230e-6, kDefaultClockHz / 1.15}}, true, 4);
  r = kgate_cli({"compare", a, throttled});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(NvbenchResults, SummaryOnlyComparisonIsTimeOnlyAndLowConfidence) {
  const syn::TempDir dir;
  const std::string a = write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, false, 1);
  const std::string b = write_nvbench(dir, "synthetic-nvbench-b.json", kTwoSizes, false, 2);
  auto r = kgate_cli({"compare", a, b});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("time-only, low-confidence comparison"), std::string::npos) << r.err;  // said before the table
  // One figure a side: a 30% slowdown is beyond the threshold but untested, so noisy, not slower.
  const std::string slow = write_nvbench(dir, "synthetic-nvbench-slow.json", {{1 << 20, 20e-6}, {1 << 24, 260e-6}}, false, 3);
  r = kgate_cli({"compare", a, slow});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("noisy"), std::string::npos) << r.out;
}

TEST(NvbenchResults, BaselineUpdateAndReportTakeNvbenchRuns) {
  const syn::TempDir dir;
  const std::string a = write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, true, 1);
  auto r = kgate_cli({"baseline", "update", a, "--baseline-dir", dir.file("baselines")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string stored = dir.file("baselines/nvidia-h100-80gb-hbm3/nvbench.json");
  ASSERT_TRUE(fs::exists(stored)) << r.out;
  EXPECT_EQ(kgate::read_results_file(stored).benchmarks.size(), 2u);

  const std::string b = write_nvbench(dir, "synthetic-nvbench-b.json", kTwoSizes, true, 2);
  r = kgate_cli({"compare", "--baseline-dir", dir.file("baselines"), b});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = kgate_cli({"report", b, "--baseline-dir", dir.file("baselines"), "--format", "text"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("copy/T:F32/Elements:16777216"), std::string::npos) << r.out;
}

// Real nvbench output from a GPU (scripts/record-nvbench.sh), unpacked into `dir`: two runs of one
// build, one of the build with a planted slowdown (a sixth more memory traffic), one without sample
// files. False when the archive is not there.
bool unpack_recorded_nvbench(const syn::TempDir& dir) {
  const std::string archive = KGATE_TEST_DATA_DIR "/recorded-nvbench.tar.gz";
  if (!fs::exists(archive)) return false;
  EXPECT_EQ(std::system(("tar -xzf '" + archive + "' -C '" + dir.path().string() + "'").c_str()), 0);
  return true;
}

TEST(NvbenchResults, RecordedRunsAreGated) {
  const syn::TempDir dir;
  if (!unpack_recorded_nvbench(dir)) GTEST_SKIP() << "no recorded nvbench runs: scripts/record-nvbench.sh on a GPU writes them";
  const kgate::RunResults a = kgate::read_results_file(dir.file("recorded-nvbench-run-a.json"));
  ASSERT_FALSE(a.benchmarks.empty());
  for (const kgate::BenchmarkRecord& r : a.benchmarks) {
    EXPECT_EQ(r.name.rfind("scale_add/Elements:", 0), 0u) << r.name;
    ASSERT_TRUE(r.cold.has_value()) << r.name;
    EXPECT_GT(r.cold->samples_s.size(), 10u) << r.name;
    EXPECT_GT(r.cold->sm_clock_mhz, 0) << r.name;
  }
  auto r = kgate_cli({"compare", dir.file("recorded-nvbench-run-a.json"), dir.file("recorded-nvbench-run-b.json")});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = kgate_cli({"compare", dir.file("recorded-nvbench-run-a.json"), dir.file("recorded-nvbench-slow.json")});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("slower"), std::string::npos) << r.out;
  r = kgate_cli({"compare", dir.file("recorded-nvbench-summaries.json"), dir.file("recorded-nvbench-run-b.json")});
  EXPECT_NE(r.err.find("time-only, low-confidence comparison"), std::string::npos) << r.err;
}

// kgate ab of two commands that stand for an nvbench binary run with --jsonbin "$KGATE_OUT": each
// round writes a recorded run and its sample files beside KGATE_OUT, where nvbench writes them.
TEST(NvbenchResults, KgateAbReadsWhatACommandWroteWithNvbench) {
  const syn::TempDir dir;
  if (!unpack_recorded_nvbench(dir)) GTEST_SKIP() << "no recorded nvbench runs: scripts/record-nvbench.sh on a GPU writes them";
  const auto nvbench_run = [&](const std::string& run) {
    const std::string file = dir.file("recorded-nvbench-" + run + ".json");
    return "cp -R '" + file + "-bin' '" + file + "-freqs-bin' \"$(dirname \"$KGATE_OUT\")\" && cp '" + file + "' \"$KGATE_OUT\"";
  };
  auto r = kgate_cli({"ab", "--base-cmd", nvbench_run("run-a"), "--head-cmd", nvbench_run("run-b"), "--rounds", "2"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\n0 slower, 0 faster"), std::string::npos) << r.out;
  r = kgate_cli({"ab", "--base-cmd", nvbench_run("run-a"), "--head-cmd", nvbench_run("slow"), "--rounds", "2"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("slower"), std::string::npos) << r.out;
}

// The same document as if another executable had written it (nvbench's meta.argv).
std::string renamed_executable(const syn::TempDir& dir, const std::string& path, const std::string& executable) {
  json doc = kgate::read_json_file(path);
  doc["meta"]["argv"][0] = executable;
  return dir.write(fs::path(path).filename().string(), doc.dump());
}

TEST(NvbenchResults, SuiteIsStableAndCanBeNamed) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  const std::string a = write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, true, 1);
  ASSERT_EQ(kgate_cli({"baseline", "update", a, "--baseline-dir", baselines}).status, 0);
  // A renamed binary still finds its baseline: a planted slowdown is caught, not "no baseline".
  const std::string slow =
      renamed_executable(dir, write_nvbench(dir, "synthetic-nvbench-slow.json", {{1 << 20, 20e-6}, {1 << 24, 230e-6}}, true, 3),
                         "./build/copy_bench_v2");
  auto r = kgate_cli({"compare", "--baseline-dir", baselines, slow});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("copy/T:F32/Elements:16777216"), std::string::npos) << r.out;

  // --suite files a run under a name of its own, in the stored file's context too.
  ASSERT_EQ(kgate_cli({"baseline", "update", a, "--baseline-dir", baselines, "--suite", "copies"}).status, 0);
  const std::string named = dir.file("baselines/nvidia-h100-80gb-hbm3/copies.json");
  EXPECT_EQ(kgate::read_results_file(named).context.suite, "copies");
  fs::remove(dir.file("baselines/nvidia-h100-80gb-hbm3/nvbench.json"));
  const std::string b = write_nvbench(dir, "synthetic-nvbench-b.json", kTwoSizes, true, 2);
  r = kgate_cli({"compare", "--baseline-dir", baselines, "--suite", "copies", b});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = kgate_cli({"report", b, "--baseline-dir", baselines, "--suite", "copies", "--format", "text"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = kgate_cli({"report", b, "--baseline-dir", baselines, "--format", "text"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("nvbench.json: no baseline"), std::string::npos) << r.err;
  r = kgate_cli({"report", b, "--baseline-dir", baselines, "--suite", "../up", "--format", "text"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("suite name '../up' is not a plain file name"), std::string::npos) << r.err;
}

// The one file format that can never gate: summaries without samples (nvbench --json without --jsonbin).
TEST(NvbenchResults, BaselineUpdateRefusesWhatCanNeverGate) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  const std::string summaries = write_nvbench(dir, "synthetic-nvbench-summaries.json", kTwoSizes, false, 1);
  for (const bool force : {false, true}) {
    std::vector<std::string> args = {"baseline", "update", summaries, "--baseline-dir", baselines};
    if (force) args.push_back("--force");
    const auto r = kgate_cli(args);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("refused: it can never gate: each of its 2 benchmark(s) has one sample"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nvbench wrote only its summary of 200 samples: run it with --jsonbin FILE"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(baselines)) << "nothing may be written";
  }

  // One state without its samples among others: refused naming it; --force records the others.
  const std::string a = write_nvbench(dir, "synthetic-nvbench-a.json", kTwoSizes, true, 1);
  json doc = kgate::read_json_file(a);
  json summaries_kept = json::array();
  for (const json& s : doc["benchmarks"][0]["states"][0]["summaries"])
    if (s["tag"].get<std::string>().rfind("nv/json/", 0) != 0) summaries_kept.push_back(s);
  doc["benchmarks"][0]["states"][0]["summaries"] = summaries_kept;
  const std::string mixed = dir.write("synthetic-nvbench-mixed.json", doc.dump());
  auto r = kgate_cli({"baseline", "update", mixed, "--baseline-dir", baselines});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("copy/T:F32/Elements:1048576: one sample, so no comparison against it can be significant"), std::string::npos)
      << r.err;
  r = kgate_cli({"baseline", "update", mixed, "--baseline-dir", baselines, "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1 added"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not recorded: copy/T:F32/Elements:1048576 (one sample"), std::string::npos) << r.out;
}

// The recorded nvbench files through every command: a baseline that survives the planted build's
// other executable name, the summaries-only file refused as a baseline, and the history.
TEST(NvbenchResults, RecordedRunsGoAllTheWayThrough) {
  const syn::TempDir dir;
  if (!unpack_recorded_nvbench(dir)) GTEST_SKIP() << "no recorded nvbench runs: scripts/record-nvbench.sh on a GPU writes them";
  const std::string baselines = dir.file("baselines"), db = dir.file("history.sqlite");
  const auto file = [&](const std::string& run) { return dir.file("recorded-nvbench-" + run + ".json"); };
  auto r = kgate_cli({"baseline", "update", file("run-a"), "--baseline-dir", baselines});
  ASSERT_EQ(r.status, 0) << r.err;
  // scale_add_slow, the planted build, against scale_add_same's baseline.
  r = kgate_cli({"compare", "--baseline-dir", baselines, file("slow")});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  r = kgate_cli({"baseline", "update", file("summaries"), "--baseline-dir", dir.file("other-baselines")});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("it can never gate"), std::string::npos) << r.err;

  r = kgate_cli({"history", "add", "--db", db, file("run-a")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("records no commit (nvbench and plain Google Benchmark JSON do not"), std::string::npos) << r.err;
  r = kgate_cli({"history", "add", "--db", db, file("run-a"), "--commit", "1a2b3c4d"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("records no date to order the run by (nvbench JSON does not): give --date"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db)) << "a refused file adds nothing";
  const std::vector<std::pair<std::string, std::string>> nights = {{"run-a", "2026-11-20T02:00:00Z"},
                                                                   {"run-b", "2026-11-21T03:00:00+01:00"},
                                                                   {"slow", "2026-11-22"}};
  for (std::size_t i = 0; i < nights.size(); ++i) {
    r = kgate_cli({"history", "add", "--db", db, file(nights[i].first), "--commit", std::string(7, static_cast<char>('a' + i)), "--date",
                   nights[i].second});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("on nvidia-h100-80gb-hbm3"), std::string::npos) << r.out;
  }
  r = kgate_cli({"history", "show", "scale_add/Elements:1048576", "--db", db});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(cold, 3 runs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2026-11-21 bbbbbbb"), std::string::npos) << r.out;  // 03:00 at +01:00 is 02:00 UTC, the same day
}

}  // namespace
