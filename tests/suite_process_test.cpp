// Which benchmarks a suite process knows (suite/suite_process.hpp, suite_benchmark_names), before
// any GPU work: the registry's variants x bench shapes, then the workloads, then a front door's
// callables (a Python suite's variants), split into shards that every shard process computes alike. Needs no GPU: the kernels' registrations are linked in.
#include "kgate/suite/suite_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kgate/results/results_io.hpp"

namespace {

using kgate::SuiteOptions;
using kgate::suite_benchmark_names;

bool is_workload(const std::string& name) { return name.starts_with("workload/"); }

TEST(SuiteBenchmarkNames, EveryVariantsBenchShapesThenTheWorkloads) {
  const std::vector<std::string> names = suite_benchmark_names(SuiteOptions{});
  const kgate::Registry& registry = kgate::Registry::instance();
  std::size_t kernel_benchmarks = 0;
  for (const kgate::Variant* v : registry.variants()) kernel_benchmarks += registry.find_family(v->info.family)->bench_shapes().size();
  ASSERT_GT(kernel_benchmarks, 0u);
  ASSERT_GT(names.size(), kernel_benchmarks) << "no workload benchmarks";
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "a name twice";
  EXPECT_TRUE(std::none_of(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(kernel_benchmarks), is_workload));
  EXPECT_TRUE(std::all_of(names.begin() + static_cast<std::ptrdiff_t>(kernel_benchmarks), names.end(), is_workload));
  const kgate::Variant* first = registry.variants().front();
  EXPECT_EQ(names.front(), kgate::benchmark_name(*first, registry.find_family(first->info.family)->bench_shapes().front()));
}

TEST(SuiteBenchmarkNames, NamedWorkloadsReplaceTheSuitesAndAWrongNameIsRefused) {
  SuiteOptions options;
  options.workloads = {"workload/llama3-8b-decode/b:1/l:4096/bf16"};
  const std::vector<std::string> names = suite_benchmark_names(options);
  EXPECT_EQ(std::count_if(names.begin(), names.end(), is_workload), 1);
  EXPECT_EQ(names.back(), options.workloads.front());
  options.workloads = {"workload/no-such-model-decode/b:1/l:4096/bf16"};
  EXPECT_THROW(suite_benchmark_names(options), std::invalid_argument);
}

TEST(SuiteBenchmarkNames, ShardsSplitTheSuiteOnceBetweenThem) {
  const std::vector<std::string> whole = suite_benchmark_names(SuiteOptions{});
  std::multiset<std::string> together;
  for (int index = 0; index < 3; ++index) {
    SuiteOptions options;
    options.shard = kgate::ShardSpec{index, 3};
    const std::vector<std::string> shard = suite_benchmark_names(options);
    EXPECT_GT(shard.size(), whole.size() / 4) << "shard " << index << " of 3 is unbalanced";
    EXPECT_EQ(shard, suite_benchmark_names(options)) << "a shard process must compute the same split every time";
    together.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(together, std::multiset<std::string>(whole.begin(), whole.end()));
}

TEST(SuiteBenchmarkNames, ShardsThatClaimAsTheyRunEachListTheWholeSuite) {
  SuiteOptions options;
  options.shard = kgate::ShardSpec{2, 4};
  options.shard_claims = "/tmp/unused-claims";  // names need no claim: only measuring does
  EXPECT_EQ(suite_benchmark_names(options), suite_benchmark_names(SuiteOptions{}));
}

// Synthetic callables, never instantiated: only their names are read before the GPU work.
std::vector<kgate::CallableBenchmark> synthetic_callables(int count) {
  std::vector<kgate::CallableBenchmark> callables;
  for (int i = 0; i < count; ++i) {
    kgate::CallableBenchmark callable;
    callable.name = "synthetic_py/triton/m:" + std::to_string(i + 1) + "/bf16";
    callables.push_back(std::move(callable));
  }
  return callables;
}

TEST(OthersLastFirst, TheOtherShardsBenchmarksFromTheirEnds) {
  // A claiming shard's last process takes others' benchmarks from the ends of their lists, which
  // their own shards reach last.
  const std::vector<std::string> suite = {"a", "b", "c", "d", "e", "f"};
  const std::set<std::string> own = {"b", "e"};
  EXPECT_EQ(kgate::others_last_first(suite, [&](const std::string& n) { return own.contains(n); }),
            (std::vector<std::string>{"f", "d", "c", "a"}));
  EXPECT_EQ(kgate::others_last_first(suite, [](const std::string&) { return true; }), std::vector<std::string>{});
}

TEST(SuiteBenchmarkNames, AFrontDoorsCallablesComeLastAndAreShardedWithTheRest) {
  const std::vector<std::string> registry_only = suite_benchmark_names(SuiteOptions{});
  const std::vector<kgate::CallableBenchmark> callables = synthetic_callables(40);
  const std::vector<std::string> names = suite_benchmark_names(SuiteOptions{}, callables);
  ASSERT_EQ(names.size(), registry_only.size() + callables.size());
  EXPECT_TRUE(std::equal(registry_only.begin(), registry_only.end(), names.begin()));
  EXPECT_EQ(names.back(), callables.back().name);
  std::size_t callables_in_shards = 0;
  for (int index = 0; index < 2; ++index) {
    SuiteOptions options;
    options.shard = kgate::ShardSpec{index, 2};
    for (const std::string& name : suite_benchmark_names(options, callables)) callables_in_shards += name.starts_with("synthetic_py/");
  }
  EXPECT_EQ(callables_in_shards, callables.size());
}

TEST(SuiteBenchmarkNames, TwoBenchmarksOfOneNameAreRefused) {
  std::vector<kgate::CallableBenchmark> callables = synthetic_callables(2);
  callables.push_back(callables.front());
  try {
    suite_benchmark_names(SuiteOptions{}, callables);
    FAIL() << "a name given twice was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(callables.front().name), std::string::npos) << e.what();
  }
}

TEST(SuiteBenchmarkNames, AShardDurationsFileThatCannotBeReadIsAResultsError) {
  SuiteOptions options;
  options.shard = kgate::ShardSpec{0, 2};
  options.shard_durations = "/nonexistent/kgate-durations.json";
  EXPECT_THROW(suite_benchmark_names(options), kgate::ResultsError);
}

}  // namespace
