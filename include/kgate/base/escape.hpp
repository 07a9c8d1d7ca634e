#pragma once
// Escaping by destination. Every text that comes from an input (a benchmark, family, GPU, host or
// kernel name, a path, an error message) is passed through the function of the output it lands in,
// so that no input can add markup to a report, close a code block, or drive a terminal.
//
// All of them first make the text visible: each C0 or C1 control character, DEL and each
// bidirectional override (U+202A-U+202E, U+2066-U+2069: they reorder what a reader sees) is shown
// as an escape (ESC as \x1b, U+202E as \u202e), each byte that is not part of valid UTF-8 as \xNN.
// The output is therefore always valid UTF-8.
#include <string>
#include <string_view>

namespace kgate {

// XML and HTML text and attribute values (JUnit files, SVG charts, HTML reports): the five markup
// characters as entities; tab, newline and carriage return kept, other controls made visible.
std::string xml_escape(std::string_view text);

// GitHub-flavoured Markdown inline text, in a paragraph, a heading, a list item or a table cell:
// '<', '>' and '&' as entities (no raw HTML), the characters of inline markup (\ ` * _ [ ] ~ |)
// backslash-escaped, newlines as spaces. Where the text starts a line (`starts_line`: a paragraph,
// a list item, a heading), a leading "# ", "- ", "+ " or "1. " is escaped so that it starts no block.
std::string markdown_text(std::string_view text, bool starts_line = false);

// A Markdown code span showing `text` as is: fenced by one more backtick than the longest run of
// backticks inside, padded where the text starts or ends with one; newlines as spaces. In a table
// cell ('in_table_cell') each '|' is written "\|", which GitHub's table parser turns back into '|'.
std::string markdown_code_span(std::string_view text, bool in_table_cell = false);

// A fenced Markdown code block (with `info`, e.g. "sh", as its language): the fence one backtick
// longer than any run of backticks in the text (at least three), so no line of it closes the block.
std::string markdown_code_block(std::string_view text, std::string_view info = "");

// `text` as [a-z0-9-] only: an anchor or a file name built from a name cannot carry markup or
// reach outside its folder. ASCII letters lower-cased, every other run of characters one '-';
// "x" when nothing is left.
std::string slug(std::string_view text);

// The anchor of a benchmark's panel in a report ("b-rmsnorm-vectorized-m-256-n-4096-bf16"): what
// `kgate compare --markdown --link-base URL` and the report's own tables link to.
std::string benchmark_anchor(std::string_view name);

// Text for a terminal: every control made visible (see above), newlines and tabs included unless
// named in `kept` (a multi-line error message keeps "\n").
std::string terminal_text(std::string_view text, std::string_view kept = "");

}  // namespace kgate
