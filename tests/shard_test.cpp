// Shard splits: every benchmark in exactly one shard, the same split whatever the order of the
// list, balanced by recorded durations (a real H200 run) or else by count.
#include "kgate/results/shard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

using kgate::split_into_shards;
namespace syn = kgate::synthetic;

std::vector<std::string> names_of(const kgate::RunResults& run) {
  std::vector<std::string> names;
  for (const kgate::BenchmarkRecord& r : run.benchmarks) names.push_back(r.name);
  return names;
}

const kgate::RunResults& recorded_run() {
  static const kgate::RunResults run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h200-run-a.json.gz");
  return run;
}

double load(const std::vector<std::string>& shard, const std::map<std::string, double>& durations) {
  double total = 0;
  for (const std::string& name : shard) total += durations.at(name);
  return total;
}

void expect_partition(const std::vector<std::vector<std::string>>& shards, const std::vector<std::string>& names) {
  std::multiset<std::string> all;
  for (const auto& shard : shards) all.insert(shard.begin(), shard.end());
  EXPECT_EQ(all, std::multiset<std::string>(names.begin(), names.end())) << "every benchmark exactly once";
}

TEST(Shard, ParsesIndexOverCount) {
  const kgate::ShardSpec spec = kgate::parse_shard("1/3");
  EXPECT_EQ(spec.index, 1);
  EXPECT_EQ(spec.count, 3);
  EXPECT_EQ(spec.text(), "1/3");
  EXPECT_EQ(kgate::parse_shard("0/1").count, 1);
  for (const char* bad : {"", "1", "3/3", "-1/2", "1/0", "a/2", "1/2x", "1//2", "/2"})
    EXPECT_THROW(kgate::parse_shard(bad), std::invalid_argument) << bad;
  try {
    kgate::parse_shard("2/2");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0/2 to 1/2"), std::string::npos) << e.what();
  }
}

TEST(Shard, EveryBenchmarkOnceInShardOrderOfTheList) {
  const std::vector<std::string> names = names_of(recorded_run());
  const auto durations = kgate::benchmark_durations(recorded_run());
  for (int count : {1, 2, 3, 4, 7}) {
    const auto shards = split_into_shards(names, count, durations);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(count));
    expect_partition(shards, names);
    for (const auto& shard : shards) {  // each shard keeps the suite's order
      std::vector<std::size_t> positions;
      for (const std::string& n : shard) positions.push_back(std::find(names.begin(), names.end(), n) - names.begin());
      EXPECT_TRUE(std::is_sorted(positions.begin(), positions.end()));
    }
  }
}

TEST(Shard, SameSplitWhateverTheOrderOfTheList) {
  const std::vector<std::string> names = names_of(recorded_run());
  const auto durations = kgate::benchmark_durations(recorded_run());
  std::vector<std::string> shuffled = names;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(7));
  for (const auto& d : {durations, std::map<std::string, double>{}}) {
    const auto a = split_into_shards(names, 3, d), b = split_into_shards(shuffled, 3, d), again = split_into_shards(names, 3, d);
    EXPECT_EQ(a, again);
    for (std::size_t s = 0; s < a.size(); ++s)
      EXPECT_EQ(std::set<std::string>(a[s].begin(), a[s].end()), std::set<std::string>(b[s].begin(), b[s].end()));
  }
}

TEST(Shard, BalancedByRecordedDurations) {
  const std::vector<std::string> names = names_of(recorded_run());
  const auto durations = kgate::benchmark_durations(recorded_run());
  ASSERT_EQ(durations.size(), names.size()) << "every recorded benchmark has a duration";
  double total = 0, longest = 0;
  for (const auto& [name, seconds] : durations) {
    total += seconds;
    longest = std::max(longest, seconds);
  }
  for (int count : {2, 3, 4}) {
    const auto shards = split_into_shards(names, count, durations);
    double heaviest = 0;
    for (const auto& shard : shards) heaviest = std::max(heaviest, load(shard, durations));
    // Greedy longest-first: the heaviest shard exceeds the mean by less than one benchmark.
    EXPECT_LT(heaviest, total / count + longest) << count << " shards";
    EXPECT_LT(heaviest / (total / count), 1.05) << count << " shards";
  }
  // Balancing by count alone is measurably worse on the same run: durations matter.
  const auto by_count = split_into_shards(names, 2, {});
  const double count_heaviest = std::max(load(by_count[0], durations), load(by_count[1], durations));
  const auto by_time = split_into_shards(names, 2, durations);
  EXPECT_LT(std::max(load(by_time[0], durations), load(by_time[1], durations)), count_heaviest);
}

TEST(Shard, BalancedByCountWithoutDurationsAndNewBenchmarksCountAsTypical) {
  std::vector<std::string> names;
  for (int i = 0; i < 11; ++i) names.push_back("family/variant/m:" + std::to_string(i));
  const auto shards = split_into_shards(names, 3, {});
  for (const auto& shard : shards) EXPECT_GE(shard.size(), 3u);
  for (const auto& shard : shards) EXPECT_LE(shard.size(), 4u);

  // Two long benchmarks are known; the others (added since the recorded run) count as the median.
  const std::map<std::string, double> durations = {{names[0], 10.0}, {names[1], 10.0}, {names[2], 1.0}};
  const auto balanced = split_into_shards(names, 2, durations);
  expect_partition(balanced, names);
  const auto holds = [&](const std::vector<std::string>& shard, const std::string& n) {
    return std::find(shard.begin(), shard.end(), n) != shard.end();
  };
  EXPECT_NE(holds(balanced[0], names[0]), holds(balanced[0], names[1])) << "the two long ones on different shards";
  EXPECT_THROW(split_into_shards(names, 0, {}), std::invalid_argument);
  EXPECT_EQ(split_into_shards({}, 2, {}), (std::vector<std::vector<std::string>>{{}, {}}));
}

TEST(Shard, DurationsFromWallTimeOrFromTheModesInOlderFiles) {
  kgate::BenchmarkRecord with_wall = syn::benchmark("rmsnorm/a/m:1/bf16", {});
  with_wall.wall_time_s = 2.5;
  kgate::BenchmarkRecord older = syn::benchmark("rmsnorm/b/m:1/bf16", {});
  older.first_launch_s = 0.5;
  older.cold->wall_time_s = 1.0;
  older.hot = older.cold;
  kgate::BenchmarkRecord skipped = syn::benchmark("rmsnorm/c/m:1/bf16", {});
  skipped.status = kgate::BenchmarkStatus::skipped;
  skipped.cold.reset();
  skipped.first_launch_s = 0;
  const auto durations = kgate::benchmark_durations(syn::run({with_wall, older, skipped}));
  EXPECT_DOUBLE_EQ(durations.at("rmsnorm/a/m:1/bf16"), 2.5);
  EXPECT_DOUBLE_EQ(durations.at("rmsnorm/b/m:1/bf16"), 2.5);
  EXPECT_FALSE(durations.contains("rmsnorm/c/m:1/bf16"));
}

}  // namespace
