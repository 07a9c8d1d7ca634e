#include "kgate/gate/ab_rounds.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

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

}  // namespace

const char* to_string(AbSide side) { return side == AbSide::base ? "base" : "head"; }

std::vector<std::string> round_flags(int round, int rounds, bool takes_processes_flag, const std::optional<std::string>& filter) {
  const int max_samples = std::max(100, (1000 + rounds - 1) / rounds);
  std::vector<std::string> flags = {"--kgate_modes=headline", "--kgate_counters=off", "--kgate_min_time=0.05", "--kgate_max_time=1",
                                    "--kgate_max_samples=" + std::to_string(max_samples)};
  if (takes_processes_flag) flags.push_back("--kgate_processes=1");  // the rounds are the processes
  if (round > 1) flags.push_back("--kgate_check=off");  // checked once; a wrong result fails the benchmark
  if (filter) flags.push_back("--benchmark_filter=" + *filter);
  return flags;
}

std::string exact_filter(const std::vector<std::string>& names) {
  std::string filter = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) filter += '|';
    for (const char c : names[i]) {
      if (std::strchr(".[]{}()\\*+?^$|", c)) filter += '\\';
      filter += c;
    }
  }
  return filter + ")$";
}

AbOutcome run_ab_rounds(const AbPlan& plan, AbBinaries& binaries) {
  // Both builds must measure the same benchmarks: a benchmark in one list only would show up as
  // new or missing, which does not fail the gate and hides what was not compared. Each lists
  // with the flags its rounds get (some, like --kgate_workloads, change the list).
  std::vector<std::string> list_flags = {"--benchmark_list_tests=true"};
  if (plan.filter) list_flags.push_back("--benchmark_filter=" + *plan.filter);
  list_flags.insert(list_flags.end(), plan.bench_flags.begin(), plan.bench_flags.end());
  std::vector<std::string> base_list = binaries.list(AbSide::base, list_flags);  // base first, then head
  const ListDifference lists = diff_benchmark_lists(std::move(base_list), binaries.list(AbSide::head, list_flags));
  std::optional<std::string> run_filter = plan.filter;
  if (!lists.same()) {
    const std::string differences = (lists.base_only.empty() ? "" : "only in base:\n" + list_names(lists.base_only)) +
                                    (lists.head_only.empty() ? "" : "only in head:\n" + list_names(lists.head_only));
    if (!plan.common_only)
      throw std::invalid_argument("the builds' benchmark lists differ (--common-only compares the " + std::to_string(lists.common.size()) +
                                  " they share):\n" + differences);
    binaries.tell("comparing the " + std::to_string(lists.common.size()) + " benchmarks both builds have; not compared:\n" + differences);
    run_filter = exact_filter(lists.common);
  }
  if (lists.common.empty())
    throw std::invalid_argument("no benchmark to compare" +
                                (plan.filter ? " (the filter '" + *plan.filter + "' matches none)" : std::string()));

  // A listing that matches nothing costs no GPU time: whether the binary knows --kgate_processes
  // (builds before it always timed in one process).
  const std::vector<std::string> probe = {"--benchmark_list_tests=true", "--benchmark_filter=^$", "--kgate_processes=1"};
  const bool base_takes_processes = binaries.accepts(AbSide::base, probe);
  const bool head_takes_processes = binaries.accepts(AbSide::head, probe);
  const std::vector<bool> head_first = head_first_schedule(plan.rounds, plan.seed);
  AbOutcome outcome;
  std::string order;
  for (int round = 1; round <= plan.rounds; ++round) {
    const bool head_goes_first = head_first[static_cast<std::size_t>(round - 1)];
    order += std::string(order.empty() ? "" : " ") + (head_goes_first ? "HB" : "BH");
    for (const AbSide side : head_goes_first ? std::vector{AbSide::head, AbSide::base} : std::vector{AbSide::base, AbSide::head}) {
      const bool base = side == AbSide::base;
      std::vector<std::string> flags = round_flags(round, plan.rounds, base ? base_takes_processes : head_takes_processes, run_filter);
      flags.insert(flags.end(), plan.bench_flags.begin(), plan.bench_flags.end());
      (base ? outcome.base_rounds : outcome.head_rounds).push_back(binaries.run_round(side, round, flags));
    }
  }

  outcome.report = compare_rounds(outcome.base_rounds, outcome.head_rounds, plan.base_name, plan.head_name, plan.options);
  ComparisonReport& report = outcome.report;
  report.title = "kgate ab";
  const RunContext& context = outcome.base_rounds.front().context;
  report.notices.insert(report.notices.begin(),
                        "A/B on one " + context.gpu_name + (context.gpu_uuid.empty() ? "" : " (" + context.gpu_uuid + ")") + ": " +
                            std::to_string(plan.rounds) + " rounds, order " + order + " (B base, H head; seed " +
                            std::to_string(plan.seed) + "); each side's samples pooled over the rounds");
  if (!lists.head_only.empty()) report.notices.push_back(not_compared(lists.head_only, "only in head (new)"));
  if (!lists.base_only.empty()) report.notices.push_back(not_compared(lists.base_only, "only in base (removed)"));
  return outcome;
}

}  // namespace kgate
