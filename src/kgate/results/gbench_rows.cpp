#include "gbench_rows.hpp"

#include <string_view>

#include "kgate/base/statistics.hpp"
#include "kgate/results/detectable.hpp"
#include "kgate/results/provenance.hpp"

namespace kgate::gbench {
namespace {

using json_node::Node;
using json_node::read_opt;

// Divided by, not multiplied with the inverse: 1200 ns is then exactly the double nearest 1.2e-6 s.
double units_per_second(const Node& unit) {
  const std::string name = unit.string();
  if (name == "ns") return 1e9;
  if (name == "us") return 1e6;
  if (name == "ms") return 1e3;
  if (name == "s") return 1.0;
  unit.fail("unknown time unit \"" + name + "\" (expected ns, us, ms or s)");
}

// A manual time is what the benchmark measured and reported itself (CUDA events around a kernel,
// as kgate_bench does); without one, real_time is the host's wall clock around the benchmark's
// loop: a CPU-timed benchmark (docs/compare.md, "CPU-timed benchmarks").
bool manual_time(std::string_view name) {
  for (std::size_t slash = name.find('/'); slash != std::string_view::npos; slash = name.find('/', slash + 1)) {
    const std::string_view part = name.substr(slash + 1, name.find('/', slash + 1) - slash - 1);
    if (part == "manual_time") return true;
  }
  return false;
}

}  // namespace

std::string without_suffixes(std::string name) {
  static const char* const kFlags[] = {"manual_time", "real_time", "process_time"};
  static const char* const kValued[] = {"iterations:", "repeats:", "min_time:", "min_warmup_time:", "threads:"};
  for (;;) {
    const auto slash = name.rfind('/');
    if (slash == std::string::npos) return name;
    const std::string_view last(name.c_str() + slash + 1);
    bool strip = false;
    for (const char* flag : kFlags) strip = strip || last == flag;
    for (const char* prefix : kValued) strip = strip || last.starts_with(prefix);
    if (!strip) return name;
    name.erase(slash);
  }
}

bool is_aggregate(const Node& entry) {
  if (auto run_type = entry.find("run_type")) {
    const std::string type = run_type->string();
    if (type == "aggregate") return true;
    if (type != "iteration") run_type->fail("unknown run_type \"" + type + "\" (expected iteration or aggregate)");
    return false;
  }
  return entry.has("aggregate_name");  // Google Benchmark before run_type existed
}

void read_context(const std::optional<Node>& context, RunContext& out) {
  out.suite = kSuite;
  if (!context) return;
  read_opt(*context, "host_name", out.host);
  // Google Benchmark writes local time with its offset ("2026-11-21T13:00:00+01:00"; before 1.6
  // without one): kept as UTC, so that runs order by date as kgate's own do. A date in another
  // form is left out, as if the file had none.
  std::string date;
  read_opt(*context, "date", date);
  out.date = iso8601_utc(date).value_or("");
}

void Runs::add(const Node& entry) {
  std::string name = entry.at("name").string();
  read_opt(entry, "run_name", name);
  auto [it, inserted] = runs_.try_emplace(name);
  Run& run = it->second;
  if (inserted) {
    run.name = name;
    order_.push_back(name);
  } else {
    // The same name again is a repetition only when Google Benchmark says it ran several.
    long long repetitions = 1;
    if (auto reps = entry.find("repetitions")) repetitions = reps->integer(0);
    bool repeated = repetitions > 1 && run.rows < repetitions;
    if (auto index = entry.find("repetition_index")) repeated = repeated && !run.repetition_indices.contains(index->integer(0));
    if (!repeated) entry.at("name").fail("duplicate benchmark name \"" + name + "\" (not a repetition of the same run)");
  }
  ++run.rows;
  if (auto index = entry.find("repetition_index")) run.repetition_indices.insert(index->integer(0));
  // Not used, but a count like the others: a row that says 2.5 or -1 iterations ran is not a sample.
  if (auto iterations = entry.find("iterations")) iterations->integer(0);

  std::string message;
  read_opt(entry, "error_message", message);
  bool error = false;
  read_opt(entry, "error_occurred", error);
  if (error || entry.has("error_message")) {
    // A row that did not run has no time to read (Google Benchmark writes 0).
    run.failed = run.failed || error;
    if (run.error.empty()) run.error = message;
    return;
  }
  const Node unit = entry.at("time_unit");
  run.samples_s.push_back(entry.at("real_time").time(units_per_second(unit), unit.string()));
}

std::vector<BenchmarkRecord> Runs::records(const std::function<bool(const std::string&)>& known) const {
  std::vector<BenchmarkRecord> out;
  for (const std::string& name : order_)
    if (!known(without_suffixes(name))) out.push_back(record(runs_.at(name)));
  return out;
}

BenchmarkRecord Runs::record(const Run& run) {
  BenchmarkRecord r;
  r.name = run.name;
  r.family = run.name.substr(0, run.name.find('/'));
  r.headline_mode = "cold";                   // plain Google Benchmark times have one mode; kgate files it as the headline
  if (run.failed || run.samples_s.empty()) {  // every row is a sample or an error: no sample means skipped
    r.status = run.failed ? BenchmarkStatus::failed : BenchmarkStatus::skipped;
    r.error = run.error;
    return r;
  }
  TimingRecord timing;
  timing.samples_s = run.samples_s;
  timing.summary = summarize(timing.samples_s);
  timing.timer = manual_time(run.name) ? "events" : "cpu";
  r.cold = timing;
  note_detectable_change(r, 0);  // a CPU-timed record's band comes from its own repetitions
  return r;
}

}  // namespace kgate::gbench
