// kgate ab's procedure (gate/ab_rounds.hpp) against synthetic builds, binaries and commands, that
// answer from canned runs: which listings, probes and rounds it asks for, in which order and with
// which flags, what it compares and what it refuses, all without starting a process.
#include "kgate/gate/ab_rounds.hpp"

#include <gtest/gtest.h>
#include <regex.h>

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "kgate/gate/ab.hpp"
#include "tests/synthetic_results.hpp"
#include "tests/thrown.hpp"

namespace {

using kgate::AbSide;
using kgate::testing_support::message_thrown;
namespace syn = kgate::synthetic;

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "gemv/tiled/m:4096/n:4096/bf16";

// Synthetic builds: each side lists its names and answers every round with its benchmarks at its
// median; every call is recorded as "<side> <flags...>". A side made a command answers every round
// with all its names, whatever its filter (a command that ignores KGATE_FILTER), its rounds
// recorded as "<side> command round <n> filter <filter>".
class SyntheticBuilds : public kgate::AbBuilds {
 public:
  std::map<AbSide, std::vector<std::string>> names;
  std::map<AbSide, double> median_s = {{AbSide::base, 100e-6}, {AbSide::head, 100e-6}};
  std::map<AbSide, bool> takes_processes = {{AbSide::base, true}, {AbSide::head, true}};
  std::map<AbSide, bool> command = {{AbSide::base, false}, {AbSide::head, false}};
  std::vector<std::string> calls, told;

  bool is_command(AbSide side) const override { return command.at(side); }
  std::vector<std::string> list(AbSide side, const std::vector<std::string>& flags) override {
    record(side, flags);
    return names[side];
  }
  bool accepts(AbSide side, const std::vector<std::string>& flags) override {
    record(side, flags);
    return takes_processes[side];
  }
  kgate::RunResults run_round(AbSide side, int round, const std::vector<std::string>& flags,
                              const std::optional<std::string>& filter) override {
    if (command[side]) {
      EXPECT_TRUE(flags.empty()) << "a command gets no flags";
      const std::string given = " filter " + filter.value_or("(none)");
      calls.push_back(kgate::to_string(side) + std::string(" command round ") + std::to_string(round) + given);
    } else {
      record(side, flags);
    }
    std::vector<kgate::BenchmarkRecord> records;
    const std::uint64_t seed = static_cast<std::uint64_t>(round) * 2 + (side == AbSide::head);
    for (const std::string& name : names[side]) records.push_back(syn::benchmark(name, {.median_s = median_s[side], .seed = seed}));
    return syn::run(records);
  }
  void tell(const std::string& text) override { told.push_back(text); }

 private:
  void record(AbSide side, const std::vector<std::string>& flags) {
    std::string call = kgate::to_string(side);
    for (const std::string& f : flags) call += " " + f;
    calls.push_back(call);
  }
};

kgate::AbPlan plan(int rounds) {
  kgate::AbPlan p;
  p.rounds = rounds;
  p.seed = 5;
  p.base_name = "base synthetic-base_bench";
  p.head_name = "head synthetic-head_bench";
  p.options.thresholds.default_fraction = 0.01;
  return p;
}

TEST(AbRounds, ListsProbesThenRunsEachRoundInTheSeededOrder) {
  SyntheticBuilds bins;
  bins.names[AbSide::base] = {kA, kB};
  bins.names[AbSide::head] = {kB, kA};
  bins.takes_processes[AbSide::base] = false;  // a build from before --kgate_processes
  bins.median_s[AbSide::head] = 110e-6;
  kgate::AbPlan p = plan(3);
  p.filter = "rmsnorm|gemv";
  p.bench_flags = {"--kgate_min_time=0.2"};
  const kgate::AbOutcome outcome = kgate::run_ab_rounds(p, bins);

  ASSERT_EQ(bins.calls.size(), 10u);
  EXPECT_EQ(bins.calls[0], "base --benchmark_list_tests=true --benchmark_filter=rmsnorm|gemv --kgate_min_time=0.2");
  EXPECT_EQ(bins.calls[1], "head --benchmark_list_tests=true --benchmark_filter=rmsnorm|gemv --kgate_min_time=0.2");
  EXPECT_EQ(bins.calls[2], "base --benchmark_list_tests=true --benchmark_filter=^$ --kgate_processes=1");
  EXPECT_EQ(bins.calls[3], "head --benchmark_list_tests=true --benchmark_filter=^$ --kgate_processes=1");
  const std::vector<bool> head_first = kgate::head_first_schedule(3, 5);
  for (std::size_t round = 0; round < 3; ++round) {
    const std::string& first = bins.calls[4 + 2 * round];
    EXPECT_EQ(first.substr(0, 4), head_first[round] ? "head" : "base") << first;
    EXPECT_EQ(bins.calls[5 + 2 * round].substr(0, 4), head_first[round] ? "base" : "head");
  }
  EXPECT_EQ(outcome.base_rounds.size(), 3u);
  EXPECT_EQ(outcome.head_rounds.size(), 3u);
  EXPECT_EQ(outcome.report.title, "kgate ab");
  ASSERT_FALSE(outcome.report.notices.empty());
  EXPECT_NE(outcome.report.notices.front().find("3 rounds, order "), std::string::npos) << outcome.report.notices.front();
  EXPECT_TRUE(outcome.report.regression()) << "head is 10% slower in every round";
  EXPECT_TRUE(bins.told.empty());
}

TEST(AbRounds, FlagsOfARound) {
  EXPECT_EQ(kgate::round_flags(1, 5, true, std::nullopt),
            (std::vector<std::string>{"--kgate_modes=headline", "--kgate_counters=off", "--kgate_min_time=0.05", "--kgate_max_time=1",
                                      "--kgate_max_samples=200", "--kgate_processes=1"}));
  const std::vector<std::string> later = kgate::round_flags(2, 20, false, "^a$");
  EXPECT_EQ(later[4], "--kgate_max_samples=100") << "at least 100 a round";
  EXPECT_EQ(later[5], "--kgate_check=off") << "checked in the first round only";
  EXPECT_EQ(later.back(), "--benchmark_filter=^a$");
}

TEST(AbRounds, ExactFilterEscapesEveryOperator) {
  EXPECT_EQ(kgate::exact_filter({"a/b:1", "x.y+(z)|[w]{2}^$*?\\"}), "^(a/b:1|x\\.y\\+\\(z\\)\\|\\[w]\\{2}\\^\\$\\*\\?\\\\)$");
  EXPECT_EQ(kgate::exact_filter({"fused+rope/m:1.5"}), "^fused\\+rope/m:1\\.5$") << "one name needs no group";
}

// Google Benchmark reads --benchmark_filter as a POSIX extended regular expression, through
// std::regex or, where that is missing, regcomp: the filter must compile in both and match each of
// its names whole, and nothing else.
TEST(AbRounds, ExactFilterMatchesItsNamesAloneInBothRegexEngines) {
  const std::string operators = "a.b*c[d]{2}|e^f$g?h\\i(j)k+l]m}n";
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{kA}, std::vector<std::string>{operators}, std::vector<std::string>{kA, operators, kB}}) {
    const std::string filter = kgate::exact_filter(names);
    const std::regex std_filter(filter, std::regex::extended);
    regex_t posix;
    ASSERT_EQ(regcomp(&posix, filter.c_str(), REG_EXTENDED | REG_NOSUB), 0) << filter;
    const auto matches = [&](const std::string& name) {
      const bool posix_matches = regexec(&posix, name.c_str(), 0, nullptr, 0) == 0;
      EXPECT_EQ(std::regex_search(name, std_filter), posix_matches) << filter << " on " << name;
      return posix_matches;
    };
    for (const std::string& name : names) {
      EXPECT_TRUE(matches(name)) << filter << " on " << name;
      EXPECT_FALSE(matches(name + "x")) << filter << " on " << name << "x";
      EXPECT_FALSE(matches("x" + name)) << filter << " on x" << name;
    }
    if (names.size() == 1) {
      EXPECT_FALSE(matches(kB)) << filter;
    }
    regfree(&posix);
  }
  EXPECT_FALSE(std::regex_search(std::string("axb*c[d]{2}|e^f$g?h\\i(j)k+l]m}n"),
                                 std::regex(kgate::exact_filter({operators}), std::regex::extended)))
      << "'.' matches only itself";
}

TEST(AbRounds, DifferentListsAreRefusedUnlessCommonOnly) {
  const std::string added = "rmsnorm/new_variant/m:1/n:4096/bf16";
  SyntheticBuilds bins;
  bins.names[AbSide::base] = {kA, kB};
  bins.names[AbSide::head] = {kA, kB, added};
  try {
    kgate::run_ab_rounds(plan(2), bins);
    FAIL() << "lists that differ were compared";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("only in head:\n  " + added), std::string::npos) << e.what();
  }
  EXPECT_EQ(bins.calls.size(), 2u) << "nothing measured";

  bins.calls.clear();
  kgate::AbPlan common = plan(2);
  common.common_only = true;
  const kgate::AbOutcome outcome = kgate::run_ab_rounds(common, bins);
  ASSERT_EQ(bins.told.size(), 1u);
  EXPECT_EQ(bins.told.front().rfind("comparing the 2 benchmarks both builds have; not compared:\nonly in head:\n", 0), 0u)
      << bins.told.front();
  EXPECT_NE(bins.calls.back().find("--benchmark_filter=" + kgate::exact_filter({kB, kA})), std::string::npos) << bins.calls.back();
  EXPECT_EQ(outcome.report.notices.back(), "1 benchmark(s) not compared, only in head (new): " + added);
}

TEST(AbRounds, NothingToCompareIsRefused) {
  SyntheticBuilds bins;
  kgate::AbPlan p = plan(1);
  p.filter = "no-such-benchmark";
  try {
    kgate::run_ab_rounds(p, bins);
    FAIL() << "an empty list was compared";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "no benchmark to compare (the filter 'no-such-benchmark' matches none)");
  }
}

// A command (--head-cmd) is neither listed nor probed, gets the filter and no flags, and what it
// wrote beyond its filter is not compared; the binary beside it runs as before.
TEST(AbRounds, ACommandIsToldItsFilterAndNarrowedToIt) {
  const std::string unselected = "silu_and_mul/vectorized/m:1/n:4096/bf16";
  SyntheticBuilds bins;
  bins.names[AbSide::base] = {kA, kB};
  bins.names[AbSide::head] = {kB, kA, unselected};
  bins.command[AbSide::head] = true;
  bins.median_s[AbSide::head] = 110e-6;
  kgate::AbPlan p = plan(3);
  p.filter = "rmsnorm|gemv";
  p.bench_flags = {"--kgate_min_time=0.2"};
  const kgate::AbOutcome outcome = kgate::run_ab_rounds(p, bins);

  ASSERT_EQ(bins.calls.size(), 8u) << "one listing, one probe, 3 rounds of 2";
  EXPECT_EQ(bins.calls[0], "base --benchmark_list_tests=true --benchmark_filter=rmsnorm|gemv --kgate_min_time=0.2");
  EXPECT_EQ(bins.calls[1], "base --benchmark_list_tests=true --benchmark_filter=^$ --kgate_processes=1");
  const std::vector<bool> head_first = kgate::head_first_schedule(3, 5);
  for (std::size_t round = 0; round < 3; ++round) {
    const std::string& head = bins.calls[head_first[round] ? 2 + 2 * round : 3 + 2 * round];
    const std::string& base = bins.calls[head_first[round] ? 3 + 2 * round : 2 + 2 * round];
    EXPECT_EQ(head, "head command round " + std::to_string(round + 1) + " filter rmsnorm|gemv");
    EXPECT_TRUE(base.starts_with("base --kgate_modes=headline ")) << base;
    EXPECT_TRUE(base.ends_with(" --benchmark_filter=rmsnorm|gemv --kgate_min_time=0.2")) << base;
  }
  for (const kgate::RunResults& round : outcome.head_rounds) EXPECT_EQ(round.benchmarks.size(), 2u) << "the silu benchmark dropped";
  ASSERT_EQ(outcome.report.benchmarks.size(), 2u);
  EXPECT_TRUE(outcome.report.regression()) << "head is 10% slower in every round";
  EXPECT_TRUE(bins.told.empty());
}

// Google Benchmark's filter rules for what a command wrote: empty or "all" is every benchmark, a
// leading '-' every one the rest does not match; a filter that is no regular expression is refused
// before anything runs.
TEST(AbRounds, ACommandsResultsAreNarrowedByGoogleBenchmarksRules) {
  const auto compared = [](const std::optional<std::string>& filter) {
    SyntheticBuilds bins;
    bins.names[AbSide::base] = bins.names[AbSide::head] = {kA, kB};
    bins.command[AbSide::base] = bins.command[AbSide::head] = true;
    kgate::AbPlan p = plan(1);
    p.filter = filter;
    std::vector<std::string> names;
    for (const auto& row : kgate::run_ab_rounds(p, bins).report.benchmarks) names.push_back(row.name);
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> both = {kB, kA};  // sorted: gemv first
  EXPECT_EQ(compared(std::nullopt), both);
  EXPECT_EQ(compared(""), both);
  EXPECT_EQ(compared("all"), both);
  EXPECT_EQ(compared("-gemv"), std::vector<std::string>{kA});
  EXPECT_EQ(compared("^gemv/tiled/"), std::vector<std::string>{kB});

  SyntheticBuilds bins;
  bins.command[AbSide::head] = true;
  kgate::AbPlan p = plan(1);
  p.filter = "rmsnorm(";
  const std::string refusal = message_thrown<std::invalid_argument>([&] { kgate::run_ab_rounds(p, bins); });
  EXPECT_TRUE(refusal.starts_with("the filter 'rmsnorm(' is not a regular expression: ")) << refusal;
  EXPECT_TRUE(bins.calls.empty()) << "nothing ran";
}

// A command's list is what it wrote in the first round: lists that differ are refused after it,
// or with --common-only compared on the benchmarks both have, the later rounds told exactly those.
TEST(AbRounds, ACommandsListIsItsFirstRound) {
  const std::string added = "rmsnorm/new_variant/m:1/n:4096/bf16";
  SyntheticBuilds bins;
  bins.names[AbSide::base] = {kA, kB};
  bins.names[AbSide::head] = {kA, kB, added};
  bins.command[AbSide::base] = bins.command[AbSide::head] = true;
  const std::string refusal = message_thrown<std::invalid_argument>([&] { kgate::run_ab_rounds(plan(3), bins); });
  EXPECT_NE(refusal.find("the builds' benchmark lists differ"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("only in head:\n  " + added), std::string::npos) << refusal;
  EXPECT_EQ(bins.calls.size(), 2u) << "refused after the first round";

  bins.calls.clear();
  bins.command[AbSide::base] = false;  // a binary beside the command, listed and probed
  kgate::AbPlan common = plan(3);
  common.common_only = true;
  const kgate::AbOutcome outcome = kgate::run_ab_rounds(common, bins);
  ASSERT_EQ(bins.told.size(), 1u);
  EXPECT_TRUE(bins.told.front().starts_with("comparing the 2 benchmarks both builds have; not compared:\nonly in head:\n"))
      << bins.told.front();
  EXPECT_EQ(bins.calls.size(), 8u) << "one listing, one probe, 3 rounds of 2";
  const std::string exact = kgate::exact_filter({kB, kA});
  for (const std::string& call : bins.calls) {
    if (call.starts_with("head command round 1")) {
      EXPECT_EQ(call, "head command round 1 filter (none)");
    } else if (call.starts_with("head command")) {
      EXPECT_TRUE(call.ends_with(" filter " + exact)) << call;
    }
  }
  for (const auto* rounds : {&outcome.base_rounds, &outcome.head_rounds})
    for (const kgate::RunResults& round : *rounds) EXPECT_EQ(round.benchmarks.size(), 2u) << "only the benchmarks both have";
  EXPECT_EQ(outcome.report.benchmarks.size(), 2u);
  EXPECT_EQ(outcome.report.notices.back(), "1 benchmark(s) not compared, only in head (new): " + added);
}

}  // namespace
