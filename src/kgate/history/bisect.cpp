#include "kgate/history/bisect.hpp"

#include <algorithm>
#include <stdexcept>

#include "kgate/base/escape.hpp"
#include "kgate/results/json_file.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {

std::string_view to_string(StepChange change) {
  switch (change) {
    case StepChange::slower: return "slower";
    case StepChange::faster: return "faster";
    case StepChange::same: return "same";
  }
  return "same";
}

std::string_view to_string(BisectResult::Outcome outcome) {
  switch (outcome) {
    case BisectResult::Outcome::found: return "found";
    case BisectResult::Outcome::not_monotonic: return "not monotonic";
    case BisectResult::Outcome::in_steps: return "in steps";
    case BisectResult::Outcome::not_localized: return "not localized";
    case BisectResult::Outcome::no_slowdown: return "no slowdown";
  }
  return "no slowdown";
}

BisectResult bisect_commits(const std::vector<std::string>& commits, const CompareCommits& compare) {
  if (commits.size() < 2) throw std::invalid_argument("bisect needs a good and a bad commit");
  BisectResult result;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> done;  // (base, head) -> probe index
  const auto probe = [&](std::size_t base, std::size_t head) -> const BisectProbe& {
    if (const auto it = done.find({base, head}); it != done.end()) return result.probes[it->second];
    BisectProbe p{base, head, StepChange::same, {}, {}};
    for (const auto& [name, verdict] : compare(base, head)) {
      const bool watched = result.watched.empty() || std::find(result.watched.begin(), result.watched.end(), name) != result.watched.end();
      if (!watched) continue;
      if (verdict == Verdict::slower) p.slower.push_back(name);
      if (verdict == Verdict::faster) p.faster.push_back(name);
    }
    p.change = !p.slower.empty() ? StepChange::slower : !p.faster.empty() ? StepChange::faster : StepChange::same;
    done[{base, head}] = result.probes.size();
    result.probes.push_back(std::move(p));
    return result.probes.back();
  };

  std::size_t lo = 0, hi = commits.size() - 1;
  result.last_good = lo;
  result.first_bad = hi;
  const BisectProbe whole = probe(lo, hi);
  if (whole.change != StepChange::slower) return result;
  result.watched = whole.slower;
  result.outcome = BisectResult::Outcome::found;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const StepChange left = probe(lo, mid).change, right = probe(mid, hi).change;
    const std::string where = " between " + commits[lo] + ", " + commits[mid] + " and " + commits[hi];
    if (left != StepChange::slower && right != StepChange::slower) {
      result.outcome = BisectResult::Outcome::not_localized;
      result.notes.push_back("the slowdown from " + commits[lo] + " to " + commits[hi] + " shows in neither half (" +
                             std::string(to_string(left)) + ", then " + std::string(to_string(right)) +
                             "): it is spread over the range, each part below the threshold");
      break;
    }
    if (left == StepChange::slower && right == StepChange::slower) {
      if (result.outcome == BisectResult::Outcome::found) result.outcome = BisectResult::Outcome::in_steps;
      result.notes.push_back("slower on both sides" + where + ": the slowdown came in steps; following the first");
    } else if (left == StepChange::faster || right == StepChange::faster) {
      result.outcome = BisectResult::Outcome::not_monotonic;
      result.notes.push_back(left == StepChange::slower
                                 ? "slower then faster" + where + ": a slowdown that came and (partly) went; following the slowdown"
                                 : "faster then slower" + where + ": a speedup before the slowdown; following the slowdown");
    }
    if (left == StepChange::slower) hi = mid;
    else lo = mid;
  }
  result.last_good = lo;
  result.first_bad = hi;
  return result;
}

std::map<std::string, Verdict> read_comparison_verdicts(const std::string& path) {
  const nlohmann::json report = read_json_file(path);
  std::map<std::string, Verdict> verdicts;
  const nlohmann::json& rows = report.at("benchmarks");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string key = rows[i].at("verdict").get<std::string>();
    const auto verdict = verdict_from_key(key);
    if (!verdict)
      throw ResultsError(path + ": $.benchmarks[" + std::to_string(i) + "].verdict: unknown verdict '" + terminal_text(key) + "'");
    verdicts[rows[i].at("name").get<std::string>()] = *verdict;
  }
  return verdicts;
}

std::string describe_search(const BisectResult& result, const std::vector<std::string>& commits) {
  std::string text;
  for (const BisectProbe& p : result.probes) {
    text += "  " + commits.at(p.base) + " -> " + commits.at(p.head) + ": " + std::string(to_string(p.change));
    const std::vector<std::string>& names = p.change == StepChange::faster ? p.faster : p.slower;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += (i ? ", " : " (") + terminal_text(names[i]);
    text += std::string(names.empty() ? "" : names.size() > 3 ? ", ...)" : ")") + "\n";
  }
  for (const std::string& note : result.notes) text += "note: " + terminal_text(note) + "\n";
  return text;
}

}  // namespace kgate
