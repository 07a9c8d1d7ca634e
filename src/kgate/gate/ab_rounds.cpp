#include "kgate/gate/ab_rounds.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string_view>

#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/ab.hpp"

namespace kgate {
namespace {

std::string list_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += "  " + terminal_text(n) + "\n";
  return text;
}

// "2 benchmark(s) not compared, only in head (new): a, b": the first five of them named.
std::string not_compared(const std::vector<std::string>& names, const char* where) {
  const std::vector<std::string> named(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(names.size(), 5)));
  return std::to_string(names.size()) + " benchmark(s) not compared, " + where + ": " + join(named, ", ") +
         (names.size() > 5 ? ", ..." : "");
}

// Google Benchmark's --benchmark_filter as it selects benchmarks (1.8's RunSpecifiedBenchmarks and
// FindBenchmarks): empty or "all" selects every one, a leading '-' those the rest does not match,
// and the rest is a POSIX extended regular expression found anywhere in the name.
class BenchmarkFilter {
 public:
  explicit BenchmarkFilter(const std::string& filter) {
    std::string pattern = filter.empty() || filter == "all" ? "." : filter;
    negative_ = pattern.starts_with('-');
    if (negative_) pattern.erase(0, 1);
    try {
      pattern_ = std::regex(pattern, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("the filter '" + terminal_text(filter) + "' is not a regular expression: " + e.what());
    }
  }
  bool selects(const std::string& name) const { return std::regex_search(name, pattern_) != negative_; }

 private:
  std::regex pattern_;
  bool negative_ = false;
};

// The lists of both builds matched: refused when they differ, unless plan.common_only, then told.
ListDifference match_lists(const AbPlan& plan, std::vector<std::string> base_list, std::vector<std::string> head_list, AbBuilds& builds) {
  ListDifference lists = diff_benchmark_lists(std::move(base_list), std::move(head_list));
  if (!lists.same()) {
    const std::string differences = (lists.base_only.empty() ? "" : "only in base:\n" + list_names(lists.base_only)) +
                                    (lists.head_only.empty() ? "" : "only in head:\n" + list_names(lists.head_only));
    if (!plan.common_only)
      throw std::invalid_argument("the builds' benchmark lists differ (--common-only compares the " + std::to_string(lists.common.size()) +
                                  " they share):\n" + differences);
    builds.tell("comparing the " + std::to_string(lists.common.size()) + " benchmarks both builds have; not compared:\n" + differences);
  }
  if (lists.common.empty())
    throw std::invalid_argument("no benchmark to compare" +
                                (plan.filter ? " (the filter '" + *plan.filter + "' matches none)" : std::string()));
  return lists;
}

// The benchmarks a command wrote in its first round: its list.
std::vector<std::string> names_in(const RunResults& run) {
  std::vector<std::string> names;
  for (const BenchmarkRecord& r : run.benchmarks) names.push_back(r.name);
  return names;
}

// Drops the run's benchmarks that `keep` does not select.
template <typename Keep>
void narrow(RunResults& run, Keep keep) {
  std::erase_if(run.benchmarks, [&](const BenchmarkRecord& r) { return !keep(r.name); });
}

}  // namespace

const char* to_string(AbSide side) { return side == AbSide::base ? "base" : "head"; }

std::vector<std::string> round_flags(int round, int rounds, bool takes_processes_flag, const std::optional<std::string>& filter) {
  const int max_samples = std::max(100, (1000 + rounds - 1) / rounds);
  std::vector<std::string> flags = {"--kgate_modes=headline", "--kgate_counters=off", "--kgate_min_time=0.05", "--kgate_max_time=1",
                                    "--kgate_max_samples=" + std::to_string(max_samples)};
  if (takes_processes_flag) flags.push_back("--kgate_processes=1");  // the rounds are the processes
  if (round > 1) flags.push_back("--kgate_check=off");               // checked once; a wrong result fails the benchmark
  if (filter) flags.push_back("--benchmark_filter=" + *filter);
  return flags;
}

std::string exact_filter(const std::vector<std::string>& names) {
  const bool alternatives = names.size() != 1;
  std::string filter = alternatives ? "^(" : "^";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) filter += '|';
    for (const char c : names[i]) {
      if (std::string_view("\\.[(){*+?|^$").find(c) != std::string_view::npos) filter += '\\';
      filter += c;
    }
  }
  return filter + (alternatives ? ")$" : "$");
}

AbOutcome run_ab_rounds(const AbPlan& plan, AbBuilds& builds) {
  // A command is told the filter but may run more; its results are narrowed by Google Benchmark's
  // rule, the filter compiled before anything runs.
  const bool any_command = builds.is_command(AbSide::base) || builds.is_command(AbSide::head);
  const std::optional<BenchmarkFilter> command_filter = plan.filter && any_command ? std::optional(BenchmarkFilter(*plan.filter))
                                                                                   : std::nullopt;

  // Both builds must measure the same benchmarks: a benchmark in one list only would show up as
  // new or missing, which does not fail the gate and hides what was not compared. Each binary
  // lists with the flags its rounds get (some, like --kgate_workloads, change the list); a
  // command cannot list, so the lists are matched after the first round, from what it wrote.
  std::vector<std::string> list_flags = {"--benchmark_list_tests=true"};
  if (plan.filter) list_flags.push_back("--benchmark_filter=" + *plan.filter);
  list_flags.insert(list_flags.end(), plan.bench_flags.begin(), plan.bench_flags.end());
  const auto listing = [&](AbSide side) { return builds.is_command(side) ? std::nullopt : std::optional(builds.list(side, list_flags)); };
  const std::optional<std::vector<std::string>> base_list = listing(AbSide::base);  // base first, then head
  const std::optional<std::vector<std::string>> head_list = listing(AbSide::head);
  std::optional<ListDifference> lists;
  if (base_list && head_list) lists = match_lists(plan, *base_list, *head_list, builds);
  std::optional<std::string> run_filter = lists && !lists->same() ? exact_filter(lists->common) : plan.filter;

  // A listing that matches nothing costs no GPU time: whether the binary knows --kgate_processes
  // (builds before it always timed in one process).
  const std::vector<std::string> probe = {"--benchmark_list_tests=true", "--benchmark_filter=^$", "--kgate_processes=1"};
  const auto takes_processes = [&](AbSide side) { return !builds.is_command(side) && builds.accepts(side, probe); };
  const bool base_takes_processes = takes_processes(AbSide::base);
  const bool head_takes_processes = takes_processes(AbSide::head);
  const std::vector<bool> head_first = head_first_schedule(plan.rounds, plan.seed);
  AbOutcome outcome;
  std::string order;
  for (int round = 1; round <= plan.rounds; ++round) {
    const bool head_goes_first = head_first[static_cast<std::size_t>(round - 1)];
    order += std::string(order.empty() ? "" : " ") + (head_goes_first ? "HB" : "BH");
    for (const AbSide side : head_goes_first ? std::vector{AbSide::head, AbSide::base} : std::vector{AbSide::base, AbSide::head}) {
      const bool base = side == AbSide::base;
      std::vector<std::string> flags;
      if (!builds.is_command(side)) {
        flags = round_flags(round, plan.rounds, base ? base_takes_processes : head_takes_processes, run_filter);
        flags.insert(flags.end(), plan.bench_flags.begin(), plan.bench_flags.end());
      }
      RunResults results = builds.run_round(side, round, flags, run_filter);
      if (builds.is_command(side) && command_filter)
        narrow(results, [&](const std::string& name) { return command_filter->selects(name); });
      (base ? outcome.base_rounds : outcome.head_rounds).push_back(std::move(results));
    }
    if (!lists) {
      lists = match_lists(plan, base_list ? *base_list : names_in(outcome.base_rounds.front()),
                          head_list ? *head_list : names_in(outcome.head_rounds.front()), builds);
      if (!lists->same()) run_filter = exact_filter(lists->common);
    }
  }
  // The benchmarks only one build has were run where the lists came after the first round, or by
  // a command that ignores its filter: they are not compared.
  const std::vector<std::string>& common = lists->common;  // sorted
  if (!lists->same())
    for (std::vector<RunResults>* rounds : {&outcome.base_rounds, &outcome.head_rounds})
      for (RunResults& run : *rounds)
        narrow(run, [&](const std::string& name) { return std::binary_search(common.begin(), common.end(), name); });

  outcome.report = compare_rounds(outcome.base_rounds, outcome.head_rounds, plan.base_name, plan.head_name, plan.options);
  ComparisonReport& report = outcome.report;
  report.title = "kgate ab";
  const RunContext& context = outcome.base_rounds.front().context;
  report.notices.insert(report.notices.begin(), "A/B on one " + context.gpu_name +
                                                    (context.gpu_uuid.empty() ? "" : " (" + context.gpu_uuid + ")") + ": " +
                                                    std::to_string(plan.rounds) + " rounds, order " + order + " (B base, H head; seed " +
                                                    std::to_string(plan.seed) + "); each side's samples pooled over the rounds");
  if (!lists->head_only.empty()) report.notices.push_back(not_compared(lists->head_only, "only in head (new)"));
  if (!lists->base_only.empty()) report.notices.push_back(not_compared(lists->base_only, "only in base (removed)"));
  return outcome;
}

}  // namespace kgate
