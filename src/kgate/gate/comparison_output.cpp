#include "kgate/gate/comparison_output.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"

namespace kgate {

using nlohmann::json;

namespace {

constexpr std::size_t kHeadlineNames = 3;            // rows named in the headline
constexpr std::size_t kHeadlineNameBytes = 64;       // a longer name is shortened there
constexpr std::size_t kMarkdownNoteBytes = 1'000;    // a row's notes, and each quoted warning or note
constexpr std::size_t kMarkdownSourceBytes = 200;    // an input's name
constexpr std::size_t kMarkdownQuotedLines = 20;     // warnings and notes quoted above the table
constexpr std::size_t kMarkdownTailReserve = 1'000;  // the "… and N more" lines and the fold's end

// `text` cut to at most `max_bytes` bytes at a character's start, with "…" when cut.
std::string shortened(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

bool tested(const BenchmarkComparison& row) { return row.speedup > 0 && !row.low_confidence; }

std::string p_text(const BenchmarkComparison& row) { return tested(row) ? format_p_value(row.p_value) : "-"; }

std::string interval_text(const BenchmarkComparison& row, Glyphs glyphs) {
  return tested(row) ? format_interval(row.ci_low, row.ci_high, glyphs) : "-";
}

std::string time_change_text(const BenchmarkComparison& row, Glyphs glyphs) {
  return row.speedup > 0 ? format_time_change(row.new_median_s - row.baseline_median_s, glyphs) : "-";
}

std::string change_text(const BenchmarkComparison& row, Glyphs glyphs) {
  return row.speedup > 0 ? format_time_change_of_speedup(row.speedup, glyphs) : "-";
}

std::string verdict_text(const BenchmarkComparison& row) {
  return std::string(to_string(row.verdict)) + (row.low_confidence ? " (low confidence)" : "");
}

std::string joined_notes(const BenchmarkComparison& row) {
  std::string notes;
  for (const std::string& note : row.notes) notes += (notes.empty() ? "" : "; ") + note;
  return notes;
}

const char* verdict_colour(Verdict verdict) {
  switch (verdict) {
    case Verdict::slower:
    case Verdict::failed: return "\033[31m";
    case Verdict::faster: return "\033[32m";
    case Verdict::noisy:
    case Verdict::at_threshold: return "\033[33m";
    case Verdict::added:
    case Verdict::missing: return "\033[36m";
    case Verdict::same: return "";
  }
  return "";
}

json number_or_null(double value) { return value > 0 ? json(value) : json(nullptr); }

std::string describe_for_junit(const BenchmarkComparison& row) {
  std::string text = verdict_text(row);
  if (row.speedup > 0)
    text += ": " + format_time(row.baseline_median_s) + " → " + format_time(row.new_median_s) + " (" + change_text(row, Glyphs::unicode) +
            ", speedup " + format_ratio(row.speedup) + ", interval " + interval_text(row, Glyphs::unicode) + ", p " + p_text(row) +
            ", threshold " + format_percent(row.threshold * 100) + ")";
  for (const std::string& note : row.notes) text += "; " + note;
  return text;
}

// ---------------------------------------------------------------------------------------------
// Markdown

// The absolute address of the report's page, or of a benchmark's panel in it.
std::string report_link(const MarkdownOptions& options, std::string_view anchor = {}) {
  std::string link = options.link_base;
  while (link.ends_with('/')) link.pop_back();
  link += "/report.html";
  if (!anchor.empty()) link.append("#").append(anchor);
  return link;
}

const char* const kMarkdownHeader =
    "| Benchmark | Verdict | Change | Δ time | Baseline | New | Speedup | Interval | Detectable | Notes |\n"
    "|:--|:--|--:|--:|--:|--:|--:|--:|--:|:--|\n";

std::string markdown_row(const BenchmarkComparison& row, const MarkdownOptions& options) {
  const Glyphs g = options.glyphs;
  std::string name = markdown_code_span(row.name, true);
  if (!options.link_base.empty()) name = "[" + name + "](" + report_link(options, benchmark_anchor(row.name)) + ")";
  const std::string verdict = row.fails_gate() ? "**" + verdict_text(row) + "**" : verdict_text(row);
  return "| " + name + " | " + verdict + " | " + change_text(row, g) + " | " + time_change_text(row, g) + " | " +
         format_time(row.baseline_median_s, g) + " | " + format_time(row.new_median_s, g) + " | " + format_ratio(row.speedup, g) + " | " +
         interval_text(row, g) + " | " + format_detectable(row.min_detectable_change, g) + " | " +
         markdown_text(with_glyphs(shortened(joined_notes(row), kMarkdownNoteBytes), g)) + " |\n";
}

// A table of `rows` in at most `budget` bytes, in their order until one does not fit; the rows left
// out are counted in `left_out`. Empty when not one fits.
std::string markdown_table(const std::vector<const BenchmarkComparison*>& rows, const MarkdownOptions& options, std::size_t budget,
                           std::size_t& left_out) {
  std::string table = with_glyphs(kMarkdownHeader, options.glyphs);
  left_out = 0;
  for (const BenchmarkComparison* row : rows) {
    const std::string line = markdown_row(*row, options);
    if (left_out == 0 && table.size() + line.size() <= budget) table += line;
    else ++left_out;
  }
  return left_out == rows.size() ? "" : table;
}

std::string and_more(std::size_t left_out, const char* what, const MarkdownOptions& options) {
  std::string text = "… and " + std::to_string(left_out) + " more " + what + ": ";
  text += options.link_base.empty() ? "`kgate compare --all` and `--json` list every one"
                                    : "[the full report](" + report_link(options) + ") lists every one";
  return with_glyphs(text, options.glyphs) + ".\n";
}

}  // namespace

std::string verdict_headline(const ComparisonReport& report, Glyphs glyphs) {
  const bool failed = report.regression();
  std::string line = glyphs == Glyphs::ascii ? "" : failed ? "❌ " : "✅ ";
  line += failed ? "kgate: FAIL, " : "kgate: pass, ";
  const auto ungated =
      static_cast<std::size_t>(std::count_if(report.benchmarks.begin(), report.benchmarks.end(),
                                             [](const BenchmarkComparison& row) { return row.verdict == Verdict::slower && !row.gated; }));
  line +=
      std::to_string(report.count(Verdict::slower)) + " slower" + (ungated ? " (" + std::to_string(ungated) + " vendor, not gated)" : "");
  for (const Verdict v : {Verdict::failed, Verdict::faster, Verdict::at_threshold, Verdict::noisy, Verdict::added, Verdict::missing})
    if (const std::size_t n = report.count(v); n || v == Verdict::faster)
      line += ", " + std::to_string(n) + " " + std::string(to_string(v));
  if (!failed) return with_glyphs(line, glyphs);
  std::vector<std::string> worst;
  std::size_t failing = 0;
  for (const BenchmarkComparison* row : rows_by_impact(report, false)) {
    if (!row->fails_gate() || ++failing > kHeadlineNames) continue;
    worst.push_back(shortened(row->name, kHeadlineNameBytes) + " " +
                    (row->verdict == Verdict::failed ? std::string("failed") : change_text(*row, Glyphs::unicode)));
  }
  line += " — ";
  for (std::size_t i = 0; i < worst.size(); ++i) line += (i ? ", " : "") + worst[i];
  if (failing > worst.size()) line += " and " + std::to_string(failing - worst.size()) + " more";
  return with_glyphs(line, glyphs);
}

std::string format_table(const ComparisonReport& report, bool colour, bool with_same, Glyphs glyphs) {
  std::string out;
  const std::vector<const BenchmarkComparison*> rows = rows_by_impact(report, with_same);
  const std::size_t hidden = report.benchmarks.size() - rows.size();
  const std::vector<std::string> header = {"Benchmark", "Baseline", "New", "Change",     with_glyphs("Δ time", glyphs),
                                           "Speedup",   "Interval", "p",   "Detectable", "Verdict"};
  std::vector<std::vector<std::string>> cells;
  for (const BenchmarkComparison* row : rows)
    cells.push_back({terminal_text(row->name), format_time(row->baseline_median_s, glyphs), format_time(row->new_median_s, glyphs),
                     change_text(*row, glyphs), time_change_text(*row, glyphs), format_ratio(row->speedup, glyphs),
                     interval_text(*row, glyphs), p_text(*row), format_detectable(row->min_detectable_change, glyphs), verdict_text(*row)});
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    width[i] = display_width(header[i]);
    for (const auto& line : cells) width[i] = std::max(width[i], display_width(line[i]));
  }
  const auto render = [&](const std::vector<std::string>& line, const char* verdict_start) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i == 0) text += left_aligned(line[i], width[i]);                            // names left-aligned
      else if (i + 1 < line.size()) text += "  " + right_aligned(line[i], width[i]);  // figures right-aligned
      else if (*verdict_start) text += "  " + std::string(verdict_start) + line[i] + "\033[0m";
      else text += "  " + line[i];
    }
    return text + "\n";
  };
  if (!rows.empty()) {
    out += render(header, "");
    std::size_t rule = 0;
    for (const std::size_t w : width) rule += w + 2;
    out += std::string(rule - 2, '-') + "\n";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += render(cells[i], colour ? verdict_colour(rows[i]->verdict) : "");
      for (const std::string& note : rows[i]->notes) out += "    - " + with_glyphs(terminal_text(note), glyphs) + "\n";
    }
    out += "\n";
  }
  if (hidden) out += std::to_string(hidden) + " unchanged benchmark(s) not listed (--all lists them)\n";
  out += with_glyphs(report.summary_line(), glyphs) + "\n";
  const std::string headline = terminal_text(verdict_headline(report, glyphs));
  out += (colour ? std::string(report.regression() ? "\033[31m" : "\033[32m") + headline + "\033[0m" : headline) + "\n";
  return out;
}

std::string format_warnings(const ComparisonReport& report, bool colour, Glyphs glyphs) {
  std::string out;
  for (const std::string& warning : report.warnings)
    out += (colour ? "\033[33mwarning:\033[0m " : "warning: ") + with_glyphs(terminal_text(warning), glyphs) + "\n";
  for (const std::string& notice : report.notices) out += "note: " + with_glyphs(terminal_text(notice), glyphs) + "\n";
  return out;
}

json report_to_json(const ComparisonReport& report) {
  json doc = {{"schema_version", 1},
              {"baseline", report.baseline_source},
              {"new", report.new_source},
              {"confidence", report.confidence},
              {"warnings", report.warnings},
              {"notices", report.notices},
              {"regression", report.regression()},
              {"summary", {{"line", report.summary_line()}, {"geomean_speedup", number_or_null(report.geomean_speedup())}}},
              {"benchmarks", json::array()}};
  for (const Verdict v : kVerdicts) doc["summary"][std::string(verdict_key(v))] = report.count(v);
  for (const BenchmarkComparison& row : report.benchmarks) {
    const bool with_test = tested(row);
    doc["benchmarks"].push_back({{"name", row.name},
                                 {"family", row.family},
                                 {"verdict", std::string(verdict_key(row.verdict))},
                                 {"low_confidence", row.low_confidence},
                                 {"threshold", row.threshold},
                                 {"baseline_samples", row.baseline_samples},
                                 {"new_samples", row.new_samples},
                                 {"baseline_median_s", number_or_null(row.baseline_median_s)},
                                 {"new_median_s", number_or_null(row.new_median_s)},
                                 {"speedup", number_or_null(row.speedup)},
                                 {"ci_low", with_test ? json(row.ci_low) : json(nullptr)},
                                 {"ci_high", with_test ? json(row.ci_high) : json(nullptr)},
                                 {"p_value", with_test ? json(row.p_value) : json(nullptr)},
                                 {"baseline_sm_clock_mhz", number_or_null(row.baseline_clock_mhz)},
                                 {"new_sm_clock_mhz", number_or_null(row.new_clock_mhz)},
                                 {"cycle_speedup", number_or_null(row.cycle_speedup)},
                                 {"timer", row.timer.empty() ? json(nullptr) : json(row.timer)},
                                 {"min_detectable_change", number_or_null(row.min_detectable_change)},
                                 {"gated", row.gated},
                                 {"notes", row.notes}});
  }
  return doc;
}

std::string report_to_junit(const ComparisonReport& report) {
  const std::size_t tests = report.benchmarks.size();
  const std::size_t failures = report.gate_failures();
  const std::size_t skipped = report.count(Verdict::missing);
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"" + xml_escape(report.title) + "\" " + counts + ">\n";
  out += "  <testsuite name=\"" + xml_escape(report.title) + "\" " + counts + ">\n";
  out += "    <properties>\n      <property name=\"baseline\" value=\"" + xml_escape(report.baseline_source) +
         "\"/>\n      <property name=\"new\" value=\"" + xml_escape(report.new_source) + "\"/>\n";
  for (const std::string& warning : report.warnings) out += "      <property name=\"warning\" value=\"" + xml_escape(warning) + "\"/>\n";
  out += "    </properties>\n";
  for (const BenchmarkComparison& row : report.benchmarks) {
    // JUnit's time attribute is seconds as a plain decimal number, not a figure for a reader.
    out += "    <testcase classname=\"" + xml_escape(row.family.empty() ? "kgate" : row.family) + "\" name=\"" + xml_escape(row.name) +
           "\" time=\"" + printf_string("%.9f", row.new_median_s) + "\"";
    const std::string description = xml_escape(describe_for_junit(row));
    if (row.fails_gate()) {
      const char* type = row.verdict == Verdict::slower ? "regression" : "failed";
      out += ">\n      <failure type=\"" + std::string(type) + "\" message=\"" + description + "\">" + description +
             "</failure>\n    </testcase>\n";
    } else if (row.verdict == Verdict::missing) {
      out += ">\n      <skipped message=\"" + description + "\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + description + "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string report_to_markdown(const ComparisonReport& report, const MarkdownOptions& options) {
  const Glyphs g = options.glyphs;
  std::string out = markdown_text(verdict_headline(report, g), true) + "\n\n";
  out += "**" + markdown_text(report.title) + "** of " + markdown_code_span(shortened(report.new_source, kMarkdownSourceBytes)) +
         " against " + markdown_code_span(shortened(report.baseline_source, kMarkdownSourceBytes)) + ": " +
         markdown_text(with_glyphs(report.summary_line(), g)) + ".";
  if (!options.link_base.empty()) out += " [Full report](" + report_link(options) + ").";
  out += "\n\n";
  std::vector<std::string> quoted;
  for (const std::string& warning : report.warnings)
    quoted.push_back("**warning:** " + markdown_text(with_glyphs(shortened(warning, kMarkdownNoteBytes), g)));
  for (const std::string& notice : report.notices)
    quoted.push_back(markdown_text(with_glyphs(shortened(notice, kMarkdownNoteBytes), g), true));
  if (quoted.size() > kMarkdownQuotedLines) {
    const std::size_t more = quoted.size() - kMarkdownQuotedLines;
    quoted.resize(kMarkdownQuotedLines);
    quoted.push_back(with_glyphs("… and " + std::to_string(more) + " more warnings and notes (`kgate compare` prints them all)", g));
  }
  for (std::size_t i = 0; i < quoted.size(); ++i) out += (i ? ">\n> " : "> ") + quoted[i] + "\n";
  if (!quoted.empty()) out += "\n";

  // The changes first, largest first; then the unchanged rows, folded; what does not fit in the
  // comment's size is counted, and the full report (or --json, --all) has it.
  const std::size_t budget = options.max_bytes > out.size() + kMarkdownTailReserve ? options.max_bytes - out.size() - kMarkdownTailReserve
                                                                                   : 0;
  const std::vector<const BenchmarkComparison*> changed = rows_by_impact(report, false);
  std::size_t used = 0;
  if (!changed.empty()) {
    std::size_t left_out = 0;
    const std::string table = markdown_table(changed, options, budget, left_out);
    out += table;
    used = table.size();
    if (left_out) out += "\n" + and_more(left_out, "changed benchmarks", options);
  }
  std::vector<const BenchmarkComparison*> unchanged;
  for (const BenchmarkComparison* row : rows_by_impact(report, true))
    if (row->verdict == Verdict::same) unchanged.push_back(row);
  if (!unchanged.empty()) {
    out += std::string(changed.empty() ? "" : "\n") + "<details><summary>" + std::to_string(unchanged.size()) + " unchanged</summary>\n\n";
    std::size_t left_out = 0;
    out += markdown_table(unchanged, options, budget > used ? budget - used : 0, left_out);
    if (left_out) out += "\n" + and_more(left_out, "unchanged benchmarks", options);
    out += "\n</details>\n";
  }
  return out;
}

}  // namespace kgate
