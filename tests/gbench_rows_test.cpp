// Plain Google Benchmark JSON read as a run (src/kgate/results/gbench_rows.hpp): what its context
// says, which rows are CPU-timed, and how a CPU-timed benchmark is gated: by the spread of its own
// repetitions, not by the GPU's 1 us minimum change. The A/A pairs are synthetic: repetitions
// spread as a loaded host spreads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
using kgate::cli_test::kgate_cli;
using nlohmann::json;

TEST(GbenchRows, ContextGivesDateAndHostAndAFixedSuite) {
  const kgate::RunResults run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  EXPECT_FALSE(run.has_kgate_block);
  EXPECT_EQ(run.context.date, "2026-11-21T12:00:00Z");  // "+00:00" as Google Benchmark writes it, read as UTC
  EXPECT_EQ(run.context.host, "synthetic-host");
  EXPECT_EQ(run.context.suite, "gbench");  // not the executable's name (./bm_synthetic)
  EXPECT_EQ(run.context.gpu_name, "");     // Google Benchmark names no GPU
  EXPECT_EQ(run.context.git_commit, "");   // nor a commit
}

TEST(GbenchRows, ManualTimeIsEventTimedAndTheRestCpuTimed) {
  const kgate::RunResults run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  const kgate::TimingRecord& copy = *run.benchmarks.at(0).cold;
  EXPECT_EQ(copy.timer, "cpu");                               // BM_Copy/4096: the host's clock around its loop
  EXPECT_NEAR(copy.min_detectable_change, 0.16 / 1.2, 1e-6);  // 1.1, 1.2 and 1.3 us: p10 to p90 of its repetitions
  const kgate::TimingRecord& sort = *run.benchmarks.at(1).cold;
  EXPECT_EQ(run.benchmarks.at(1).name, "BM_Sort/1024/manual_time");
  EXPECT_EQ(sort.timer, "events");  // the time the benchmark measured itself (CUDA events in a GPU benchmark)
  EXPECT_EQ(sort.min_detectable_change, 0);
}

// A plain Google Benchmark file of one benchmark: `times_us` are its repetitions' real_time.
std::string write_gbench(const syn::TempDir& dir, const std::string& file, const std::string& name, const std::vector<double>& times_us) {
  json rows = json::array();
  for (std::size_t i = 0; i < times_us.size(); ++i)
    rows.push_back({{"name", name},
                    {"family_index", 0},
                    {"per_family_instance_index", 0},
                    {"run_name", name},
                    {"run_type", "iteration"},
                    {"repetitions", times_us.size()},
                    {"repetition_index", i},
                    {"threads", 1},
                    {"iterations", 1000},
                    {"real_time", times_us[i]},
                    {"cpu_time", times_us[i]},
                    {"time_unit", "us"}});
  const json doc = {{"context",
                     {{"date", "2026-11-21T12:00:00+00:00"},
                      {"host_name", "synthetic-loaded-host"},
                      {"executable", "./bm_parse"},
                      {"num_cpus", 2},
                      {"library_build_type", "release"}}},
                    {"benchmarks", rows}};
  return dir.write(file, doc.dump());
}

// 20 repetitions of a 100 us benchmark on a host whose load adds `load_from` to `load_from` + 20%,
// in a scrambled order, as repetitions interleave with the other processes' bursts.
std::vector<double> loaded_repetitions(double load_from, double factor = 1) {
  std::vector<double> times;
  for (int i = 0; i < 20; ++i) times.push_back(100 * factor * (1 + load_from + 0.2 * ((i * 7) % 20) / 19.0));
  return times;
}

// The table's summary line: the line before its last, the verdict in words.
std::string summary_line(const std::string& out) {
  const std::size_t end = out.rfind('\n', out.find_last_not_of('\n'));
  return end == std::string::npos ? out : out.substr(out.rfind('\n', end - 1) + 1, end - out.rfind('\n', end - 1) - 1);
}

TEST(GbenchRows, CpuTimedAAOnALoadedHostIsNotSlowerAndARealSlowdownIs) {
  const syn::TempDir dir;
  // The same code twice, the host busier during the second run: its median 11% higher.
  const std::string a = write_gbench(dir, "synthetic-a.json", "BM_Parse/4096", loaded_repetitions(0));
  const std::string b = write_gbench(dir, "synthetic-b.json", "BM_Parse/4096", loaded_repetitions(0.12));
  auto r = kgate_cli({"compare", a, b});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("0 slower", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("band widened to"), std::string::npos) << r.out;  // by its repetitions' spread

  // The same numbers judged as every plain Google Benchmark row was before (event-timed, 1 us
  // minimum change): the load alone read slower.
  const std::string a_events = write_gbench(dir, "synthetic-a-events.json", "BM_Parse/4096/manual_time", loaded_repetitions(0));
  const std::string b_events = write_gbench(dir, "synthetic-b-events.json", "BM_Parse/4096/manual_time", loaded_repetitions(0.12));
  r = kgate_cli({"compare", a_events, b_events});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("1 slower", 0), 0u) << r.out;

  // A real slowdown, 40% on the same loaded host, still is one.
  const std::string slow = write_gbench(dir, "synthetic-slow.json", "BM_Parse/4096", loaded_repetitions(0.12, 1.4));
  r = kgate_cli({"compare", a, slow});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("1 slower", 0), 0u) << r.out;
}

}  // namespace
