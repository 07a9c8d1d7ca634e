// kgate story, rendered from workload activity data in tests/data: the synthetic fixture
// (synthetic-story-*.json, made-up timelines) and any recording from a GPU run
// (recorded-*-story-*.json). Checked against their input: the timeline's order, gaps and shares
// (adding up to 100%), the tables, the sentences, well-formed SVG, the results I/O of the timeline,
// and the command line, including how it runs kgate_bench.
#include "kgate/story/story.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kgate/results/results_io.hpp"
#include "kgate/base/workload.hpp"
#include "kgate/report/format.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"
#include "tests/xml_check.hpp"

namespace {

using kgate::BenchmarkRecord;
using kgate::NamedRun;
using kgate::report::Document;
using kgate::report::Section;
using kgate::report::Table;
using kgate::story::Story;
namespace fs = std::filesystem;
namespace syn = kgate::synthetic;

constexpr double kTolerance = 1e-9;  // percent: shares are sums of doubles

std::vector<std::string> story_runs() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(KGATE_TEST_DATA_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name.find("-story-") != std::string::npos && name.ends_with(".json") &&
        (name.starts_with("synthetic-") || name.starts_with("recorded-")))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const NamedRun& run_of(const std::string& path) {
  static std::map<std::string, NamedRun> cache;
  if (!cache.contains(path)) cache.emplace(path, NamedRun{path, kgate::read_results_file(path)});
  return cache.at(path);
}

const std::string kFixture = std::string(KGATE_TEST_DATA_DIR) + "/synthetic-story-llama3-8b.json";
const std::string kDecode = "workload/llama3-8b-decode/b:1/l:4096/bf16";

// Every workload benchmark with a timeline in every story file.
std::vector<std::pair<std::string, std::string>> told_benchmarks() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& path : story_runs())
    for (const BenchmarkRecord& r : run_of(path).run.benchmarks)
      if (r.workload && !r.workload->timeline.empty() && r.status == kgate::BenchmarkStatus::ok) out.emplace_back(path, r.name);
  return out;
}

const Section* find_section(const Document& doc, const std::string& title) {
  for (const Section& s : doc.sections)
    if (s.title == title) return &s;
  return nullptr;
}

const Table* first_table(const Section& section) {
  for (const auto& block : section.blocks)
    if (const auto* t = std::get_if<Table>(&block)) return t;
  return nullptr;
}

std::vector<std::string> observations(const Document& doc) {
  const Section* s = find_section(doc, "Observations");
  if (!s) return {};
  return std::get<kgate::report::Bullets>(s->blocks.front()).items;
}

using kgate::cli_test::kgate_cli;
using kgate::cli_test::Outcome;

// ---------------------------------------------------------------------------------------------

TEST(Story, FixturesAreFound) {
  EXPECT_FALSE(story_runs().empty()) << "no synthetic-story-*.json in " KGATE_TEST_DATA_DIR;
  EXPECT_GE(told_benchmarks().size(), 2u);
}

TEST(Story, TimelineIsInStartOrderAndSharesAddUpTo100) {
  for (const auto& [path, name] : told_benchmarks()) {
    SCOPED_TRACE(path + " " + name);
    const Story s = kgate::story::analyze(run_of(path), name);
    const kgate::story::Timeline& t = s.timeline;
    const auto& timeline = s.workload->timeline;
    ASSERT_EQ(t.kernels.size(), timeline.size());
    double kernel_shares = 0, kernels_s = 0;
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const auto& k = t.kernels[i];
      EXPECT_EQ(k.index, i);
      EXPECT_GE(k.kernel->end_s, k.kernel->start_s);
      if (i > 0) {
        EXPECT_GE(k.kernel->start_s, t.kernels[i - 1].kernel->start_s) << "kernel " << i << " starts before kernel " << i - 1;
        EXPECT_GE(k.kernel->step, t.kernels[i - 1].kernel->step) << "steps run in the workload's order";
        EXPECT_DOUBLE_EQ(k.gap_before_s, k.kernel->start_s - t.kernels[i - 1].kernel->end_s);
      }
      kernel_shares += k.share_pct;
      kernels_s += k.kernel->end_s - k.kernel->start_s;
    }
    EXPECT_DOUBLE_EQ(t.span_s, timeline.back().end_s - timeline.front().start_s);
    EXPECT_NEAR(t.kernels_s, kernels_s, 1e-15);
    EXPECT_NEAR(t.kernels_s + t.gaps_s, t.span_s, 1e-15);
    EXPECT_NEAR(kernel_shares + t.gaps_pct, 100.0, kTolerance);

    double step_shares = 0, family_shares = 0;
    for (const auto& step : t.steps) {
      EXPECT_FALSE(step.kernels.empty()) << step.step->label << " launched no kernel";
      step_shares += step.share_pct;
    }
    for (const auto& f : t.families) family_shares += f.share_pct;
    EXPECT_NEAR(step_shares + t.gaps_pct, 100.0, kTolerance);
    EXPECT_NEAR(family_shares + t.gaps_pct, 100.0, kTolerance);
    for (std::size_t i = 1; i < t.families.size(); ++i) EXPECT_GE(t.families[i - 1].share_pct, t.families[i].share_pct);

    ASSERT_NE(s.told(), nullptr);
    EXPECT_DOUBLE_EQ(s.told()->per_token_s, s.step_s / static_cast<double>(s.workload->tokens));
    EXPECT_DOUBLE_EQ(s.agreement_pct(), 100 * (t.span_s - s.step_s) / s.step_s);
  }
}

TEST(Story, DocumentHasItsSectionsAndEverySvgParses) {
  for (const auto& [path, name] : told_benchmarks()) {
    SCOPED_TRACE(path + " " + name);
    const Document doc = kgate::story::build_story({run_of(path), name, "kgate story"});
    std::vector<std::string> titles;
    for (const Section& s : doc.sections) titles.push_back(s.title);
    EXPECT_EQ(titles, (std::vector<std::string>{"Executive summary", "Configuration", "Environment", "Execution timeline",
                                                "Execution story", "Launch overhead", "Kernel time breakdown", "Roofline", "Top kernels",
                                                "Scaling", "Observations", "Reproduction", "Appendix: kernel names"}));
    std::vector<std::string> files;
    for (const auto& chart : doc.charts) {
      files.push_back(chart.file);
      EXPECT_EQ(kgate::testing::xml_problem(chart.svg), "") << chart.file;
      EXPECT_TRUE(chart.svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")) << chart.file;
    }
    for (const char* expected : {"timeline.svg", "breakdown.svg", "roofline.svg"})
      EXPECT_NE(std::find(files.begin(), files.end(), expected), files.end()) << expected;
    for (const Section& section : doc.sections)
      for (const auto& block : section.blocks)
        if (const auto* figure = std::get_if<kgate::report::Figure>(&block)) {
          EXPECT_NE(doc.chart(figure->file), nullptr) << "figure of a chart that was not drawn: " << figure->file;
        }
    const std::string markdown = kgate::report::render_markdown(doc);
    EXPECT_NE(markdown.find("](timeline.svg)"), std::string::npos);
    const std::string html = kgate::report::render_html(doc);
    EXPECT_EQ(html.find("<script"), html.rfind("<script"));  // the table-sorting lines, nothing else
    EXPECT_EQ(html.find("<script src"), std::string::npos);
  }
}

// The timeline table holds every kernel of the record in order, with its own figures.
TEST(Story, TimelineTableMatchesTheRecord) {
  const Story s = kgate::story::analyze(run_of(kFixture), kDecode);
  const Document doc = kgate::story::build_story({run_of(kFixture), kDecode, ""});
  const Table* table = first_table(*find_section(doc, "Execution timeline"));
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), s.workload->timeline.size() + 1);  // and the total
  for (std::size_t i = 0; i < s.workload->timeline.size(); ++i) {
    const kgate::TimelineKernel& k = s.workload->timeline[i];
    EXPECT_EQ(table->rows[i][0].text, std::to_string(i + 1));
    EXPECT_EQ(table->rows[i][1].text, k.start_s > 0 ? kgate::report::format_time(k.start_s) : "0 µs");
    EXPECT_EQ(table->rows[i][3].text, kgate::report::format_time(k.end_s - k.start_s));
    EXPECT_EQ(table->rows[i][6].text, s.workload->steps[k.step].label);
  }
  EXPECT_EQ(table->rows.back()[2].text, kgate::report::format_time(s.timeline.span_s));
}

TEST(Story, AsciiTimelineBarsFollowTheKernels) {
  const Story s = kgate::story::analyze(run_of(kFixture), kDecode);
  const std::string text = kgate::story::ascii_timeline(s, 50);
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), s.timeline.kernels.size() + 2);
  std::size_t previous = 0;
  for (std::size_t i = 0; i < s.timeline.kernels.size(); ++i) {
    const std::string& line = lines[i + 2];
    const std::size_t open = line.rfind('|', line.size() - 2);
    const std::string track = line.substr(open + 1, line.size() - open - 2);
    ASSERT_EQ(track.size(), 50u) << line;
    const std::size_t first = track.find('#');
    ASSERT_NE(first, std::string::npos) << "kernel " << i << " has no bar: " << line;
    EXPECT_GE(first, previous) << line;
    previous = first;
    EXPECT_NE(line.find(s.timeline.kernels[i].step->label), std::string::npos);
  }
  EXPECT_EQ(lines.back().back(), '|');
}

// The sentences quote the data: the largest family's share, and a change of the largest family
// along the batch when the sweep shows one.
TEST(Story, ObservationsComeFromTheData) {
  const Story s = kgate::story::analyze(run_of(kFixture), kDecode);
  const std::vector<std::string> items = observations(kgate::story::build_story({run_of(kFixture), kDecode, ""}));
  ASSERT_FALSE(items.empty());
  const auto& top = s.timeline.families.front();
  EXPECT_NE(items.front().find("`" + top.family + "` " + kgate::report::format_pct(top.share_pct)), std::string::npos) << items.front();
  const Story wide = kgate::story::analyze(run_of(kFixture), "workload/llama3-8b-decode/b:64/l:4096/bf16");
  const bool changes = wide.timeline.families.front().family != top.family;
  const bool told = std::any_of(items.begin(), items.end(), [&](const std::string& item) {
    return item.find("overtakes") != std::string::npos && item.find("`" + wide.timeline.families.front().family + "`") != std::string::npos;
  });
  EXPECT_EQ(told, changes) << "batch 1: " << top.family << ", batch 64: " << wide.timeline.families.front().family;
  const bool agreement = std::any_of(items.begin(), items.end(), [&](const std::string& item) {
    return item.find(kgate::report::format_time(s.timeline.span_s)) != std::string::npos &&
           item.find(kgate::report::format_time(s.step_s)) != std::string::npos;
  });
  EXPECT_TRUE(agreement) << "the kernels + gaps against end-to-end sentence";
}

TEST(Story, ScalingHoldsEveryPointOfTheSameWorkloadBenchmark) {
  const Story s = kgate::story::analyze(run_of(kFixture), kDecode);
  std::size_t expected = 0;
  for (const BenchmarkRecord& r : run_of(kFixture).run.benchmarks) expected += r.variant == "llama3-8b-decode";
  ASSERT_EQ(s.scaling.size(), expected);
  for (std::size_t i = 1; i < s.scaling.size(); ++i) {
    const auto& a = s.scaling[i - 1].point;
    const auto& b = s.scaling[i].point;
    EXPECT_TRUE(a.at("b") < b.at("b") || (a.at("b") == b.at("b") && a.at("l") < b.at("l"))) << a.id() << " " << b.id();
  }
}

TEST(Story, RefusesWhatItCannotTell) {
  const auto problem = [](const NamedRun& run, const std::string& name) {
    try {
      kgate::story::analyze(run, name);
    } catch (const kgate::ResultsError& e) {
      return std::string(e.what());
    }
    return std::string("told");
  };
  const NamedRun& fixture = run_of(kFixture);
  EXPECT_NE(problem(fixture, "workload/llama3-8b-decode/b:2/l:4096/bf16").find("no benchmark"), std::string::npos);
  EXPECT_NE(problem(fixture, "workload/llama3-8b-decode/b:2/l:4096/bf16").find(kDecode), std::string::npos);  // lists the file's

  NamedRun plain{"plain.json", syn::run({syn::benchmark("rmsnorm/vectorized/m:1/n:4096/bf16", {})})};
  EXPECT_NE(problem(plain, "rmsnorm/vectorized/m:1/n:4096/bf16").find("not a workload benchmark"), std::string::npos);

  NamedRun untraced = fixture;
  for (BenchmarkRecord& r : untraced.run.benchmarks)
    if (r.name == kDecode) {
      r.workload->timeline.clear();
      r.workload->timeline_unavailable = "kernel records are off (--kgate_counters=off)";
    }
  EXPECT_NE(problem(untraced, kDecode).find("no timeline: kernel records are off"), std::string::npos);
}

// story.trace.json against the trace event format (the "JSON Object Format" of Chrome's Trace
// Event Format document, which Perfetto's importer reads): every event names its phase, process
// and thread; complete events carry ts and dur in microseconds; the kernels, on their own track,
// are the timeline's, in its order, with its durations and launch shapes.
TEST(Story, TraceEventsAreTheTimeline) {
  for (const auto& [path, name] : told_benchmarks()) {
    SCOPED_TRACE(path + " " + name);
    const Story s = kgate::story::analyze(run_of(path), name);
    // Through text, as a viewer reads it.
    const nlohmann::json trace = nlohmann::json::parse(kgate::story::trace_events(s).dump());
    ASSERT_TRUE(trace.is_object());
    ASSERT_TRUE(trace.at("traceEvents").is_array());
    EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
    std::map<int, std::string> track_names;
    std::vector<nlohmann::json> kernels, steps;
    for (const nlohmann::json& e : trace["traceEvents"]) {
      ASSERT_TRUE(e.at("name").is_string()) << e;
      ASSERT_TRUE(e.at("ph").is_string()) << e;
      ASSERT_TRUE(e.at("pid").is_number_integer()) << e;
      const std::string phase = e["ph"];
      if (phase == "M") {
        if (e["name"] == "thread_name") track_names[e.at("tid").get<int>()] = e["args"].at("name");
        continue;
      }
      ASSERT_EQ(phase, "X") << e;
      ASSERT_TRUE(e.at("tid").is_number_integer()) << e;
      ASSERT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
      (e.at("cat") == "kernel" ? kernels : steps).push_back(e);
    }
    ASSERT_EQ(kernels.size(), s.timeline.kernels.size());
    ASSERT_EQ(steps.size(), s.timeline.steps.size());
    const int stream = kernels.front()["tid"];
    EXPECT_EQ(track_names.at(stream), "stream: kernels");
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const kgate::TimelineKernel& k = *s.timeline.kernels[i].kernel;
      const nlohmann::json& e = kernels[i];
      EXPECT_EQ(e["tid"], stream);
      EXPECT_EQ(e["name"], kgate::report::short_kernel_name(k.kernel)) << "kernel " << i;
      EXPECT_NEAR(e["ts"].get<double>(), k.start_s * 1e6, 1e-9) << "kernel " << i;
      EXPECT_NEAR(e["dur"].get<double>(), (k.end_s - k.start_s) * 1e6, 1e-9) << "kernel " << i;
      EXPECT_EQ(e["args"]["step"], s.workload->steps.at(k.step).label);
      EXPECT_EQ(e["args"]["grid"], nlohmann::json::array({k.kernel.grid[0], k.kernel.grid[1], k.kernel.grid[2]}));
      EXPECT_EQ(e["args"]["block"], nlohmann::json::array({k.kernel.block[0], k.kernel.block[1], k.kernel.block[2]}));
      EXPECT_EQ(e["args"]["registers_per_thread"], k.kernel.registers_per_thread);
      EXPECT_EQ(e["args"].contains("counters"), !k.metrics.empty());
      if (i > 0) {
        EXPECT_GE(e["ts"].get<double>(), kernels[i - 1]["ts"].get<double>()) << "kernels in start order";
      }
    }
    // Each step's slice spans its kernels.
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const auto& view = s.timeline.steps[i];
      EXPECT_EQ(steps[i]["name"], view.step->label);
      EXPECT_NEAR(steps[i]["ts"].get<double>(), view.kernels.front()->kernel->start_s * 1e6, 1e-9);
      EXPECT_NEAR(steps[i]["ts"].get<double>() + steps[i]["dur"].get<double>(), view.kernels.back()->kernel->end_s * 1e6, 1e-6);
    }
  }
}

// The top-kernel table's SM-side column is the counter the run recorded: instruction issue, or the
// SM throughput of runs from before it (the synthetic fixture, then the same run renamed).
TEST(Story, TopKernelsShowTheSmSideCounterTheRunRecorded) {
  const auto columns = [](const NamedRun& run) {
    const Document doc = kgate::story::build_story({run, kDecode, ""});
    std::vector<std::string> titles;
    for (const auto& column : first_table(*find_section(doc, "Top kernels"))->columns) titles.push_back(column.title);
    return titles;
  };
  const auto has = [](const std::vector<std::string>& titles, const char* title) {
    return std::find(titles.begin(), titles.end(), title) != titles.end();
  };
  const std::vector<std::string> older = columns(run_of(kFixture));
  EXPECT_TRUE(has(older, "SM %") && !has(older, "Issue %")) << testing::PrintToString(older);

  NamedRun renamed = run_of(kFixture);
  for (BenchmarkRecord& record : renamed.run.benchmarks)
    if (record.workload)
      for (kgate::TimelineKernel& kernel : record.workload->timeline)
        if (const auto it = kernel.metrics.find(kgate::report::kSmThroughputMetric); it != kernel.metrics.end()) {
          kernel.metrics[kgate::report::kIssueMetric] = it->second;
          kernel.metrics.erase(it);
        }
  const std::vector<std::string> issue = columns(renamed);
  EXPECT_TRUE(has(issue, "Issue %") && !has(issue, "SM %")) << testing::PrintToString(issue);
}

TEST(Story, CountersAbove100PercentAreFlagged) {
  EXPECT_EQ(kgate::report::format_counter_pct(99.5), "99.5%");
  EXPECT_EQ(kgate::report::format_counter_pct(131), "131% ⚠");  // an L2 hit rate from the replay: not a measurement
}

TEST(Story, TimelineSurvivesTheResultsFile) {
  const NamedRun& fixture = run_of(kFixture);
  const kgate::RunResults back = kgate::parse_results(kgate::to_json(fixture.run), "round trip");
  ASSERT_EQ(back.benchmarks.size(), fixture.run.benchmarks.size());
  for (std::size_t i = 0; i < back.benchmarks.size(); ++i) {
    const auto& a = *fixture.run.benchmarks[i].workload;
    const auto& b = *back.benchmarks[i].workload;
    EXPECT_EQ(a.workload, b.workload);
    EXPECT_EQ(a.model.name, b.model.name);
    EXPECT_EQ(a.model.intermediate, b.model.intermediate);
    EXPECT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (std::size_t s = 0; s < a.steps.size(); ++s) {
      EXPECT_EQ(a.steps[s].variant, b.steps[s].variant);
      EXPECT_EQ(a.steps[s].min_bytes, b.steps[s].min_bytes);
    }
    ASSERT_EQ(a.timeline.size(), b.timeline.size());
    for (std::size_t k = 0; k < a.timeline.size(); ++k) {
      EXPECT_EQ(a.timeline[k].step, b.timeline[k].step);
      EXPECT_EQ(a.timeline[k].start_s, b.timeline[k].start_s);
      EXPECT_EQ(a.timeline[k].end_s, b.timeline[k].end_s);
      EXPECT_EQ(a.timeline[k].kernel.name, b.timeline[k].kernel.name);
      EXPECT_EQ(a.timeline[k].metrics, b.timeline[k].metrics);
    }
    EXPECT_EQ(a.traced_span_s, b.traced_span_s);
  }
}

TEST(Story, ReadingRefusesABrokenTimeline) {
  const auto problem = [](const std::function<void(nlohmann::json&)>& spoil) {
    nlohmann::json doc = kgate::read_json_file(kFixture);
    spoil(doc["benchmarks"][0]["kgate"]["workload"]);
    try {
      kgate::parse_results(doc, "spoiled.json");
    } catch (const kgate::ResultsError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_NE(problem([](nlohmann::json& w) {
              w["timeline"][1]["step"] = 99;
            }).find("spoiled.json: $.benchmarks[0].kgate.workload.timeline[1].step: names no step"),
            std::string::npos);
  EXPECT_NE(problem([](nlohmann::json& w) { w["timeline"][2]["start_s"] = 0.0; }).find("not in start order"), std::string::npos);
  EXPECT_NE(problem([](nlohmann::json& w) { w["timeline"][0]["end_s"] = -1.0; }).find("timeline[0].end_s"), std::string::npos);
  EXPECT_NE(problem([](nlohmann::json& w) { w.erase("model"); }).find("workload.model: required field is missing"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The command line

TEST(StoryCli, TellsARecordedRun) {
  const syn::TempDir dir;
  const Outcome r = kgate_cli({"story", "decode", "--batch", "1", "--context", "4096", "--from", kFixture, "--out", dir.file("story")});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* file :
       {"story.md", "story.html", "timeline.svg", "breakdown.svg", "roofline.svg", "scaling-share.svg", "scaling-time.svg"})
    EXPECT_TRUE(fs::exists(dir.file("story/") + file)) << file;
  EXPECT_NE(r.out.find("EXECUTIVE SUMMARY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input_norm"), std::string::npos) << "the ASCII timeline";
  EXPECT_NE(r.out.find("kgate story: wrote 8 files"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("story/story.trace.json")));
  const std::string markdown = syn::read_text(dir.file("story/story.md"));
  EXPECT_NE(markdown.find("# Execution story: Llama-3-8B decode step, batch 1, context 4096"), std::string::npos);
}

TEST(StoryCli, TellsThePrefillStepAsText) {
  const Outcome r = kgate_cli({"story", "prefill", "--prompt", "2048", "--from", kFixture, "--format", "text"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("prefill step, batch 1, prompt 2048"), std::string::npos) << r.out;
}

// Without --from, kgate story runs kgate_bench on the told point and the sweep, and tells the file
// it wrote. A stand-in kgate_bench records its arguments and writes the fixture.
TEST(StoryCli, RunsKgateBenchOnTheSweep) {
  const syn::TempDir dir;
  const std::string args_file = dir.file("args.txt");
  const std::string bench = dir.write("kgate_bench", "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + args_file +
                                                         "'\nfor a in \"$@\"; do case \"$a\" in --kgate_out=*) cp '" + kFixture +
                                                         "' \"${a#--kgate_out=}\";; esac; done\n");
  ::chmod(bench.c_str(), 0755);
  const Outcome r = kgate_cli({"story", "decode", "--batch", "64", "--out", dir.file("out"), "--bench", bench, "--sweep-batch", "1,8",
                               "--sweep-context", "1024,4096", "--bench-args", "--kgate_max_time=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string args = syn::read_text(args_file);
  EXPECT_NE(args.find("--benchmark_filter=^workload/\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--kgate_out=" + dir.file("out/run.json") + "\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--kgate_max_time=1\n"), std::string::npos) << args;
  const std::size_t at = args.find("--kgate_workloads=");
  ASSERT_NE(at, std::string::npos) << args;
  const std::string list = args.substr(at + 18, args.find('\n', at) - at - 18);
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  EXPECT_EQ(names.front(), "workload/llama3-8b-decode/b:64/l:4096/bf16");  // the told point first
  EXPECT_EQ(names.size(), 6u) << list;                                     // batch {1, 8, 64} x context {1024, 4096}
  EXPECT_NE(std::find(names.begin(), names.end(), "workload/llama3-8b-decode/b:8/l:1024/bf16"), names.end()) << list;
  EXPECT_TRUE(fs::exists(dir.file("out/story.md")));
}

TEST(StoryCli, BadInputExits2WithOneLine) {
  const syn::TempDir dir;
  const auto fails = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "story");
    const Outcome r = kgate_cli(args);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  };
  fails({"train", "--from", kFixture, "--out", dir.file("x")}, "unknown workload 'train'");
  fails({"decode", "--prompt", "512", "--from", kFixture, "--out", dir.file("x")}, "--prompt is not an option of workload decode");
  fails({"decode", "--model", "gpt9", "--from", kFixture, "--out", dir.file("x")}, "unknown model 'gpt9'");
  fails({"decode", "--batch", "0", "--from", kFixture, "--out", dir.file("x")}, "--batch: expected a positive integer");
  fails({"decode", "--variant", "gemv", "--from", kFixture, "--out", dir.file("x")}, "expected FAMILY=VARIANT");
  fails({"decode", "--variant", "prefill_attention=naive", "--from", kFixture, "--out", dir.file("x")}, "runs no prefill_attention");
  fails({"decode", "--from", kFixture}, "missing --out DIR");
  fails({"decode", "--from", kFixture, "--bench", "x", "--out", dir.file("x")}, "--from tells a recorded run");
  fails({"decode", "--from", kFixture, "--sweep-batch", "1,2", "--out", dir.file("x")}, "--sweep-batch measures a new one");
  fails({"decode", "--batch", "2", "--from", kFixture, "--out", dir.file("x")}, "no benchmark workload/llama3-8b-decode/b:2/l:4096/bf16");
}

TEST(StoryCli, ABenchThatWritesNothingExits1) {
  const syn::TempDir dir;
  const std::string bench = dir.write("kgate_bench", "#!/bin/sh\nexit 3\n");
  ::chmod(bench.c_str(), 0755);
  const Outcome r = kgate_cli({"story", "decode", "--no-sweep", "--out", dir.file("out"), "--bench", bench});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("exited with status 3 and wrote no results"), std::string::npos) << r.err;
}

TEST(StoryCli, HelpListsTheWorkloadsAndModels) {
  const Outcome r = kgate_cli({"story", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* text :
       {"usage: kgate story WORKLOAD", "decode:", "prefill:", "--batch", "--context", "--prompt", "llama3-8b", "llama3-70b"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
}

}  // namespace
