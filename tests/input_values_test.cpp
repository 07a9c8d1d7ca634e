// Values checked at the door (src/kgate/results/value_rules.hpp, docs/reliability.md): one rule for
// times and counts in nvbench, Google Benchmark and kgate JSON, refused when read with the file,
// the JSON path and the value, so that no broken run passes the gate and kgate reads back every
// file it writes. The hostile files are synthetic: the recorded nvbench run (tests/data) and
// synthetic kgate runs, each spoiled in one place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
namespace syn = kgate::synthetic;
using kgate::cli_test::kgate_cli;
using nlohmann::json;

constexpr const char* kTimeRule = "time must be from 1e-12 s to 1e+06 s, got ";

// The recorded nvbench runs, unpacked into `dir`.
void unpack_recorded_nvbench(const syn::TempDir& dir) {
  ASSERT_EQ(std::system(("tar -xzf '" KGATE_TEST_DATA_DIR "/recorded-nvbench.tar.gz' -C '" + dir.path().string() + "'").c_str()), 0);
}

// A copy of `source` (a recorded nvbench file in `dir`) under `name`, every state's summary value
// `tag`.`value_name` replaced by `text`; returns its path and the JSON path of the first replaced value.
std::pair<std::string, std::string> nvbench_with(const syn::TempDir& dir, const std::string& source, const std::string& name,
                                                 const std::string& tag, const std::string& value_name, const std::string& text) {
  json doc = kgate::read_json_file(dir.file(source));
  std::string first;
  json& states = doc["benchmarks"][0]["states"];
  for (std::size_t s = 0; s < states.size(); ++s)
    for (std::size_t i = 0; i < states[s]["summaries"].size(); ++i) {
      json& summary = states[s]["summaries"][i];
      if (summary["tag"] != tag) continue;
      for (std::size_t d = 0; d < summary["data"].size(); ++d)
        if (summary["data"][d]["name"] == value_name) {
          summary["data"][d]["value"] = text;
          if (first.empty())
            first = "$.benchmarks[0].states[" + std::to_string(s) + "].summaries[" + std::to_string(i) + "].data[" + std::to_string(d) +
                    "].value";
        }
    }
  return {dir.write(name, doc.dump()), first};
}

// nvbench's one figure per state (no sample files) with a time that cannot be: a NaN median once
// compared as `same`, exit 0. Refused in compare and in baseline update, which writes nothing.
TEST(InputValues, NvbenchSummaryTimesThatCannotBeExitTwo) {
  const syn::TempDir dir;
  unpack_recorded_nvbench(dir);
  const std::string baselines = dir.file("baselines"), other = dir.file("recorded-nvbench-run-b.json");
  for (const char* bad : {"nan", "-nan", "-1e-06", "0", "inf", "-inf", "1e300", "5e-324"}) {
    const auto [path, where] = nvbench_with(dir, "recorded-nvbench-summaries.json", std::string("synthetic-median-") + bad + ".json",
                                            "nv/cold/time/gpu/median", "value", bad);
    const std::string expected = path + ": " + where + ": " + kTimeRule + "\"" + bad + "\"";
    using Command = std::vector<std::string>;
    for (const Command& command : {Command{"compare", other, path}, Command{"compare", path, other},
                                   Command{"baseline", "update", path, "--baseline-dir", baselines},
                                   Command{"baseline", "update", path, "--baseline-dir", baselines, "--force"}}) {
      const auto r = kgate_cli(command);
      EXPECT_EQ(r.status, 2) << bad << " " << command[0] << ": " << r.out << r.err;
      EXPECT_NE(r.err.find(expected), std::string::npos) << bad << " " << command[0] << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(baselines)) << bad << ": nothing may be written";
  }
}

// Writes `values` as the little-endian float32 sample file `relative` (beside the nvbench files in `dir`).
void write_samples(const syn::TempDir& dir, const std::string& relative, const std::vector<float>& values) {
  std::ofstream out(dir.file(relative), std::ios::binary | std::ios::trunc);
  for (const float v : values) {
    std::uint32_t word = 0;
    std::memcpy(&word, &v, sizeof word);
    for (int b = 0; b < 4; ++b) out.put(static_cast<char>((word >> (8 * b)) & 0xff));
  }
}

// The same in nvbench's sample files (--jsonbin), the samples kgate gates on.
TEST(InputValues, NvbenchSampleTimesThatCannotBeExitTwo) {
  const syn::TempDir dir;
  unpack_recorded_nvbench(dir);
  const std::string baselines = dir.file("baselines"), run = dir.file("recorded-nvbench-run-a.json");
  const std::string samples = "recorded-nvbench-run-a.json-bin/2.bin";  // state 2's: 1675 samples
  const std::vector<float> kept(1675, 2e-6f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const float bad : {nan, -inf, inf, -1e-6f, 0.0f, 1e-30f, 1e30f}) {
    std::vector<float> values = kept;
    values[7] = bad;
    write_samples(dir, samples, values);
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"compare", dir.file("recorded-nvbench-run-b.json"), run},
          std::vector<std::string>{"baseline", "update", run, "--baseline-dir", baselines, "--force"}}) {
      const auto r = kgate_cli(command);
      EXPECT_EQ(r.status, 2) << bad << " " << command[0] << ": " << r.out << r.err;
      EXPECT_NE(r.err.find(run + ": $.benchmarks[0].states[2].summaries[27]: value 7 of the sample file \"" + samples + "\": a " +
                           kTimeRule),
                std::string::npos)
          << bad << " " << command[0] << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(baselines)) << bad << ": nothing may be written";
  }
  write_samples(dir, samples, kept);
  EXPECT_EQ(kgate_cli({"baseline", "update", run, "--baseline-dir", baselines, "--force"}).status, 0);
}

// Counts are whole numbers within range, never cast from 1e30 or NaN (undefined behaviour, which
// printed -9223372036854775808); other mistyped fields are named errors, never "internal error".
TEST(InputValues, NvbenchCountsAndFieldsAreNamedErrors) {
  const syn::TempDir dir;
  unpack_recorded_nvbench(dir);
  const std::string other = dir.file("recorded-nvbench-run-b.json");
  for (const char* bad : {"1e30", "nan", "-5", "2.5", "67108865"}) {
    const auto [path, where] = nvbench_with(dir, "recorded-nvbench-run-a.json", std::string("synthetic-size-") + bad + ".json",
                                            "nv/json/bin:nv/cold/sample_times", "size", bad);
    const auto r = kgate_cli({"compare", other, path});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find(path + ": " + where + ": expected a whole number from 0 to 67108864, got \"" + bad + "\""), std::string::npos)
        << r.err;
  }
  const auto [count_path, count_where] =
      nvbench_with(dir, "recorded-nvbench-summaries.json", "synthetic-sample-size.json", "nv/cold/sample_size", "value", "1e30");
  auto r = kgate_cli({"compare", other, count_path});
  EXPECT_NE(r.err.find(count_where + ": expected a whole number from 0 to 9007199254740992, got \"1e30\""), std::string::npos) << r.err;

  json doc = kgate::read_json_file(dir.file("recorded-nvbench-run-a.json"));
  const std::vector<std::pair<std::function<void(json&)>, std::string>> spoiled = {
      {[](json& d) { d["meta"]["version"]["nvbench"] = 3; }, "$.meta.version.nvbench: expected an object, got 3"},
      {[](json& d) { d["meta"]["version"]["nvbench"]["string"] = 3; }, "$.meta.version.nvbench.string: expected a string, got 3"},
      {[](json& d) { d["meta"]["version"]["json"] = 1; }, "$.meta.version.json: expected an object, got 1"},
      {[](json& d) { d["devices"][0]["sm_version"] = 1e18; }, "$.devices[0].sm_version: expected a whole number from 0 to 2147483647"},
      {[](json& d) { d["benchmarks"][0]["states"][0]["is_skipped"] = "no"; },
       "$.benchmarks[0].states[0].is_skipped: expected true or false"},
      {[](json& d) { d["meta"]["argv"] = json::array({1}); }, "$.meta.argv[0]: expected a string, got 1"}};
  for (const auto& [spoil, expected] : spoiled) {
    json copy = doc;
    spoil(copy);
    const std::string path = dir.write("synthetic-spoiled.json", copy.dump());
    r = kgate_cli({"compare", other, path});
    EXPECT_EQ(r.status, 2) << expected;
    EXPECT_NE(r.err.find(path + ": " + expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

// Whatever kgate takes, it writes back so that it reads it again: the bounds of a time included
// (samples are stored as floats).
TEST(InputValues, EveryTimeTakenIsWrittenBackReadably) {
  const syn::TempDir dir;
  kgate::BenchmarkRecord record = syn::benchmark("rmsnorm/vectorized/m:8/n:8/bf16", {.samples = 10});
  record.cold->samples_s[0] = 1e-12;
  record.cold->samples_s[1] = 1e6;
  record.cold->samples_s[2] = 3.3e-6;
  const std::string run = dir.file("synthetic-bounds.json");
  kgate::write_results_file(run, kgate::to_json(syn::run({record})));
  const kgate::RunResults read = kgate::read_results_file(run);
  EXPECT_EQ(read.benchmarks[0].cold->samples_s[0], static_cast<double>(1e-12f));  // stored as a float
  EXPECT_EQ(read.benchmarks[0].cold->samples_s[1], 1e6);
  ASSERT_EQ(kgate_cli({"baseline", "update", run, "--baseline-dir", dir.file("baselines"), "--force"}).status, 0);
  const auto r = kgate_cli({"compare", "--baseline-dir", dir.file("baselines"), run});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// Google Benchmark's times, in their units, meet the same rule.
TEST(InputValues, GoogleBenchmarkTimesMeetTheSameRule) {
  const syn::TempDir dir;
  const auto plain = [&](const std::string& real_time, const std::string& unit) {
    return dir.write("synthetic-plain.json", R"({"context": {}, "benchmarks": [{"name": "BM_A", "run_type": "iteration", "real_time": )" +
                                                 real_time + R"(, "time_unit": ")" + unit + R"("}]})");
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> refused = {{"1e-5", "ns", "1e-05 ns"},
                                                                                  {"2e15", "ns", "2e+15 ns"},
                                                                                  {"1e300", "s", "1e+300"},
                                                                                  {"5e-324", "s", "5e-324"}};
  for (const auto& [time, unit, shown] : refused) {
    const std::string path = plain(time, unit);
    try {
      (void)kgate::read_results_file(path);
      ADD_FAILURE() << time << " " << unit << ": accepted";
    } catch (const kgate::ResultsError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": $.benchmarks[0].real_time: " + kTimeRule + shown);
    }
  }
  EXPECT_DOUBLE_EQ(kgate::read_results_file(plain("1", "ns")).benchmarks[0].cold->samples_s[0], 1e-9);
}

// An error shows a bounded excerpt of the value, never all of it: a value may be a gigabyte long.
TEST(InputValues, ErrorsShowABoundedExcerptOfTheValue) {
  const syn::TempDir dir;
  const json run = kgate::to_json(syn::run({syn::benchmark("rmsnorm/vectorized/m:8/n:8/bf16", {.samples = 10})}));
  std::string nested = "\"x\"";
  for (int i = 0; i < 25; ++i) nested = "{\"k\": [" + nested + "]}";  // 50 deep, within the limit of 64
  const std::vector<std::pair<std::function<void(json&)>, std::string>> spoiled = {
      {[](json& d) { d["benchmarks"][0]["kgate"]["cold"]["samples_s"][0] = std::string(10000, 'x'); },
       "samples_s[0]: " + std::string(kTimeRule) + "string \"xxxxx"},
      {[&](json& d) { d["context"]["kgate"]["gpu"]["name"] = json::parse(nested); },
       "gpu.name: expected a string, got object {\"k\": [{\"k\": ["},
      {[](json& d) { d["benchmarks"][0]["kgate"]["metrics"][std::string(1000, 'm')] = "lots"; }, "metrics[\"mmmmm"}};
  for (const auto& [spoil, expected] : spoiled) {
    json copy = run;
    spoil(copy);
    const std::string path = dir.write("synthetic-spoiled.json", copy.dump());
    try {
      (void)kgate::read_results_file(path);
      ADD_FAILURE() << expected << ": accepted";
    } catch (const kgate::ResultsError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(expected), std::string::npos) << message;
      EXPECT_LT(message.size(), path.size() + 700) << message;
      EXPECT_NE(message.find("..."), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

}  // namespace
