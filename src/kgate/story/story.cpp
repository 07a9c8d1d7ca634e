// The story's document: its sections in order, and the sentences derived from the data
// (docs/story.md says what each section shows and the rules behind each sentence).
#include <algorithm>
#include <cmath>
#include <map>

#include "kgate/story/story.hpp"
#include "kgate/base/workload.hpp"
#include "kgate/report/format.hpp"
#include "kgate/report/run_sections.hpp"
#include "story_charts.hpp"

namespace kgate::story {
namespace {

using report::Bullets;
using report::Cell;
using report::Code;
using report::code;
using report::Column;
using report::Figure;
using report::literal;
using report::format_pct;
using report::format_time;
using report::Paragraph;
using report::Section;
using report::Subheading;
using report::Table;
using report::Tone;
using report::kDramThroughputMetric;
using report::kL2HitMetric;
using report::kOccupancyMetric;
using report::kIssueMetric;
using report::kSmThroughputMetric;
using report::kTensorMetric;

constexpr std::size_t kTopKernels = 20;

const Workload* registered(const Story& story) { return WorkloadRegistry::instance().find_workload(story.workload->workload); }

// A dimension under its option name ("batch 64"), or its own name where the workload is unknown; as
// inline markup.
std::string option_of(const Story& story, const std::string& dim) {
  if (const Workload* w = registered(story))
    for (const WorkloadParameter& p : w->parameters())
      if (p.dim == dim) return p.option;
  return literal(dim);
}

std::string value_words(const Story& story, const Shape& point, const std::string& except = {}) {
  std::vector<std::string> words;
  for (const Dim& d : point.dims())
    if (d.name != except) words.push_back(option_of(story, d.name) + " " + std::to_string(d.value));
  return report::join_words(words);
}

std::string ratio(double value) { return report::format_ratio(value); }

// "50.3 MFLOP", "1.20 TFLOP".
std::string flop_count(double flops) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kPrefixes)
    if (flops >= scale) return report::sig3(flops / scale) + " " + prefix + "FLOP";
  return report::sig3(flops) + " FLOP";
}

std::string metric(const TimelineKernel& k, const char* name) {
  const auto it = k.metrics.find(name);
  return it == k.metrics.end() ? "-" : report::format_counter_pct(it->second);
}

// Distinct full kernel names in timeline order: the ids K1, K2, ... of the appendix.
std::vector<std::string> kernel_names(const Story& story) {
  std::vector<std::string> names;
  for (const KernelView& k : story.timeline.kernels) {
    const std::string name = report::full_kernel_name(k.kernel->kernel);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string kernel_id(const std::vector<std::string>& names, const KernelRecord& k) {
  const auto at = std::find(names.begin(), names.end(), report::full_kernel_name(k)) - names.begin();
  std::string id = "K";
  return id += std::to_string(at + 1);
}

std::string bound(const StepView& s) { return s.placed ? std::string(to_string(s.roof.cls)) : "-"; }
std::string roof(const StepView& s) { return s.placed ? format_pct(s.roof_pct) + " " + s.ceiling : "-"; }
const StepView& step_of(const Story& story, const KernelView& k) { return story.timeline.steps[k.kernel->step]; }

std::size_t gap_count(const Story& story) { return story.timeline.kernels.empty() ? 0 : story.timeline.kernels.size() - 1; }

// Sentences ----------------------------------------------------------------------------------

// The points that equal the told one in every dimension but `dim`, in order of `dim`.
std::vector<const ScalingPoint*> line_through(const Story& story, const std::string& dim, const Shape& through) {
  std::vector<const ScalingPoint*> line;
  for (const ScalingPoint& p : story.scaling) {
    bool same = p.point.dims().size() == through.dims().size();
    for (std::size_t i = 0; same && i < through.dims().size(); ++i)
      same = through.dims()[i].name == dim || p.point.dims()[i].value == through.dims()[i].value;
    if (same) line.push_back(&p);
  }
  std::stable_sort(line.begin(), line.end(),
                   [&](const ScalingPoint* a, const ScalingPoint* b) { return a->point.at(dim) < b->point.at(dim); });
  return line;
}

const FamilyShare* family_in(const ScalingPoint& p, const std::string& family) {
  for (const FamilyShare& f : p.families)
    if (f.family == family) return &f;
  return nullptr;
}

// Where along a line another family overtakes the first point's largest: "At context 4096,
// `gemv` is 71% of the step at batch 1; at batch 64 `decode_attention` overtakes it (55% against 30%)".
std::optional<std::string> crossover(const Story& story, const std::vector<const ScalingPoint*>& line, const std::string& dim) {
  if (line.size() < 2 || line.front()->families.empty()) return std::nullopt;
  const ScalingPoint& first = *line.front();
  const std::string leader = first.families.front().family;
  const auto at = [&](const ScalingPoint& p) { return option_of(story, dim) + " " + std::to_string(p.point.at(dim)); };
  for (std::size_t i = 1; i < line.size(); ++i) {
    const ScalingPoint& p = *line[i];
    if (p.families.empty() || p.families.front().family == leader) continue;
    const std::string other = p.families.front().family;
    const std::string others = value_words(story, first.point, dim);
    std::string sentence = (others.empty() ? "" : "At " + others + ", ") + code(leader) + " is " +
                           format_pct(first.families.front().share_pct) + " of the step at " + at(first) + "; at " + at(p) + " " +
                           code(other) + " overtakes it (" + format_pct(p.family_share(other)) + " against " +
                           format_pct(p.family_share(leader)) + ")";
    const ScalingPoint& last = *line.back();
    if (&last != &p && !last.families.empty())
      sentence +=
          ", and at " + at(last) + " it is " + format_pct(last.family_share(other)) + " against " + format_pct(last.family_share(leader));
    return sentence + ".";
  }
  return std::nullopt;
}

// What a line of the sweep through the told point shows: how the step and the time per token
// change along it, which family's time grows most, and whether the largest family changes.
std::vector<std::string> scaling_sentences(const Story& story) {
  std::vector<std::string> out;
  for (const Dim& d : story.point.dims()) {
    const std::vector<const ScalingPoint*> line = line_through(story, d.name, story.point);
    if (line.size() < 2) continue;
    const ScalingPoint& a = *line.front();
    const ScalingPoint& b = *line.back();
    const std::string from = std::to_string(a.point.at(d.name)), to = std::to_string(b.point.at(d.name));
    std::string sentence = "From " + option_of(story, d.name) + " " + from + " to " + to +
                           (story.point.dims().size() > 1 ? " (at " + value_words(story, story.point, d.name) + ")" : "") +
                           " the step goes from " + format_time(a.step_s) + " to " + format_time(b.step_s) + " (" +
                           ratio(b.step_s / a.step_s) + ") and the time per token from " + format_time(a.per_token_s) + " to " +
                           format_time(b.per_token_s);
    // The family whose kernel time grows the most in absolute terms carries the change.
    const FamilyShare* grew = nullptr;
    double growth = 0;
    for (const FamilyShare& f : b.families) {
      const FamilyShare* before = family_in(a, f.family);
      const double g = f.time_s - (before ? before->time_s : 0);
      if (before && (!grew || g > growth)) {
        grew = &f;
        growth = g;
      }
    }
    if (grew && growth > 0)
      sentence += "; " + code(grew->family) + " grows the most, from " + format_time(family_in(a, grew->family)->time_s) + " to " +
                  format_time(grew->time_s);
    out.push_back(sentence + ".");
    if (const auto c = crossover(story, line, d.name)) {
      out.push_back(*c);
    } else if (!a.families.empty() && !b.families.empty()) {
      out.push_back("Along the " + option_of(story, d.name) +
                    (story.point.dims().size() > 1 ? " (at " + value_words(story, story.point, d.name) + ")" : "") + ", " +
                    code(a.families.front().family) + " stays the largest family: " + format_pct(a.families.front().share_pct) +
                    " of the step at " + option_of(story, d.name) + " " + from + ", " + format_pct(b.families.front().share_pct) + " at " +
                    to + ".");
    }
  }
  // Crossovers on the other lines of the sweep, where the told point's lines show none.
  for (const Dim& d : story.point.dims()) {
    std::vector<std::string> seen;
    for (const ScalingPoint& p : story.scaling) {
      const std::vector<const ScalingPoint*> line = line_through(story, d.name, p.point);
      const std::string key = value_words(story, p.point, d.name);
      if (std::find(seen.begin(), seen.end(), key) != seen.end() || line.size() < 2) continue;
      seen.push_back(key);
      if (std::find(line.begin(), line.end(), story.told()) != line.end()) continue;
      if (const auto c = crossover(story, line, d.name)) out.push_back(*c);
    }
  }
  return out;
}

std::string family_sentence(const Story& story) {
  const Timeline& t = story.timeline;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < t.families.size() && i < 2; ++i) {
    const FamilyShare& f = t.families[i];
    std::vector<std::string> steps;
    for (const std::string& s : f.steps) steps.push_back(literal(s));
    parts.push_back(code(f.family) + " " + format_pct(f.share_pct) + " (" + report::join_words(steps) + ")");
  }
  return "By family, " + report::join_words(parts) + " of the step; the gaps between kernels " + format_pct(t.gaps_pct) + ".";
}

std::string agreement_sentence(const Story& story) {
  const Timeline& t = story.timeline;
  const TimingRecord* headline = story.record->headline();
  const double diff = story.agreement_pct();
  return "The kernels (" + format_time(t.kernels_s) + ") and the gaps (" + format_time(t.gaps_s) + ") of the traced run add up to " +
         format_time(t.span_s) + "; the end-to-end time measured " + story.record->headline_mode + " is " + format_time(story.step_s) +
         " (median of " + std::to_string(headline ? headline->samples_s.size() : 0) +
         " samples): " + (std::fabs(diff) <= 5 ? "within " + format_pct(std::fabs(diff)) : "they differ by " + format_pct(diff)) + ".";
}

std::string overhead_sentence(const Story& story) {
  const Timeline& t = story.timeline;
  std::string s = "Between its " + std::to_string(t.kernels.size()) + " kernels the stream idles " + format_time(std::max(t.gaps_s, 0.0)) +
                  " in " + std::to_string(gap_count(story)) + " gaps (" + format_pct(t.gaps_pct) + " of the step" +
                  (gap_count(story) ? ", " + format_time(t.gaps_s / static_cast<double>(gap_count(story))) + " each on average" : "") + ")";
  if (story.hot_s > 0)
    s += "; replayed from a CUDA graph with the L2 warm the step takes " + format_time(story.hot_s) + ", " +
         format_pct(100 * (1 - story.hot_s / story.step_s)) + " less than cold (graph launches and a warm L2 together)";
  return s + ".";
}

std::vector<std::string> bound_sentences(const Story& story) {
  std::vector<std::string> out;
  std::map<RooflineClass, std::vector<const StepView*>> by_class;
  for (const StepView& s : story.timeline.steps)
    if (s.placed) by_class[s.roof.cls].push_back(&s);
  if (by_class.empty()) return out;
  std::vector<std::string> parts;
  for (const auto& [cls, steps] : by_class) {
    double share = 0;
    for (const StepView* s : steps) share += s->share_pct;
    parts.push_back(std::to_string(steps.size()) + " " + std::string(to_string(cls)) + " (" + format_pct(share) + " of the step)");
  }
  out.push_back("Of the " + std::to_string(story.timeline.steps.size()) + " steps, " + report::join_words(parts) + ".");
  if (by_class.contains(RooflineClass::latency_bound)) {
    std::vector<std::string> names;
    for (const StepView* s : by_class[RooflineClass::latency_bound]) names.push_back(literal(s->step->label));
    out.push_back("Latency-bound: " + report::join_words(names) + " — the roofline allows their work less time than the launch floor (" +
                  format_time(story.run->context.calibration.launch_floor_s) +
                  " for an empty kernel), so their time is mostly the fixed cost of a kernel; fusing them into a neighbour "
                  "would remove it.");
  }
  const StepView* largest = story.timeline.largest_step();
  const StepView* weakest = nullptr;
  for (const StepView& s : story.timeline.steps)
    if (s.placed && s.share_pct >= 5 && s.roof.cls != RooflineClass::latency_bound && (!weakest || s.roof_pct < weakest->roof_pct))
      weakest = &s;
  if (largest && largest->placed) {
    std::string sentence = "The largest step, " + literal(largest->step->label) + " (" +
                           literal(largest->step->family + "/" + largest->step->variant) + "), reaches " + format_pct(largest->roof_pct) +
                           " of the " + largest->ceiling + " ceiling";
    if (weakest && weakest != largest)
      sentence += "; among the steps of at least 5% of the step, " + literal(weakest->step->label) +
                  " reaches the least: " + format_pct(weakest->roof_pct) + " of the " + weakest->ceiling + " ceiling";
    out.push_back(sentence + ".");
  }
  return out;
}

std::vector<std::string> summary_sentences(const Story& story) {
  const RunContext& c = story.run->context;
  const Timeline& t = story.timeline;
  std::vector<std::string> out;
  std::string first = "The " + literal(story_title(story)) + " (one decoder layer) takes " + format_time(story.step_s) + " end to end" +
                      (c.gpu_name.empty() ? "" : " on the " + c.gpu_name) + " (" + story.record->headline_mode +
                      (story.record->headline_mode == "cold" ? ": L2 flushed before the step" : "") + ")";
  if (story.hot_s > 0 && story.record->headline_mode == "cold") first += ", " + format_time(story.hot_s) + " replayed from a CUDA graph";
  out.push_back(first + ".");
  if (const StepView* largest = t.largest_step(); largest && !t.families.empty()) {
    std::string second = "Of its " + std::to_string(t.kernels.size()) + " kernels, " + code(t.families.front().family) + " takes " +
                         format_pct(t.families.front().share_pct) + "; the largest step is " + literal(largest->step->label) + " (" +
                         format_pct(largest->share_pct);
    if (largest->placed)
      second += ", " + bound(*largest) + ", " + format_pct(largest->roof_pct) + " of the " + largest->ceiling + " ceiling";
    out.push_back(second + ").");
  }
  out.push_back(agreement_sentence(story));
  for (const Dim& d : story.point.dims())
    if (const auto c2 = crossover(story, line_through(story, d.name, story.point), d.name)) {
      out.push_back(*c2);
      break;
    }
  return out;
}

// Sections -----------------------------------------------------------------------------------

Section summary_section(const Story& story) {
  std::string text;
  for (const std::string& s : summary_sentences(story)) text += (text.empty() ? "" : " ") + s;
  return {"Executive summary", {Paragraph{text, true}}};
}

Section configuration_section(const Story& story) {
  const WorkloadRecord& w = *story.workload;
  const ModelConfig& m = w.model;
  Section section{"Configuration", {}};
  const Workload* workload = registered(story);
  section.blocks.push_back(Paragraph{"Workload " + code(w.workload) + (workload ? ": " + workload->description() : std::string()) +
                                     ". Benchmark " + code(story.record->name) + "."});
  Table model;
  model.columns = {{"Model"},          {"Hidden", true},       {"Query heads", true}, {"KV heads", true},
                   {"Head dim", true}, {"Intermediate", true}, {"Layers", true},      {"Max position", true}};
  model.rows.push_back({{m.display_name.empty() ? literal(m.name) : literal(m.display_name) + " (" + code(m.name) + ")"},
                        {std::to_string(m.hidden)},
                        {std::to_string(m.q_heads)},
                        {std::to_string(m.kv_heads)},
                        {std::to_string(m.head_dim)},
                        {std::to_string(m.intermediate)},
                        {std::to_string(m.layers)},
                        {std::to_string(m.max_position)}});
  section.blocks.push_back(std::move(model));

  Table point;
  point.columns = {{"Parameter"}, {"Value", true}, {"Meaning"}};
  for (const Dim& d : story.point.dims()) {
    std::string meaning = "-";
    if (workload)
      for (const WorkloadParameter& p : workload->parameters())
        if (p.dim == d.name) meaning = p.meaning;
    point.rows.push_back({{option_of(story, d.name) + " (" + code(d.name) + ")"}, {std::to_string(d.value)}, {meaning}});
  }
  point.rows.push_back({{"tokens per step"}, {std::to_string(w.tokens)}, {"what the time per token divides by"}});
  section.blocks.push_back(std::move(point));

  section.blocks.push_back(Subheading{"Steps"});
  const bool chosen = story.record->variant.find('+') != std::string::npos;
  section.blocks.push_back(
      Paragraph{"The layer's kernels in launch order, each step with the variant that ran it: " +
                std::string(chosen ? "the ones named in the benchmark (" + code(story.record->variant) + "), else " : "") +
                "the first of the step's preference (workloads/) that is registered, runs on this GPU and accepts the shape. Each step "
                "runs on inputs of its own shape; data is not chained from one kernel to the next, which only changes what the small "
                "activations find in the L2 (flushed before the step anyway)."});
  Table steps;
  steps.columns = {{"#", true}, {"Step"}, {"Family"}, {"Variant"}, {"Shape"}, {"Min traffic", true}, {"FLOPs", true}};
  for (const StepView& s : story.timeline.steps)
    steps.rows.push_back({{std::to_string(s.index + 1)},
                          {literal(s.step->label)},
                          {code(s.step->family)},
                          {code(s.step->variant)},
                          {code(s.step->shape)},
                          {report::format_bytes(s.step->min_bytes)},
                          {flop_count(s.step->flops)}});
  section.blocks.push_back(std::move(steps));
  return section;
}

Section timeline_section(const Story& story) {
  const Timeline& t = story.timeline;
  Section section{"Execution timeline", {}};
  section.blocks.push_back(
      Paragraph{"What the GPU stream ran during one cold run of the step (L2 flushed before it), from the CUPTI activity records: the "
                "run whose span is the median of " +
                std::to_string(story.workload->traced_span_s.size()) +
                " traced runs, queued behind the timer's hold exactly as the cold samples are, so that no host launch latency lands "
                "in it. Times are from the first kernel's start."});
  section.blocks.push_back(Figure{"timeline.svg", "Each kernel on the stream (top row) and on a row of its own; grey: the gaps.", true});
  const std::vector<std::string> names = kernel_names(story);
  Table table;
  table.columns = {{"#", true},     {"Start", true}, {"End", true}, {"Duration", true}, {"Gap before", true},
                   {"Share", true}, {"Step"},        {"Kernel"},    {"Grid"},           {"Block"}};
  for (const KernelView& k : t.kernels)
    table.rows.push_back({{std::to_string(k.index + 1)},
                          {offset_time(k.kernel->start_s)},
                          {offset_time(k.kernel->end_s)},
                          {format_time(k.kernel->end_s - k.kernel->start_s)},
                          {k.index == 0         ? "-"
                           : k.gap_before_s < 0 ? "overlap " + format_time(-k.gap_before_s)
                                                : format_time(k.gap_before_s),
                           k.gap_before_s < 0 ? Tone::warn : Tone::plain},
                          {format_pct(k.share_pct)},
                          {literal(k.step->label)},
                          {code(report::short_kernel_name(k.kernel->kernel)) + " [" + kernel_id(names, k.kernel->kernel) + "]"},
                          {report::format_dims(k.kernel->kernel.grid)},
                          {report::format_dims(k.kernel->kernel.block)}});
  if (t.kernels.size() > 1) {
    double sum = 0;
    for (const KernelView& k : t.kernels) sum += k.share_pct;
    table.rows.push_back({{""},
                          {""},
                          {format_time(t.span_s)},
                          {format_time(t.kernels_s)},
                          {format_time(t.gaps_s)},
                          {format_pct(sum) + " + " + format_pct(t.gaps_pct)},
                          {"**total**"},
                          {""},
                          {""},
                          {""}});
  }
  section.blocks.push_back(std::move(table));
  return section;
}

// The step told as the process-focused reports tell a request: each kernel with where its time
// goes and what bounds it.
Section narrative_section(const Story& story) {
  const Timeline& t = story.timeline;
  std::string text = "EXECUTION STORY: " + story_title(story) + "\n";
  if (!story.run->context.gpu_name.empty()) text += "GPU: " + story.run->context.gpu_name + ", one decoder layer, one stream\n";
  text += "\n";
  for (const KernelView& k : t.kernels) {
    const StepView& s = step_of(story, k);
    if (k.index > 0 && k.gap_before_s != 0) text += "│   gap " + format_time(k.gap_before_s) + "\n";
    text += (k.index + 1 == t.kernels.size() ? "└── " : "├── ") + std::string("t = ") + offset_time(k.kernel->start_s) + ": " +
            s.step->label + " — " + report::short_kernel_name(k.kernel->kernel) + " (" + s.step->family + "/" + s.step->variant + "), " +
            format_time(k.kernel->end_s - k.kernel->start_s) + ", " + format_pct(k.share_pct) + " of the step\n";
    const std::string indent = k.index + 1 == t.kernels.size() ? "        " : "│       ";
    text += indent + "→ grid " + report::format_dims(k.kernel->kernel.grid) + " × block " + report::format_dims(k.kernel->kernel.block) +
            ", " + std::to_string(k.kernel->kernel.registers_per_thread) + " registers\n";
    if (s.placed && s.kernels.front() == &k)
      text += indent + "→ step " + bound(s) + ", " + format_pct(s.roof_pct) + " of the " + s.ceiling + " ceiling (" +
              (s.ceiling == "compute" ? report::format_flops(s.roof.flops_per_s) : report::format_bandwidth(s.roof.bytes_per_s)) + ")\n";
    std::string counters;
    for (const auto& [name, title] :
         {std::pair{kDramThroughputMetric, "DRAM"}, std::pair{kIssueMetric, "issue"}, std::pair{kSmThroughputMetric, "SM"},
          std::pair{kOccupancyMetric, "occupancy"}, std::pair{kL2HitMetric, "L2 hit"}})
      if (const auto it = k.kernel->metrics.find(name); it != k.kernel->metrics.end())
        counters += (counters.empty() ? "" : ", ") + std::string(title) + " " + format_pct(it->second);
    if (!counters.empty()) text += indent + "→ " + counters + "\n";
  }
  text += "\nSUMMARY\n";
  text += "  kernels " + format_time(t.kernels_s) + " + gaps " + format_time(t.gaps_s) + " = " + format_time(t.span_s) + "\n";
  text += "  end to end (" + story.record->headline_mode + "): " + format_time(story.step_s) + "\n";
  if (story.hot_s > 0) text += "  replayed from a CUDA graph (hot): " + format_time(story.hot_s) + "\n";
  if (story.workload->tokens > 0)
    text += "  per token: " + format_time(story.step_s / static_cast<double>(story.workload->tokens)) + " (" +
            std::to_string(story.workload->tokens) + " tokens per step)\n";
  return {"Execution story", {Code{text}}};
}

Section overhead_section(const Story& story) {
  const Timeline& t = story.timeline;
  const Calibration& cal = story.run->context.calibration;
  const TimingRecord* cold = story.record->cold ? &*story.record->cold : nullptr;
  Section section{"Launch overhead", {}};
  section.blocks.push_back(
      Paragraph{"The sum of the kernels against the end-to-end time is what launching them one after another costs on the GPU: the "
                "gaps. The end-to-end times are the timer's (CUDA events around the whole step, from the timing pass); the traced run "
                "is the timeline's."});
  Table table;
  table.compact = true;
  table.columns = {{"Figure"}, {"Time", true}, {"Share of the span", true, false}, {"How it is measured", false, false}};
  const auto pct_of_span = [&](double s) { return t.span_s > 0 ? format_pct(100 * s / t.span_s) : "-"; };
  if (cold)
    table.rows.push_back({{"end to end, cold"},
                          {format_time(cold->summary.median)},
                          {pct_of_span(cold->summary.median)},
                          {"median of " + std::to_string(cold->samples_s.size()) + " samples, L2 flushed before each"}});
  if (story.traced_event_s > 0)
    table.rows.push_back({{"end to end, traced runs"},
                          {format_time(story.traced_event_s)},
                          {pct_of_span(story.traced_event_s)},
                          {"median of the " + std::to_string(story.workload->traced_event_s.size()) + " traced runs' events"}});
  table.rows.push_back({{"span of the traced run"}, {format_time(t.span_s)}, {"100%"}, {"first kernel start to last kernel end"}});
  table.rows.push_back({{"kernels"},
                        {format_time(t.kernels_s)},
                        {pct_of_span(t.kernels_s)},
                        {std::to_string(t.kernels.size()) + " kernels' durations added up"}});
  table.rows.push_back(
      {{"gaps"},
       {format_time(t.gaps_s)},
       {pct_of_span(t.gaps_s)},
       {std::to_string(gap_count(story)) + " gaps between consecutive kernels" +
        (gap_count(story) ? ", " + format_time(t.gaps_s / static_cast<double>(gap_count(story))) + " each on average" : "")}});
  const double diff = story.agreement_pct();
  table.rows.push_back({{"kernels + gaps against end to end"},
                        {(diff >= 0 ? "+" : "") + format_pct(diff), std::fabs(diff) <= 5 ? Tone::good : Tone::warn},
                        {"-"},
                        {"(span − end to end) / end to end"}});
  if (story.hot_s > 0)
    table.rows.push_back(
        {{"end to end, hot"}, {format_time(story.hot_s)}, {pct_of_span(story.hot_s)}, {"replayed from a CUDA graph, L2 warm, per step"}});
  if (cal.launch_floor_s > 0)
    table.rows.push_back({{"launch floor (calibration)"},
                          {format_time(cal.launch_floor_s)},
                          {"-"},
                          {"an empty kernel launched back to back; " + format_time(cal.graph_floor_s) + " from a CUDA graph"}});
  section.blocks.push_back(std::move(table));
  section.blocks.push_back(Paragraph{overhead_sentence(story) + " " + agreement_sentence(story), true});
  return section;
}

Section breakdown_section(const Story& story) {
  Section section{"Kernel time breakdown", {}};
  section.blocks.push_back(Figure{"breakdown.svg", "Each step's share of the step, largest first, coloured by its bound class.", true});
  Table table;
  table.columns = {{"Family"}, {"Steps"}, {"Kernels", true}, {"Time", true}, {"Share", true}};
  for (const FamilyShare& f : story.timeline.families) {
    std::size_t kernels = 0;
    for (const StepView& s : story.timeline.steps)
      if (s.step->family == f.family) kernels += s.kernels.size();
    std::vector<std::string> steps;
    for (const std::string& s : f.steps) steps.push_back(literal(s));
    table.rows.push_back(
        {{code(f.family)}, {report::join_words(steps)}, {std::to_string(kernels)}, {format_time(f.time_s)}, {format_pct(f.share_pct)}});
  }
  table.rows.push_back(
      {{"gaps between kernels"}, {"-"}, {"-"}, {format_time(story.timeline.gaps_s)}, {format_pct(story.timeline.gaps_pct)}});
  section.blocks.push_back(std::move(table));
  section.blocks.push_back(Paragraph{family_sentence(story)});
  return section;
}

Section roofline_section(const Story& story, bool charted) {
  Section section{"Roofline", {}};
  section.blocks.push_back(
      Paragraph{"Each step on the roofline: the family's minimum traffic and FLOPs at the step's shape over the time of the step's "
                "kernels in the timeline, against the ceilings measured in the same run (the bytes and FLOP models are per step, so a "
                "step with two kernels sits there as one). Classes as in `kgate report` (roofline.hpp)."});
  if (charted) section.blocks.push_back(Figure{"roofline.svg", "The steps under the measured copy, read and GEMM ceilings."});
  Table table;
  table.columns = {{"#", true},           {"Step"},           {"Variant"},         {"Time", true},
                   {"Min traffic", true}, {"Achieved", true}, {"% of roof", true}, {"Bound"}};
  for (const StepView& s : story.timeline.steps)
    table.rows.push_back({{std::to_string(s.index + 1)},
                          {literal(s.step->label)},
                          {code(s.step->family + "/" + s.step->variant)},
                          {format_time(s.time_s)},
                          {report::format_bytes(s.step->min_bytes)},
                          {!s.placed                ? "-"
                           : s.ceiling == "compute" ? report::format_flops(s.roof.flops_per_s)
                                                    : report::format_bandwidth(s.roof.bytes_per_s)},
                          {roof(s)},
                          {bound(s)}});
  section.blocks.push_back(std::move(table));
  for (const std::string& sentence : bound_sentences(story)) section.blocks.push_back(Paragraph{sentence});
  return section;
}

Section top_kernels_section(const Story& story) {
  Section section{"Top kernels", {}};
  std::vector<const KernelView*> kernels;
  for (const KernelView& k : story.timeline.kernels) kernels.push_back(&k);
  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelView* a, const KernelView* b) {
    return a->kernel->end_s - a->kernel->start_s > b->kernel->end_s - b->kernel->start_s;
  });
  if (kernels.size() > kTopKernels) kernels.resize(kTopKernels);
  const bool counters = std::any_of(kernels.begin(), kernels.end(), [](const KernelView* k) { return !k->kernel->metrics.empty(); });
  const report::SmSideCounter sm = report::sm_side_counter([&](const char* metric) {
    return std::any_of(kernels.begin(), kernels.end(), [&](const KernelView* k) { return k->kernel->metrics.contains(metric); });
  });
  section.blocks.push_back(
      Paragraph{"The step's kernels by time, as a profiling report's top-kernel table: bound class and share of the roof are the "
                "step's (the models are per step); the counters are the range profiler's, each kernel of a step run after the "
                "L2 was emptied as for a cold run (`kgate_bench`'s counter pass): DRAM % = " +
                code(kDramThroughputMetric) + ", " + sm.title + " = " + code(sm.metric) + ", Occupancy % = " + code(kOccupancyMetric) +
                ", L2 hit % = " + code(kL2HitMetric) + ", Tensor % = " + code(kTensorMetric) + ". " + report::kCounterReplayNote + "."});
  if (!counters) {
    const std::string why = story.record->metrics_unavailable;
    section.blocks.push_back(Paragraph{"No per-kernel counters were recorded" + (why.empty() ? std::string(".") : ": " + why)});
  }
  const std::vector<std::string> names = kernel_names(story);
  Table table;
  table.compact = true;
  table.columns = {{"Rank", true},
                   {"Time %", true},
                   {"Duration", true},
                   {"Step"},
                   {"Kernel"},
                   {"Bound"},
                   {"% of roof", true, false},
                   {"DRAM %", true, false},
                   {sm.title, true, false},
                   {"Occupancy %", true, false},
                   {"L2 hit %", true, false},
                   {"Tensor %", true, false},
                   {"Registers", true, false},
                   {"Blocks", true, false}};
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelView& k = *kernels[i];
    const StepView& s = step_of(story, k);
    table.rows.push_back({{std::to_string(i + 1)},
                          {format_pct(k.share_pct)},
                          {format_time(k.kernel->end_s - k.kernel->start_s)},
                          {literal(s.step->label)},
                          {code(report::short_kernel_name(k.kernel->kernel)) + " [" + kernel_id(names, k.kernel->kernel) + "]"},
                          {bound(s)},
                          {roof(s)},
                          {metric(*k.kernel, kDramThroughputMetric)},
                          {metric(*k.kernel, sm.metric)},
                          {metric(*k.kernel, kOccupancyMetric)},
                          {metric(*k.kernel, kL2HitMetric)},
                          {metric(*k.kernel, kTensorMetric)},
                          {std::to_string(k.kernel->kernel.registers_per_thread)},
                          {std::to_string(report::block_count(k.kernel->kernel))}});
  }
  section.blocks.push_back(std::move(table));
  return section;
}

Section scaling_section(const Story& story, const std::vector<report::Chart>& charts) {
  Section section{"Scaling", {}};
  if (story.scaling.size() < 2) {
    section.blocks.push_back(Paragraph{"The results file holds no other point of " + code(story.record->variant) +
                                       ": run `kgate story` without `--no-sweep`, or give a file with a sweep."});
    return section;
  }
  section.blocks.push_back(Paragraph{
      "Every workload benchmark of " + code(story.record->variant) + " in the results file (" + std::to_string(story.scaling.size()) +
      " points), each measured as the told one: the step's end-to-end time (cold and hot), its time per token, and where its "
      "time goes by its own timeline."});
  for (const report::Chart& chart : charts)
    if (chart.file == "scaling-share.svg")
      section.blocks.push_back(Figure{chart.file, "The share of each point's step by kernel family, and its gaps."});
    else if (chart.file == "scaling-time.svg")
      section.blocks.push_back(Figure{chart.file, "Time per token at each point (the told one marked *)."});
  std::vector<std::string> families;
  for (const WorkloadStepRecord& s : story.workload->steps)
    if (std::find(families.begin(), families.end(), s.family) == families.end()) families.push_back(s.family);
  Table table;
  table.compact = true;
  for (const Dim& d : story.point.dims()) table.columns.push_back({option_of(story, d.name), true});
  table.columns.insert(table.columns.end(), {{"Step (cold)", true}, {"Hot", true, false}, {"Per token", true}, {"Largest step"}});
  for (const std::string& f : families) table.columns.push_back({literal(f) + " %", true, false});
  for (const ScalingPoint& p : story.scaling) {
    std::vector<Cell> row;
    for (const Dim& d : p.point.dims())
      row.push_back({(p.record == story.record ? "**" + std::to_string(d.value) + "**" : std::to_string(d.value))});
    row.push_back({format_time(p.step_s)});
    row.push_back({format_time(p.hot_s)});
    row.push_back({format_time(p.per_token_s)});
    row.push_back({p.dominant_step.empty() ? "-" : literal(p.dominant_step) + " " + format_pct(p.dominant_step_pct)});
    for (const std::string& f : families) {
      const bool largest = !p.families.empty() && p.families.front().family == f;
      row.push_back({p.families.empty() ? "-" : largest ? "**" + format_pct(p.family_share(f)) + "**" : format_pct(p.family_share(f))});
    }
    table.rows.push_back(std::move(row));
  }
  section.blocks.push_back(std::move(table));
  return section;
}

Section observations_section(const Story& story) {
  Bullets bullets{{}, true};
  bullets.items.push_back(family_sentence(story));
  for (const std::string& s : scaling_sentences(story)) bullets.items.push_back(s);
  bullets.items.push_back(overhead_sentence(story));
  bullets.items.push_back(agreement_sentence(story));
  if (story.timeline.overlap)
    bullets.items.push_back(
        "Some kernels start before their predecessor ends (programmatic dependent launch): their gap is "
        "negative, and the gaps' total is net of it.");
  for (const std::string& s : bound_sentences(story)) bullets.items.push_back(s);
  return {"Observations", {bullets}};
}

Section appendix_section(const Story& story) {
  Section section{"Appendix: kernel names", {}};
  const std::vector<std::string> names = kernel_names(story);
  Table table;
  table.columns = {{"Id"}, {"Short name"}, {"Demangled name"}, {"Mangled name"}};
  for (std::size_t i = 0; i < names.size(); ++i)
    for (const KernelView& k : story.timeline.kernels)
      if (report::full_kernel_name(k.kernel->kernel) == names[i]) {
        const KernelRecord& r = k.kernel->kernel;
        table.rows.push_back(
            {{kernel_id(names, r)}, {code(report::short_kernel_name(r))}, {code(r.demangled.empty() ? "-" : r.demangled)}, {code(r.name)}});
        break;
      }
  section.blocks.push_back(std::move(table));
  return section;
}

}  // namespace

report::Document build_story(const StoryInputs& inputs) {
  const Story story = analyze(inputs.run, inputs.benchmark);
  // The report's environment and reproduction sections, of a run holding only the told benchmark.
  ReportInputs told;
  told.current = {inputs.run.source, {inputs.run.run.context, {*story.record}, inputs.run.run.has_kgate_block}};
  told.invocation = inputs.invocation;
  report::RunSections shared = report::run_sections(told);

  report::Document doc;
  doc.title = "Execution story: " + literal(story_title(story));
  doc.subtitle = "Benchmark " + code(story.record->name) + " from " + code(inputs.run.source) +
                 (story.run->context.gpu_name.empty() ? "" : ", " + literal(story.run->context.gpu_name)) +
                 (story.run->context.date.empty() ? "" : ", " + story.run->context.date);
  doc.charts.push_back(timeline_chart(story));
  doc.charts.push_back(breakdown_chart(story));
  const std::optional<report::Chart> roofline = step_roofline_chart(story);
  if (roofline) doc.charts.push_back(*roofline);
  std::vector<report::Chart> scaling;
  for (const auto& chart : {scaling_share_chart(story), scaling_time_chart(story)})
    if (chart) scaling.push_back(*chart);
  doc.charts.insert(doc.charts.end(), scaling.begin(), scaling.end());

  doc.sections = {summary_section(story),        configuration_section(story),
                  std::move(shared.environment), timeline_section(story),
                  narrative_section(story),      overhead_section(story),
                  breakdown_section(story),      roofline_section(story, roofline.has_value()),
                  top_kernels_section(story),    scaling_section(story, scaling),
                  observations_section(story),   std::move(shared.reproduction),
                  appendix_section(story)};
  return doc;
}

}  // namespace kgate::story
