// The report as GitHub-flavoured Markdown; charts and files are linked by relative path, or under
// the URL the report is published at.
#include <algorithm>

#include "kgate/base/escape.hpp"
#include "kgate/report/report.hpp"
#include "report_inline.hpp"

namespace kgate::report {
namespace {

class MarkdownWriter {
 public:
  MarkdownWriter(const Document& document, std::string link_base) : document_(document), link_base_(std::move(link_base)) {}

  std::string render() {
    // A document without a title (the pull-request summary) starts with its first section's blocks,
    // the subtitle after them.
    if (!document_.title.empty()) out_ = "# " + inline_markdown(document_.title, false) + "\n\n";
    if (!document_.title.empty() && !document_.subtitle.empty()) out_ += inline_markdown(document_.subtitle, false, true) + "\n\n";
    if (document_.sections.size() > 3) {
      out_ += "**Contents:** ";
      for (std::size_t i = 0; i < document_.sections.size(); ++i) {
        // Appended piece by piece: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary string.
        if (i) out_ += " · ";
        out_.append("[").append(inline_markdown(document_.sections[i].title, false)).append("](#");
        out_.append(document_.sections[i].anchor_id()).append(")");
      }
      out_ += "\n\n";
    }
    for (const Section& section : document_.sections) {
      section_markdown(section, 2);
      if (document_.title.empty() && &section == &document_.sections.front() && !document_.subtitle.empty())
        out_ += inline_markdown(document_.subtitle, false, true) + "\n\n";
    }
    return std::move(out_);
  }

 private:
  // A link to a file beside the Markdown points under link_base when one is given.
  std::string link_target(const std::string& target) const {
    if (link_base_.empty() || target.starts_with('#')) return target;
    return link_base_ + (link_base_.ends_with('/') ? "" : "/") + target;
  }

  // Inline text for Markdown, each span escaped as what it is (base/escape.hpp): no character of a
  // name becomes markup, in a table cell ('in_table') or where the text starts a line ('starts_line').
  std::string inline_markdown(std::string_view text, bool in_table, bool starts_line = false) const {
    std::string out;
    for (const Span& span : parse_inline(text)) {
      const bool first = starts_line && out.empty();
      if (span.kind == Span::Kind::link) {
        // Appended piece by piece: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary string.
        out += '[';
        out += inline_markdown(span.text, in_table);
        out += "](" + link_target(span.target) + ")";
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

  void table(const Table& t) {
    // An HTML block: GitHub reads no Markdown inside it, so its text is escaped as HTML.
    if (!t.folded.empty()) out_ += "<details><summary>" + xml_escape(plain_text(t.folded)) + "</summary>\n\n";
    std::string header = "|", rule = "|";
    for (const Column& c : t.columns) {
      header += ' ';
      header += c.title.empty() ? std::string(" ") : inline_markdown(c.title, true);
      header += " |";
      rule += c.figure ? "--:|" : ":--|";
    }
    out_ += header + "\n" + rule + "\n";
    for (const auto& row : t.rows) {
      std::string line = "|";
      for (const Cell& cell : row) {
        std::string text = inline_markdown(cell.text, true);
        for (const std::string& chip : cell.chips) text += (text.empty() ? "" : " · ") + inline_markdown(chip, true);
        line += " " + text + " |";
      }
      out_ += line + "\n";
    }
    out_ += t.folded.empty() ? "\n" : "\n</details>\n\n";
  }

  void blocks(const std::vector<Block>& list, int level) {
    for (const Block& block : list) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        out_ += inline_markdown(p->text, false, true) + "\n\n";
      } else if (const auto* b = std::get_if<Bullets>(&block)) {
        for (const std::string& item : b->items) out_ += "- " + inline_markdown(item, false, true) + "\n";
        out_ += "\n";
      } else if (const auto* h = std::get_if<Subheading>(&block)) {
        // An explicit anchor: GitHub numbers repeated heading anchors, which links cannot know.
        if (!h->id.empty()) out_ += "<a id=\"" + xml_escape(h->id) + "\"></a>\n\n";
        out_ += std::string(static_cast<std::size_t>(std::min(level + 1, 6)), '#') + " " + inline_markdown(h->text, false) + "\n\n";
      } else if (const auto* t = std::get_if<Table>(&block)) {
        table(*t);
      } else if (const auto* f = std::get_if<Figure>(&block)) {
        const Chart* chart = document_.chart(f->file);
        out_ += "![" + markdown_text(chart ? chart->title : f->file) + "](" + link_target(f->file) + ")\n\n" +
                inline_markdown(f->caption, false, true) + "\n\n";
      } else if (const auto* c = std::get_if<Code>(&block)) {
        out_ += markdown_code_block(c->text, "sh") + "\n";
      } else if (const auto* badge = std::get_if<Badge>(&block)) {
        // The text says the verdict in words already ("❌ kgate: 3 slower — ..."): the word is the HTML's badge.
        out_ += (badge->text.empty() ? "**" + markdown_text(badge->word) + "**"
                                     : (badge->icon.empty() ? "" : badge->icon + " ") + inline_markdown(badge->text, false, true)) +
                "\n\n";
      }
    }
  }

  // Inline text as the plain, escaped text of one line of an HTML block: a newline in a name would
  // end the block and let the rest be read as Markdown.
  static std::string one_line(std::string_view text) {
    std::string plain = plain_text(text);
    std::replace_if(
        plain.begin(), plain.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return xml_escape(plain);
  }

  // A folded section is GitHub's <details>: its title (as plain text: no Markdown is read inside
  // the summary) and summary line on the fold, its body Markdown again after a blank line.
  void section_markdown(const Section& section, int level) {
    if (section.fold == Fold::none) {
      if (!section.id.empty()) out_ += "<a id=\"" + xml_escape(section.id) + "\"></a>\n\n";
      if (!section.title.empty())
        out_ += std::string(static_cast<std::size_t>(std::min(level, 6)), '#') + " " + inline_markdown(section.title, false) + "\n\n";
    } else {
      const std::string id = section.id.empty() ? "" : " id=\"" + xml_escape(section.id) + "\"";
      out_ += std::string("<details") + (section.fold == Fold::open ? " open" : "") + id + "><summary><b>" + one_line(section.title) +
              "</b>" + (section.summary.empty() ? "" : " — " + one_line(section.summary)) + "</summary>\n\n";
    }
    blocks(section.blocks, level);
    for (const Section& sub : section.subsections) section_markdown(sub, level + 1);
    if (section.fold != Fold::none) out_ += "</details>\n\n";
  }

  const Document& document_;
  std::string link_base_;
  std::string out_;
};

}  // namespace

std::string render_markdown(const Document& document, const std::string& link_base) { return MarkdownWriter(document, link_base).render(); }

}  // namespace kgate::report
