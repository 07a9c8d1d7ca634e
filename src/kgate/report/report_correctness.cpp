// The correctness section: the suite's cases and the checks at bench time, family by family.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>

#include "kgate/base/escape.hpp"
#include "kgate/report/format.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

constexpr const char* kNoReason = "no reason recorded";

}  // namespace

std::string check_figures(const BenchmarkRecord& r) {
  const std::vector<TensorCheck> checks = parse_correctness_detail(r.correctness_detail);
  std::string out;
  for (const TensorCheck& c : checks) {
    out += (out.empty() ? "" : "; ") + literal(c.tensor) + ": rel_l2 " + sig3(c.rel_l2) + " (limit " + sig3(c.limit) + "), max_abs " +
           sig3(c.max_abs);
    if (!c.violations.empty()) out += ", " + literal(c.violations) + " outside the bound";
  }
  if (!checks.empty()) return out;
  for (const char ch : r.correctness_detail) out += ch == '\n' ? std::string("; ") : std::string(1, ch);
  return out.empty() ? "-" : literal(out);
}

namespace {

Cell result_cell(const BenchmarkRecord& r) {
  if (r.status == BenchmarkStatus::failed) return {"did not run: " + literal(r.error), Tone::bad};
  if (!r.correct) return {"not checked", Tone::muted};
  return *r.correct ? Cell{"pass", Tone::good} : Cell{"**FAIL**", Tone::bad};
}

}  // namespace

// Plain Google Benchmark JSON has no variant and shape: the rest of the name stands for the shape.
Cell shape_cell(const BenchmarkRecord& r) {
  if (!r.shape.empty()) return {code(r.shape)};
  return {r.name.size() > r.family.size() + 1 ? code(r.name.substr(r.family.size() + 1)) : "-"};
}

Cell variant_cell(const BenchmarkRecord& r) { return {r.variant.empty() ? "-" : code(r.variant)}; }

// The correctness suite as ctest ran it: counts that add up to its cases, the failures by name,
// the skips by reason, and every case in a folded table.
void suite_blocks(const ReportInputs& inputs, Section& section) {
  std::size_t passed = 0, failed = 0;
  std::map<std::string, std::size_t> skipped;  // reason -> cases
  std::vector<std::string> failures;
  Table table;
  table.columns = {{"Variant"}, {"Shape"}, {"Result"}, {"Why skipped"}};
  for (const SuiteCase& c : inputs.correctness) {
    const char* result = c.result == SuiteCase::Result::passed ? "pass" : c.result == SuiteCase::Result::failed ? "**FAIL**" : "skipped";
    table.rows.push_back({{code(c.variant)},
                          {c.shape.empty() ? "-" : code(c.shape)},
                          {result, c.result == SuiteCase::Result::failed    ? Tone::bad
                                   : c.result == SuiteCase::Result::skipped ? Tone::muted
                                                                            : Tone::good},
                          {c.reason.empty() ? "-" : literal(c.reason)}});
    if (c.result == SuiteCase::Result::passed) ++passed;
    if (c.result == SuiteCase::Result::failed) {
      ++failed;
      failures.push_back(code(c.variant + (c.shape.empty() ? "" : " " + c.shape)));
    }
    if (c.result == SuiteCase::Result::skipped) ++skipped[c.reason];
  }
  std::size_t skipped_count = 0;
  for (const auto& [reason, n] : skipped) skipped_count += n;
  section.blocks.push_back(Subheading{"Correctness suite"});
  section.blocks.push_back(
      Paragraph{"The GPU correctness suite (" + code(inputs.correctness_source) + ", ctest's JUnit): " +
                    std::to_string(inputs.correctness.size()) + " cases (variant × test shape), " + std::to_string(passed) + " passed, " +
                    (failed ? "**" + std::to_string(failed) + " failed**" : std::string("0 failed")) + ", " +
                    std::to_string(skipped_count) + " skipped." + (failures.empty() ? "" : " Failed: " + join_words(failures) + "."),
                true});
  if (!skipped.empty()) {
    Bullets reasons{{}, true};
    for (const auto& [reason, n] : skipped) reasons.items.push_back(std::to_string(n) + " skipped: " + literal(reason));
    section.blocks.push_back(std::move(reasons));
  }
  table.folded = std::to_string(inputs.correctness.size()) + " cases (show each)";
  section.blocks.push_back(std::move(table));
  section.blocks.push_back(Subheading{"Checks at bench time"});
}

Section correctness_section(const ReportModel& model) {
  Section section{"Correctness", {}};
  if (!model.inputs->correctness.empty()) suite_blocks(*model.inputs, section);
  std::size_t passed = 0, wrong = 0;
  std::map<std::string, std::size_t> unchecked;  // reason -> benchmarks
  for (const BenchmarkView& v : model.views) {
    const BenchmarkRecord& r = *v.record;
    if (!r.correct) ++unchecked[r.correctness_detail.empty() ? kNoReason : r.correctness_detail];
    else (*r.correct ? passed : wrong) += 1;
  }
  std::size_t not_checked = 0;
  for (const auto& [reason, n] : unchecked) not_checked += n;
  section.blocks.push_back(
      Paragraph{"`kgate_bench` checks each benchmark's output against the family's fp64 CPU reference before timing it: of " +
                std::to_string(model.views.size()) + " benchmarks, " + std::to_string(passed) + " passed, " + std::to_string(wrong) +
                " gave a wrong result, " + std::to_string(not_checked) + " were not checked."});
  if (!unchecked.empty()) {
    Bullets reasons;
    for (const auto& [reason, n] : unchecked)
      reasons.items.push_back(std::to_string(n) + (reason.starts_with("not checked") ? " " : " not checked: ") + literal(reason));
    section.blocks.push_back(reasons);
  }
  if (passed + wrong == 0 && unchecked.contains(kNoReason) && unchecked.size() == 1) return section;  // nothing to tabulate
  for (const FamilyView& family : model.families) {
    if (family.rows.empty()) continue;
    section.blocks.push_back(Subheading{literal(family.name)});
    Table table;
    table.columns = {{"Shape"}, {"Variant"}, {"Result"}, {"Error figures (per output tensor)"}};
    std::size_t family_passed = 0, family_unchecked = 0;
    for (const BenchmarkView* v : family.rows) {
      const BenchmarkRecord& r = *v->record;
      table.rows.push_back({shape_cell(r), variant_cell(r), result_cell(r), {r.correct ? check_figures(r) : "-"}});
      family_passed += r.correct == true;
      family_unchecked += !r.correct && r.status != BenchmarkStatus::failed;
    }
    // A family with nothing wrong is shown folded: its figures are there for whoever wants them.
    if (family_passed + family_unchecked == family.rows.size())
      table.folded = std::to_string(family_passed) + " passed, " + std::to_string(family_unchecked) + " not checked (show the figures)";
    section.blocks.push_back(std::move(table));
  }
  return section;
}

}  // namespace kgate::report
