#pragma once
// `kgate report`: a run (and optionally its comparison with a baseline and the runs before it)
// told as a document a kernel engineer reads: summary, environment, correctness, per-family
// tables, hardware behaviour, charts, observations, history and how to reproduce it
// (docs/report.md). Every figure printed comes from the input files; the verdicts and the
// counter-delta explanations are compare.hpp's.
//
// The report is built once as a format-neutral Document (sections of paragraphs, bullets, tables
// and figures) plus its charts as standalone SVG; the renderers below only lay it out.
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

struct NamedRun {
  std::string source{};  // the file it was read from: named in the report
  RunResults run;
};

// One case of the GPU correctness suite as ctest ran it (scripts/gpu-tests.sh writes its JUnit).
struct SuiteCase {
  enum class Result { passed, failed, skipped };
  std::string variant{};  // "rmsnorm/vectorized"; a test of another kind keeps its whole name here
  std::string shape{};    // the shape's test id; empty for tests that are not variant x shape
  Result result = Result::passed;
  std::string reason{};  // why it was skipped (GoogleTest's message), empty otherwise
};
// Reads ctest's JUnit (ctest --output-junit FILE). Throws ResultsError naming the file when it
// cannot be read or holds no test case.
std::vector<SuiteCase> read_ctest_junit(const std::string& path);

struct ReportInputs {
  NamedRun current;
  std::optional<NamedRun> baseline;
  std::vector<NamedRun> previous{};      // earlier runs for the history and trend, in any order
  CompareOptions compare;                // the gate's options: the same verdicts as `kgate compare`
  std::string invocation{};              // the command that made the report, for the reproduction guide
  std::string correctness_source{};      // the correctness suite's JUnit file; empty: not given
  std::vector<SuiteCase> correctness{};  // its cases
  std::string link_base{};               // the URL the report directory is published at; empty: links are relative
};

namespace report {

// Inline text in paragraphs, bullets and cells may hold `code` spans and **bold** runs; the
// renderers turn them into their own markup.

enum class Tone { plain, good, bad, warn, muted };

struct Cell {
  std::string text{};
  Tone tone = Tone::plain;
  std::string tip{};                 // shown on hover in HTML ("baseline 93.1 µs, 0.943×, slower")
  std::string id{};                  // an anchor on the cell (a benchmark's place in a matrix); HTML only
  std::vector<std::string> chips{};  // short tags after the text ("Δ +5.52 µs", "registers 128 → 106")
  std::string svg{};                 // an inline picture after the text (a sparkline); HTML only
  // A heatmap cell: -1 (worst) to +1 (best) shades the background red to green; NaN: no shade.
  double heat = std::numeric_limits<double>::quiet_NaN();
};

struct Column {
  std::string title{};
  bool figure = false;  // right-aligned
  bool compact = true;  // kept in the terminal rendering
  std::string tip{};    // what the column means, shown on hover in HTML (the glossary's words)
};

struct Table {
  std::vector<Column> columns{};
  std::vector<std::vector<Cell>> rows{};
  std::string folded{};  // non-empty: shown collapsed under this summary (long reference tables)
  bool compact = false;  // printed by the terminal rendering
  bool matrix = false;   // a grid of figures (shapes × variants): cells never wrap
};

struct Paragraph {
  std::string text{};
  bool compact = false;
};

struct Bullets {
  std::vector<std::string> items{};
  bool compact = false;
};

struct Subheading {
  std::string text{};
  bool compact = false;
  std::string id{};  // an explicit anchor for links to it ([text](#id)); empty: none
};

struct Code {
  std::string text{};  // shown verbatim
};

// A chart: its SVG file in the report directory (inlined in HTML), with an ASCII fallback for
// the terminal where one reads well.
struct Chart {
  std::string file{};  // "roofline.svg"
  std::string title{};
  std::string svg{};
  std::string ascii{};  // empty: no terminal rendering
};

struct Figure {
  std::string file{};  // names a Chart of the document
  std::string caption{};
  bool compact = false;  // its ASCII version is printed by the terminal rendering
};

// The gate's answer in one word and one line, at the top of the report: "FAIL" in red, "3 slower:
// decode_attention/splitk ... −5.7%".
struct Badge {
  std::string word{};  // "FAIL", "PASS", "NO BASELINE"
  Tone tone = Tone::plain;
  std::string text{};  // inline text after it
  std::string icon{};  // "❌": where the badge is text (Markdown), the icon and the text are the line
};

using Block = std::variant<Paragraph, Bullets, Subheading, Table, Figure, Code, Badge>;

// Whether a section is shown as a fold (HTML <details>, Markdown's <details> too): open, or closed
// until clicked, with `summary` beside its title.
enum class Fold { none, open, closed };

struct Section {
  std::string title{};
  std::vector<Block> blocks{};
  std::vector<Section> subsections{};  // after the blocks, one heading level down
  std::string id{};                    // its anchor; empty: anchor(title), as GitHub derives it
  Fold fold = Fold::none;
  std::string summary{};  // a folded section's one line ("3 slower · 8 shapes × 6 variants")
  std::string anchor_id() const;
};

struct Document {
  std::string title{};
  std::string subtitle{};
  std::vector<Section> sections{};
  std::vector<Chart> charts{};
  const Chart* chart(const std::string& file) const;
};

// The full report and the short one for a GitHub step summary or pull-request comment.
struct Report {
  Document full;
  // summary.md: the verdict in its first line, the changed benchmarks, the rest folded; always under
  // 60,000 characters (a pull-request comment holds 65,536), linking into the full report.
  std::string summary_markdown{};
  std::string gate_line{};  // "gate: pass (0 slower, ...)" or "gate: not evaluated (no baseline)"
  bool gate_failed = false;
};

// Throws EnvironmentMismatch as compare_runs does.
Report build_report(const ReportInputs& inputs);

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes.
std::string anchor(const std::string& title);

// Markdown (GitHub flavour): charts linked by relative path (`![...](roofline.svg)`), or, with a
// `link_base` (the URL the report directory is published at: a CI artifact, GitHub Pages), by
// absolute URL, as every other link to a file: a pull-request comment has no folder beside it.
std::string render_markdown(const Document& document, const std::string& link_base = "");
// One self-contained HTML file: inline CSS and SVG, a few lines of inline script that sort a table
// by the column clicked, no network.
std::string render_html(const Document& document);
// The compact terminal version: the blocks marked compact, ASCII tables and bars.
std::string render_text(const Document& document);

}  // namespace report
}  // namespace kgate
