#include "kgate/base/workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace kgate {
namespace {

bool only(std::string_view text, std::string_view allowed_punctuation) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || allowed_punctuation.find(c) != std::string_view::npos;
  });
}

std::string names_of(const WorkloadRegistry& registry, bool models) {
  std::string out;
  if (models)
    for (const ModelConfig* m : registry.models()) out += (out.empty() ? "" : ", ") + m->name;
  else
    for (const Workload* w : registry.workloads()) out += (out.empty() ? "" : ", ") + w->name();
  return out.empty() ? "none registered" : out;
}

std::string dims_of(const Workload& workload) {
  std::string out;
  for (const WorkloadParameter& p : workload.parameters()) out += (out.empty() ? "" : "/") + p.dim + ":N";
  return out + "/" + std::string(to_string(workload.dtype()));
}

}  // namespace

Shape Workload::point(const std::map<std::string, std::int64_t>& values) const {
  std::vector<Dim> dims;
  std::size_t used = 0;
  for (const WorkloadParameter& p : parameters()) {
    const auto it = values.find(p.dim);
    if (it == values.end()) throw std::invalid_argument("workload " + name() + " needs its " + p.option + " (" + p.dim + ")");
    dims.push_back({p.dim, it->second});
    ++used;
  }
  if (used != values.size()) {
    for (const auto& [dim, value] : values)
      if (std::none_of(dims.begin(), dims.end(), [&](const Dim& d) { return d.name == dim; }))
        throw std::invalid_argument("workload " + name() + " has no parameter '" + dim + "' (its point is " + dims_of(*this) + ")");
  }
  return Shape(std::move(dims), dtype());
}

WorkloadRegistry& WorkloadRegistry::instance() {
  static WorkloadRegistry registry;
  return registry;
}

bool WorkloadRegistry::add_workload(std::unique_ptr<Workload> workload) {
  std::string name = workload->name();
  workloads_.add(std::move(name), std::move(workload));
  return true;
}

bool WorkloadRegistry::add_model(ModelConfig model) {
  std::string name = model.name;
  models_.add(std::move(name), std::make_unique<ModelConfig>(std::move(model)));
  return true;
}

const Workload* WorkloadRegistry::find_workload(std::string_view name) const { return workloads_.find(name); }

const ModelConfig* WorkloadRegistry::find_model(std::string_view name) const { return models_.find(name); }

std::vector<const Workload*> WorkloadRegistry::workloads() const { return workloads_.by_name(); }

std::vector<const ModelConfig*> WorkloadRegistry::models() const { return models_.by_name(); }

void WorkloadRegistry::validate() const {
  std::string problems;
  for (const std::string& name : workloads_.duplicate_names()) problems += "\n  workload '" + name + "' registered twice";
  for (const std::string& name : models_.duplicate_names()) problems += "\n  model '" + name + "' registered twice";
  for (const Workload* w : workloads_.in_registration_order()) {
    // '-' separates the model from the workload in a benchmark name, so a workload has none.
    if (!only(w->name(), "_")) problems += "\n  workload name '" + w->name() + "' is not lower-case letters, digits and '_'";
  }
  for (const ModelConfig* model : models_.in_registration_order()) {
    const ModelConfig& m = *model;
    if (!only(m.name, "-._")) problems += "\n  model name '" + m.name + "' is not lower-case letters, digits, '-', '.' and '_'";
    if (m.hidden <= 0 || m.q_heads <= 0 || m.kv_heads <= 0 || m.head_dim <= 0 || m.intermediate <= 0 || m.layers <= 0 ||
        m.max_position <= 0 || m.q_heads % m.kv_heads != 0)
      problems += "\n  model '" + m.name + "' has a dimension that is not positive, or kv_heads not dividing q_heads";
  }
  if (!problems.empty()) throw std::logic_error("workload registry is inconsistent:" + problems);
}

std::string WorkloadSpec::variant() const {
  std::string out = model + "-" + workload;
  for (const auto& [family, variant] : chosen) out += "+" + family + "=" + variant;
  return out;
}

std::string WorkloadSpec::name() const { return std::string(kWorkloadFamily) + "/" + variant() + "/" + point.id(); }

WorkloadSpec WorkloadSpec::parse(std::string_view name, const WorkloadRegistry& registry) {
  const std::string text(name);
  const std::string prefix = std::string(kWorkloadFamily) + "/";
  const auto fail = [&](const std::string& problem) -> std::invalid_argument {
    return std::invalid_argument("workload benchmark '" + text + "': " + problem);
  };
  if (!text.starts_with(prefix)) throw fail("expected workload/<model>-<workload>/<point>, e.g. workload/llama3-8b-decode/b:1/l:4096/bf16");
  const std::size_t slash = text.find('/', prefix.size());
  if (slash == std::string::npos) throw fail("no point after the workload (e.g. /b:1/l:4096/bf16)");
  const std::string variant = text.substr(prefix.size(), slash - prefix.size());

  WorkloadSpec spec{.model = {}, .workload = {}, .chosen = {}, .point = Shape({}, DType::bf16)};
  std::size_t plus = variant.find('+');
  const std::string base = variant.substr(0, plus);
  while (plus != std::string::npos) {
    const std::size_t next = variant.find('+', plus + 1);
    const std::string choice = variant.substr(plus + 1, next == std::string::npos ? std::string::npos : next - plus - 1);
    const std::size_t equals = choice.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == choice.size()) throw fail("'" + choice + "' is not <family>=<variant>");
    if (!spec.chosen.emplace(choice.substr(0, equals), choice.substr(equals + 1)).second)
      throw fail("family '" + choice.substr(0, equals) + "' chosen twice");
    plus = next;
  }
  const std::size_t dash = base.rfind('-');
  if (dash == std::string::npos || dash == 0) throw fail("'" + base + "' is not <model>-<workload>");
  spec.model = base.substr(0, dash);
  spec.workload = base.substr(dash + 1);
  if (!registry.find_model(spec.model)) throw fail("unknown model '" + spec.model + "' (models: " + names_of(registry, true) + ")");
  const Workload* workload = registry.find_workload(spec.workload);
  if (!workload) throw fail("unknown workload '" + spec.workload + "' (workloads: " + names_of(registry, false) + ")");
  spec.point = Shape::parse(text.substr(slash + 1));
  const std::vector<WorkloadParameter> parameters = workload->parameters();
  bool matches = spec.point.dims().size() == parameters.size() && spec.point.dtype() == workload->dtype();
  for (std::size_t i = 0; matches && i < parameters.size(); ++i) matches = spec.point.dims()[i].name == parameters[i].dim;
  if (!matches) throw fail("the point of workload " + spec.workload + " is " + dims_of(*workload));
  return spec;
}

std::vector<std::string> candidate_variants(const WorkloadStep& step, const WorkloadSpec& spec) {
  if (const auto it = spec.chosen.find(step.family); it != spec.chosen.end()) return {it->second};
  return step.preference;
}

}  // namespace kgate
