// kgate story: the thin layer between the command line, kgate_bench and story.hpp.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/story/story.hpp"
#include "kgate/base/workload.hpp"

extern char** environ;

namespace kgate::cli {
namespace {

constexpr const char* kDefaultModel = "llama3-8b";
const std::vector<std::string> kFormats = {"all", "markdown", "html", "trace", "text"};

std::string usage(const WorkloadRegistry& registry) {
  std::string text = R"(usage: kgate story WORKLOAD [--model M] [--batch B] [--context L] [--prompt P] --out DIR
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
  text += "\nworkloads:\n";
  for (const Workload* w : registry.workloads()) {
    text += "  " + w->name() + ": " + w->description() + "\n    parameters:";
    for (const WorkloadParameter& p : w->parameters()) text += " --" + p.option + " (" + p.meaning + ")";
    text += "\n    default point: " + w->default_point().id() + "\n";
  }
  text += "models:\n";
  for (const ModelConfig* m : registry.models())
    text += "  " + m->name + " (" + m->display_name + "): hidden " + std::to_string(m->hidden) + ", heads " +
            std::to_string(m->q_heads) + "/" + std::to_string(m->kv_heads) + ", head_dim " + std::to_string(m->head_dim) +
            ", intermediate " + std::to_string(m->intermediate) + "\n";
  return text;
}

// Every parameter option any registered workload has: --batch, --sweep-batch, ...
std::set<std::string> parameter_options(const WorkloadRegistry& registry) {
  std::set<std::string> options;
  for (const Workload* w : registry.workloads())
    for (const WorkloadParameter& p : w->parameters()) options.insert(p.option);
  return options;
}

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

// Every combination of the sweep's values, the told point's values included.
std::vector<Shape> sweep_points(const Workload& workload, const Shape& told, const Args& args) {
  const std::map<std::string, std::vector<std::int64_t>> defaults = workload.default_sweep();
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> axes;
  for (const WorkloadParameter& p : workload.parameters()) {
    std::vector<std::int64_t> values;
    if (const auto given = args.value("--sweep-" + p.option))
      values = integer_list("--sweep-" + p.option, *given);
    else if (const auto it = defaults.find(p.dim); it != defaults.end())
      values = it->second;
    values.push_back(told.at(p.dim));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    axes.emplace_back(p.dim, std::move(values));
  }
  std::vector<std::map<std::string, std::int64_t>> combinations(1);
  for (const auto& [dim, values] : axes) {
    std::vector<std::map<std::string, std::int64_t>> next;
    for (const auto& partial : combinations)
      for (const std::int64_t v : values) {
        next.push_back(partial);
        next.back()[dim] = v;
      }
    combinations = std::move(next);
  }
  std::vector<Shape> points;
  for (const auto& values : combinations) points.push_back(workload.point(values));
  return points;
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

// Runs the command with this process's standard streams; returns its exit status.
int run_command(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (spawned != 0)
    throw ResultsError("cannot run " + command.front() + ": " + std::strerror(spawned) + " (give the kgate_bench binary with --bench)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw ResultsError("waiting for " + command.front() + ": " + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string invocation(const Arguments& arguments) {
  std::string text = "kgate story";
  for (const std::string& a : arguments) text += " " + (a.find_first_of(" \t'\"$") == std::string::npos ? a : "'" + a + "'");
  return text;
}

void write(const std::filesystem::path& dir, const std::string& name, const std::string& text, std::vector<std::string>& written) {
  const std::string path = (dir / name).string();
  write_file_atomically(path, text);
  written.push_back(path);
}

}  // namespace

int run_story(const Arguments& all_arguments, Io& io) {
  const WorkloadRegistry& registry = WorkloadRegistry::instance();
  registry.validate();
  Arguments arguments = all_arguments;
  const std::map<std::string, std::string> chosen = take_variants(arguments);
  OptionSpec spec{.with_value = {"--model", "--out", "--from", "--bench", "--bench-args", "--format"}, .flags = {"--no-sweep"}, .aliases = {}};
  for (const std::string& option : parameter_options(registry)) {
    spec.with_value.insert("--" + option);
    spec.with_value.insert("--sweep-" + option);
  }
  const Args args(arguments, spec);
  if (args.help()) {
    io.out << usage(registry);
    return kExitOk;
  }
  if (args.positionals().size() != 1)
    throw UsageError("expected one workload (" + std::to_string(args.positionals().size()) + " given)");
  const Workload* workload = registry.find_workload(args.positionals().front());
  if (!workload) {
    std::string names;
    for (const Workload* w : registry.workloads()) names += (names.empty() ? "" : ", ") + w->name();
    throw UsageError("unknown workload '" + args.positionals().front() + "' (workloads: " + names + ")");
  }
  const std::string model_name = args.value("--model").value_or(kDefaultModel);
  const ModelConfig* model = registry.find_model(model_name);
  if (!model) {
    std::string names;
    for (const ModelConfig* m : registry.models()) names += (names.empty() ? "" : ", ") + m->name;
    throw UsageError("unknown model '" + model_name + "' (models: " + names + ")");
  }
  const std::string format = args.value("--format").value_or("all");
  if (std::find(kFormats.begin(), kFormats.end(), format) == kFormats.end())
    throw UsageError("--format: expected all, markdown, html, trace or text, got '" + format + "'");
  const auto from = args.value("--from");
  const auto out_dir = args.value("--out");
  if (from && (args.value("--bench") || args.value("--bench-args")))
    throw UsageError("--from tells a recorded run: --bench and --bench-args run a new one");
  if (from && args.flag("--no-sweep")) throw UsageError("--from tells a recorded run: its sweep is the file's other points");
  for (const std::string& option : parameter_options(registry))
    if (from && args.value("--sweep-" + option))
      throw UsageError("--from tells a recorded run: its sweep is the file's other points, --sweep-" + option + " measures a new one");
  if (!out_dir && !(from && format == "text")) throw UsageError("missing --out DIR");

  // The told point: the workload's default, with the options given.
  std::map<std::string, std::int64_t> values;
  std::string parameters;
  const std::vector<WorkloadParameter> workload_parameters = workload->parameters();
  for (const WorkloadParameter& p : workload_parameters) {
    parameters += (parameters.empty() ? "--" : ", --") + p.option;
    values[p.dim] = workload->default_point().at(p.dim);
    if (const auto given = args.value("--" + p.option)) values[p.dim] = positive_integer("--" + p.option, *given);
  }
  for (const std::string& option : parameter_options(registry)) {
    const bool known = std::any_of(workload_parameters.begin(), workload_parameters.end(),
                                   [&](const WorkloadParameter& p) { return p.option == option; });
    for (const std::string& flag : {"--" + option, "--sweep-" + option})
      if (!known && args.value(flag))
        throw UsageError(flag + " is not an option of workload " + workload->name() + " (its parameters: " + parameters + ")");
  }
  const WorkloadSpec told{.model = model->name, .workload = workload->name(), .chosen = chosen, .point = workload->point(values)};
  const std::vector<WorkloadStep> steps = workload->steps(*model, told.point);
  for (const auto& [family, variant] : chosen)
    if (std::none_of(steps.begin(), steps.end(), [&](const WorkloadStep& s) { return s.family == family; }))
      throw UsageError("--variant " + family + "=" + variant + ": workload " + workload->name() + " runs no " + family + " kernel");

  NamedRun run;
  if (from) {
    run = {*from, read_results_file(*from)};
  } else {
    std::vector<std::string> names = {told.name()};
    if (!args.flag("--no-sweep"))
      for (const Shape& point : sweep_points(*workload, told.point, args)) {
        WorkloadSpec swept = told;
        swept.point = point;
        if (swept.name() != told.name()) names.push_back(swept.name());
      }
    std::filesystem::create_directories(*out_dir);
    const std::string run_path = (std::filesystem::path(*out_dir) / "run.json").string();
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ",") + name;
    std::vector<std::string> command = {args.value("--bench").value_or(default_bench()), "--benchmark_filter=^workload/",
                                        "--kgate_workloads=" + list, "--kgate_out=" + run_path};
    for (const std::string& word : split_words(args.value("--bench-args").value_or(""))) command.push_back(word);
    std::string shown;
    for (const std::string& word : command) shown += (shown.empty() ? "" : " ") + word;
    io.err << "kgate story: " << shown << "\n";
    std::filesystem::remove(run_path);
    const int status = run_command(command);
    if (!std::filesystem::exists(run_path)) {
      io.err << "kgate story: " << command.front() << " exited with status " << status << " and wrote no results\n";
      return kExitGate;
    }
    if (status != 0) io.err << "kgate story: warning: " << command.front() << " exited with status " << status << "\n";
    run = {run_path, read_results_file(run_path)};
  }

  const report::Document story = story::build_story({run, told.name(), invocation(all_arguments)});
  io.out << report::render_text(story);
  if (format == "text") return kExitOk;
  const std::filesystem::path dir(*out_dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  if (format == "all" || format == "markdown") {
    write(dir, "story.md", report::render_markdown(story), written);
    for (const report::Chart& chart : story.charts) write(dir, chart.file, chart.svg, written);
  }
  if (format == "all" || format == "html") write(dir, "story.html", report::render_html(story), written);
  if (format == "all" || format == "trace")
    write(dir, "story.trace.json", story::trace_events(story::analyze(run, told.name())).dump(1) + "\n", written);
  io.out << "kgate story: wrote " << written.size() << " files to " << dir.string() << "\n";
  return kExitOk;
}

}  // namespace kgate::cli
