#include "kgate/history/bisect.hpp"

#include <algorithm>
#include <stdexcept>

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
      const bool watched = result.watched.empty() ||
                           std::find(result.watched.begin(), result.watched.end(), name) != result.watched.end();
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
      result.notes.push_back("the slowdown from " + commits[lo] + " to " + commits[hi] +
                             " shows in neither half (" + std::string(to_string(left)) + ", then " + std::string(to_string(right)) +
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

}  // namespace kgate
