// The search behind kgate bisect (bisect.hpp) with a fake kgate ab: each synthetic commit has a
// known speed level, and a comparison says slower or faster when the level moves beyond 5%.
#include <gtest/gtest.h>

#include "kgate/bisect.hpp"

namespace kgate {
namespace {

struct FakeAb {
  std::vector<double> levels;  // time per commit, relative
  int calls = 0;
  CompareCommits compare() {
    return [this](std::size_t base, std::size_t head) {
      ++calls;
      const double ratio = levels.at(head) / levels.at(base);
      const Verdict v = ratio > 1.05 ? Verdict::slower : ratio < 1 / 1.05 ? Verdict::faster : Verdict::same;
      // A benchmark outside the slowdown, noisy in one comparison: never followed.
      return std::map<std::string, Verdict>{{"watched", v}, {"other", base == 0 && head == levels.size() - 1 ? Verdict::same : Verdict::slower}};
    };
  }
};

std::vector<std::string> commit_names(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(std::string("c").append(std::to_string(i)));
  return names;
}

TEST(Bisect, NamesThePlantedCommitOfFive) {
  FakeAb ab{{1, 1, 1.1, 1.1, 1.1}};
  const BisectResult r = bisect_commits(commit_names(5), ab.compare());
  EXPECT_EQ(r.outcome, BisectResult::Outcome::found);
  EXPECT_EQ(r.first_bad, 2u);
  EXPECT_EQ(r.last_good, 1u);
  EXPECT_EQ(r.watched, std::vector<std::string>{"watched"});
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(ab.calls, static_cast<int>(r.probes.size()));  // each pair measured once
  EXPECT_EQ(ab.calls, 5);  // c0-c4, c0-c2, c2-c4, c0-c1, c1-c2
}

TEST(Bisect, EveryPositionInALongRange) {
  for (std::size_t planted = 1; planted < 17; ++planted) {
    FakeAb ab{std::vector<double>(17, 1.0)};
    for (std::size_t i = planted; i < 17; ++i) ab.levels[i] = 1.2;
    const BisectResult r = bisect_commits(commit_names(17), ab.compare());
    EXPECT_EQ(r.outcome, BisectResult::Outcome::found) << planted;
    EXPECT_EQ(r.first_bad, planted);
    EXPECT_EQ(r.last_good, planted - 1);
    EXPECT_LE(ab.calls, 1 + 2 * 4);  // the whole range, then two per halving
  }
}

TEST(Bisect, SaysWhenTheSlowdownCameAndWent) {
  FakeAb ab{{1, 1, 1.2, 1.0, 1.1, 1.1}};
  const BisectResult r = bisect_commits(commit_names(6), ab.compare());
  EXPECT_EQ(r.outcome, BisectResult::Outcome::not_monotonic);
  EXPECT_EQ(r.first_bad, 2u);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("came and (partly) went"), std::string::npos) << r.notes.front();
}

TEST(Bisect, StepsNoSlowdownAndASpreadSlowdown) {
  FakeAb steps{{1, 1.1, 1.1, 1.2, 1.2}};
  const BisectResult stepped = bisect_commits(commit_names(5), steps.compare());
  EXPECT_EQ(stepped.outcome, BisectResult::Outcome::in_steps);
  EXPECT_EQ(stepped.first_bad, 1u);

  FakeAb flat{{1, 1.02, 0.99, 1.0}};
  const BisectResult none = bisect_commits(commit_names(4), flat.compare());
  EXPECT_EQ(none.outcome, BisectResult::Outcome::no_slowdown);
  EXPECT_EQ(none.probes.size(), 1u);

  FakeAb drift{{1, 1.04, 1.08}};
  const BisectResult spread = bisect_commits(commit_names(3), drift.compare());
  EXPECT_EQ(spread.outcome, BisectResult::Outcome::not_localized);
  EXPECT_EQ(spread.last_good, 0u);
  EXPECT_EQ(spread.first_bad, 2u);

  EXPECT_THROW(bisect_commits(commit_names(1), flat.compare()), std::invalid_argument);
}

}  // namespace
}  // namespace kgate
