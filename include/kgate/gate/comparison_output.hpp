#pragma once
// How a comparison (compare.hpp) is written out: the terminal table and its warnings, JSON, JUnit
// XML, and the Markdown of a pull-request comment or a GitHub step summary (docs/compare.md,
// "Output"). Every figure in them comes from base/figures.hpp, so they print a figure as the report
// prints it; names and notes from the inputs go through base/escape.hpp's function for each output.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "kgate/base/figures.hpp"
#include "kgate/gate/compare.hpp"

namespace kgate {

// The gate's answer in one line of plain text (no markup: the caller escapes it for its output),
// the first line of the Markdown and of the report's summary.md:
//   "❌ kgate: FAIL, 3 slower, 1 failed — decode_attention/splitk/b:16/… +6.04%, gemv/… +5.98%, …"
//   "✅ kgate: pass, 0 slower, 2 faster, 1 at threshold, 3 noisy"
// It names the three rows that fail the gate first (rows_by_impact's order), each with its change in
// time or "failed", and counts the rest. With Glyphs::ascii there is no emoji and the glyphs are
// ASCII ("kgate: FAIL, 3 slower - ...").
std::string verdict_headline(const ComparisonReport& report, Glyphs glyphs = Glyphs::unicode);

// The terminal table: the rows of rows_by_impact (same rows only when with_same) with their notes,
// then the summary line and the headline, which says PASS or FAIL in words; colour uses ANSI
// escapes. The warnings and notices, one "warning: " or "note: " line each, are apart (the command
// line prints them on standard error).
std::string format_table(const ComparisonReport& report, bool colour, bool with_same = false, Glyphs glyphs = Glyphs::unicode);
std::string format_warnings(const ComparisonReport& report, bool colour, Glyphs glyphs = Glyphs::unicode);

nlohmann::json report_to_json(const ComparisonReport& report);
std::string report_to_junit(const ComparisonReport& report);

// GitHub's limit on a comment is 65,536 characters; kgate's Markdown stays under this many bytes.
inline constexpr std::size_t kMarkdownCommentLimit = 60'000;

struct MarkdownOptions {
  Glyphs glyphs = Glyphs::unicode;
  // Where `kgate report`'s output is published (a CI artifact's or Pages URL, absolute): each
  // benchmark's name links to <link_base>/report.html#<benchmark_anchor(name)>, and a "full report"
  // link to <link_base>/report.html. Empty: no links.
  std::string link_base{};
  std::size_t max_bytes = kMarkdownCommentLimit;
};

// A pull-request comment: the headline; the comparison in one line (the inputs as given, the
// summary line); the warnings and notes quoted; the changed rows (slower, failed, at threshold,
// faster, noisy, new, missing) as a table of Δ time, change, speedup, interval, detectable change,
// verdict and notes; then the unchanged rows, folded. Never longer than options.max_bytes: rows
// that do not fit are counted ("… and 120 more"), with a link to the full report when link_base
// is given.
std::string report_to_markdown(const ComparisonReport& report, const MarkdownOptions& options = {});

}  // namespace kgate
