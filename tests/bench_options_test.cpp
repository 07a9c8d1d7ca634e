#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "options.hpp"

namespace {

// Runs the parser over `args` (argv[0] added) and returns the options and what is left for
// Google Benchmark.
std::pair<kgate::bench::BenchOptions, std::vector<std::string>> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "kgate_bench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  auto options = kgate::bench::parse_bench_options(argc, argv.data());
  return {options, std::vector<std::string>(argv.begin() + 1, argv.begin() + argc)};
}

}  // namespace

TEST(BenchOptions, DefaultsAreDocumented) {
  const auto [o, rest] = parse({});
  EXPECT_TRUE(o.cold && o.hot && o.counters && o.check);
  EXPECT_EQ(o.timing.stopping.min_samples, 10);
  EXPECT_DOUBLE_EQ(o.timing.stopping.min_gpu_time_s, 0.1);
  EXPECT_DOUBLE_EQ(o.timing.stopping.max_wall_time_s, 5.0);
  EXPECT_DOUBLE_EQ(o.timing.stopping.target_rel_stddev, 0.005);
  EXPECT_DOUBLE_EQ(o.timing.throttle.threshold, 0.75);
  const std::string usage = kgate::bench::bench_usage();
  EXPECT_NE(usage.find("default 0.1"), std::string::npos);
  EXPECT_NE(usage.find("default 5)"), std::string::npos);
}

TEST(BenchOptions, KgateFlagsAreRemovedAndGoogleBenchmarkFlagsKept) {
  const auto [o, rest] = parse({"--benchmark_filter=rmsnorm", "--kgate_out=r.json", "--kgate_modes=hot",
                                "--kgate_min_time=0.5", "--kgate_max_time=15", "--kgate_counters=off",
                                "--kgate_metrics=a,b", "--benchmark_repetitions=3"});
  EXPECT_EQ(rest, (std::vector<std::string>{"--benchmark_filter=rmsnorm", "--benchmark_repetitions=3"}));
  EXPECT_EQ(o.out, "r.json");
  EXPECT_FALSE(o.cold);
  EXPECT_TRUE(o.hot);
  EXPECT_DOUBLE_EQ(o.timing.stopping.min_gpu_time_s, 0.5);
  EXPECT_DOUBLE_EQ(o.timing.stopping.max_wall_time_s, 15);
  EXPECT_FALSE(o.counters);
  EXPECT_EQ(o.metrics, (std::vector<std::string>{"a", "b"}));
}

TEST(BenchOptions, BadValuesNameTheFlag) {
  for (const char* bad : {"--kgate_min_time=abc", "--kgate_min_time=-1", "--kgate_modes=warm", "--kgate_modes=",
                          "--kgate_counters=maybe", "--kgate_unknown=1", "--kgate_out"}) {
    try {
      parse({bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string flag = std::string(bad).substr(0, std::string(bad).find('='));
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  }
}

TEST(BenchOptions, HelpIsSeenAndPassedOn) {
  const auto [o, rest] = parse({"--help"});
  EXPECT_TRUE(o.help);
  EXPECT_EQ(rest, (std::vector<std::string>{"--help"}));
}
