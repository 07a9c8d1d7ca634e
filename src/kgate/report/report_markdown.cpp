// The report as GitHub-flavoured Markdown; charts are linked by relative path.
#include "kgate/base/escape.hpp"
#include "kgate/report/report.hpp"
#include "report_inline.hpp"

namespace kgate::report {
namespace {

// Inline text for Markdown, each span escaped as what it is (base/escape.hpp): no character of a
// name becomes markup, in a table cell ('in_table') or where the text starts a line ('starts_line').
std::string inline_markdown(std::string_view text, bool in_table, bool starts_line = false) {
  std::string out;
  for (const Span& span : parse_inline(text)) {
    const bool first = starts_line && out.empty();
    if (span.kind == Span::Kind::link) {
      // Appended piece by piece: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary string.
      out += '[';
      out += inline_markdown(span.text, in_table);
      out += "](" + span.target + ")";
    } else if (span.kind == Span::Kind::code) {
      out += markdown_code_span(span.text, in_table);
    } else if (span.kind == Span::Kind::bold) {
      out += "**" + markdown_text(span.text) + "**";
    } else {
      out += markdown_text(span.text, first);
    }
  }
  return out;
}

void table(std::string& out, const Table& t) {
  // An HTML block: GitHub reads no Markdown inside it, so its text is escaped as HTML.
  if (!t.folded.empty()) out += "<details><summary>" + xml_escape(plain_text(t.folded)) + "</summary>\n\n";
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
  if (!document.subtitle.empty()) out += inline_markdown(document.subtitle, false, true) + "\n\n";
  if (document.sections.size() > 3) {
    out += "**Contents:** ";
    for (std::size_t i = 0; i < document.sections.size(); ++i)
      out += (i ? " · " : "") +
             ("[" + inline_markdown(document.sections[i].title, false) + "](#" + anchor(document.sections[i].title) + ")");
    out += "\n\n";
  }
  for (const Section& section : document.sections) {
    out += "## " + inline_markdown(section.title, false) + "\n\n";
    for (const Block& block : section.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        out += inline_markdown(p->text, false, true) + "\n\n";
      } else if (const auto* b = std::get_if<Bullets>(&block)) {
        for (const std::string& item : b->items) out += "- " + inline_markdown(item, false, true) + "\n";
        out += "\n";
      } else if (const auto* h = std::get_if<Subheading>(&block)) {
        // An explicit anchor: GitHub numbers repeated heading anchors, which links cannot know.
        if (!h->id.empty()) out += "<a id=\"" + xml_escape(h->id) + "\"></a>\n\n";
        out += "### " + inline_markdown(h->text, false) + "\n\n";
      } else if (const auto* t = std::get_if<Table>(&block)) {
        table(out, *t);
      } else if (const auto* f = std::get_if<Figure>(&block)) {
        const Chart* chart = document.chart(f->file);
        out += "![" + markdown_text(chart ? chart->title : f->file) + "](" + f->file + ")\n\n" + inline_markdown(f->caption, false, true) +
               "\n\n";
      } else if (const auto* c = std::get_if<Code>(&block)) {
        out += markdown_code_block(c->text, "sh") + "\n";
      }
    }
  }
  return out;
}

}  // namespace kgate::report
