#pragma once
// The search behind `kgate bisect` (docs/history.md): given commits c0 (good) ... cN (bad) in
// order and a way to compare two of them (kgate ab on the GPU), find the first commit whose
// slowdown holds. Pure logic: the caller builds and measures, so the search is tested on the CPU
// with a fake comparison.
//
// The benchmarks watched are those `kgate ab` finds slower from good to bad. At each step the
// middle commit m of the range (lo, hi) is compared with both neighbours, lo -> m and m -> hi:
//   slower on the left only   the slowdown entered in (lo, m]: continue there;
//   slower on the right only  it entered in (m, hi]: continue there;
//   slower on both sides      it came in steps: continue on the left (the first step), noted;
//   slower on one side and faster on the other: not monotonic (a slowdown that came and went,
//                             or a speedup before it): continue on the slower side, noted;
//   slower on neither side    the slowdown does not show between neighbours (a drift, each
//                             part below the threshold): stop with the range.
// The range ends as (last good, first bad) neighbours, whose comparison showed the slowdown.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kgate/gate/compare.hpp"

namespace kgate {

// Change of the watched benchmarks between two commits.
enum class StepChange { slower, faster, same };
std::string_view to_string(StepChange change);

struct BisectProbe {
  std::size_t base = 0, head = 0;  // indices into the commits
  StepChange change = StepChange::same;
  std::vector<std::string> slower, faster;  // watched benchmarks with that verdict
};

struct BisectResult {
  enum class Outcome {
    found,          // first_bad is the first commit of a slowdown that holds to the bad commit
    not_monotonic,  // first_bad found, but the range also holds a speedup or a slowdown that went away
    in_steps,       // first_bad is the first of several slowdowns in the range
    not_localized,  // the slowdown between last_good and first_bad shows in neither half
    no_slowdown,    // good -> bad shows no slowdown of the filtered benchmarks
  };
  Outcome outcome = Outcome::no_slowdown;
  std::size_t last_good = 0, first_bad = 0;
  std::vector<std::string> watched;  // benchmarks slower from good to bad
  std::vector<BisectProbe> probes;   // every comparison made, in order
  std::vector<std::string> notes;    // the non-monotonic and stepwise findings, in words
};
std::string_view to_string(BisectResult::Outcome outcome);

// Compares commit `base` with commit `head` (indices into the range) and returns each measured
// benchmark's verdict (kgate ab's).
using CompareCommits = std::function<std::map<std::string, Verdict>(std::size_t base, std::size_t head)>;

// `commits` (at least 2, named as the notes should name them): the first is good, the last bad.
// Each pair is compared at most once.
BisectResult bisect_commits(const std::vector<std::string>& commits, const CompareCommits& compare);

// Each benchmark's verdict in a comparison's JSON file (`kgate ab --json`, `kgate compare --json`):
// what a CompareCommits returns. Throws ResultsError naming the file and the JSON path of a
// verdict it does not know.
std::map<std::string, Verdict> read_comparison_verdicts(const std::string& path);

// The search in words, as kgate bisect prints it: one line per comparison with the benchmarks it
// found slower (faster, where it found none slower), the first three named, then the notes.
// `commits` names the commits as bisect_commits got them.
std::string describe_search(const BisectResult& result, const std::vector<std::string>& commits);

}  // namespace kgate
