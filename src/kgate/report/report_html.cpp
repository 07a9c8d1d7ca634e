// The report as one self-contained HTML file: inline CSS and SVG, a few lines of inline script
// that sort tables, nothing fetched.
#include <algorithm>
#include <cmath>

#include "kgate/base/text.hpp"
#include "kgate/report/report.hpp"
#include "report_inline.hpp"
#include "kgate/report/svg.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kLongCell = 80;  // longer cells (as read, without markup) may wrap anywhere (full kernel names)
// Longer cells (a library's error message, a skip reason, a long kernel name) collapse to their
// start, the whole text a click away: a row stays a row.
constexpr std::size_t kCollapsedCell = 120, kCollapsedSummary = 60;

// The start of a text for a collapsed cell: whole words, without markup.
std::string cell_summary(std::string_view text) {
  std::string plain = plain_text(text);
  if (plain.size() <= kCollapsedSummary) return plain;
  std::size_t cut = plain.rfind(' ', kCollapsedSummary);
  if (cut == std::string::npos || cut < kCollapsedSummary / 2) cut = kCollapsedSummary;
  while (cut > 0 && (static_cast<unsigned char>(plain[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return plain.substr(0, cut) + " …";
}

constexpr const char* kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #1f2328; font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
.subtitle { color: #57606a; margin: 0 0 12px; }
nav { margin: 0 0 8px; padding: 8px 12px; background: #f6f8fa; border-radius: 6px; display: flex; flex-wrap: wrap; gap: 2px 14px; }
nav a { color: #0969da; text-decoration: none; white-space: nowrap; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 16px; margin: 22px 0 8px; }
p, li { max-width: 1100px; }
code { font: 12.5px/1.4 Menlo, Consolas, "DejaVu Sans Mono", monospace; background: #eff1f3; padding: 1px 4px; border-radius: 4px; }
.table-wrap { overflow-x: auto; margin: 8px 0 18px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; text-align: left; }
th { background: #f6f8fa; cursor: pointer; }
th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }

td.long { min-width: 320px; }
td.num.long { white-space: normal; text-align: left; }
.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) td { background: #fafbfc; }
td.good { color: #1a7f37; }
td.bad { color: #cf222e; }
td.warn { color: #9a6700; }
td.muted { color: #8c959f; }
figure { display: inline-block; vertical-align: top; margin: 16px 16px 30px 0; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #d0d7de; border-radius: 4px; }
figcaption { color: #57606a; font-size: 13px; margin-top: 6px; width: 0; min-width: 100%; }
pre { background: #f6f8fa; padding: 12px 14px; border-radius: 6px; overflow-x: auto; }
pre code { background: none; padding: 0; white-space: pre; }
details > summary { cursor: pointer; color: #0969da; margin: 6px 0; }
td details > summary { margin: 0; }
td details { white-space: normal; text-align: left; min-width: 10em; max-width: 18em; }
/* A name breaks only between its fields (the <wbr> after each '/'), never inside one: "fa2_spl|itkv"
   would read as two words. A long cell (a kernel's full name) may break anywhere. */
code { white-space: normal; overflow-wrap: normal; word-break: keep-all; }
td.long code, code.anywhere { overflow-wrap: anywhere; }
th[title], td[title], dfn[title] { text-decoration: underline dotted #8c959f; text-underline-offset: 3px; }
td[title] { text-decoration: none; }
.badge-line { display: flex; align-items: center; gap: 14px; margin: 4px 0 10px; font-size: 16px; }
.badge { font-weight: 700; font-size: 18px; padding: 4px 14px; border-radius: 6px; color: #fff; background: #57606a; letter-spacing: 0.04em; }
.badge.bad { background: #cf222e; } .badge.good { background: #1a7f37; } .badge.warn { background: #9a6700; }
.chip { display: inline-block; font-size: 12px; line-height: 1.5; padding: 0 7px; margin: 1px 3px 1px 0; border-radius: 10px;
        background: #ddf4ff; color: #0a3069; white-space: nowrap; }
td svg.spark { display: inline-block; vertical-align: middle; margin-left: 4px; }
td.heat { text-align: right; font-variant-numeric: tabular-nums; }
section > details.fold { border: 1px solid #d0d7de; border-radius: 6px; margin: 8px 0; padding: 0 12px; }
details.fold > summary { color: #1f2328; padding: 6px 0; }
details.fold > summary > h3, details.fold > summary > h4 { display: inline; margin: 0 10px 0 0; font-size: 16px; }
details.fold > summary > .fold-summary { color: #57606a; }
details.fold[open] > summary { border-bottom: 1px solid #d0d7de; margin-bottom: 8px; }
h4 { font-size: 15px; margin: 18px 0 6px; }
.matrix td { white-space: nowrap; }
.matrix td .sub { display: block; font-size: 11.5px; color: #57606a; }
)";

// Sorting by a click on a column's title: figures by their leading number (units within a
// column are the same), text alphabetically; a second click reverses. The page stays
// self-contained: these few lines are the only script, and nothing is fetched.
constexpr const char* kSortScript = R"(
document.querySelectorAll('table').forEach((table) => {
  table.querySelectorAll('th').forEach((th, column) => th.addEventListener('click', () => {
    const body = table.tBodies[0];
    const up = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach((other) => other.removeAttribute('aria-sort'));
    th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
    const key = (row) => { const text = row.cells[column] ? row.cells[column].textContent.trim() : '';
                           const number = parseFloat(text.replace(/[^0-9.eE+-]/g, ' ').trim());
                           return isNaN(number) ? text : number; };
    const rows = Array.from(body.rows);
    rows.sort((a, b) => { const x = key(a), y = key(b);
                          const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
                          return up ? order : -order; });
    rows.forEach((row) => body.appendChild(row));
  }));
});
)";

// A name made of fields ("gemv/vectorized/m:4/...") may break after each '/', and nowhere else; a
// long name of one piece (a kernel's mangled name) anywhere, as it has no fields to keep whole.
constexpr std::size_t kLongUnbrokenName = 24;

std::string code_html(const std::string& escaped) {
  if (escaped.find('/') == std::string::npos)
    return escaped.size() > kLongUnbrokenName ? "<code class=\"anywhere\">" + escaped + "</code>" : "<code>" + escaped + "</code>";
  std::string out = "<code>";
  for (const char c : escaped) {
    out += c;
    if (c == '/') out += "<wbr>";
  }
  return out + "</code>";
}

std::string inline_html(std::string_view text) {
  std::string out;
  for (const Span& span : parse_inline(text)) {
    const std::string escaped = xml_escape(span.text);
    if (span.kind == Span::Kind::link) out += "<a href=\"" + xml_escape(span.target) + "\">" + inline_html(span.text) + "</a>";
    else if (span.kind == Span::Kind::code) out += code_html(escaped);
    else if (span.kind == Span::Kind::bold) out += "<strong>" + escaped + "</strong>";
    else out += escaped;
  }
  return out;
}

const char* tone_class(Tone tone) {
  switch (tone) {
    case Tone::good: return "good";
    case Tone::bad: return "bad";
    case Tone::warn: return "warn";
    case Tone::muted: return "muted";
    case Tone::plain: return "";
  }
  return "";
}

// A heatmap cell's background: red for -1, none for 0, green for +1.
std::string heat_style(double heat) {
  if (!(heat == heat)) return "";
  const double strength = std::min(std::fabs(heat), 1.0) * 0.55;
  return " style=\"background:" + printf_string(heat < 0 ? "rgba(207,34,46,%.2f)" : "rgba(26,127,55,%.2f)", strength) + "\"";
}

// An attribute whose value may hold a name from the inputs: escaped, and its '=' written as a
// character reference too, so no text inside a tag reads like another attribute ("onerror=").
std::string attribute(const char* name, const std::string& value) {
  if (value.empty()) return "";
  std::string escaped;
  for (const char c : xml_escape(value)) escaped += c == '=' ? std::string("&#61;") : std::string(1, c);
  return std::string(" ") + name + "=\"" + escaped + "\"";
}

std::string cell_html(const Cell& cell) {
  std::string content = plain_text(cell.text).size() > kCollapsedCell ? "<details><summary>" + xml_escape(cell_summary(cell.text)) +
                                                                            "</summary>" + inline_html(cell.text) + "</details>"
                                                                      : inline_html(cell.text);
  for (const std::string& chip : cell.chips) content += " <span class=\"chip\">" + inline_html(chip) + "</span>";
  return content + cell.svg;
}

void table(std::string& out, const Table& t) {
  if (!t.folded.empty()) out += "<details><summary>" + inline_html(t.folded) + "</summary>\n";
  out += std::string("<div class=\"table-wrap\"><table") + (t.matrix ? " class=\"matrix\"" : "") + ">\n<thead><tr>";
  for (const Column& c : t.columns)
    out += std::string(c.figure ? "<th class=\"num\"" : "<th") + attribute("title", c.tip) + ">" + inline_html(c.title) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Cell& cell = row[i];
      std::string classes = tone_class(cell.tone);
      const auto add_class = [&](const char* name) {
        if (!classes.empty()) classes += ' ';
        classes += name;
      };
      if (i < t.columns.size() && t.columns[i].figure) add_class("num");
      if (plain_text(cell.text).size() > kLongCell) add_class("long");
      if (cell.heat == cell.heat) add_class("heat");
      out += "<td" + attribute("class", classes) + attribute("id", cell.id) + attribute("title", cell.tip) + heat_style(cell.heat) + ">" +
             cell_html(cell) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!t.folded.empty()) out += "</details>\n";
}

void blocks(std::string& out, const Document& document, const std::vector<Block>& list) {
  for (const Block& block : list) {
    if (const auto* p = std::get_if<Paragraph>(&block)) {
      out += "<p>" + inline_html(p->text) + "</p>\n";
    } else if (const auto* b = std::get_if<Bullets>(&block)) {
      out += "<ul>\n";
      for (const std::string& item : b->items) out += "<li>" + inline_html(item) + "</li>\n";
      out += "</ul>\n";
    } else if (const auto* h = std::get_if<Subheading>(&block)) {
      out += "<h3" + attribute("id", h->id) + ">" + inline_html(h->text) + "</h3>\n";
    } else if (const auto* t = std::get_if<Table>(&block)) {
      table(out, *t);
    } else if (const auto* f = std::get_if<Figure>(&block)) {
      const Chart* chart = document.chart(f->file);
      out += "<figure>\n" + (chart ? chart->svg : "") + "<figcaption>" + inline_html(f->caption) + " (" + xml_escape(f->file) +
             ")</figcaption>\n</figure>\n";
    } else if (const auto* c = std::get_if<Code>(&block)) {
      out += "<pre><code>" + xml_escape(c->text) + "</code></pre>\n";
    } else if (const auto* badge = std::get_if<Badge>(&block)) {
      out += std::string("<div class=\"badge-line\"><span class=\"badge ") + tone_class(badge->tone) + "\">" + xml_escape(badge->word) +
             "</span><span>" + inline_html(badge->text) + "</span></div>\n";
    }
  }
}

// A section at heading `level` (2 for the document's own), its subsections one level down; a
// folded one is a <details> whose summary line is its heading.
void section_html(std::string& out, const Document& document, const Section& section, int level) {
  const std::string h = std::to_string(std::min(level, 6));
  std::string heading = "<h";  // built by appending: g++ 12 warns (-Wrestrict, wrongly) on "<" + a temporary
  heading.append(h).append(">").append(inline_html(section.title)).append("</h").append(h).append(">");
  if (section.fold == Fold::none) {
    out += "<section" + attribute("id", section.anchor_id()) + ">\n" + heading + "\n";
  } else {
    out += "<details class=\"fold\"" + attribute("id", section.anchor_id()) + (section.fold == Fold::open ? " open" : "") + "><summary>" +
           heading;
    if (!section.summary.empty()) out += "<span class=\"fold-summary\">" + inline_html(section.summary) + "</span>";
    out += "</summary>\n";
  }
  blocks(out, document, section.blocks);
  for (const Section& sub : section.subsections) section_html(out, document, sub, level + 1);
  out += section.fold == Fold::none ? "</section>\n" : "</details>\n";
}

}  // namespace

std::string render_html(const Document& document) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      xml_escape(plain_text(document.title)) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  out += "<h1>" + inline_html(document.title) + "</h1>\n";
  if (!document.subtitle.empty()) out += "<p class=\"subtitle\">" + inline_html(document.subtitle) + "</p>\n";
  out += "<nav>";
  for (const Section& section : document.sections)
    out += "<a href=\"#" + xml_escape(section.anchor_id()) + "\">" + inline_html(section.title) + "</a>";
  out += "</nav>\n";
  for (const Section& section : document.sections) section_html(out, document, section, 2);
  return out + "</main>\n<script>" + kSortScript + "</script>\n</body>\n</html>\n";
}

}  // namespace kgate::report
