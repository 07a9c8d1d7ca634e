#pragma once
// What `kgate story` measures and writes (docs/story.md): the workload benchmark asked for, checked
// against the registered workloads and models; the sweep around it that kgate_bench measures for
// the scaling section; and the files of each output format. Running kgate_bench is the command
// line's (tools/kgate/story_command.cpp): the library starts no program.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kgate/base/workload.hpp"
#include "kgate/story/story.hpp"

namespace kgate::story {

inline constexpr const char* kDefaultModel = "llama3-8b";

// A workload benchmark as asked for: the workload's default point with the parameters given, and
// the sweep's values per parameter. Parameters are named by their option ("batch", not "b").
struct StoryRequest {
  std::string workload{};
  std::string model = kDefaultModel;
  std::map<std::string, std::string> chosen{};                // family -> variant, instead of the steps' preference
  std::map<std::string, std::int64_t> parameters{};           // the rest at the workload's default point
  std::map<std::string, std::vector<std::int64_t>> sweeps{};  // the rest from the workload's default sweep
};

// The told benchmark and the names of every benchmark kgate_bench measures for its story: each
// combination of the sweep's values, the told point's values included, the told one first.
struct StoryPlan {
  WorkloadSpec told;
  std::vector<std::string> benchmarks{};
};

// Throws std::invalid_argument with a one-line message: an unknown workload or model (naming the
// registered ones), a parameter the workload lacks (naming its own), a --variant family that
// none of its steps runs. `sweep` false: the told benchmark alone (--no-sweep, or a recorded run).
StoryPlan plan_story(const StoryRequest& request, bool sweep, const WorkloadRegistry& registry = WorkloadRegistry::instance());

// kgate_bench's flags that measure `benchmarks` (workload benchmarks) into `results_path`.
std::vector<std::string> bench_flags(const std::vector<std::string>& benchmarks, const std::string& results_path);

// Every parameter option any registered workload has ("batch", "context", "prompt"): what the
// command line accepts as --<option> and --sweep-<option>.
std::set<std::string> parameter_options(const WorkloadRegistry& registry = WorkloadRegistry::instance());

// The registered workloads (their parameters and default point) and models, as --help lists them.
std::string registry_listing(const WorkloadRegistry& registry = WorkloadRegistry::instance());

enum class StoryFormat { all, markdown, html, trace, text };
// "all", "markdown", "html", "trace" or "text"; throws std::invalid_argument on anything else.
StoryFormat parse_story_format(std::string_view name);

// The story of `inputs` as the terminal text (printed in every format) and the files of `format`:
// all: story.md, its charts (.svg), story.html and story.trace.json; markdown: story.md and the
// charts; html: story.html; trace: story.trace.json; text: none.
struct StoryOutput {
  std::string text{};
  std::vector<std::pair<std::string, std::string>> files{};  // file name, contents
};
StoryOutput tell_story(const StoryInputs& inputs, StoryFormat format);

}  // namespace kgate::story
