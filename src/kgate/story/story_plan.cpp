#include "kgate/story/story_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "kgate/base/text.hpp"

namespace kgate::story {
namespace {

// Every combination of the sweep's values, the told point's values included.
std::vector<Shape> sweep_points(const Workload& workload, const Shape& told, const StoryRequest& request) {
  const std::map<std::string, std::vector<std::int64_t>> defaults = workload.default_sweep();
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> axes;
  for (const WorkloadParameter& p : workload.parameters()) {
    std::vector<std::int64_t> values;
    if (const auto given = request.sweeps.find(p.option); given != request.sweeps.end()) values = given->second;
    else if (const auto it = defaults.find(p.dim); it != defaults.end()) values = it->second;
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

// Throws unless every option given is one of the workload's parameters.
template <typename Values>
void check_options(const Workload& workload, const std::map<std::string, Values>& given, const std::string& prefix) {
  const std::vector<WorkloadParameter> own = workload.parameters();
  for (const auto& [option, value] : given)
    if (std::none_of(own.begin(), own.end(), [&](const WorkloadParameter& p) { return p.option == option; })) {
      std::vector<std::string> options;
      for (const WorkloadParameter& p : own) options.push_back("--" + p.option);
      throw std::invalid_argument(prefix + option + " is not an option of workload " + workload.name() +
                                  " (its parameters: " + join(options, ", ") + ")");
    }
}

}  // namespace

StoryPlan plan_story(const StoryRequest& request, bool sweep, const WorkloadRegistry& registry) {
  const Workload* workload = registry.find_workload(request.workload);
  if (!workload) {
    std::vector<std::string> names;
    for (const Workload* w : registry.workloads()) names.push_back(w->name());
    throw std::invalid_argument("unknown workload '" + request.workload + "' (workloads: " + join(names, ", ") + ")");
  }
  const ModelConfig* model = registry.find_model(request.model);
  if (!model) {
    std::vector<std::string> names;
    for (const ModelConfig* m : registry.models()) names.push_back(m->name);
    throw std::invalid_argument("unknown model '" + request.model + "' (models: " + join(names, ", ") + ")");
  }
  check_options(*workload, request.parameters, "--");
  check_options(*workload, request.sweeps, "--sweep-");

  // The told point: the workload's default, with the parameters given.
  std::map<std::string, std::int64_t> values;
  for (const WorkloadParameter& p : workload->parameters()) {
    const auto given = request.parameters.find(p.option);
    values[p.dim] = given != request.parameters.end() ? given->second : workload->default_point().at(p.dim);
  }
  StoryPlan plan{.told = {.model = model->name, .workload = workload->name(), .chosen = request.chosen, .point = workload->point(values)}};
  const std::vector<WorkloadStep> steps = workload->steps(*model, plan.told.point);
  for (const auto& [family, variant] : request.chosen)
    if (std::none_of(steps.begin(), steps.end(), [&](const WorkloadStep& s) { return s.family == family; }))
      throw std::invalid_argument("--variant " + family + "=" + variant + ": workload " + workload->name() + " runs no " + family +
                                  " kernel");

  plan.benchmarks = {plan.told.name()};
  if (sweep)
    for (const Shape& point : sweep_points(*workload, plan.told.point, request)) {
      WorkloadSpec swept = plan.told;
      swept.point = point;
      if (swept.name() != plan.told.name()) plan.benchmarks.push_back(swept.name());
    }
  return plan;
}

std::vector<std::string> bench_flags(const std::vector<std::string>& benchmarks, const std::string& results_path) {
  return {"--benchmark_filter=^workload/", "--kgate_workloads=" + join(benchmarks, ","), "--kgate_out=" + results_path};
}

std::set<std::string> parameter_options(const WorkloadRegistry& registry) {
  std::set<std::string> options;
  for (const Workload* w : registry.workloads())
    for (const WorkloadParameter& p : w->parameters()) options.insert(p.option);
  return options;
}

std::string registry_listing(const WorkloadRegistry& registry) {
  std::string text = "workloads:\n";
  for (const Workload* w : registry.workloads()) {
    text += "  " + w->name() + ": " + w->description() + "\n    parameters:";
    for (const WorkloadParameter& p : w->parameters()) text += " --" + p.option + " (" + p.meaning + ")";
    text += "\n    default point: " + w->default_point().id() + "\n";
  }
  text += "models:\n";
  for (const ModelConfig* m : registry.models())
    text += "  " + m->name + " (" + m->display_name + "): hidden " + std::to_string(m->hidden) + ", heads " + std::to_string(m->q_heads) +
            "/" + std::to_string(m->kv_heads) + ", head_dim " + std::to_string(m->head_dim) + ", intermediate " +
            std::to_string(m->intermediate) + "\n";
  return text;
}

StoryFormat parse_story_format(std::string_view name) {
  static const std::map<std::string_view, StoryFormat> formats = {{"all", StoryFormat::all},
                                                                  {"markdown", StoryFormat::markdown},
                                                                  {"html", StoryFormat::html},
                                                                  {"trace", StoryFormat::trace},
                                                                  {"text", StoryFormat::text}};
  if (const auto it = formats.find(name); it != formats.end()) return it->second;
  throw std::invalid_argument("--format: expected all, markdown, html, trace or text, got '" + std::string(name) + "'");
}

StoryOutput tell_story(const StoryInputs& inputs, StoryFormat format) {
  const report::Document story = build_story(inputs);
  StoryOutput output{.text = report::render_text(story), .files = {}};
  const bool all = format == StoryFormat::all;
  if (all || format == StoryFormat::markdown) {
    output.files.emplace_back("story.md", report::render_markdown(story));
    for (const report::Chart& chart : story.charts) output.files.emplace_back(chart.file, chart.svg);
  }
  if (all || format == StoryFormat::html) output.files.emplace_back("story.html", report::render_html(story));
  if (all || format == StoryFormat::trace)
    output.files.emplace_back("story.trace.json", trace_events(analyze(inputs.run, inputs.benchmark)).dump(1) + "\n");
  return output;
}

}  // namespace kgate::story
