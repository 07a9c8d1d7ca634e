#pragma once
// kgate's own blocks of a results document, both ways (private to the results module;
// docs/results-format.md): a benchmark's `kgate` object with its timing modes, kernels, metrics
// and workload (benchmark_block.cpp, workload_block.cpp), and the context's `kgate` object
// (context_block.cpp). gbench_document.cpp places them in a Google Benchmark document. The readers
// take a json_node::Node, so that every error names the file and the JSON path.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "json_node.hpp"
#include "kgate/results/results.hpp"

namespace kgate::blocks {

nlohmann::json benchmark_block(const BenchmarkRecord& record);
// `gbench_name`, the name of the Google Benchmark row (its suffixes removed), is the record's name
// unless the block names one.
BenchmarkRecord benchmark_from_block(const json_node::Node& block, const std::string& gbench_name);

nlohmann::json context_block(const RunContext& context);
// Refuses a schema version newer than kResultsSchemaVersion.
RunContext context_from_block(const json_node::Node& block);

// What a benchmark block shares with its workload's timeline (kernel_to_json: results_io.hpp).
KernelRecord kernel_from_json(const json_node::Node& node);
nlohmann::json metrics_to_json(const std::map<std::string, double>& metrics);
std::map<std::string, double> metrics_from_json(const json_node::Node& node);

nlohmann::json workload_to_json(const WorkloadRecord& workload);
WorkloadRecord workload_from_json(const json_node::Node& node);

}  // namespace kgate::blocks
