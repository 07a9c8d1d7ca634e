// The results file as a Google Benchmark document (results_io.hpp): Google Benchmark's context and
// rows around kgate's blocks (kgate_blocks.hpp) when writing; when reading, nvbench JSON handed to
// its reader, kgate blocks read as such and the other rows as plain Google Benchmark runs
// (gbench_rows.hpp).
#include "kgate/results/results_io.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>

#include "gbench_rows.hpp"
#include "json_node.hpp"
#include "kgate/results/nvbench_results.hpp"
#include "kgate_blocks.hpp"

namespace kgate {

using blocks::benchmark_block;
using blocks::benchmark_from_block;
using blocks::context_block;
using blocks::context_from_block;
using json_node::Node;
using nlohmann::json;

namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

json gbench_context(const RunContext& c) {
  const std::string executable = c.command_line.substr(0, c.command_line.find(' '));
  // num_cpus and mhz_per_cpu describe the host that ran the benchmarks; a document kgate writes
  // itself (merge, baseline) may be written elsewhere, so it does not claim them: 0 = unknown.
  return {{"date", c.date},
          {"host_name", c.host},
          {"executable", executable.empty() ? "kgate" : executable},
          {"num_cpus", 0},
          {"mhz_per_cpu", 0},
          {"cpu_scaling_enabled", false},
          {"caches", json::array()},
          {"library_build_type", c.build_type.empty() ? "release" : lowercase(c.build_type)},
          {"json_schema_version", 1},
          {"kgate", context_block(c)}};
}

json gbench_entry(const BenchmarkRecord& r, int family_index, int instance_index) {
  const TimingRecord* timing = r.headline();
  const bool ran = r.status == BenchmarkStatus::ok && timing;
  const double median_us = ran ? r.headline_median_s() * 1e6 : 0.0;
  json entry = {{"name", r.name},
                {"family_index", family_index},
                {"per_family_instance_index", instance_index},
                {"run_name", r.name},
                {"run_type", "iteration"},
                {"repetitions", 1},
                {"repetition_index", 0},
                {"threads", 1},
                {"iterations", ran ? timing->samples_s.size() : 0},
                {"real_time", median_us},
                {"cpu_time", median_us},
                {"time_unit", "us"}};
  if (r.status != BenchmarkStatus::ok) {
    // As Google Benchmark >= 1.8 writes them: an error is flagged, a skip carries only its message.
    entry["error_occurred"] = r.status == BenchmarkStatus::failed;
    entry["error_message"] = r.error;
  }
  if (ran) {
    // Flat numeric keys, as Google Benchmark writes user counters, and the same ones kgate_bench
    // gives Google Benchmark (docs/results-format.md, "Counters").
    entry["GB/s"] = r.bytes_per_s / 1e9;
    entry["TFLOP/s"] = r.flops_per_s / 1e12;
    entry["%mem_roof"] = r.pct_of_memory_ceiling;
    entry["rsd%"] = timing->summary.rel_stddev() * 100;
    entry["MHz"] = timing->sm_clock_mhz;
  }
  entry["kgate"] = benchmark_block(r);
  return entry;
}

}  // namespace

json to_json(const RunResults& results) {
  json doc = {{"context", gbench_context(results.context)}, {"benchmarks", json::array()}};
  std::map<std::string, int> family_index, instances;
  for (const BenchmarkRecord& r : results.benchmarks) {
    const auto [it, inserted] = family_index.try_emplace(r.family, static_cast<int>(family_index.size()));
    doc["benchmarks"].push_back(gbench_entry(r, it->second, instances[r.family]++));
  }
  return doc;
}

void attach_kgate_blocks(json& gbench_doc, const RunResults& results) {
  const Node root(gbench_doc, "$", "Google Benchmark output");
  root.object();
  const Node list = root.at("benchmarks").array();
  root.at("context").object();
  gbench_doc["context"]["kgate"] = context_block(results.context);

  std::map<std::string, std::size_t> first_row;  // kgate name -> first iteration row of that run
  int families = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i];
    if (auto f = entry.find("family_index")) families = std::max(families, static_cast<int>(f->integer(0, INT_MAX - 1)) + 1);
    if (gbench::is_aggregate(entry)) continue;
    first_row.try_emplace(gbench::without_suffixes(entry.at("name").string()), i);
  }
  struct Indices {
    int family, next_instance;
  };
  std::map<std::string, Indices> unmatched;  // kgate family -> its Google Benchmark indices
  for (const BenchmarkRecord& r : results.benchmarks) {
    if (const auto row = first_row.find(r.name); row != first_row.end()) {
      gbench_doc["benchmarks"][row->second]["kgate"] = benchmark_block(r);
      continue;
    }
    // No Google Benchmark row: the variant never reached the timing loop. Such records form
    // families of their own after Google Benchmark's, so the indices never collide.
    auto& indices = unmatched.try_emplace(r.family, Indices{families + static_cast<int>(unmatched.size()), 0}).first->second;
    gbench_doc["benchmarks"].push_back(gbench_entry(r, indices.family, indices.next_instance++));
  }
}

RunResults parse_results(const json& doc, const std::string& source, EmptyRun empty) {
  if (is_nvbench_json(doc)) return parse_nvbench_results(doc, source);
  const Node root(doc, "$", source);
  if (!doc.is_object()) root.fail("expected a JSON object with \"context\" and \"benchmarks\", got " + std::string(doc.type_name()));
  if (!doc.contains("benchmarks"))
    root.fail("not a benchmark results file: no \"benchmarks\" array (expected Google Benchmark or kgate JSON)");
  const Node list = root.at("benchmarks").array();
  if (list.size() == 0 && empty == EmptyRun::refused) list.fail("no benchmarks");

  RunResults results;
  const std::optional<Node> context = root.find("context");
  if (context) context->object();
  const std::optional<Node> kgate_context = context ? context->find("kgate") : std::nullopt;
  results.has_kgate_block = kgate_context.has_value();
  if (kgate_context) results.context = context_from_block(*kgate_context);
  else gbench::read_context(context, results.context);

  std::map<std::string, std::string> kgate_paths;  // name -> JSON path, for duplicate messages
  gbench::Runs gbench_runs;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i].object();
    const std::string gbench_name = entry.at("name").string();
    if (auto block = entry.find("kgate")) {
      if (!kgate_context) root.at("context").at("kgate", " (benchmarks carry kgate blocks)");
      BenchmarkRecord record = benchmark_from_block(*block, gbench::without_suffixes(gbench_name));
      const std::string path = "$.benchmarks[" + std::to_string(i) + "]";
      if (const auto [it, inserted] = kgate_paths.try_emplace(record.name, path); !inserted)
        entry.at("kgate").fail("duplicate benchmark name \"" + record.name + "\" (also at " + it->second + ")");
      results.benchmarks.push_back(std::move(record));
      continue;
    }
    if (!gbench::is_aggregate(entry)) gbench_runs.add(entry);
  }
  // Rows without a kgate block in a kgate file are the other repetitions of a run kgate recorded
  // (its block holds all the samples), or benchmarks kgate knows nothing about (time only).
  for (BenchmarkRecord& record : gbench_runs.records([&](const std::string& name) { return kgate_paths.contains(name); }))
    results.benchmarks.push_back(std::move(record));
  if (results.benchmarks.empty() && list.size() > 0)
    list.fail("only aggregate rows (mean, median, ...), no iteration rows: run without --benchmark_report_aggregates_only");
  return results;
}

RunResults read_results_file(const std::string& path) { return parse_results(read_json_file(path), path); }

RunResults read_results_file_may_be_empty(const std::string& path) { return parse_results(read_json_file(path), path, EmptyRun::allowed); }

// Indented for people and diffs, except that each samples array stays on one line: one line per
// sample would make most of a run's file indentation. Invalid UTF-8 (a driver message, a mangled
// name) is replaced rather than refused: the file must be written.
void write_results_file(const std::string& path, const json& doc) {
  constexpr auto kReplace = json::error_handler_t::replace;
  json shaped = doc;
  std::vector<std::string> arrays;
  if (shaped.contains("benchmarks") && shaped["benchmarks"].is_array()) {
    for (json& benchmark : shaped["benchmarks"]) {
      if (!benchmark.is_object() || !benchmark.contains("kgate")) continue;
      for (const char* mode : {"cold", "hot"}) {
        json& block = benchmark["kgate"];
        if (!block.is_object() || !block.contains(mode) || !block[mode].is_object()) continue;
        json& timing = block[mode];
        if (!timing.contains("samples_s")) continue;
        arrays.push_back(timing["samples_s"].dump(-1, ' ', false, kReplace));
        timing["samples_s"] = "\x01kgate-samples-" + std::to_string(arrays.size() - 1) + "\x01";
      }
    }
  }
  std::string text = shaped.dump(2, ' ', false, kReplace);
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    // dump() escapes the control character as \u0001 inside the quoted placeholder.
    const std::string placeholder = "\"\\u0001kgate-samples-" + std::to_string(i) + "\\u0001\"";
    const std::size_t at = text.find(placeholder);
    if (at != std::string::npos) text.replace(at, placeholder.size(), arrays[i]);
  }
  write_file_atomically(path, text + "\n");
}

}  // namespace kgate
