// The results file: its Google Benchmark shape, the round trip through it, plain Google Benchmark
// input, attaching kgate blocks to Google Benchmark's own output, and every way a file can be bad.
#include "kgate/results/results_io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#include <zlib.h>

#include "tests/synthetic_results.hpp"
#include "tests/thrown.hpp"

namespace {

using kgate::BenchmarkStatus;
using kgate::ResultsError;
using kgate::RunResults;
using nlohmann::json;
namespace syn = kgate::synthetic;

RunResults sample_run() {
  kgate::BenchmarkRecord full = syn::benchmark("rmsnorm/vectorized/m:4096/n:4096/bf16", {.median_s = 20e-6});
  full.hot = syn::timing({.median_s = 18e-6, .samples = 30, .clock_mhz = 1965, .seed = 7});
  full.hot->launches_per_sample = 100;
  full.hot->throttled_samples = 2;
  full.hot->power_limited_samples = 5;
  full.hot->rested = true;
  full.cold->input_copies = 8;
  full.cold->repetition_medians_s = {20.1e-6, 19.8e-6, 20.4e-6};
  full.cold->timer = "cupti";
  full.cold->event_median_s = 22.4e-6;
  full.cold->busy_median_s = 19.9e-6;
  full.cold->min_detectable_change = 0.0125;
  full.kernels.push_back({.name = "_Z7rmsnormPKfPf",
                          .demangled = "void rmsnorm<256>(float const*, float*)",
                          .grid = {4096, 1, 1},
                          .block = {256, 1, 1},
                          .registers_per_thread = 40,
                          .static_shared_bytes = 1024,
                          .dynamic_shared_bytes = 0,
                          .duration_s = 19e-6,
                          .launches = 1});
  full.metrics = {{"dram__bytes_read.sum", 6.7e7}, {"sm__warps_active.avg.pct_of_peak_sustained_active", 61.5}};
  full.provenance = {{"commit", "abc"}, {"date", "2026-11-20"}};
  full.follows = "naive";

  kgate::BenchmarkRecord failed = syn::benchmark("rmsnorm/broken/m:1/n:8/bf16", {});
  failed.status = BenchmarkStatus::failed;
  failed.error = "an illegal memory access was encountered";
  failed.cold.reset();
  failed.correct.reset();

  kgate::BenchmarkRecord wrong = syn::benchmark("fused_add_rmsnorm/fast/m:1/n:8192/bf16", {.median_s = 3e-6});
  wrong.correct = false;
  wrong.correctness_detail = "rel_l2 0.5 > 0.01";
  wrong.headline_mode = "hot";
  wrong.hot = syn::timing({.median_s = 2.5e-6, .seed = 9});

  RunResults run = syn::run({full, failed, wrong});
  run.context.calibration.timer_resolution_s = 32e-9;
  run.context.extra = {{"shard", "1/2"}};
  run.context.git_dirty = true;
  return run;
}

TEST(ResultsIo, RoundTripKeepsEveryField) {
  const RunResults original = sample_run();
  const RunResults back = kgate::parse_results(kgate::to_json(original), "round-trip");
  EXPECT_TRUE(back.has_kgate_block);
  const kgate::RunContext& c = back.context;
  EXPECT_EQ(c.gpu_name, "NVIDIA H200");
  EXPECT_EQ(c.sm_count, 132);
  EXPECT_EQ(c.l2_bytes, 50 << 20);
  EXPECT_EQ(c.driver_version, 13000);
  EXPECT_DOUBLE_EQ(c.calibration.gemm_flops_per_s, 700e12);
  EXPECT_EQ(c.git_commit, original.context.git_commit);
  EXPECT_TRUE(c.git_dirty);
  EXPECT_EQ(c.extra.at("shard"), "1/2");
  EXPECT_EQ(c.date, "2026-11-21T12:00:00Z");

  ASSERT_EQ(back.benchmarks.size(), 3u);
  const kgate::BenchmarkRecord& a = back.benchmarks[0];
  const kgate::BenchmarkRecord& o = original.benchmarks[0];
  EXPECT_EQ(a.name, o.name);
  EXPECT_EQ(a.family, "rmsnorm");
  EXPECT_EQ(a.variant, "vectorized");
  EXPECT_EQ(a.shape, "m:4096/n:4096/bf16");
  EXPECT_EQ(a.cold->samples_s, o.cold->samples_s);  // bit-exact: samples are single precision, written in full
  EXPECT_DOUBLE_EQ(a.headline_median_s(), o.headline_median_s());
  EXPECT_EQ(a.hot->launches_per_sample, 100);
  EXPECT_EQ(a.hot->throttled_samples, 2);
  EXPECT_EQ(a.hot->power_limited_samples, 5);
  EXPECT_TRUE(a.hot->rested);
  EXPECT_FALSE(a.cold->rested);
  EXPECT_EQ(a.cold->input_copies, 8);
  EXPECT_EQ(a.hot->input_copies, 1);
  EXPECT_EQ(a.cold->repetition_medians_s, o.cold->repetition_medians_s);
  EXPECT_EQ(a.cold->stop_reason, "target-met");
  EXPECT_EQ(a.cold->timer, "cupti");
  EXPECT_DOUBLE_EQ(a.cold->event_median_s, 22.4e-6);
  EXPECT_DOUBLE_EQ(a.cold->busy_median_s, 19.9e-6);
  EXPECT_DOUBLE_EQ(a.cold->min_detectable_change, 0.0125);
  EXPECT_EQ(a.hot->timer, "events");  // the default, written out
  EXPECT_EQ(a.hot->min_detectable_change, 0);
  EXPECT_DOUBLE_EQ(c.calibration.timer_resolution_s, 32e-9);
  EXPECT_DOUBLE_EQ(a.hot->sm_clock_mhz, 1965);
  EXPECT_EQ(a.roofline, kgate::RooflineClass::memory_bound);
  EXPECT_DOUBLE_EQ(a.bytes_per_s, o.bytes_per_s);
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].demangled, "void rmsnorm<256>(float const*, float*)");
  EXPECT_EQ(a.kernels[0].grid[0], 4096);
  EXPECT_EQ(a.kernels[0].registers_per_thread, 40);
  EXPECT_EQ(a.metrics, o.metrics);
  EXPECT_EQ(a.provenance, o.provenance);
  EXPECT_EQ(a.follows, "naive");
  EXPECT_EQ(back.benchmarks[1].follows, "");  // written only where there is one
  EXPECT_EQ(a.correct, std::optional<bool>(true));

  EXPECT_EQ(back.benchmarks[1].status, BenchmarkStatus::failed);
  EXPECT_EQ(back.benchmarks[1].error, "an illegal memory access was encountered");
  EXPECT_FALSE(back.benchmarks[1].correct.has_value());
  EXPECT_EQ(back.benchmarks[2].correct, std::optional<bool>(false));
  EXPECT_EQ(back.benchmarks[2].headline_mode, "hot");
}

// The harness's wall time per phase is an object of its own, context.kgate.wall_s, written only
// when there is one.
TEST(ResultsIo, WallTimePhasesRoundTripAsAnObject) {
  RunResults run = sample_run();
  EXPECT_FALSE(kgate::to_json(run)["context"]["kgate"].contains("wall_s"));
  run.context.wall_s = {{"startup", 2.25}, {"timing", 94.277878}, {"timing.cold", 49.765415}, {"counters", 0}};
  const json doc = kgate::to_json(run);
  EXPECT_EQ(doc["context"]["kgate"]["wall_s"],
            json({{"startup", 2.25}, {"timing", 94.277878}, {"timing.cold", 49.765415}, {"counters", 0}}));
  EXPECT_EQ(kgate::parse_results(doc, "round-trip").context.wall_s, run.context.wall_s);
}

// The wall time of the job that made the run (kgate job-time) is a list in the job's order, written
// only when there is one; a phase's name is checked, and named once.
TEST(ResultsIo, JobPhasesRoundTripInTheJobsOrder) {
  RunResults run = sample_run();
  EXPECT_FALSE(kgate::to_json(run)["context"]["kgate"].contains("job_s"));
  run.context.job_s = {{"build", 61.5}, {"correctness", 21}, {"suite", 105}, {"peers", 7}};
  json doc = kgate::to_json(run);
  EXPECT_EQ(doc["context"]["kgate"]["job_s"][1], json({{"phase", "correctness"}, {"seconds", 21}}));
  EXPECT_EQ(kgate::parse_results(doc, "round-trip").context.job_s, run.context.job_s);

  const auto refusal = [&](const json& job) {
    json bad = doc;
    bad["context"]["kgate"]["job_s"] = job;
    return kgate::testing_support::message_thrown<kgate::ResultsError>([&] { kgate::parse_results(bad, "synthetic-job.json"); });
  };
  EXPECT_EQ(refusal(json::array({{{"phase", "build"}, {"seconds", 1}}, {{"phase", "build"}, {"seconds", 2}}})),
            "synthetic-job.json: $.context.kgate.job_s[1].phase: phase \"build\" is named twice");
  EXPECT_NE(refusal(json::array({{{"phase", "a b"}, {"seconds", 1}}})).find("job_s[0].phase: expected a phase's name"), std::string::npos);
  EXPECT_NE(refusal(json::array({{{"phase", "build"}, {"seconds", -1}}})).find("job_s[0].seconds: must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"phase", "build"}}})).find("job_s[0].seconds: required field is missing"), std::string::npos);
  EXPECT_NE(refusal(json({{"build", 1}})).find("context.kgate.job_s: expected an array"), std::string::npos);
}

// Recording phases: a phase given again takes the new time in its place, a new one comes last.
TEST(ResultsIo, RecordingJobPhasesKeepsTheJobsOrder) {
  std::vector<kgate::JobPhase> job = {{"build", 60}, {"suite", 100}};
  kgate::record_job_phases(job, {{"peers", 7}, {"build", 61}});
  EXPECT_EQ(job, (std::vector<kgate::JobPhase>{{"build", 61}, {"suite", 100}, {"peers", 7}}));
  EXPECT_DOUBLE_EQ(kgate::job_total_s(job), 168);
  const std::vector<kgate::JobPhase> other = {{"tests", 5}, {"suite", 90}};
  EXPECT_EQ(kgate::job_phase_columns({&job, &other}), (std::vector<std::string>{"build", "suite", "peers", "tests"}));
  EXPECT_EQ(kgate::find_job_phase(other, "build"), nullptr);
  EXPECT_TRUE(kgate::is_job_phase_name("compare_and_report") && kgate::is_job_phase_name("a.b-c"));
  EXPECT_FALSE(kgate::is_job_phase_name("") || kgate::is_job_phase_name("a b") || kgate::is_job_phase_name(std::string(65, 'x')));
}

// A file written before wall_s was a field held each phase as an extra string "wall_s.<phase>", as
// kgate_bench wrote it with std::to_string (synthetic fixture): read into wall_s, and written back
// the newer way.
TEST(ResultsIo, OlderFilesWallTimeExtrasAreReadAsPhases) {
  json doc = kgate::to_json(sample_run());
  doc["context"]["kgate"]["extra"] = {{"shard", "1/2"},
                                      {"wall_s.timing", "94.277878"},
                                      {"wall_s.counters.profile.passes", "20.912416"},
                                      {"wall_s.counters", "0.000010"}};
  const RunResults run = kgate::parse_results(doc, "synthetic-older-wall-time.json");
  EXPECT_EQ(run.context.wall_s, (kgate::PhaseSeconds{{"timing", 94.277878}, {"counters.profile.passes", 20.912416}, {"counters", 1e-5}}));
  EXPECT_EQ(run.context.extra, (std::map<std::string, std::string>{{"shard", "1/2"}}));
  const json written = kgate::to_json(run)["context"]["kgate"];
  EXPECT_EQ(written["wall_s"], json({{"timing", 94.277878}, {"counters.profile.passes", 20.912416}, {"counters", 1e-5}}));
  EXPECT_EQ(written["extra"], json({{"shard", "1/2"}}));

  // The recorded runs in tests/data hold them that way too.
  const RunResults recorded = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h100-f697667-peers.json.gz");
  EXPECT_EQ(recorded.context.wall_s.size(), 16u);
  EXPECT_DOUBLE_EQ(recorded.context.wall_s.at("timing.cold"), 49.765415);
  for (const auto& [key, value] : recorded.context.extra) EXPECT_FALSE(key.starts_with("wall_s.")) << key;
}

TEST(ResultsIo, ReadsGzippedFiles) {
  const syn::TempDir dir;
  const std::string text = kgate::to_json(sample_run()).dump();
  const std::string path = dir.file("run.json.gz");
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  EXPECT_EQ(kgate::to_json(kgate::read_results_file(path)), kgate::to_json(sample_run()));
  // A gzip stream cut short is an error that names the file, not a truncated document.
  std::ifstream whole(path, std::ios::binary);
  const std::string compressed{std::istreambuf_iterator<char>(whole), {}};
  const std::string cut = dir.write("cut.json.gz", compressed.substr(0, compressed.size() / 2));
  try {
    kgate::read_results_file(cut);
    FAIL() << "a cut gzip stream was read";
  } catch (const ResultsError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(cut + ": ", 0), 0u) << e.what();
  }
}

TEST(ResultsIo, ARunWithoutBenchmarksIsReadOnlyWhereAllowed) {
  // A claiming shard that claimed none of a small suite hands over, and ends with, no benchmark.
  const syn::TempDir dir;
  kgate::RunResults empty = syn::run({});
  empty.context.extra["shard"] = "3/4";
  const std::string path = dir.file("shard-3-of-4.json");
  kgate::write_results_file(path, kgate::to_json(empty));
  const kgate::RunResults back = kgate::read_results_file_may_be_empty(path);
  EXPECT_TRUE(back.benchmarks.empty());
  EXPECT_EQ(back.context.extra.at("shard"), "3/4");
  EXPECT_THROW(kgate::read_results_file(path), ResultsError) << "anywhere else a run holds at least one";
}

TEST(ResultsIo, ModeWithoutTimerWasEventTimed) {
  json doc = kgate::to_json(sample_run());
  json& cold = doc["benchmarks"][0]["kgate"]["cold"];
  for (const char* key : {"timer", "event_median_s", "busy_median_s", "min_detectable_change"}) cold.erase(key);
  const RunResults back = kgate::parse_results(doc, "older file");
  EXPECT_EQ(back.benchmarks[0].cold->timer, "events");
  EXPECT_EQ(back.benchmarks[0].cold->event_median_s, 0);
  EXPECT_EQ(back.benchmarks[0].cold->min_detectable_change, 0);
}

TEST(ResultsIo, DocumentIsGoogleBenchmarkJson) {
  const json doc = kgate::to_json(sample_run());
  for (const char* key : {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches",
                          "library_build_type", "json_schema_version", "kgate"})
    EXPECT_TRUE(doc["context"].contains(key)) << key;
  EXPECT_EQ(doc["context"]["json_schema_version"], 1);
  EXPECT_EQ(doc["context"]["executable"], "kgate_bench");
  EXPECT_EQ(doc["context"]["kgate"]["schema_version"], kgate::kResultsSchemaVersion);

  const json& ok = doc["benchmarks"][0];
  for (const char* key : {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
                          "threads", "iterations", "real_time", "cpu_time", "time_unit"})
    EXPECT_TRUE(ok.contains(key)) << key;
  EXPECT_EQ(ok["run_type"], "iteration");
  EXPECT_EQ(ok["time_unit"], "us");
  EXPECT_EQ(ok["iterations"], 60);
  EXPECT_NEAR(ok["real_time"].get<double>(), sample_run().benchmarks[0].headline_median_s() * 1e6, 1e-9);
  EXPECT_EQ(ok["real_time"], ok["cpu_time"]);
  for (const char* counter : {"GB/s", "TFLOP/s", "%mem_roof", "rsd%", "MHz"}) EXPECT_TRUE(ok[counter].is_number()) << counter;
  EXPECT_DOUBLE_EQ(ok["MHz"].get<double>(), 1980);

  const json& failed = doc["benchmarks"][1];
  EXPECT_EQ(failed["error_occurred"], true);
  EXPECT_EQ(failed["error_message"], "an illegal memory access was encountered");
  EXPECT_EQ(failed["real_time"], 0.0);
  EXPECT_FALSE(failed.contains("GB/s"));

  // The families number their instances as Google Benchmark does.
  EXPECT_EQ(doc["benchmarks"][0]["family_index"], 0);
  EXPECT_EQ(doc["benchmarks"][1]["per_family_instance_index"], 1);
  EXPECT_EQ(doc["benchmarks"][2]["family_index"], 1);
}

TEST(ResultsIo, PlainGoogleBenchmarkRepetitionsBecomeSamples) {
  const RunResults run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  EXPECT_FALSE(run.has_kgate_block);
  ASSERT_EQ(run.benchmarks.size(), 3u);  // the aggregate rows are not benchmarks

  const kgate::BenchmarkRecord& copy = run.benchmarks[0];
  EXPECT_EQ(copy.name, "BM_Copy/4096");
  EXPECT_EQ(copy.family, "BM_Copy");
  ASSERT_TRUE(copy.headline());
  EXPECT_EQ(copy.headline()->samples_s, (std::vector<double>{1.2e-6, 1.1e-6, 1.3e-6}));
  EXPECT_DOUBLE_EQ(copy.headline_median_s(), 1.2e-6);

  const kgate::BenchmarkRecord& sort = run.benchmarks[1];
  EXPECT_EQ(sort.name, "BM_Sort/1024/manual_time");
  EXPECT_DOUBLE_EQ(sort.headline_median_s(), 2.5e-3);  // milliseconds converted

  EXPECT_EQ(run.benchmarks[2].status, BenchmarkStatus::failed);
  EXPECT_EQ(run.benchmarks[2].error, "device lost");
}

TEST(ResultsIo, PlainGoogleBenchmarkSkipAndError) {
  // Google Benchmark >= 1.8: SkipWithMessage writes error_occurred false, SkipWithError true.
  const RunResults run = kgate::parse_results(json::parse(R"({"benchmarks": [
      {"name": "BM_Skip", "run_type": "iteration", "error_occurred": false, "error_message": "no GPU",
       "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
      {"name": "BM_Err", "run_type": "iteration", "error_occurred": true, "error_message": "boom",
       "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"}]})"),
                                              "gbench.json");
  ASSERT_EQ(run.benchmarks.size(), 2u);
  EXPECT_EQ(run.benchmarks[0].status, BenchmarkStatus::skipped);
  EXPECT_EQ(run.benchmarks[0].error, "no GPU");
  EXPECT_EQ(run.benchmarks[1].status, BenchmarkStatus::failed);
  EXPECT_EQ(run.benchmarks[1].error, "boom");
}

TEST(ResultsIo, AttachesBlocksToGoogleBenchmarksOwnOutput) {
  // What kgate_bench's Google Benchmark writes: UseManualTime and Iterations(1) suffix the names.
  json doc = json::parse(R"({
    "context": {"date": "d", "host_name": "h", "executable": "kgate_bench", "num_cpus": 16, "mhz_per_cpu": 2000,
                "cpu_scaling_enabled": false, "caches": [], "library_build_type": "release", "json_schema_version": 1},
    "benchmarks": [
      {"name": "rmsnorm/vectorized/m:4096/n:4096/bf16/iterations:1/manual_time", "family_index": 0,
       "per_family_instance_index": 0, "run_name": "rmsnorm/vectorized/m:4096/n:4096/bf16/iterations:1/manual_time",
       "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
       "real_time": 20.0, "cpu_time": 300.0, "time_unit": "us", "GB/s": 3000.0},
      {"name": "fused_add_rmsnorm/fast/m:1/n:8192/bf16/iterations:1/manual_time", "family_index": 1,
       "per_family_instance_index": 0, "run_name": "fused_add_rmsnorm/fast/m:1/n:8192/bf16/iterations:1/manual_time",
       "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
       "real_time": 3.0, "cpu_time": 30.0, "time_unit": "us"}
    ]})");
  const json gbench_row = doc["benchmarks"][0];
  const RunResults run = sample_run();  // its second benchmark never reached Google Benchmark
  kgate::attach_kgate_blocks(doc, run);

  EXPECT_EQ(doc["context"]["num_cpus"], 16);
  EXPECT_EQ(doc["context"]["kgate"]["gpu"]["name"], "NVIDIA H200");
  ASSERT_EQ(doc["benchmarks"].size(), 3u);
  json first = doc["benchmarks"][0];
  EXPECT_EQ(first["kgate"]["name"], "rmsnorm/vectorized/m:4096/n:4096/bf16");
  first.erase("kgate");
  EXPECT_EQ(first, gbench_row);  // Google Benchmark's own fields untouched
  EXPECT_EQ(doc["benchmarks"][1]["kgate"]["name"], "fused_add_rmsnorm/fast/m:1/n:8192/bf16");
  const json& appended = doc["benchmarks"][2];
  EXPECT_EQ(appended["name"], "rmsnorm/broken/m:1/n:8/bf16");
  EXPECT_EQ(appended["error_occurred"], true);
  EXPECT_EQ(appended["error_message"], "an illegal memory access was encountered");
  EXPECT_EQ(appended["family_index"], 2);

  const RunResults back = kgate::parse_results(doc, "attached");
  ASSERT_EQ(back.benchmarks.size(), 3u);
  EXPECT_EQ(back.benchmarks[0].name, "rmsnorm/vectorized/m:4096/n:4096/bf16");
  EXPECT_EQ(back.benchmarks[0].cold->samples_s, run.benchmarks[0].cold->samples_s);
  EXPECT_EQ(back.benchmarks[2].status, BenchmarkStatus::failed);
}

struct BadInput {
  const char* label;
  std::string text;      // the file's contents
  std::string expected;  // the message after "<file>: "
};

std::string kgate_doc_with(const std::function<void(json&)>& edit) {
  json doc = kgate::to_json(syn::run({syn::benchmark("rmsnorm/vectorized/m:8/n:8/bf16", {.samples = 10})}));
  edit(doc);
  return doc.dump();
}

const char* kPlainRow = R"({"name": "BM_A", "run_type": "iteration", "iterations": 1, "real_time": %s, "cpu_time": 1, "time_unit": "ns"})";

std::string plain_doc(const std::string& real_time) {
  char row[256];
  std::snprintf(row, sizeof row, kPlainRow, real_time.c_str());
  return std::string(R"({"context": {}, "benchmarks": [)") + row + "]}";
}

TEST(ResultsIo, BadInputIsOneLineNamingFileAndPath) {
  const syn::TempDir dir;
  const std::vector<BadInput> cases = {
      {"empty", "", "file is empty"},
      {"whitespace", " \n\t ", "file is empty"},
      {"truncated", R"({"context": {}, "benchmarks": [{"name": "x")",
       "truncated JSON at line 1, column 44 (byte 44): syntax error while parsing object - unexpected end of input; expected '}'"},
      {"malformed", "{\"context\": {},\n \"benchmarks\": [}]", "malformed JSON at line 2, column 17 (byte 33): syntax error"},
      // Positions are the file's own, though NaN was read as the longer null.
      {"malformed after NaN", R"({"a": NaN, "b": ]})", "malformed JSON at line 1, column 17 (byte 17): syntax error"},
      {"top-level array", "[1, 2]", "$: expected a JSON object with \"context\" and \"benchmarks\", got array"},
      {"top-level string", "\"results\"", "$: expected a JSON object"},
      {"not benchmark results", R"({"name": "package.json", "version": "1.0"})",
       "$: not a benchmark results file: no \"benchmarks\" array"},
      {"benchmarks not an array", R"({"benchmarks": {}})", "$.benchmarks: expected an array, got object {}"},
      {"empty benchmark list", R"({"context": {}, "benchmarks": []})", "$.benchmarks: no benchmarks"},
      {"negative time", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][7] = -1; }),
       "$.benchmarks[0].kgate.cold.samples_s[7]: time must be from 1e-12 s to 1e+06 s, got -1"},
      {"zero time", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][0] = 0; }),
       "$.benchmarks[0].kgate.cold.samples_s[0]: time must be from 1e-12 s to 1e+06 s, got 0"},
      {"time as string", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][1] = "fast"; }),
       "$.benchmarks[0].kgate.cold.samples_s[1]: time must be from 1e-12 s to 1e+06 s, got string \"fast\""},
      {"unknown timer", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["timer"] = "rdtsc"; }),
       "$.benchmarks[0].kgate.cold.timer: must be \"cupti\", \"events\" or \"cpu\""},
      {"negative detectable change", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["min_detectable_change"] = -0.01; }),
       "$.benchmarks[0].kgate.cold.min_detectable_change: must be a finite number >= 0, got -0.01"},
      {"plain zero time", plain_doc("0"), "$.benchmarks[0].real_time: time must be from 1e-12 s to 1e+06 s, got 0"},
      {"plain NaN time", plain_doc("NaN"), "$.benchmarks[0].real_time: time must be from 1e-12 s to 1e+06 s, got null"},
      {"plain infinite time", plain_doc("Infinity"), "$.benchmarks[0].real_time: time must be from 1e-12 s to 1e+06 s, got null"},
      {"plain negative time", plain_doc("-3.5"), "$.benchmarks[0].real_time: time must be from 1e-12 s to 1e+06 s, got -3.5"},
      {"missing name", R"({"benchmarks": [{"real_time": 1}]})", "$.benchmarks[0].name: required field is missing"},
      {"mistyped name", R"({"benchmarks": [{"name": 5}]})", "$.benchmarks[0].name: expected a string, got 5"},
      {"benchmark not an object", R"({"benchmarks": [7]})", "$.benchmarks[0]: expected an object, got 7"},
      {"missing time unit", R"({"benchmarks": [{"name": "a", "real_time": 1}]})", "$.benchmarks[0].time_unit: required field is missing"},
      {"unknown time unit", R"({"benchmarks": [{"name": "a", "real_time": 1, "time_unit": "fortnights"}]})",
       "$.benchmarks[0].time_unit: unknown time unit \"fortnights\""},
      {"unknown run type", R"({"benchmarks": [{"name": "a", "run_type": "warmup"}]})", "$.benchmarks[0].run_type: unknown run_type"},
      {"only aggregates", R"({"benchmarks": [{"name": "a_mean", "run_type": "aggregate", "aggregate_name": "mean"}]})",
       "$.benchmarks: only aggregate rows"},
      {"duplicate plain name",
       R"({"benchmarks": [{"name": "a", "real_time": 1, "time_unit": "ns"}, {"name": "a", "real_time": 2, "time_unit": "ns"}]})",
       "$.benchmarks[1].name: duplicate benchmark name \"a\""},
      {"repetition index twice",
       R"({"benchmarks": [{"name": "a", "repetitions": 2, "repetition_index": 0, "real_time": 1, "time_unit": "ns"},
                          {"name": "a", "repetitions": 2, "repetition_index": 0, "real_time": 2, "time_unit": "ns"}]})",
       "$.benchmarks[1].name: duplicate benchmark name \"a\""},
      {"duplicate kgate name", kgate_doc_with([](json& d) { d["benchmarks"].push_back(d["benchmarks"][0]); }),
       "$.benchmarks[1].kgate: duplicate benchmark name \"rmsnorm/vectorized/m:8/n:8/bf16\" (also at $.benchmarks[0])"},
      {"newer schema", kgate_doc_with([](json& d) { d["context"]["kgate"]["schema_version"] = 2; }),
       "$.context.kgate.schema_version: schema version 2 is newer than this kgate reads (1)"},
      {"schema not a number", kgate_doc_with([](json& d) { d["context"]["kgate"]["schema_version"] = "1"; }),
       "$.context.kgate.schema_version: expected a whole number from -9007199254740992 to 9007199254740992, got string \"1\""},
      {"missing gpu", kgate_doc_with([](json& d) { d["context"]["kgate"].erase("gpu"); }),
       "$.context.kgate.gpu: required field is missing"},
      {"block without context", kgate_doc_with([](json& d) { d["context"].erase("kgate"); }),
       "$.context.kgate: required field is missing (benchmarks carry kgate blocks)"},
      {"unknown status", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["status"] = "great"; }),
       "$.benchmarks[0].kgate.status: unknown status \"great\""},
      {"ok without samples", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"].erase("cold"); }),
       "$.benchmarks[0].kgate.cold: required field is missing"},
      {"unknown roofline class", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["derived"]["roofline"] = "fast"; }),
       "$.benchmarks[0].kgate.derived.roofline: unknown roofline class \"fast\""},
      {"metric not a number", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["metrics"]["dram__bytes_read.sum"] = "lots"; }),
       "$.benchmarks[0].kgate.metrics[\"dram__bytes_read.sum\"]: expected a number, got string \"lots\""},
      {"negative count", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["throttled_samples"] = -2; }),
       "$.benchmarks[0].kgate.cold.throttled_samples: must be >= 0"},
      {"negative power-limited count", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["power_limited_samples"] = -1; }),
       "$.benchmarks[0].kgate.cold.power_limited_samples: must be >= 0"},
      {"no input copy", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["input_copies"] = 0; }),
       "$.benchmarks[0].kgate.cold.input_copies: must be >= 1"},
      {"zero repetition median", kgate_doc_with([](json& d) {
         d["benchmarks"][0]["kgate"]["cold"]["repetition_medians_s"] = json::array({1e-5, 0});
       }),
       "$.benchmarks[0].kgate.cold.repetition_medians_s[1]: time must be from 1e-12 s to 1e+06 s, got 0"},
      // kgate stores samples as floats: 1e300 would be written as null and 5e-324 as 0, a file it could not read back.
      {"huge time", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][2] = 1e300; }),
       "$.benchmarks[0].kgate.cold.samples_s[2]: time must be from 1e-12 s to 1e+06 s, got 1e+300"},
      {"denormal time", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][2] = 5e-324; }),
       "$.benchmarks[0].kgate.cold.samples_s[2]: time must be from 1e-12 s to 1e+06 s, got 5e-324"},
      {"huge event median", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["event_median_s"] = 2e6; }),
       "$.benchmarks[0].kgate.cold.event_median_s: time must be from 1e-12 s to 1e+06 s, got 2000000.0"},
      {"plain time below a picosecond", plain_doc("1e-5"), "$.benchmarks[0].real_time: time must be from 1e-12 s to 1e+06 s, got 1e-05 ns"},
      {"number beyond a double", plain_doc("1e999"), "malformed JSON: number overflow parsing '1e999'"},
      {"count beyond an int", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["launches_per_sample"] = 1e30; }),
       "$.benchmarks[0].kgate.cold.launches_per_sample: expected a whole number from -2147483648 to 2147483647, got 1e+30"},
      {"count beyond 2^63", kgate_doc_with([](json& d) { d["context"]["kgate"]["gpu"]["l2_bytes"] = 18446744073709551615ull; }),
       "$.context.kgate.gpu.l2_bytes: expected a whole number from 0 to 9007199254740992, got 18446744073709551615"},
      {"negative kernel launches", kgate_doc_with([](json& d) {
         d["benchmarks"][0]["kgate"]["kernels"] = json::array({{{"name", "k"}, {"launches", -1}}});
       }),
       "$.benchmarks[0].kgate.kernels[0].launches: expected a whole number from 0 to 2147483647, got -1"},
      {"fractional count", kgate_doc_with([](json& d) { d["benchmarks"][0]["kgate"]["cold"]["input_copies"] = 2.5; }),
       "$.benchmarks[0].kgate.cold.input_copies: expected a whole number from -2147483648 to 2147483647, got 2.5"},
      {"negative wall-time phase", kgate_doc_with([](json& d) {
         d["context"]["kgate"]["wall_s"] = {{"timing", -1}};
       }),
       "$.context.kgate.wall_s.timing: must be a finite number >= 0, got -1"},
      {"older wall-time phase not a number", kgate_doc_with([](json& d) { d["context"]["kgate"]["extra"]["wall_s.timing"] = "12.5 s"; }),
       "$.context.kgate.extra[\"wall_s.timing\"]: expected the seconds of wall-time phase \"timing\" (a number >= 0), got string "
       "\"12.5 s\""},
      {"wall-time phase twice", kgate_doc_with([](json& d) {
         d["context"]["kgate"]["wall_s"] = {{"timing", 12.5}};
         d["context"]["kgate"]["extra"]["wall_s.timing"] = "12.500000";
       }),
       "$.context.kgate.extra[\"wall_s.timing\"]: wall-time phase \"timing\" is also in wall_s (a file has one or the other)"},
      {"bad grid", kgate_doc_with([](json& d) {
         d["benchmarks"][0]["kgate"]["kernels"] = json::array({{{"name", "k"}, {"grid", {1, 2}}}});
       }),
       "$.benchmarks[0].kgate.kernels[0].grid: expected 3 dimensions, got 2"},
  };
  for (const BadInput& c : cases) {
    const std::string path = dir.write("results.json", c.text);
    try {
      (void)kgate::read_results_file(path);
      ADD_FAILURE() << c.label << ": accepted";
    } catch (const ResultsError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find(path + ": " + c.expected), 0u)
          << c.label << "\n  got:      " << message << "\n  expected: " << path << ": " << c.expected;
      EXPECT_EQ(message.find('\n'), std::string::npos) << c.label << ": not one line: " << message;
    }
  }
}

TEST(ResultsIo, MissingFileAndDirectory) {
  const syn::TempDir dir;
  const std::string missing = dir.file("nope.json");
  EXPECT_THROW(
      {
        try {
          (void)kgate::read_results_file(missing);
        } catch (const ResultsError& e) {
          EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
          throw;
        }
      },
      ResultsError);
  try {
    (void)kgate::read_results_file(dir.path().string());
    ADD_FAILURE() << "a directory was accepted";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(ResultsIo, NonFiniteCountersInGoogleBenchmarkOutputAreTolerated) {
  // Google Benchmark writes bare NaN/Infinity for counters; inside strings they are text.
  const json doc = kgate::read_json_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  EXPECT_TRUE(doc["benchmarks"][0]["ratio"].is_null());
  const syn::TempDir dir;
  const json quoted = kgate::read_json_file(dir.write("q.json", R"({"label": "NaN or Infinity", "x": -Infinity})"));
  EXPECT_EQ(quoted["label"], "NaN or Infinity");
  EXPECT_TRUE(quoted["x"].is_null());
}

TEST(ResultsIo, WriteIsAtomicAndLeavesNoTemporaryFile) {
  const syn::TempDir dir;
  const std::string path = dir.file("out.json");
  kgate::write_results_file(path, json{{"v", 1}});
  kgate::write_results_file(path, json{{"v", 2}});
  EXPECT_EQ(kgate::read_json_file(path)["v"], 2);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  EXPECT_THROW(kgate::write_results_file(dir.file("no-such-dir/out.json"), json{}), ResultsError);
}

}  // namespace
