#include "report_counter_diff.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/figures.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/report/format.hpp"
#include "report_model.hpp"

namespace kgate::report {
namespace {

// "+8.00 points": a change of a percentage, in the figures' style.
std::string signed_points(double points) {
  std::string text = kgate::format_change(points / 100);
  text.pop_back();  // its '%'
  return text + " points";
}

CounterRow launch_row(const char* name, const char* chip, double baseline, double current, const std::string& b_text,
                      const std::string& c_text) {
  const double fraction = baseline > 0 ? current / baseline - 1 : 0;
  return {.kind = CounterRow::Kind::launch,
          .name = name,
          .chip = chip,
          .baseline = b_text,
          .current = c_text,
          .change = baseline > 0 ? kgate::format_change(fraction) : "",
          .material = b_text != c_text,
          .size = std::fabs(fraction)};
}

double thread_count(const int (&block)[3]) {
  return static_cast<double>(std::max(block[0], 1)) * std::max(block[1], 1) * std::max(block[2], 1);
}

long long shared_bytes(const KernelRecord& k) { return k.static_shared_bytes + k.dynamic_shared_bytes; }

int launches_per_call(const BenchmarkRecord& r) {
  int launches = 0;
  for (const KernelRecord& k : r.kernels) launches += k.launches;
  return launches;
}

void add_launch_rows(const BenchmarkRecord& baseline, const BenchmarkRecord& current, std::vector<CounterRow>& rows) {
  const KernelRecord* b = dominant_kernel(baseline);
  const KernelRecord* c = dominant_kernel(current);
  if (!b || !c) return;
  rows.push_back({.kind = CounterRow::Kind::kernel,
                  .name = "kernel (the most GPU time)",
                  .chip = "kernel",
                  .baseline = short_kernel_name(*b),
                  .current = short_kernel_name(*c),
                  .material = full_kernel_name(*b) != full_kernel_name(*c)});
  rows.push_back(launch_row("grid", "grid", static_cast<double>(block_count(*b)), static_cast<double>(block_count(*c)),
                            format_dims(b->grid), format_dims(c->grid)));
  rows.push_back(
      launch_row("block", "block", thread_count(b->block), thread_count(c->block), format_dims(b->block), format_dims(c->block)));
  rows.push_back(launch_row("registers per thread", "registers", b->registers_per_thread, c->registers_per_thread,
                            std::to_string(b->registers_per_thread), std::to_string(c->registers_per_thread)));
  rows.push_back(launch_row("shared memory per block", "shared memory", static_cast<double>(shared_bytes(*b)),
                            static_cast<double>(shared_bytes(*c)), format_bytes(static_cast<double>(shared_bytes(*b))),
                            format_bytes(static_cast<double>(shared_bytes(*c)))));
  const int b_launches = launches_per_call(baseline), c_launches = launches_per_call(current);
  rows.push_back(
      launch_row("kernel launches per call", "launches", b_launches, c_launches, std::to_string(b_launches), std::to_string(c_launches)));
}

CounterRow metric_row(const std::string& name, double baseline, double current) {
  // A chip says what the gate's notes say: the metric's readable name where kgate knows it.
  const std::string_view label = metric_label(name);
  CounterRow row{.kind = CounterRow::Kind::metric,
                 .name = name,
                 .chip = label.empty() ? name.substr(0, name.find('.')) : std::string(label)};
  row.material = material_metric_change(name, baseline, current);
  if (is_percent_metric(name)) {
    row.baseline = kgate::format_percent(baseline);
    row.current = kgate::format_percent(current);
    row.change = signed_points(current - baseline);
    row.size = std::fabs(current - baseline) / 100;
    return row;
  }
  const bool bytes = name.find("bytes") != std::string::npos;
  row.baseline = bytes ? format_bytes(baseline) : kgate::sig3(baseline);
  row.current = bytes ? format_bytes(current) : kgate::sig3(current);
  if (baseline > 0) {
    row.change = kgate::format_change(current / baseline - 1);
    row.size = std::fabs(current / baseline - 1);
  }
  return row;
}

}  // namespace

std::vector<CounterRow> counter_rows(const BenchmarkRecord& baseline, const BenchmarkRecord& current) {
  std::vector<CounterRow> rows;
  add_launch_rows(baseline, current, rows);
  std::vector<CounterRow> metrics;
  for (const auto& [name, b_value] : baseline.metrics)
    if (const auto c = current.metrics.find(name); c != current.metrics.end()) metrics.push_back(metric_row(name, b_value, c->second));
  // The metrics come by name (a map); the material ones move to the front, largest first.
  std::stable_sort(metrics.begin(), metrics.end(), [](const CounterRow& a, const CounterRow& b) {
    return a.material != b.material ? a.material : a.material && a.size > b.size;
  });
  rows.insert(rows.end(), metrics.begin(), metrics.end());
  for (CounterRow& row : rows)
    if (row.baseline == row.current) row.change.clear();  // "±0%" down a column of equal values hides the ones that differ
  return rows;
}

std::string counter_chip(const CounterRow& row) { return row.chip + " " + row.baseline + " → " + row.current; }

}  // namespace kgate::report
