// The `kgate` command line, run in-process: exit statuses, one-line errors for bad input, report
// files, baselines and merging.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include <cstdlib>
#include <sstream>

#include "args.hpp"
#include "baseline.hpp"
#include "kgate/base/display_path.hpp"
#include "kgate/gate/ab.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::RunResults;
using nlohmann::json;
namespace syn = kgate::synthetic;
namespace fs = std::filesystem;

using kgate::cli_test::kgate_cli;
using kgate::cli_test::Outcome;

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

// The table's summary line: the line before its last, the verdict in words.
std::string summary_line(const std::string& table) { return last_line(table.substr(0, table.rfind('\n', table.find_last_not_of('\n')))); }

TEST(KgateCli, IdenticalRunsPass) {
  const syn::TempDir dir;
  const auto r =
      kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", two_benchmarks(10e-6, 2))});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 2 same, 0 noisy; geomean speedup ", 0), 0u) << r.out;
  EXPECT_EQ(last_line(r.out), "✅ kgate: pass, 0 slower, 0 faster") << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);  // not a terminal: no colour
}

TEST(KgateCli, PlantedSlowdownFailsTheGate) {
  const syn::TempDir dir;
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)),
                            write_run(dir, "b.json", two_benchmarks(11e-6, 2)), "--min-change-us", "0"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("1 slower, 0 faster, 1 same, 0 noisy", 0), 0u) << r.out;
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
  const auto r = kgate_cli({"compare", write_run(dir, "a.json", base), write_run(dir, "b.json", next), "--all"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("clock 1980 MHz → 1600 MHz: time +2"), std::string::npos) << r.out;  // +23.75% planted
}

TEST(KgateCli, TimerMismatchIsRefusedUnlessAllowed) {
  const syn::TempDir dir;
  RunResults cupti = two_benchmarks(10e-6, 1);
  for (BenchmarkRecord& r : cupti.benchmarks) r.cold->timer = "cupti";
  const std::string base = write_run(dir, "cupti.json", cupti), events = write_run(dir, "events.json", two_benchmarks(10e-6, 2));
  const auto refused = kgate_cli({"compare", base, events});
  EXPECT_EQ(refused.status, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find(kA + ": its cold timing is cupti-timed in cupti.json and events-timed in events.json"), std::string::npos)
      << refused.err;
  const auto allowed = kgate_cli({"compare", base, events, "--allow-timer-mismatch", "--all"});
  EXPECT_EQ(allowed.status, 0) << allowed.out << allowed.err;
  EXPECT_NE(allowed.out.find("timers differ (cupti → events)"), std::string::npos) << allowed.out;
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
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 1 same, 0 noisy, 1 failed", 0), 0u) << r.out;
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
      {{"compare", good, dir.file("missing.json")},
       "kgate compare: " + dir.file("missing.json") + ": cannot open: No such file or directory"},
      {{"compare", good, dir.write("empty.json", "")}, "kgate compare: " + dir.file("empty.json") + ": file is empty"},
      {{"compare", good, dir.write("cut.json", R"({"context": {"kgate": {"schema)")},
       "kgate compare: " + dir.file("cut.json") +
           ": truncated JSON at line 1, column 31 (byte 31): syntax error while parsing object key - invalid string: missing closing quote"},
      {{"compare", good, dir.write("list.json", "[]")}, "kgate compare: " + dir.file("list.json") + ": $: expected a JSON object"},
      {{"compare", good, dir.write("pkg.json", R"({"name": "left-pad"})")},
       "kgate compare: " + dir.file("pkg.json") + ": $: not a benchmark results file"},
      {{"compare", good, dir.write("neg.json", negative.dump())},
       "kgate compare: " + dir.file("neg.json") +
           ": $.benchmarks[1].kgate.cold.samples_s[3]: time must be from 1e-12 s to 1e+06 s, got -1"},
      {{"compare", good, dir.write("newer.json", newer.dump())},
       "kgate compare: " + dir.file("newer.json") + ": $.context.kgate.schema_version: schema version 9 is newer"},
      // The inputs named as every output of compare names them: relative to the working directory,
      // else (as here) by file name.
      {{"compare", good, h100},
       "kgate compare: different GPU models: baseline good.json ran on NVIDIA H200, new h100.json on NVIDIA H100 80GB HBM3"},
      {{"compare", good, good, "--thresholds", thresholds}, "kgate compare: " + thresholds + ": $.familes: unknown field"},
      {{"compare", good}, "kgate compare: one results file given"},
      {{"compare", good, good, good}, "kgate compare: expected BASELINE.json NEW.json, got 3 files"},
      {{"compare", good, good, "--threshold", "five"}, "kgate compare: --threshold: expected a number in [0, 1], got 'five'"},
      {{"compare", good, good, "--threshold", "0"}, "kgate compare: --threshold must be above 0"},
      {{"compare", good, good, "--json"}, "kgate compare: --json needs a value"},
      {{"compare", dir.file("absent.json"), good, "--json", dir.file("no/such/v.json")},
       "kgate compare: --json " + dir.file("no/such/v.json") + ": directory " + dir.file("no/such") + " does not exist"},
      {{"compare", good, good, "--markdown", dir.path().string()},
       "kgate compare: --markdown " + dir.path().string() + ": is a directory, expected a file"},
      {{"compare", good, good, "--frobnicate"}, "kgate compare: unknown option --frobnicate"},
      {{"compare", "--baseline-dir", dir.file("baselines"), good},
       "kgate compare: " + dir.file("baselines") + "/nvidia-h200/kgate.json: no baseline for NVIDIA H200"},
      {{"compare", "--baseline-dir", dir.file("baselines"), KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json"},
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

// Every command's --help, which must stand on its own where kgate is installed: it cites no path
// of kgate's repository (a document is named as "kgate's docs/...", which the install carries).
TEST(KgateCli, HelpForEveryCommand) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"--help"},
                                                                                    {"compare", "--help"},
                                                                                    {"baseline", "--help"},
                                                                                    {"baseline", "update", "--help"},
                                                                                    {"merge", "-h"},
                                                                                    {"ab", "--help"},
                                                                                    {"report", "--help"},
                                                                                    {"story", "--help"},
                                                                                    {"history", "--help"},
                                                                                    {"bisect", "--help"},
                                                                                    {"pr-gate", "--help"},
                                                                                    {"shard-run", "--help"},
                                                                                    {"nightly", "--help"}}) {
    const Outcome r = kgate_cli(args);
    EXPECT_EQ(r.status, 0) << args[0];
    EXPECT_EQ(r.out.rfind("usage: kgate", 0), 0u) << r.out;
    EXPECT_TRUE(r.err.empty());
    const std::string unqualified = std::regex_replace(r.out, std::regex("kgate's\\s+docs/"), "");
    EXPECT_EQ(unqualified.find("docs/"), std::string::npos) << args[0] << " --help cites a repository path:\n" << r.out;
    EXPECT_EQ(unqualified.find("scripts/"), std::string::npos) << args[0] << " --help cites a repository path:\n" << r.out;
  }
}

TEST(KgateCli, UsageNamesHistoryJobs) {
  EXPECT_NE(kgate_cli({"--help"}).out.find("  history add|show|changes|jobs       the nightly runs in SQLite"), std::string::npos);
  const Outcome history = kgate_cli({"history", "--help"});
  EXPECT_NE(history.out.find("\n       kgate history jobs [--gpu SLUG] [--last N] [--db FILE]\n"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find("\n  jobs      the wall time of the job that made each run"), std::string::npos) << history.out;
  const Outcome unknown = kgate_cli({"history", "frobnicate"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown history action 'frobnicate' (add, show, changes or jobs)"), std::string::npos) << unknown.err;
}

// kgate job-time records the job's phases in a run; kgate history add keeps them, history jobs
// lists them and the report of a later run shows them in its Environment and its history.
TEST(KgateCli, TheJobsWallTimeReachesTheHistoryAndTheReport) {
  const syn::TempDir dir;
  RunResults earlier = two_benchmarks(10e-6, 1), later = two_benchmarks(10e-6, 2);
  earlier.context.date = "2026-11-20T12:00:00Z";
  earlier.context.git_commit = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
  const std::string earlier_file = write_run(dir, "synthetic-earlier.json", earlier);
  const std::string later_file = write_run(dir, "synthetic-later.json", later);
  ASSERT_EQ(kgate_cli({"job-time", earlier_file, "build=60", "suite=100"}).status, 0);
  ASSERT_EQ(kgate_cli({"job-time", later_file, "build=30", "suite=90", "peers=5"}).status, 0);
  const std::string db = dir.file("h.sqlite");
  ASSERT_EQ(kgate_cli({"history", "add", "--db", db, earlier_file}).status, 0);

  const Outcome jobs = kgate_cli({"history", "jobs", "--db", db});
  EXPECT_EQ(jobs.status, 0) << jobs.err;
  EXPECT_EQ(jobs.out,
            "run                 gpu          host            total   build  suite\n"
            "2026-11-20 eeeeeee  nvidia-h200  synthetic-host  160 s  60.0 s  100 s\n");

  const Outcome report = kgate_cli({"report", later_file, "--history", db, "--out", dir.file("report")});
  ASSERT_EQ(report.status, 0) << report.err;
  const std::string markdown = syn::read_text(dir.file("report/report.md"));
  EXPECT_NE(markdown.find("| **Job wall time** | 125 s: build 30.0 s, suite 90.0 s, peers 5.00 s |"), std::string::npos) << markdown;
  const std::size_t table = markdown.find("| Run | Total | build | suite | peers |");
  ASSERT_NE(table, std::string::npos) << markdown;
  EXPECT_GT(table, markdown.find("## History"));
  EXPECT_NE(markdown.find("| `2026-11-20 eeeeeee` | 160 s | 60.0 s | 100 s | - |", table), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `synthetic-later.json` | 125 s | 30.0 s | 90.0 s | 5.00 s |", table), std::string::npos) << markdown;
}

// kgate job-time: a phase given again takes its new time in its place, a new one comes last; what
// is not PHASE=SECONDS is refused with exit 2, the run left as it was.
TEST(KgateCli, JobTimeRecordsPhasesInTheJobsOrder) {
  const syn::TempDir dir;
  const std::string run = write_run(dir, "synthetic-run.json", two_benchmarks(10e-6, 1));
  const Outcome first = kgate_cli({"job-time", run, "build=60", "suite=100"});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out, "kgate: the job's wall time: 160 s: build 60.0 s, suite 100 s\n");
  const Outcome second = kgate_cli({"job-time", run, "peers=7.5", "build=61"});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out, "kgate: the job's wall time: 168 s: build 61.0 s, suite 100 s, peers 7.50 s\n");
  const std::vector<kgate::JobPhase> recorded = {{"build", 61}, {"suite", 100}, {"peers", 7.5}};
  EXPECT_EQ(kgate::read_results_file(run).context.job_s, recorded);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{{"job-time", run},
                                                                                   {"job-time", run, "build"},
                                                                                   {"job-time", run, "a b=1"},
                                                                                   {"job-time", run, "build=-1"},
                                                                                   {"job-time", run, "build=nan"},
                                                                                   {"job-time", run, "build=1s"},
                                                                                   {"job-time", dir.file("missing.json"), "build=1"}}) {
    const Outcome refused = kgate_cli(bad);
    EXPECT_EQ(refused.status, 2) << bad.back();
    EXPECT_FALSE(refused.err.empty()) << bad.back();
  }
  EXPECT_EQ(kgate::read_results_file(run).context.job_s, recorded) << "a refused call leaves the run as it was";
}

TEST(KgateCli, VersionIsTheProjectsWithTheCommit) {
  const Outcome r = kgate_cli({"--version"});
  EXPECT_EQ(r.status, 0);
  const std::string version = std::regex_replace(KGATE_PROJECT_VERSION, std::regex("\\."), "\\.");
  EXPECT_TRUE(std::regex_match(r.out, std::regex("kgate " + version +
                                                 " \\(commit ([0-9a-f]{12}(\\+dirty)?|unknown), results schema version 1\\)\n")))
      << r.out;
}

// The newest released entry of CHANGELOG.md (after the notes under "## [Unreleased]", if any) is
// the version project() declares (docs/releasing.md).
TEST(KgateCli, ChangelogOpensWithTheProjectVersion) {
  std::ifstream changelog(KGATE_SOURCE_DIR "/CHANGELOG.md");
  ASSERT_TRUE(changelog) << "CHANGELOG.md is missing";
  std::string line;
  while (std::getline(changelog, line) && (line.rfind("## ", 0) != 0 || line == "## [Unreleased]")) {
  }
  EXPECT_EQ(line.rfind("## [" KGATE_PROJECT_VERSION "]", 0), 0u) << "the newest entry of CHANGELOG.md: " << line;
}

TEST(KgateCli, PlainGoogleBenchmarkIsComparedOnTimeOnly) {
  const syn::TempDir dir;
  json slower = kgate::read_json_file(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json");
  for (json& row : slower["benchmarks"])
    if (row["name"] == "BM_Copy/4096") row["real_time"] = row["real_time"].get<double>() * 1.5;
  const std::string plain = KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json";
  const auto r = kgate_cli({"compare", plain, dir.write("slower.json", slower.dump()), "--min-change-us", "0"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // BM_Broken failed in the new file too
  EXPECT_NE(r.err.find("note: time-only comparison: " + kgate::display_path(plain) + " has no kgate block"), std::string::npos) << r.err;
  // Three repetitions a side: a U test cannot reach p < 0.01, so a 50% slowdown is only noisy,
  // and the unchanged benchmark's interval is too wide to call it the same.
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 0 same, 2 noisy, 1 failed", 0), 0u) << r.out;
}

TEST(KgateCli, ReportFiles) {
  const syn::TempDir dir;
  const auto r =
      kgate_cli({"compare", write_run(dir, "a.json", two_benchmarks(10e-6, 1)), write_run(dir, "b.json", two_benchmarks(11e-6, 2)),
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
  ASSERT_EQ(kgate_cli({"baseline", "update", a, "--baseline-dir", dir.file("baselines"), "--force"}).status, 0);
  EXPECT_EQ(kgate_cli({"compare", "--baseline-dir", dir.file("baselines"), b, "--min-change-us", "0"}).status, 1);
  dir.write("baselines/thresholds.json", R"({"families": {"rmsnorm": 0.1}})");
  EXPECT_EQ(kgate_cli({"compare", "--baseline-dir", dir.file("baselines"), b, "--min-change-us", "0"}).status, 0);
  // With two files --baseline-dir would pick no baseline: refused rather than silently ignored.
  const auto both = kgate_cli({"compare", a, b, "--baseline-dir", dir.file("baselines")});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--baseline-dir picks NEW.json's baseline: give NEW.json alone"), std::string::npos) << both.err;
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
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 2 same, 0 noisy", 0), 0u) << r.out;
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
                             syn::benchmark("rmsnorm/d/m:1/bf16", {}), syn::benchmark("gemv/cublas/m:1/bf16", {}),
                             syn::benchmark("rmsnorm/e/m:1/bf16", {})});
  run.benchmarks[1].status = kgate::BenchmarkStatus::failed;
  run.benchmarks[1].error = "launch failed";
  run.benchmarks[1].cold.reset();
  run.benchmarks[2].cold->repetition_medians_s = {10e-6, 10.8e-6, 10.1e-6};  // one process 8% off
  run.benchmarks[3].cold->throttled_samples = 400;                           // most batches dropped
  run.benchmarks[4].role = "vendor";                                         // shown, not gated: its spread blocks nothing
  run.benchmarks[4].cold->repetition_medians_s = {10e-6, 10.9e-6, 10.1e-6};
  run.benchmarks[5].cold->target_met = false;  // a missed noise target alone is no reason: it still detects 5%
  run.benchmarks[5].cold->stop_reason = "time-cap";
  run.benchmarks[5].cold->throttled_samples = 4;  // nor a few dropped batches
  const std::string path = write_run(dir, "run.json", run);

  auto r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("refused, 3 benchmark(s) unfit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kB + ": failed (launch failed): fix the variant"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rmsnorm/c/m:1/bf16: detects only changes of 8."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("above its 5.00% threshold (its processes' medians (10.0 µs, 10.8 µs, 10.1 µs) differ by that much)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rmsnorm/d/m:1/bf16: 400 of its cold samples ran below the throttle clock"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("gemv/cublas"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("rmsnorm/e/"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(baselines));

  // A threshold that covers the spread makes it fit: the reason says which knob to turn.
  fs::create_directories(dir.file("wider"));
  dir.write("wider/thresholds.json", R"({"benchmarks": {"rmsnorm/c/m:1/bf16": 0.1}})");
  r = kgate_cli({"baseline", "update", path, "--baseline-dir", dir.file("wider")});
  EXPECT_NE(r.err.find("refused, 2 benchmark(s) unfit"), std::string::npos) << r.err;

  r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines, "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("0 updated, 5 added, 0 kept"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not recorded: " + kB), std::string::npos) << r.out;
  const RunResults stored = kgate::read_results_file(baselines + "/nvidia-h200/kgate.json");
  EXPECT_EQ(stored.benchmarks.size(), 5u);
  for (const BenchmarkRecord& b : stored.benchmarks) EXPECT_NE(b.name, kB);
}

TEST(KgateCli, BaselineUpdateRefusesToMixTimers) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  ASSERT_EQ(kgate_cli({"baseline", "update", write_run(dir, "events.json", two_benchmarks(10e-6, 1)), "--baseline-dir", baselines}).status,
            0);
  RunResults cupti = syn::run({syn::benchmark(kA, {.seed = 3})});
  cupti.benchmarks[0].cold->timer = "cupti";
  const std::string path = write_run(dir, "cupti.json", cupti);
  auto r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines, "--force"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find("would mix timers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("events-timed: e.g. " + kB), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--prune"), std::string::npos) << r.err;
  // A whole-suite run with --prune replaces every entry: one timer again.
  r = kgate_cli({"baseline", "update", path, "--baseline-dir", baselines, "--prune"});
  EXPECT_EQ(r.status, 0) << r.err;
  const RunResults stored = kgate::read_results_file(baselines + "/nvidia-h200/kgate.json");
  ASSERT_EQ(stored.benchmarks.size(), 1u);
  EXPECT_EQ(stored.benchmarks[0].cold->timer, "cupti");
}

TEST(KgateCli, BaselineUpdatePrunesWhatTheWholeSuiteNoLongerMeasures) {
  const syn::TempDir dir;
  const std::string baselines = dir.file("baselines");
  const std::string kC = "rmsnorm/c/m:1/bf16";
  RunResults first = syn::run({syn::benchmark(kA, {.seed = 1}), syn::benchmark(kB, {.seed = 2}), syn::benchmark(kC, {.seed = 3})});
  ASSERT_EQ(kgate_cli({"baseline", "update", write_run(dir, "first.json", first), "--baseline-dir", baselines}).status, 0);
  const std::string file = baselines + "/nvidia-h200/kgate.json";

  // kA measured again, kB gone from the suite, kC skipped: without --prune both old entries stay.
  RunResults second = syn::run({syn::benchmark(kA, {.seed = 4}), syn::benchmark(kC, {.seed = 5})});
  second.benchmarks[1].status = kgate::BenchmarkStatus::skipped;
  second.benchmarks[1].cold.reset();
  const std::string second_path = write_run(dir, "second.json", second);
  auto r = kgate_cli({"baseline", "update", second_path, "--baseline-dir", baselines});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(kgate::read_results_file(file).benchmarks.size(), 3u);

  r = kgate_cli({"baseline", "update", second_path, "--baseline-dir", baselines, "--prune"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1 updated, 0 added, 0 kept, 2 pruned"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pruned: " + kB), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pruned: " + kC), std::string::npos) << r.out;
  const RunResults stored = kgate::read_results_file(file);
  ASSERT_EQ(stored.benchmarks.size(), 1u);
  EXPECT_EQ(stored.benchmarks[0].name, kA);

  // A benchmark that failed keeps its entry, so the next compare still has what it used to take.
  RunResults third = syn::run({syn::benchmark(kA, {.seed = 6}), syn::benchmark(kB, {.seed = 7})});
  ASSERT_EQ(kgate_cli({"baseline", "update", write_run(dir, "third.json", third), "--baseline-dir", baselines}).status, 0);
  third.benchmarks[0].status = kgate::BenchmarkStatus::failed;
  third.benchmarks[0].error = "launch failed";
  third.benchmarks[0].cold.reset();
  r = kgate_cli({"baseline", "update", write_run(dir, "fourth.json", third), "--baseline-dir", baselines, "--prune", "--force"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1 updated, 0 added, 1 kept, 0 pruned"), std::string::npos) << r.out;
  EXPECT_EQ(kgate::read_results_file(file).benchmarks.size(), 2u);
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

  // Skipped by design in both whole runs, or in one: no conflict; the timed record stays.
  const auto skipping = [&](const std::string& name, std::uint64_t seed) {
    RunResults run = syn::run({syn::benchmark(kA, {.seed = seed}), syn::benchmark(kB, {.seed = seed + 1})});
    run.benchmarks[1].status = kgate::BenchmarkStatus::skipped;
    run.benchmarks[1].error = "needs compute capability 100";
    run.benchmarks[1].cold.reset();
    return write_run(dir, name, run);
  };
  const std::string s1 = skipping("skip1.json", 10), s2 = skipping("skip2.json", 20);
  r = kgate_cli({"merge", s1, s2, b, "-o", dir.file("skips.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResults with_skips = kgate::read_results_file(dir.file("skips.json"));
  ASSERT_EQ(with_skips.benchmarks.size(), 2u);
  EXPECT_EQ(with_skips.benchmarks[1].status, kgate::BenchmarkStatus::ok);  // b's timing of kB, not the skips
  EXPECT_EQ(with_skips.context.extra.at("source:" + kB), b);

  // Plain Google Benchmark JSON is not a shard of a kgate run.
  r = kgate_cli({"merge", a, KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json", "-o", dir.file("bad.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("$.context.kgate: required field is missing"), std::string::npos) << r.err;
}

// Peers (other libraries measured beside kgate, docs/peers.md) are reported, never gated: compare
// leaves them out, even failed, and baseline update does not record them.
TEST(KgateCli, PeersAreNotGated) {
  const syn::TempDir dir;
  const std::string base = write_run(dir, "base.json", two_benchmarks(10e-6, 1));
  RunResults with_peers = two_benchmarks(10e-6, 2);
  for (const char* variant : {"torch", "torch-broken"}) {
    BenchmarkRecord peer = syn::benchmark("rmsnorm/" + std::string(variant) + "/m:4096/n:4096/bf16", {.median_s = 20e-6, .seed = 3});
    peer.role = "peer";
    with_peers.benchmarks.push_back(peer);
  }
  with_peers.benchmarks.back().status = kgate::BenchmarkStatus::failed;
  with_peers.benchmarks.back().error = "cuDNN error";
  const std::string current = write_run(dir, "new.json", with_peers);

  auto r = kgate_cli({"compare", base, current, "--json", dir.file("v.json")});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const json verdicts = kgate::read_json_file(dir.file("v.json"));
  EXPECT_EQ(verdicts["benchmarks"].size(), 2u);
  EXPECT_NE(r.err.find("2 peer benchmark(s)"), std::string::npos) << r.err;

  // A peer in the baseline (an older file) is not "missing" from a run without peers either.
  r = kgate_cli({"compare", current, base});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("missing"), std::string::npos) << r.out;

  const std::string baselines = dir.file("baselines");
  r = kgate_cli({"baseline", "update", "--baseline-dir", baselines, current});
  ASSERT_EQ(r.status, 0) << r.err;  // the failed peer does not make the run unfit
  EXPECT_NE(r.out.find("not recorded: 2 peer benchmark(s)"), std::string::npos) << r.out;
  const RunResults stored = kgate::read_results_file(baselines + "/nvidia-h200/kgate.json");
  EXPECT_EQ(stored.benchmarks.size(), 2u);
}

// A peers file merges into a kgate run: its context's extra entries are kept beside the run's own,
// and its benchmarks, measured without ceilings of their own, are placed on the run's.
TEST(KgateCli, MergePeersIntoARun) {
  const syn::TempDir dir;
  BenchmarkRecord peer = syn::benchmark("rmsnorm/torch/m:4096/n:4096/bf16", {.median_s = 20e-6, .seed = 3});
  peer.role = "peer";
  peer.pct_of_memory_ceiling = peer.pct_of_compute_ceiling = 0;
  RunResults peers = syn::run({peer});
  peers.context.calibration = {};
  peers.context.date = "2026-12-01T00:00:00Z";
  peers.context.extra = {{"peers.torch", "2.11.0"}};
  peers.context.wall_s = {{"timing", 99}, {"startup", 3}};
  RunResults own = two_benchmarks(10e-6, 1);
  own.context.wall_s = {{"timing", 12}};
  const std::string first = write_run(dir, "own.json", own);
  const auto r = kgate_cli({"merge", first, write_run(dir, "peers.json", peers), "-o", dir.file("merged.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResults merged = kgate::read_results_file(dir.file("merged.json"));
  EXPECT_EQ(merged.context.date, own.context.date);
  EXPECT_EQ(merged.context.extra.at("peers.torch"), "2.11.0");
  // The first input's wall-time phases win; the others' fill the phases it lacks, as extra entries do.
  EXPECT_EQ(merged.context.wall_s, (kgate::PhaseSeconds{{"timing", 12}, {"startup", 3}}));
  ASSERT_EQ(merged.benchmarks.size(), 3u);
  const BenchmarkRecord& placed = merged.benchmarks.back();
  EXPECT_EQ(placed.role, "peer");
  EXPECT_NEAR(placed.pct_of_memory_ceiling, 100 * placed.min_bytes / placed.headline_median_s() / own.context.calibration.copy_bytes_per_s,
              1e-9);
}

// Shards of one run as kgate_bench --kgate_shard writes them, each on its own GPU.
RunResults shard_run(const std::string& benchmark, const std::string& shard, const std::string& gpu_index, const std::string& uuid,
                     std::uint64_t seed) {
  RunResults run = syn::run({syn::benchmark(benchmark, {.seed = seed})});
  run.context.gpu_uuid = uuid;
  run.context.host = "gpu-node-" + gpu_index;
  run.context.extra = {{"shard", shard}, {"cuda_visible_devices", gpu_index}, {"l2_flush", "read"}};
  run.context.wall_s = {{"timing", 12.5}};
  return run;
}

TEST(KgateCli, MergeRecordsWhichGpuRanEachBenchmark) {
  const syn::TempDir dir;
  const std::string s0 = write_run(dir, "shard0.json", shard_run(kA, "0/2", "0", "GPU-aaaa", 1));
  const std::string s1 = write_run(dir, "shard1.json", shard_run(kB, "1/2", "1", "GPU-bbbb", 2));
  auto r = kgate_cli({"merge", s0, s1, "-o", dir.file("merged.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResults merged = kgate::read_results_file(dir.file("merged.json"));
  ASSERT_EQ(merged.benchmarks.size(), 2u);
  const std::map<std::string, std::string> a_origin = {
      {"gpu_name", "NVIDIA H200"}, {"gpu_uuid", "GPU-aaaa"}, {"gpu_index", "0"}, {"host", "gpu-node-0"}, {"shard", "0/2"}};
  EXPECT_EQ(merged.benchmarks[0].provenance, a_origin);
  EXPECT_EQ(merged.benchmarks[1].provenance.at("gpu_uuid"), "GPU-bbbb");
  EXPECT_EQ(merged.benchmarks[1].provenance.at("gpu_index"), "1");
  // What described one process is not the merged run's.
  for (const char* key : {"shard", "cuda_visible_devices"}) EXPECT_FALSE(merged.context.extra.contains(key)) << key;
  EXPECT_TRUE(merged.context.wall_s.empty());
  EXPECT_EQ(merged.context.extra.at("l2_flush"), "read");
  EXPECT_EQ(merged.context.extra.at("merged_from"), s0 + " " + s1);
  // ... and a baseline recorded from the merged run keeps it per entry.
  r = kgate_cli({"baseline", "update", dir.file("merged.json"), "--baseline-dir", dir.file("baselines")});
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResults stored = kgate::read_results_file(dir.file("baselines/nvidia-h200/kgate.json"));
  EXPECT_EQ(stored.benchmarks[1].provenance.at("gpu_uuid"), "GPU-bbbb");
  EXPECT_EQ(stored.benchmarks[1].provenance.at("host"), "gpu-node-1");
  EXPECT_EQ(stored.benchmarks[1].provenance.at("source"), dir.file("merged.json"));

  // A repetition measured on both GPUs lists both.
  const std::string again = write_run(dir, "again.json", shard_run(kA, "1/2", "1", "GPU-bbbb", 3));
  r = kgate_cli({"merge", s0, s1, again, "-o", dir.file("pooled.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(kgate::read_results_file(dir.file("pooled.json")).benchmarks[0].provenance.at("gpu_uuid"), "GPU-aaaa GPU-bbbb");
}

TEST(KgateCli, MergeRefusesAnIncompleteOrMixedSetOfShards) {
  const syn::TempDir dir;
  const std::string s0 = write_run(dir, "shard0.json", shard_run(kA, "0/3", "0", "GPU-aaaa", 1));
  const std::string s2 = write_run(dir, "shard2.json", shard_run(kB, "2/3", "1", "GPU-bbbb", 2));
  auto r = kgate_cli({"merge", s0, s2, "-o", dir.file("merged.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("shard(s) 1/3 missing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("merged.json")));
  r = kgate_cli({"merge", s0, s2, "--partial", "-o", dir.file("merged.json")});
  EXPECT_EQ(r.status, 0) << r.err;

  RunResults other_commit = shard_run(kB, "1/3", "1", "GPU-bbbb", 3);
  other_commit.context.git_commit = "fedcba9876543210fedcba9876543210fedcba98";
  const std::string s1 = write_run(dir, "shard1.json", other_commit);
  r = kgate_cli({"merge", s0, s1, s2, "-o", dir.file("mixed.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(s1 + ": $.context.kgate.provenance.git_commit: shard of commit fedcba98"), std::string::npos) << r.err;

  const std::string of_two = write_run(dir, "of-two.json", shard_run(kB, "1/2", "1", "GPU-bbbb", 4));
  r = kgate_cli({"merge", s0, of_two, "-o", dir.file("mixed.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("shards of one run share their count"), std::string::npos) << r.err;
}

// Two synthetic "benchmark binaries" (tests/data/synthetic-kgate-bench.sh behind a wrapper per
// side) with canned results per run, for kgate ab without a GPU.
class SyntheticBinaries {
 public:
  explicit SyntheticBinaries(const syn::TempDir& dir) : dir_(dir) {
    for (const char* side : {"base", "head"}) {
      const std::string wrapper = dir.write(side, "#!/bin/sh\nSYNTHETIC_BENCH_DIR='" + dir.path().string() + "' SYNTHETIC_BENCH_SIDE=" +
                                                      side + " exec /bin/sh '" KGATE_TEST_DATA_DIR "/synthetic-kgate-bench.sh' \"$@\"\n");
      fs::permissions(wrapper, fs::perms::owner_all);
    }
  }
  std::string binary(const char* side) const { return dir_.file(side); }
  void list(const char* side, const std::vector<std::string>& names) const {
    std::string text;
    for (const std::string& n : names) text += n + "\n";
    dir_.write(std::string(side) + ".list", text);
  }
  // The results of `side`'s n-th run: kA at a_median, kB unchanged.
  void canned(const char* side, int n, double a_median, std::uint64_t seed) const {
    kgate::write_results_file(dir_.file(std::string(side) + "-" + std::to_string(n) + ".json"),
                              kgate::to_json(syn::run({syn::benchmark(kA, {.median_s = a_median, .seed = seed}),
                                                       syn::benchmark(kB, {.median_s = 50e-6, .seed = seed + 100})})));
  }
  std::vector<std::string> calls() const {
    std::vector<std::string> lines;
    std::istringstream in(syn::read_text(dir_.file("calls.log")));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

 private:
  const syn::TempDir& dir_;
};

TEST(KgateCli, AbAlternatesRoundsAndFindsThePlantedSlowdown) {
  const syn::TempDir dir;
  const SyntheticBinaries bins(dir);
  bins.list("base", {kA, kB});
  bins.list("head", {kB, kA});
  for (int n = 1; n <= 3; ++n) {
    bins.canned("base", n, 100e-6, 10 + n);
    bins.canned("head", n, 110e-6, 20 + n);
  }
  dir.write("base.before-processes", "");  // base plays a build that always timed in one process
  const std::string work = dir.file("work");
  const auto r =
      kgate_cli({"ab", "--base", bins.binary("base"), "--head", bins.binary("head"), "--rounds", "3", "--seed", "5", "--benchmark_filter",
                 "rmsnorm", "--work-dir", work, "--markdown", dir.file("ab.md"), "--", "--kgate_min_time=0.2"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("1 slower, 0 faster, 1 same, 0 noisy", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("per round: 0.9"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("3 rounds, order"), std::string::npos) << r.err;
  const std::string markdown = syn::read_text(dir.file("ab.md"));
  EXPECT_EQ(markdown.rfind("❌ kgate: FAIL, 1 slower, 0 faster — rmsnorm/", 0), 0u) << markdown;
  EXPECT_NE(markdown.find("**kgate ab** of `head "), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find(dir.path().string()), std::string::npos) << "the binaries named by file name: " << markdown;

  const std::vector<std::string> calls = bins.calls();
  ASSERT_EQ(calls.size(), 10u);
  EXPECT_EQ(calls[0], "base --benchmark_list_tests=true --benchmark_filter=rmsnorm --kgate_min_time=0.2");
  EXPECT_EQ(calls[1], "head --benchmark_list_tests=true --benchmark_filter=rmsnorm --kgate_min_time=0.2");
  EXPECT_EQ(calls[2], "base --benchmark_list_tests=true --benchmark_filter=^$ --kgate_processes=1");
  EXPECT_EQ(calls[3], "head --benchmark_list_tests=true --benchmark_filter=^$ --kgate_processes=1");
  const std::vector<bool> head_first = kgate::head_first_schedule(3, 5);
  for (std::size_t round = 0; round < 3; ++round) {
    const std::string& first = calls[4 + 2 * round];
    const std::string& second = calls[5 + 2 * round];
    EXPECT_EQ(first.substr(0, 4), head_first[round] ? "head" : "base") << first;
    EXPECT_EQ(second.substr(0, 4), head_first[round] ? "base" : "head") << second;
    for (const std::string* call : {&first, &second}) {
      EXPECT_NE(call->find("--kgate_out=" + work + "/round-" + std::to_string(round + 1) + "-"), std::string::npos) << *call;
      EXPECT_NE(call->find(" --kgate_modes=headline --kgate_counters=off "), std::string::npos) << *call;
      EXPECT_EQ(call->find("--kgate_check=off") != std::string::npos, round > 0) << *call;
      // The rounds are the processes: one each, where the binary knows the flag (head only).
      EXPECT_EQ(call->find(" --kgate_processes=1 ") != std::string::npos, call->starts_with("head")) << *call;
      EXPECT_NE(call->find(" --benchmark_filter=rmsnorm --kgate_min_time=0.2"), std::string::npos) << "user flags last: " << *call;
    }
  }
  const RunResults pooled_head = kgate::read_results_file(work + "/head.json");
  EXPECT_EQ(pooled_head.benchmarks[0].cold->samples_s.size(), 180u);  // 3 rounds x 60
}

TEST(KgateCli, AbRefusesDifferentBenchmarkListsUnlessCommonOnly) {
  const syn::TempDir dir;
  const SyntheticBinaries bins(dir);
  const std::string added = "rmsnorm/new_variant/m:1/n:4096/bf16";
  bins.list("base", {kA, kB});
  bins.list("head", {kA, kB, added});
  for (int n = 1; n <= 2; ++n) {
    bins.canned("base", n, 100e-6, 10 + n);
    bins.canned("head", n, 100e-6, 20 + n);
  }
  auto r = kgate_cli({"ab", "--base", bins.binary("base"), "--head", bins.binary("head"), "--rounds", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("benchmark lists differ"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("only in head:\n  " + added), std::string::npos) << r.err;
  EXPECT_EQ(bins.calls().size(), 2u) << "nothing measured";

  r = kgate_cli({"ab", "--base", bins.binary("base"), "--head", bins.binary("head"), "--rounds", "2", "--common-only"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 2 same", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("note: 1 benchmark(s) not compared, only in head (new): " + added), std::string::npos) << r.err;
  const std::vector<std::string> calls = bins.calls();
  ASSERT_EQ(calls.size(), 10u);  // 2 listings, 2 flag probes, 2 rounds of 2
  EXPECT_NE(calls.back().find("--benchmark_filter=^(fused_add_rmsnorm/vectorized/m:1/n:8192/bf16|rmsnorm/vectorized/m:4096/n:4096/bf16)$"),
            std::string::npos)
      << calls.back();
}

TEST(KgateCli, AbSaysWhyABinaryDidNotRun) {
  const syn::TempDir dir;
  const SyntheticBinaries bins(dir);
  bins.list("base", {kA});
  bins.list("head", {kA});
  bins.canned("base", 1, 100e-6, 1);  // head has no canned results: it exits 1 and writes none
  auto r = kgate_cli({"ab", "--base", bins.binary("base"), "--head", bins.binary("head"), "--rounds", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bins.binary("head") + ": round 1 exited with status 1 and wrote no results"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no canned results"), std::string::npos) << "the log's end is shown: " << r.err;

  r = kgate_cli({"ab", "--base", dir.file("no-such-binary"), "--head", bins.binary("head")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no-such-binary: cannot run it"), std::string::npos) << r.err;
  r = kgate_cli({"ab", "--base", bins.binary("base")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give the head build: --head HEAD_BENCH or --head-cmd CMD"), std::string::npos) << r.err;
  r = kgate_cli({"ab", "--base", bins.binary("base"), "--head", bins.binary("head"), "stray"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unexpected argument 'stray'"), std::string::npos) << r.err;
}

// A command for kgate ab --base-cmd/--head-cmd that writes `side`'s canned results of its round
// (SyntheticBinaries::canned) to $KGATE_OUT and logs what it was told to calls.log.
std::string results_command(const syn::TempDir& dir, const char* side) {
  return "sh '" KGATE_TEST_DATA_DIR "/synthetic-results-command.sh' '" + dir.path().string() + "' " + side;
}

TEST(KgateCli, AbOfCommandsGivesNoChangeOnAnAaAndFindsThePlantedSlowdown) {
  const syn::TempDir dir;
  const SyntheticBinaries canned(dir);
  for (int n = 1; n <= 3; ++n) {
    canned.canned("base", n, 100e-6, 10 + n);
    canned.canned("head", n, 100e-6, 20 + n);  // the same distribution, other samples: an A/A
  }
  const std::string work = dir.file("work");
  auto r = kgate_cli({"ab", "--base-cmd", results_command(dir, "base"), "--head-cmd", results_command(dir, "head"), "--rounds", "3",
                      "--filter", "^rmsnorm/", "--work-dir", work, "--markdown", dir.file("ab.md")});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 1 same, 0 noisy", 0), 0u) << "only " << kA << " is selected: " << r.out;
  EXPECT_NE(syn::read_text(dir.file("ab.md")).find("**kgate ab** of `head sh "), std::string::npos) << "a command named as written";
  std::vector<std::string> calls = canned.calls();
  ASSERT_EQ(calls.size(), 6u);
  for (const std::string& call : calls) EXPECT_NE(call.find(" filter ^rmsnorm/"), std::string::npos) << call;
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "base round 3 filter ^rmsnorm/"), 1);
  EXPECT_EQ(kgate::read_results_file(work + "/head.json").benchmarks.size(), 1u) << "the pooled head holds the selected benchmark";

  for (int n = 1; n <= 3; ++n) canned.canned("head", n, 110e-6, 20 + n);
  r = kgate_cli({"ab", "--base-cmd", results_command(dir, "base"), "--head-cmd", results_command(dir, "head"), "--rounds", "3"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("1 slower, 0 faster, 1 same, 0 noisy", 0), 0u) << r.out;
  calls = canned.calls();
  EXPECT_EQ(calls.back().substr(calls.back().find(" filter")), " filter ") << "no filter: KGATE_FILTER empty";
}

TEST(KgateCli, AbMixesABinaryAndACommand) {
  const syn::TempDir dir;
  const SyntheticBinaries bins(dir);
  bins.list("base", {kA, kB});
  for (int n = 1; n <= 2; ++n) {
    bins.canned("base", n, 100e-6, 10 + n);
    bins.canned("head", n, 100e-6, 20 + n);
  }
  // A one-line command, its variables expanded by its own shell.
  const std::string head = "cp '" + dir.path().string() + "/head-'\"$KGATE_ROUND\"'.json' \"$KGATE_OUT\"";
  const auto r = kgate_cli({"ab", "--base", bins.binary("base"), "--head-cmd", head, "--rounds", "2", "--work-dir", dir.file("work"), "--",
                            "--kgate_min_time=0.2"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(summary_line(r.out).rfind("0 slower, 0 faster, 2 same", 0), 0u) << r.out;
  const std::vector<std::string> calls = bins.calls();
  ASSERT_EQ(calls.size(), 4u) << "the binary's listing, its probe and its 2 rounds; the command logs nothing";
  EXPECT_EQ(calls[0], "base --benchmark_list_tests=true --kgate_min_time=0.2");
  EXPECT_TRUE(calls[3].ends_with(" --kgate_check=off --kgate_min_time=0.2")) << "the flags after -- are the binary's: " << calls[3];
}

TEST(KgateCli, AbSaysWhyACommandDidNotGiveResults) {
  const syn::TempDir dir;
  const SyntheticBinaries canned(dir);
  canned.canned("base", 1, 100e-6, 1);
  const std::string base = results_command(dir, "base");
  const std::string failing = "echo 'synthetic-failure: no GPU here' >&2; exit 3";
  auto r = kgate_cli({"ab", "--base-cmd", base, "--head-cmd", failing, "--rounds", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--head-cmd '" + failing + "': round 1 exited with status 3 and wrote no results to $KGATE_OUT; the end of its log"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\nsynthetic-failure: no GPU here"), std::string::npos) << "its output's end is shown: " << r.err;

  r = kgate_cli({"ab", "--base-cmd", base, "--head-cmd", "echo 'synthetic garbage' > \"$KGATE_OUT\"", "--rounds", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(": round 1 exited with status 0, but wrote no results file kgate reads: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round-1-head.json: "), std::string::npos) << "the file named: " << r.err;

  r = kgate_cli({"ab", "--base-cmd", base, "--head-cmd", results_command(dir, "head"), "--rounds", "1"});  // no canned head results
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("round 1 exited with status 1 and wrote no results to $KGATE_OUT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("head-1.json"), std::string::npos) << "cp's complaint shown: " << r.err;
}

TEST(KgateCli, AbTakesOneBuildPerSide) {
  const syn::TempDir dir;
  const std::string command = "true";
  auto r = kgate_cli({"ab", "--base", dir.file("bench"), "--base-cmd", command, "--head-cmd", command});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give --base or --base-cmd, not both"), std::string::npos) << r.err;
  r = kgate_cli({"ab", "--head-cmd", command});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give the base build: --base BASE_BENCH or --base-cmd CMD"), std::string::npos) << r.err;
  r = kgate_cli({"ab", "--base-cmd", " ", "--head-cmd", command});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--base-cmd: the command is empty"), std::string::npos) << r.err;
  r = kgate_cli({"ab", "--base-cmd", command, "--head-cmd", command, "--", "--kgate_min_time=0.2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("the flags after -- are for benchmark binaries (--base, --head); a command carries its own"), std::string::npos)
      << r.err;
}

}  // namespace
