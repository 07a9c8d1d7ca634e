// kgate story: the flags, and kgate_bench run on what story_plan.hpp says to measure; what to
// measure and what to write are the library's (include/kgate/story/story_plan.hpp).
#include <filesystem>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/base/text.hpp"
#include "kgate/results/file_io.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/story/story_plan.hpp"
#include "process.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate story WORKLOAD [--model M] [--batch B] [--context L] [--prompt P] --out DIR
                   [--variant FAMILY=VARIANT ...] [--from RUN.json | --bench PATH [--bench-args ARGS]]
                   [--sweep-batch LIST] [--sweep-context LIST] [--sweep-prompt LIST] [--no-sweep]
                   [--format all|markdown|html|trace|text]

Tells one workload benchmark — a transformer layer's step built from the suite's kernels — as what
happens on the GPU: configuration, execution timeline (SVG Gantt chart and ASCII),
kernel time breakdown, each step on the roofline, the top kernels with their bound class and CUPTI
counters, how the step scales with its parameters, and observations derived from the data.

Without --from it runs kgate_bench on the workload benchmark and on a sweep around it (the
scaling section), writing DIR/run.json, then tells the story from that file.

options:
  --model M            model configuration (default llama3-8b)
  --batch, --context, --prompt N
                       the workload's parameters (default: the workload's default point)
  --variant F=V        run family F's variant V in every step of F instead of the default choice;
                       may be repeated. Part of the benchmark's name
  --sweep-<param> LIST the values of a parameter in the sweep, e.g. --sweep-batch 1,8,64
                       (default: the workload's sweep); the sweep is every combination
  --no-sweep           measure the told point only
  --from RUN.json      tell the story from a recorded run instead of running kgate_bench; the
                       sweep is the file's other points of the same workload benchmark
  --bench PATH         the kgate_bench binary (default: next to kgate in the build tree, else on PATH)
  --bench-args ARGS    more kgate_bench flags, space-separated (e.g. "--kgate_max_time=2")
  --out DIR            where story.md, story.html and the charts go (created when missing); not
                       needed for --format text with --from
  --format FORMAT      all (default): story.md, story.html, the charts (.svg), story.trace.json;
                       markdown: story.md and its charts; html: story.html; trace:
                       story.trace.json (Chrome trace events: open it in ui.perfetto.dev or
                       chrome://tracing); text: standard output only
  -h, --help           this text

The terminal version is printed in every format.

exit status: 0 story written, 1 kgate_bench did not produce the benchmark, 2 bad input or usage

)";

// "--variant F=V" may be repeated; the parser keeps one value per option, so these are taken out first.
std::map<std::string, std::string> take_variants(Arguments& arguments) {
  std::map<std::string, std::string> chosen;
  Arguments rest;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    std::string value;
    if (arguments[i].starts_with("--variant=")) {
      value = arguments[i].substr(10);
    } else if (arguments[i] == "--variant") {
      if (i + 1 >= arguments.size()) throw UsageError("--variant needs a value");
      value = arguments[++i];
    } else {
      rest.push_back(arguments[i]);
      continue;
    }
    const std::size_t equals = value.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == value.size())
      throw UsageError("--variant: expected FAMILY=VARIANT, got '" + value + "'");
    if (!chosen.emplace(value.substr(0, equals), value.substr(equals + 1)).second)
      throw UsageError("--variant: family '" + value.substr(0, equals) + "' given twice");
  }
  arguments = std::move(rest);
  return chosen;
}

std::int64_t positive_integer(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value <= 0) throw UsageError(option + ": expected a positive integer, got '" + text + "'");
  return value;
}

std::vector<std::int64_t> integer_list(const std::string& option, const std::string& text) {
  std::vector<std::int64_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(positive_integer(option, item));
  if (values.empty()) throw UsageError(option + ": expected a list such as 1,8,64");
  return values;
}

// kgate_bench next to this kgate in the build tree (build/tools/kgate/kgate, build/bench/kgate_bench),
// else whatever PATH finds.
std::string default_bench() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = self.parent_path() / ".." / ".." / "bench" / "kgate_bench";
    if (std::filesystem::exists(beside, ec)) return beside.lexically_normal().string();
  }
  return "kgate_bench";
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Runs kgate_bench on the plan's benchmarks into DIR/run.json, with this process's standard streams;
// std::nullopt when it wrote no results.
std::optional<NamedRun> measure(const story::StoryPlan& plan, const Args& args, const fs::path& out_dir, Io& io) {
  fs::create_directories(out_dir);
  const std::string run_path = (out_dir / "run.json").string();
  std::vector<std::string> command = {args.value("--bench").value_or(default_bench())};
  for (const std::string& flag : story::bench_flags(plan.benchmarks, run_path)) command.push_back(flag);
  for (const std::string& word : split_words(args.value("--bench-args").value_or(""))) command.push_back(word);
  io.err << "kgate story: " << join(command, " ") << "\n";
  fs::remove(run_path);
  int status = 0;
  try {
    status = run_process(command, "", "");
  } catch (const ResultsError& e) {
    throw ResultsError(std::string(e.what()) + " (give the kgate_bench binary with --bench)");
  }
  if (!fs::exists(run_path)) {
    io.err << "kgate story: " << command.front() << " exited with status " << status << " and wrote no results\n";
    return std::nullopt;
  }
  if (status != 0) io.err << "kgate story: warning: " << command.front() << " exited with status " << status << "\n";
  return NamedRun{run_path, read_results_file(run_path)};
}

}  // namespace

int run_story(const Arguments& all_arguments, Io& io) {
  const WorkloadRegistry& registry = WorkloadRegistry::instance();
  registry.validate();
  Arguments arguments = all_arguments;
  story::StoryRequest request;
  request.chosen = take_variants(arguments);
  OptionSpec spec{.with_value = {"--model", "--out", "--from", "--bench", "--bench-args", "--format"}, .flags = {"--no-sweep"}};
  const std::set<std::string> parameters = story::parameter_options(registry);
  for (const std::string& option : parameters) spec.with_value.insert({"--" + option, "--sweep-" + option});
  const auto parsed = parse_or_help(arguments, spec, kUsage + story::registry_listing(registry), io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  if (args.positionals().size() != 1) throw UsageError("expected one workload (" + std::to_string(args.positionals().size()) + " given)");
  request.workload = args.positionals().front();
  request.model = args.value("--model").value_or(story::kDefaultModel);
  const auto from = args.value("--from");
  const auto out_dir = args.value("--out");
  if (from && (args.value("--bench") || args.value("--bench-args")))
    throw UsageError("--from tells a recorded run: --bench and --bench-args run a new one");
  if (from && args.flag("--no-sweep")) throw UsageError("--from tells a recorded run: its sweep is the file's other points");
  for (const std::string& option : parameters) {
    if (const auto value = args.value("--" + option)) request.parameters[option] = positive_integer("--" + option, *value);
    if (const auto values = args.value("--sweep-" + option)) {
      if (from)
        throw UsageError("--from tells a recorded run: its sweep is the file's other points, --sweep-" + option + " measures a new one");
      request.sweeps[option] = integer_list("--sweep-" + option, *values);
    }
  }
  const story::StoryFormat format =
      refusals_as_usage_errors([&] { return story::parse_story_format(args.value("--format").value_or("all")); });
  const story::StoryPlan plan =
      refusals_as_usage_errors([&] { return story::plan_story(request, !from && !args.flag("--no-sweep"), registry); });
  if (!out_dir && !(from && format == story::StoryFormat::text)) throw UsageError("missing --out DIR");

  const std::optional<NamedRun> run = from ? NamedRun{*from, read_results_file(*from)} : measure(plan, args, *out_dir, io);
  if (!run) return kExitGate;
  const story::StoryOutput story = story::tell_story({*run, plan.told.name(), command_line("kgate story", all_arguments)}, format);
  io.out << story.text;
  if (format == story::StoryFormat::text) return kExitOk;
  const fs::path dir(*out_dir);
  fs::create_directories(dir);
  StagedFiles files;
  for (const auto& [name, text] : story.files) files.add((dir / name).string(), text);
  files.commit();
  io.out << "kgate story: wrote " << files.paths().size() << " files to " << dir.string() << "\n";
  return kExitOk;
}

}  // namespace kgate::cli
