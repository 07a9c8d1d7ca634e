#include "kgate/results/shard.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "kgate/base/statistics.hpp"

namespace kgate {
namespace {

int parse_count(std::string_view digits, std::string_view whole, const char* what) {
  int value = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || digits.front() == '-' || error != std::errc() || end != digits.data() + digits.size())
    throw std::invalid_argument("shard '" + std::string(whole) + "': " + what + " is not a whole number (expected i/n, e.g. 0/2)");
  return value;
}

}  // namespace

std::string ShardSpec::text() const { return std::to_string(index) + "/" + std::to_string(count); }

ShardSpec parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos)
    throw std::invalid_argument("shard '" + std::string(text) + "': expected i/n, e.g. 0/2 (shards count from 0)");
  ShardSpec spec;
  spec.index = parse_count(text.substr(0, slash), text, "the shard index");
  spec.count = parse_count(text.substr(slash + 1), text, "the shard count");
  if (spec.count < 1) throw std::invalid_argument("shard '" + std::string(text) + "': the shard count must be at least 1");
  if (spec.index >= spec.count)
    throw std::invalid_argument("shard '" + std::string(text) + "': the index must be below the count (shards count from 0: 0/" +
                                std::to_string(spec.count) + " to " + std::to_string(spec.count - 1) + "/" + std::to_string(spec.count) +
                                ")");
  return spec;
}

std::map<std::string, double> benchmark_durations(const RunResults& run) {
  std::map<std::string, double> durations;
  for (const BenchmarkRecord& r : run.benchmarks) {
    double seconds = r.wall_time_s;
    if (!(seconds > 0)) {
      seconds = r.first_launch_s;
      for (const auto* mode : {&r.cold, &r.hot})
        if (mode->has_value()) seconds += (*mode)->wall_time_s;
    }
    if (seconds > 0) durations[r.name] += seconds;  // repetitions of a benchmark add up
  }
  return durations;
}

std::vector<std::vector<std::string>> split_into_shards(const std::vector<std::string>& names, int count,
                                                        const std::map<std::string, double>& durations) {
  if (count < 1) throw std::invalid_argument("split_into_shards: the shard count must be at least 1, got " + std::to_string(count));
  std::vector<double> known;
  for (const std::string& name : names)
    if (const auto it = durations.find(name); it != durations.end()) known.push_back(it->second);
  const double unknown_cost = known.empty() ? 1.0 : median(known);

  struct Job {
    double cost;
    const std::string* name;
    std::size_t position;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto it = durations.find(names[i]);
    jobs.push_back({it == durations.end() ? unknown_cost : it->second, &names[i], i});
  }
  // Ties broken by name, never by position: the split must not depend on the order of `names`.
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.cost != b.cost ? a.cost > b.cost : *a.name < *b.name; });

  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<std::vector<std::size_t>> positions(static_cast<std::size_t>(count));
  for (const Job& job : jobs) {
    const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += job.cost;
    positions[lightest].push_back(job.position);
  }
  std::vector<std::vector<std::string>> shards(static_cast<std::size_t>(count));
  for (std::size_t s = 0; s < shards.size(); ++s) {
    std::sort(positions[s].begin(), positions[s].end());
    for (const std::size_t p : positions[s]) shards[s].push_back(names[p]);
  }
  return shards;
}

}  // namespace kgate
