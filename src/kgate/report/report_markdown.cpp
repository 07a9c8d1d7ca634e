// The report as GitHub-flavoured Markdown; charts are linked by relative path.
#include "kgate/report/report.hpp"
#include "report_inline.hpp"

namespace kgate::report {
namespace {

// Inline text for Markdown: code spans kept, '<' and '>' outside them escaped so that a
// template argument is never read as HTML; in a table cell '|' is escaped everywhere (GFM).
std::string inline_markdown(std::string_view text, bool in_table) {
  std::string out;
  for (const Span& span : parse_inline(text)) {
    if (span.kind == Span::Kind::link) {
      // Appended piece by piece: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary string.
      out += '[';
      out += inline_markdown(span.text, in_table);
      out += "](#" + span.target + ")";
      continue;
    }
    std::string part;
    for (const char c : span.text) {
      if (c == '\n' || c == '\r')
        part += ' ';
      else if (c == '|' && in_table)
        part += "\\|";
      else if (span.kind != Span::Kind::code && c == '<')
        part += "&lt;";
      else if (span.kind != Span::Kind::code && c == '>')
        part += "&gt;";
      else
        part += c;
    }
    if (span.kind == Span::Kind::code)
      out += "`" + part + "`";
    else if (span.kind == Span::Kind::bold)
      out += "**" + part + "**";
    else
      out += part;
  }
  return out;
}

void table(std::string& out, const Table& t) {
  if (!t.folded.empty()) out += "<details><summary>" + inline_markdown(t.folded, false) + "</summary>\n\n";
  std::string header = "|", rule = "|";
  for (const Column& c : t.columns) {
    header += ' ';
    header += c.title.empty() ? std::string(" ") : inline_markdown(c.title, true);
    header += " |";
    rule += c.figure ? "--:|" : ":--|";
  }
  out += header + "\n" + rule + "\n";
  for (const auto& row : t.rows) {
    std::string line = "|";
    for (const Cell& cell : row) {
      line += ' ';
      line += inline_markdown(cell.text, true);
      line += " |";
    }
    out += line + "\n";
  }
  out += t.folded.empty() ? "\n" : "\n</details>\n\n";
}

}  // namespace

std::string render_markdown(const Document& document) {
  std::string out = "# " + inline_markdown(document.title, false) + "\n\n";
  if (!document.subtitle.empty()) out += inline_markdown(document.subtitle, false) + "\n\n";
  if (document.sections.size() > 3) {
    out += "**Contents:** ";
    for (std::size_t i = 0; i < document.sections.size(); ++i)
      out += (i ? " · " : "") + ("[" + document.sections[i].title + "](#" + anchor(document.sections[i].title) + ")");
    out += "\n\n";
  }
  for (const Section& section : document.sections) {
    out += "## " + inline_markdown(section.title, false) + "\n\n";
    for (const Block& block : section.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        out += inline_markdown(p->text, false) + "\n\n";
      } else if (const auto* b = std::get_if<Bullets>(&block)) {
        for (const std::string& item : b->items) out += "- " + inline_markdown(item, false) + "\n";
        out += "\n";
      } else if (const auto* h = std::get_if<Subheading>(&block)) {
        // An explicit anchor: GitHub numbers repeated heading anchors, which links cannot know.
        if (!h->id.empty()) out += "<a id=\"" + h->id + "\"></a>\n\n";
        out += "### " + inline_markdown(h->text, false) + "\n\n";
      } else if (const auto* t = std::get_if<Table>(&block)) {
        table(out, *t);
      } else if (const auto* f = std::get_if<Figure>(&block)) {
        const Chart* chart = document.chart(f->file);
        out += "![" + (chart ? chart->title : f->file) + "](" + f->file + ")\n\n" + inline_markdown(f->caption, false) + "\n\n";
      } else if (const auto* c = std::get_if<Code>(&block)) {
        out += "```sh\n" + c->text + (c->text.ends_with('\n') ? "" : "\n") + "```\n\n";
      }
    }
  }
  return out;
}

}  // namespace kgate::report
