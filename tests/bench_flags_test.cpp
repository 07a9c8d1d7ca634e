#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kgate/core/problem.hpp"
#include "flags.hpp"
#include "kgate/suite/listing.hpp"

namespace {

// Runs the parser over `args` (argv[0] added) and returns the options and what is left for
// Google Benchmark.
std::pair<kgate::bench::BenchFlags, std::vector<std::string>> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "kgate_bench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  auto options = kgate::bench::parse_bench_flags(argc, argv.data());
  return {options, std::vector<std::string>(argv.begin() + 1, argv.begin() + argc)};
}

// A bad flag is refused with std::invalid_argument, whose message names the flag.
void expect_refused_naming_its_flag(const std::string& bad) {
  try {
    parse({bad});
    ADD_FAILURE() << bad << " was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string flag = bad.substr(0, bad.find('='));
    EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(BenchFlags, DefaultsAreDocumented) {
  const auto [flags, rest] = parse({});
  const kgate::SuiteOptions& o = flags.suite;
  EXPECT_TRUE(o.cold && o.hot && o.counters && o.profile && o.check);
  // trace: the kernel records alone, without the range-profiler pass.
  const kgate::SuiteOptions traced = parse({"--kgate_counters=trace"}).first.suite;
  EXPECT_TRUE(traced.counters);
  EXPECT_FALSE(traced.profile);
  EXPECT_EQ(o.timing.stopping.min_samples, 10);
  EXPECT_DOUBLE_EQ(o.timing.stopping.min_gpu_time_s, 0.05);
  EXPECT_DOUBLE_EQ(o.timing.stopping.max_wall_time_s, 5.0);
  EXPECT_DOUBLE_EQ(o.timing.stopping.target_rel_stddev, 0.005);
  EXPECT_DOUBLE_EQ(o.timing.throttle.threshold, 0.75);
  EXPECT_DOUBLE_EQ(o.timing.throttle.full_clock, 0.97);
  EXPECT_DOUBLE_EQ(o.timing.throttle.rest_ratio, 1.0);
  EXPECT_EQ(o.timing.stopping.max_samples, 1000);
  EXPECT_EQ(o.timing.flush, kgate::L2Flush::read);
  EXPECT_EQ(o.timing.timer, kgate::Timer::cupti);
  EXPECT_EQ(o.timing.kernel_activity, kgate::KernelActivity::concurrent);
  EXPECT_EQ(o.timing.input_placements, 8);
  EXPECT_EQ(o.processes, 3);
  const std::string usage = kgate::bench::bench_usage();
  EXPECT_NE(usage.find("(default 1000)"), std::string::npos);
  EXPECT_NE(usage.find("(default read)"), std::string::npos);
  EXPECT_NE(usage.find("Default cupti;"), std::string::npos);
  EXPECT_NE(usage.find("(default concurrent,"), std::string::npos);
  EXPECT_NE(usage.find("default 0.05"), std::string::npos);
  EXPECT_NE(usage.find("default 5)"), std::string::npos);
  EXPECT_NE(usage.find("(default 0.75)"), std::string::npos);
  EXPECT_NE(usage.find("(default 0.97)"), std::string::npos);
  EXPECT_NE(usage.find("(default 1; 0: never rest)"), std::string::npos);
  EXPECT_NE(usage.find("(default 8; 1: only the copies that cover the L2)"), std::string::npos);
  EXPECT_NE(usage.find("(default 3)"), std::string::npos);
}

TEST(BenchFlags, KgateFlagsAreRemovedAndGoogleBenchmarkFlagsKept) {
  const auto [flags, rest] = parse({"--benchmark_filter=rmsnorm", "--kgate_out=r.json", "--kgate_modes=hot", "--kgate_min_time=0.5",
                                    "--kgate_max_time=15", "--kgate_counters=off", "--kgate_metrics=a,b", "--benchmark_repetitions=3",
                                    "--kgate_flush=write", "--kgate_max_samples=500", "--kgate_full_clock=0.9", "--kgate_rest=0",
                                    "--kgate_placements=2", "--kgate_processes=1", "--kgate_timer=events", "--kgate_cupti_kernels=serial"});
  const kgate::SuiteOptions& o = flags.suite;
  EXPECT_EQ(rest, (std::vector<std::string>{"--benchmark_filter=rmsnorm", "--benchmark_repetitions=3"}));
  EXPECT_EQ(flags.out, "r.json");
  EXPECT_FALSE(o.cold);
  EXPECT_TRUE(o.hot);
  EXPECT_DOUBLE_EQ(o.timing.stopping.min_gpu_time_s, 0.5);
  EXPECT_DOUBLE_EQ(o.timing.stopping.max_wall_time_s, 15);
  EXPECT_FALSE(o.counters);
  EXPECT_FALSE(o.profile);
  EXPECT_EQ(o.metrics, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.timing.flush, kgate::L2Flush::write);
  EXPECT_EQ(o.timing.stopping.max_samples, 500);
  EXPECT_DOUBLE_EQ(o.timing.throttle.full_clock, 0.9);
  EXPECT_DOUBLE_EQ(o.timing.throttle.rest_ratio, 0);
  EXPECT_EQ(o.timing.input_placements, 2);
  EXPECT_EQ(o.processes, 1);
  EXPECT_EQ(o.timing.timer, kgate::Timer::events);
  EXPECT_EQ(o.timing.kernel_activity, kgate::KernelActivity::serial);
}

TEST(BenchFlags, BadValuesNameTheFlag) {
  for (const char* bad : {"--kgate_min_time=abc", "--kgate_min_time=-1",           "--kgate_modes=warm",
                          "--kgate_modes=",       "--kgate_counters=maybe",        "--kgate_unknown=1",
                          "--kgate_out",          "--kgate_flush=sideways",        "--kgate_max_samples=0",
                          "--kgate_throttle=1.5", "--kgate_full_clock=97",         "--kgate_rest=-1",
                          "--kgate_placements=0", "--kgate_placements=65",         "--kgate_placements=2.5",
                          "--kgate_processes=0",  "--kgate_processes=17",          "--kgate_processes=1.5",
                          "--kgate_timer=rdtsc",  "--kgate_cupti_kernels=parallel"}) {
    expect_refused_naming_its_flag(bad);
  }
}

TEST(BenchFlags, HelpIsSeenAndPassedOn) {
  const auto [flags, rest] = parse({"--help"});
  EXPECT_TRUE(flags.help);
  EXPECT_EQ(rest, (std::vector<std::string>{"--help"}));
}

TEST(BenchFlags, ShardAndItsDurations) {
  const auto [flags, rest] = parse({"--kgate_shard=1/3", "--kgate_shard_durations=baselines/nvidia-h200/kgate.json"});
  const kgate::SuiteOptions& o = flags.suite;
  ASSERT_TRUE(o.shard.has_value());
  EXPECT_EQ(o.shard->index, 1);
  EXPECT_EQ(o.shard->count, 3);
  EXPECT_EQ(o.shard_durations, "baselines/nvidia-h200/kgate.json");
  EXPECT_TRUE(rest.empty());
  EXPECT_FALSE(parse({}).first.suite.shard.has_value());
  for (const char* bad : {"--kgate_shard=3/3", "--kgate_shard=1", "--kgate_shard_durations=run.json"}) {
    expect_refused_naming_its_flag(bad);
  }
}

TEST(BenchFlags, ShardClaimsInAFolderInsteadOfASplitAhead) {
  EXPECT_EQ(parse({"--kgate_shard=1/4", "--kgate_shard_claims=/tmp/run/claims"}).first.suite.shard_claims, "/tmp/run/claims");
  expect_refused_naming_its_flag("--kgate_shard_claims=/tmp/run/claims");  // without --kgate_shard
  try {
    parse({"--kgate_shard=1/4", "--kgate_shard_claims=/tmp/claims", "--kgate_shard_durations=run.json"});
    ADD_FAILURE() << "claims and a split ahead together were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("give one"), std::string::npos) << e.what();
  }
}

TEST(BenchFlags, HeadlineModeMeasuresEachBenchmarksHeadlineOnly) {
  const auto [flags, rest] = parse({"--kgate_modes=headline"});
  const kgate::SuiteOptions& o = flags.suite;
  EXPECT_TRUE(o.measures("cold", "cold"));
  EXPECT_FALSE(o.measures("hot", "cold"));
  EXPECT_TRUE(o.measures("hot", "hot"));
  EXPECT_FALSE(o.measures("cold", "hot"));
  const auto both = parse({}).first.suite;
  EXPECT_TRUE(both.measures("cold", "cold") && both.measures("hot", "cold"));
  const auto hot_only = parse({"--kgate_modes=hot"}).first.suite;
  EXPECT_FALSE(hot_only.measures("cold", "cold"));
  EXPECT_TRUE(hot_only.measures("hot", "cold"));
  EXPECT_THROW(parse({"--kgate_modes=headline,hot"}), std::invalid_argument);
}

TEST(BenchFlags, WorkloadsAreNamedOneByOne) {
  const auto [flags, rest] =
      parse({"--kgate_workloads=workload/llama3-8b-decode/b:1/l:4096/bf16,workload/llama3-8b-prefill/b:1/p:512/bf16"});
  const kgate::SuiteOptions& o = flags.suite;
  EXPECT_EQ(o.workloads,
            (std::vector<std::string>{"workload/llama3-8b-decode/b:1/l:4096/bf16", "workload/llama3-8b-prefill/b:1/p:512/bf16"}));
  EXPECT_TRUE(parse({}).first.suite.workloads.empty());  // the suite's workload benchmarks
  EXPECT_THROW(parse({"--kgate_workloads="}), std::invalid_argument);
}

// kgate_bench --kgate_list_json: the registry as the peers read it (docs/peers.md), every family
// and bench shape with the figures kgate records, and the timing options the flags give.
TEST(BenchListing, EveryFamilyAndShapeWithTheTimingOptions) {
  const auto [flags, rest] = parse({"--kgate_list_json=-", "--kgate_max_time=0.25", "--kgate_flush=write", "--kgate_placements=3"});
  const kgate::SuiteOptions& o = flags.suite;
  EXPECT_EQ(flags.list_json, "-");
  const kgate::Registry& registry = kgate::Registry::instance();
  const nlohmann::json listing = kgate::registry_listing(registry, o.timing);
  EXPECT_EQ(listing["schema_version"], kgate::kListingSchemaVersion);
  EXPECT_DOUBLE_EQ(listing["timing"]["max_wall_time_s"].get<double>(), 0.25);
  EXPECT_EQ(listing["timing"]["l2_flush"], "write");
  EXPECT_EQ(listing["timing"]["timer"], "cupti");
  EXPECT_EQ(listing["timing"]["input_placements"], 3);
  EXPECT_EQ(listing["timing"]["max_input_copies"], kgate::kMaxInputCopies);
  EXPECT_DOUBLE_EQ(listing["timing"]["placement_budget_bytes"].get<double>(), o.timing.placement_budget_bytes);
  EXPECT_EQ(listing["timing"]["min_samples"], o.timing.stopping.min_samples);
  ASSERT_EQ(listing["families"].size(), registry.families().size());
  for (const nlohmann::json& f : listing["families"]) {
    const kgate::Family* family = registry.find_family(f["name"].get<std::string>());
    ASSERT_NE(family, nullptr) << f["name"];
    EXPECT_EQ(f["read_dominated"], family->read_dominated());
    EXPECT_EQ(f["variants"].size(), registry.variants_of(family->name()).size());
    const std::vector<kgate::Shape> shapes = family->bench_shapes();
    ASSERT_EQ(f["bench_shapes"].size(), shapes.size()) << family->name();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const nlohmann::json& s = f["bench_shapes"][i];
      EXPECT_EQ(s["id"], shapes[i].id());
      ASSERT_EQ(s["dims"].size(), shapes[i].dims().size());
      for (std::size_t d = 0; d < shapes[i].dims().size(); ++d) {
        EXPECT_EQ(s["dims"][d]["name"], shapes[i].dims()[d].name);
        EXPECT_EQ(s["dims"][d]["value"], shapes[i].dims()[d].value);
      }
      EXPECT_DOUBLE_EQ(s["min_bytes"].get<double>(), family->min_bytes(shapes[i]));
      EXPECT_DOUBLE_EQ(s["flops"].get<double>(), family->flops(shapes[i]));
      EXPECT_EQ(s["instance_bytes"], kgate::instance_bytes(*family, shapes[i]));
      EXPECT_EQ(s["tensors"].size(), family->tensors(shapes[i]).size());
    }
  }
}
