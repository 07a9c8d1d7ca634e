// What kgate story measures and writes (story/story_plan.hpp), without a command line or a GPU:
// the told benchmark and its sweep from the registered workloads, the requests it refuses, the
// flags kgate_bench gets, and which files each format writes from the synthetic story fixture.
#include "kgate/story/story_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "kgate/results/results_io.hpp"
#include "tests/thrown.hpp"

namespace {

namespace story = kgate::story;

const std::string kFixture = std::string(KGATE_TEST_DATA_DIR) + "/synthetic-story-llama3-8b.json";

// The message of the std::invalid_argument that planning `request` throws; empty when it plans.
std::string refusal(const story::StoryRequest& request) {
  return kgate::testing_support::message_thrown<std::invalid_argument>([&] { story::plan_story(request, true); });
}

TEST(StoryPlan, TheToldPointIsTheDefaultWithTheParametersGiven) {
  const kgate::Workload& decode = *kgate::WorkloadRegistry::instance().find_workload("decode");
  const story::StoryPlan plain = story::plan_story({.workload = "decode"}, false);
  EXPECT_EQ(plain.told.model, story::kDefaultModel);
  EXPECT_EQ(plain.told.point.id(), decode.default_point().id());
  EXPECT_EQ(plain.benchmarks, std::vector<std::string>{plain.told.name()}) << "no sweep";

  const story::StoryPlan asked =
      story::plan_story({.workload = "decode", .chosen = {{"gemv", "cublas"}}, .parameters = {{"batch", 64}}}, false);
  EXPECT_EQ(asked.told.point.at("b"), 64);
  EXPECT_EQ(asked.told.point.at("l"), decode.default_point().at("l"));
  EXPECT_NE(asked.told.name().find("+gemv=cublas"), std::string::npos) << asked.told.name();
}

TEST(StoryPlan, TheSweepIsEveryCombinationWithTheToldPointFirst) {
  const story::StoryPlan plan =
      story::plan_story({.workload = "decode", .parameters = {{"batch", 64}}, .sweeps = {{"batch", {1, 8}}, {"context", {1024, 4096}}}},
                        true);
  ASSERT_EQ(plan.benchmarks.size(), 6u);  // batch {1, 8, 64} x context {1024, 4096}
  EXPECT_EQ(plan.benchmarks.front(), "workload/llama3-8b-decode/b:64/l:4096/bf16");
  EXPECT_NE(std::find(plan.benchmarks.begin(), plan.benchmarks.end(), "workload/llama3-8b-decode/b:8/l:1024/bf16"), plan.benchmarks.end());
  EXPECT_EQ(std::count(plan.benchmarks.begin(), plan.benchmarks.end(), plan.told.name()), 1) << "the told point once";
}

TEST(StoryPlan, RefusesWhatNoWorkloadHas) {
  EXPECT_EQ(refusal({.workload = "train"}).rfind("unknown workload 'train' (workloads: decode, ", 0), 0u) << refusal({.workload = "train"});
  EXPECT_EQ(refusal({.workload = "decode", .model = "gpt9"}).rfind("unknown model 'gpt9' (models: ", 0), 0u);
  EXPECT_EQ(refusal({.workload = "decode", .parameters = {{"prompt", 512}}})
                .rfind("--prompt is not an option of workload decode (its parameters: --", 0),
            0u);
  EXPECT_EQ(refusal({.workload = "decode", .sweeps = {{"prompt", {512}}}}).rfind("--sweep-prompt is not an option of workload decode", 0),
            0u);
  EXPECT_EQ(refusal({.workload = "decode", .chosen = {{"prefill_attention", "naive"}}}),
            "--variant prefill_attention=naive: workload decode runs no prefill_attention kernel");
  EXPECT_EQ(refusal({.workload = "decode"}), "");
}

TEST(StoryPlan, KgateBenchMeasuresTheListedWorkloadsIntoTheResultsFile) {
  EXPECT_EQ(story::bench_flags({"workload/a", "workload/b"}, "out/run.json"),
            (std::vector<std::string>{"--benchmark_filter=^workload/", "--kgate_workloads=workload/a,workload/b",
                                      "--kgate_out=out/run.json"}));
  const std::set<std::string> options = story::parameter_options();
  for (const char* option : {"batch", "context", "prompt"}) EXPECT_TRUE(options.contains(option)) << option;
  const std::string listing = story::registry_listing();
  EXPECT_EQ(listing.rfind("workloads:\n  decode: ", 0), 0u) << listing;
  EXPECT_NE(listing.find("\n  llama3-8b (Llama-3-8B): hidden 4096"), std::string::npos) << listing;
}

TEST(StoryPlan, EachFormatWritesItsFiles) {
  EXPECT_EQ(story::parse_story_format("trace"), story::StoryFormat::trace);
  EXPECT_THROW(story::parse_story_format("pdf"), std::invalid_argument);
  const kgate::StoryInputs inputs{{kFixture, kgate::read_results_file(kFixture)},
                                  "workload/llama3-8b-decode/b:1/l:4096/bf16",
                                  "kgate story decode"};
  const auto names = [&](story::StoryFormat format) {
    std::vector<std::string> files;
    for (const auto& [name, text] : story::tell_story(inputs, format).files) {
      EXPECT_FALSE(text.empty()) << name;
      files.push_back(name);
    }
    return files;
  };
  const std::vector<std::string> all = names(story::StoryFormat::all);
  EXPECT_EQ(all.front(), "story.md");
  EXPECT_EQ(all[all.size() - 2], "story.html");
  EXPECT_EQ(all.back(), "story.trace.json");
  EXPECT_TRUE(std::all_of(all.begin() + 1, all.end() - 2, [](const std::string& n) { return n.ends_with(".svg"); }));
  EXPECT_EQ(names(story::StoryFormat::markdown), std::vector<std::string>(all.begin(), all.end() - 2));
  EXPECT_EQ(names(story::StoryFormat::html), std::vector<std::string>{"story.html"});
  EXPECT_EQ(names(story::StoryFormat::trace), std::vector<std::string>{"story.trace.json"});
  const story::StoryOutput text = story::tell_story(inputs, story::StoryFormat::text);
  EXPECT_TRUE(text.files.empty());
  EXPECT_NE(text.text.find("EXECUTIVE SUMMARY"), std::string::npos);
}

}  // namespace
