// Hardware behaviour: CUPTI metrics per benchmark, the bound classification, the kernels each
// variant launched, and the appendix of their full names.
#include <algorithm>
#include <map>
#include <set>

#include "kgate/report/format.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

enum class Unit { percent, bytes, nanoseconds, plain };

struct MetricColumn {
  const char* metric;
  const char* title;
  Unit unit;
};
// kgate's default CUPTI metric set (cupti.hpp), with a column title a reader knows. Other
// metrics (--kgate_metrics) get a column under their own name.
constexpr MetricColumn kMetricColumns[] = {
    {"gpu__time_duration.sum", "Profiled time", Unit::nanoseconds},
    {"dram__bytes_read.sum", "DRAM read", Unit::bytes},
    {"dram__bytes_write.sum", "DRAM written", Unit::bytes},
    {kDramThroughputMetric, "DRAM %", Unit::percent},
    {kIssueMetric, "Issue %", Unit::percent},
    {kSmThroughputMetric, "SM %", Unit::percent},
    {kOccupancyMetric, "Occupancy %", Unit::percent},
    {kL2HitMetric, "L2 hit %", Unit::percent},
    {"l1tex__t_sector_hit_rate.pct", "L1 hit %", Unit::percent},
    {kTensorMetric, "Tensor %", Unit::percent},
};

std::string format_metric(double value, Unit unit) {
  switch (unit) {
    case Unit::percent: return format_counter_pct(value);
    case Unit::bytes: return format_bytes(value);
    case Unit::nanoseconds: return format_time(value * 1e-9);
    case Unit::plain: return sig3(value);
  }
  return sig3(value);
}

Table metrics_table(const ReportModel& model) {
  std::vector<std::pair<std::string, MetricColumn>> columns;  // metric name, how to show it
  std::set<std::string> present;
  for (const BenchmarkView& v : model.views)
    for (const auto& [name, value] : v.record->metrics) present.insert(name);
  for (const MetricColumn& known : kMetricColumns)
    if (present.erase(known.metric)) columns.emplace_back(known.metric, known);
  for (const std::string& name : present) {
    const bool pct = name.ends_with(".pct") || name.find("pct_of_peak") != std::string::npos;
    columns.emplace_back(name, MetricColumn{nullptr, nullptr, pct ? Unit::percent : Unit::plain});
  }
  Table table;
  table.columns.push_back({"Benchmark"});
  for (const auto& [name, column] : columns) table.columns.push_back({column.title ? column.title : literal(name), true});
  for (const BenchmarkView& v : model.views) {
    if (v.record->metrics.empty()) continue;
    std::vector<Cell> row = {{code(v.record->name)}};
    for (const auto& [name, column] : columns) {
      const auto it = v.record->metrics.find(name);
      row.push_back({it == v.record->metrics.end() ? "-" : format_metric(it->second, column.unit)});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string metric_legend(const Table& table) {
  std::string legend = "Columns: ";
  bool first = true;
  for (const MetricColumn& known : kMetricColumns)
    for (const Column& c : table.columns)
      if (c.title == known.title) {
        legend += std::string(first ? "" : "; ") + known.title + " = " + code(known.metric);
        first = false;
      }
  return legend + ". Sums are over the variant's kernels in one call; other metrics are duration-weighted averages. " + kCounterReplayNote +
         ".";
}

// Per roofline class: how many benchmarks, their mean share of the roof and the mean of the
// main counters, as a profiling report's classification table.
Table classification_table(const ReportModel& model) {
  const SmSideCounter sm = sm_side_counter([&](const char* metric) {
    return std::any_of(model.views.begin(), model.views.end(), [&](const BenchmarkView& v) { return v.record->metrics.contains(metric); });
  });
  const std::vector<std::pair<const char*, const char*>> means = {{sm.metric, sm.mean_title},
                                                                  {kDramThroughputMetric, "Mean DRAM %"},
                                                                  {kOccupancyMetric, "Mean occupancy %"},
                                                                  {kL2HitMetric, "Mean L2 hit %"}};
  Table table;
  table.columns = {{"Class"}, {"Benchmarks", true}, {"Share", true}, {"Mean % of roof", true}};
  for (const auto& [metric, title] : means) table.columns.push_back({title, true, false});
  table.columns.push_back({"Mean time", true, false});

  std::vector<const BenchmarkView*> classified;
  for (const BenchmarkView& v : model.views)
    if (v.ran() && v.roof.pct > 0) classified.push_back(&v);
  const auto row_for = [&](const std::string& label, const std::vector<const BenchmarkView*>& views) {
    double roof = 0, time = 0;
    for (const BenchmarkView* v : views) {
      roof += v->roof.pct;
      time += v->median_s;
    }
    const double n = static_cast<double>(views.size());
    std::vector<Cell> row = {{label},
                             {std::to_string(views.size())},
                             {format_pct(100 * n / static_cast<double>(classified.size()))},
                             {format_pct(roof / n)}};
    for (const auto& [metric, title] : means) {
      double sum = 0;
      int count = 0;
      for (const BenchmarkView* v : views)
        if (const auto it = v->record->metrics.find(metric); it != v->record->metrics.end()) {
          sum += it->second;
          ++count;
        }
      row.push_back({count ? format_pct(sum / count) : "-"});
    }
    row.push_back({format_time(time / n)});
    return row;
  };
  for (const RooflineClass cls :
       {RooflineClass::memory_bound, RooflineClass::compute_bound, RooflineClass::below_roofs, RooflineClass::latency_bound}) {
    std::vector<const BenchmarkView*> members;
    for (const BenchmarkView* v : classified)
      if (v->record->roofline == cls) members.push_back(v);
    if (!members.empty()) table.rows.push_back(row_for(std::string(to_string(cls)), members));
  }
  if (!classified.empty()) table.rows.push_back(row_for("**all**", classified));
  return table;
}

// Distinct full kernel names, in order of first launch: the ids of the appendix ([K1], ...).
std::vector<std::string> kernel_names(const ReportModel& model) {
  std::vector<std::string> names;
  for (const BenchmarkView& v : model.views)
    for (const KernelRecord& k : v.record->kernels)
      if (std::find(names.begin(), names.end(), full_kernel_name(k)) == names.end()) names.push_back(full_kernel_name(k));
  return names;
}

std::string kernel_id(std::size_t index) {
  std::string id = "K";  // appended, not "K" + ...: GCC 12 warns falsely (-Wrestrict) on that
  return id += std::to_string(index + 1);
}

std::string kernel_id(const std::vector<std::string>& names, const KernelRecord& k) {
  return kernel_id(static_cast<std::size_t>(std::find(names.begin(), names.end(), full_kernel_name(k)) - names.begin()));
}

Table kernels_table(const ReportModel& model) {
  const std::vector<std::string> names = kernel_names(model);
  Table table;
  table.columns = {{"Benchmark"},
                   {"Kernel"},
                   {"Grid"},
                   {"Block"},
                   {"Blocks", true},
                   {"Registers", true},
                   {"Shared memory", true},
                   {"Time per launch", true},
                   {"Launches", true}};
  for (const BenchmarkView& v : model.views)
    for (const KernelRecord& k : v.record->kernels)
      table.rows.push_back({{code(v.record->name)},
                            {code(short_kernel_name(k)) + " [" + kernel_id(names, k) + "]"},
                            {format_dims(k.grid)},
                            {format_dims(k.block)},
                            {std::to_string(block_count(k))},
                            {std::to_string(k.registers_per_thread)},
                            {format_bytes(static_cast<double>(k.static_shared_bytes + k.dynamic_shared_bytes))},
                            {format_time(k.duration_s)},
                            {std::to_string(k.launches)}});
  return table;
}

}  // namespace

Section hardware_section(const ReportModel& model) {
  Section section{"Hardware behaviour", {}};
  const Table classes = classification_table(model);
  if (!classes.rows.empty()) {
    section.blocks.push_back(Subheading{"Bound classification"});
    section.blocks.push_back(Paragraph{
        "From the roofline (roofline.hpp): **latency-bound** when the time the roofline allows for the work is below "
        "the launch floor; "
        "else **memory-bound** or **compute-bound** when the benchmark reaches at least half of that roof, and more of "
        "it than of the "
        "other; else **below-roofs** (under the threshold of both roofs: neither memory nor compute limits it, the kernel's own code does). Means are unweighted over the benchmarks of a class."});
    section.blocks.push_back(classes);
  }
  const Table metrics = metrics_table(model);
  section.blocks.push_back(Subheading{"CUPTI metrics"});
  if (metrics.rows.empty()) {
    std::string why;
    for (const BenchmarkView& v : model.views)  // peers are never profiled: their reason is not the run's
      if (!v.record->metrics_unavailable.empty() && v.record->role != "peer") why = v.record->metrics_unavailable;
    section.blocks.push_back(Paragraph{"No CUPTI metrics were recorded" + (why.empty() ? std::string(".") : ": " + literal(why))});
  } else {
    section.blocks.push_back(Paragraph{metric_legend(metrics)});
    section.blocks.push_back(metrics);
  }
  Table kernels = kernels_table(model);
  section.blocks.push_back(Subheading{"Kernels launched"});
  if (kernels.rows.empty()) {
    section.blocks.push_back(Paragraph{"No kernel records (CUPTI activity) in this run."});
  } else {
    section.blocks.push_back(
        Paragraph{"The kernels each benchmark really launched (CUPTI activity records), identical launches folded; "
                  "names shortened, full names in the appendix under their id. The GPU has " +
                  std::to_string(model.sm_count()) + " SMs."});
    kernels.folded = std::to_string(kernels.rows.size()) + " kernel records";
    section.blocks.push_back(std::move(kernels));
  }
  return section;
}

Section kernel_names_appendix(const ReportModel& model) {
  Section section{"Appendix: kernel names", {}};
  const std::vector<std::string> names = kernel_names(model);
  std::map<std::string, const KernelRecord*> record_of;
  for (const BenchmarkView& v : model.views)
    for (const KernelRecord& k : v.record->kernels) record_of.emplace(full_kernel_name(k), &k);
  Table table;
  table.columns = {{"Id"}, {"Short name"}, {"Demangled name"}, {"Mangled name"}};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const KernelRecord& k = *record_of.at(names[i]);
    table.rows.push_back({{kernel_id(i)}, {code(short_kernel_name(k))}, {code(k.demangled.empty() ? "-" : k.demangled)}, {code(k.name)}});
  }
  if (table.rows.empty()) section.blocks.push_back(Paragraph{"No kernel records in this run."});
  else section.blocks.push_back(table);
  return section;
}

}  // namespace kgate::report
