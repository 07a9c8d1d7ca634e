// The compact terminal version: the blocks marked compact, tables in ASCII with their compact
// columns only, charts as ASCII bars.
#include <algorithm>
#include <cctype>

#include "kgate/base/escape.hpp"
#include "kgate/report/report.hpp"
#include "report_inline.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kWrap = 100;

// Inline text for the terminal: without its markup, each control character in it shown as an
// escape (a name's ESC or BEL never reaches the terminal).
std::string on_terminal(std::string_view text) { return terminal_text(plain_text(text)); }

// A chart's ASCII rendering, whose labels are names: each line made visible, the lines kept.
std::string lines_on_terminal(std::string_view text) { return terminal_text(text, "\n"); }

// Columns on a terminal: one per code point (the report's symbols µ × → — are all narrow).
std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::string fill(width > display_width(text) ? width - display_width(text) : 0, ' ');
  return right ? fill + text : text + fill;
}

std::string wrapped(const std::string& text, const std::string& first, const std::string& rest) {
  std::string out, line = first;
  bool fresh = true;  // nothing but the indent on the line yet
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (!fresh && display_width(line) + 1 + display_width(word) > kWrap) {
      out += line + "\n";
      line = rest;
      fresh = true;
    }
    line += (fresh ? "" : " ") + word;
    fresh = false;
  }
  return out + line + "\n";
}

// A cell longer than this (a library's error message, a skip reason) is cut at a word and sent to a
// numbered footnote under the table: the table stays as wide as its figures.
constexpr std::size_t kFootnotedCell = 72, kFootnoteCut = 48;

void table(std::string& out, const Table& t) {
  std::vector<std::size_t> shown, width;
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].compact) shown.push_back(i);
  std::vector<std::string> footnotes;
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    std::vector<std::string> texts(row.size());
    for (const std::size_t i : shown) {
      texts[i] = on_terminal(row[i].text);
      for (const std::string& chip : row[i].chips) texts[i] += (texts[i].empty() ? "" : "; ") + on_terminal(chip);
      if (display_width(texts[i]) <= kFootnotedCell) continue;
      footnotes.push_back(texts[i]);
      std::size_t cut = texts[i].rfind(' ', kFootnoteCut);
      if (cut == std::string::npos || cut < kFootnoteCut / 2) cut = kFootnoteCut;
      while (cut > 0 && (static_cast<unsigned char>(texts[i][cut]) & 0xC0) == 0x80) --cut;  // not inside a character
      texts[i] = texts[i].substr(0, cut) + " … [" + std::to_string(footnotes.size()) + "]";
    }
    cells.push_back(std::move(texts));
  }
  for (const std::size_t i : shown) {
    std::size_t w = display_width(on_terminal(t.columns[i].title));
    for (const auto& texts : cells) w = std::max(w, display_width(texts[i]));
    width.push_back(w);
  }
  const auto line = [&](const auto& cell_text) {
    std::string text = " ";
    for (std::size_t k = 0; k < shown.size(); ++k) {
      text += ' ';
      text += pad(cell_text(shown[k]), width[k], t.columns[shown[k]].figure);
    }
    return text + "\n";
  };
  out += line([&](std::size_t i) { return on_terminal(t.columns[i].title); });
  std::string rule = " ";
  for (const std::size_t w : width) rule.append(1, ' ').append(w, '-');
  out += rule + "\n";
  for (const auto& texts : cells) out += line([&](std::size_t i) { return texts[i]; });
  out += "\n";
  for (std::size_t n = 0; n < footnotes.size(); ++n) {
    std::string note = "[";  // built by appending: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary
    note += std::to_string(n + 1);
    note += "] ";
    note += footnotes[n];
    out += wrapped(note, "  ", "      ");
  }
  if (!footnotes.empty()) out += "\n";
}

// The compact blocks of a section and its subsections, each subsection under its title.
std::string section_text(const Document& document, const Section& section) {
  std::string body;
  for (const Block& block : section.blocks) {
    if (const auto* p = std::get_if<Paragraph>(&block); p && p->compact) {
      body += wrapped(on_terminal(p->text), "  ", "  ");
    } else if (const auto* b = std::get_if<Bullets>(&block); b && b->compact) {
      for (const std::string& item : b->items) body += wrapped(on_terminal(item), "  - ", "    ");
    } else if (const auto* h = std::get_if<Subheading>(&block); h && h->compact) {
      body += (body.empty() || body.ends_with("\n\n") ? "  " : "\n  ") + on_terminal(h->text) + "\n";
    } else if (const auto* t = std::get_if<Table>(&block); t && t->compact) {
      table(body, *t);
    } else if (const auto* f = std::get_if<Figure>(&block); f && f->compact) {
      if (const Chart* chart = document.chart(f->file); chart && !chart->ascii.empty()) body += lines_on_terminal(chart->ascii);
    } else if (const auto* badge = std::get_if<Badge>(&block)) {
      body += wrapped(on_terminal(badge->word + "  " + badge->text), "  ", "  ");
    }
  }
  for (const Section& sub : section.subsections)
    if (const std::string text = section_text(document, sub); !text.empty())
      body += (body.empty() || body.ends_with("\n\n") ? "  " : "\n  ") + on_terminal(sub.title) + "\n" + text;
  return body;
}

}  // namespace

std::string render_text(const Document& document) {
  std::string out = on_terminal(document.title) + "\n" + on_terminal(document.subtitle) + "\n";
  for (const Section& section : document.sections) {
    const std::string body = section_text(document, section);
    if (body.empty()) continue;
    std::string title = on_terminal(section.title);
    for (char& c : title) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += "\n" + title + "\n" + body;
  }
  return out;
}

}  // namespace kgate::report
