// Escaping by destination (base/escape.hpp): each function on the characters that would otherwise
// add markup, close a code block, drive a terminal or make a file invalid UTF-8.
#include "kgate/base/escape.hpp"

#include <gtest/gtest.h>

namespace kgate {
namespace {

TEST(Escape, XmlEscapesMarkupAndShowsControls) {
  EXPECT_EQ(xml_escape("<img src=x onerror=\"alert('1')\"> & more"), "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp; more");
  EXPECT_EQ(xml_escape("a\tb\nc\rd"), "a\tb\nc\rd");  // whitespace XML allows stays
  EXPECT_EQ(xml_escape("red\x1b[31m bell\x07"), "red\\x1b[31m bell\\x07");
  EXPECT_EQ(xml_escape("del\x7f"), "del\\x7f");
}

TEST(Escape, EveryOutputIsValidUtf8) {
  // A stray byte, a truncated sequence, an overlong '/', a surrogate and a code point past U+10FFFF.
  const std::string broken =
      "a\xff"
      "b\xe2\x82"
      "c\xc0\xaf"
      "d\xed\xa0\x80"
      "e\xf4\x90\x80\x80";
  EXPECT_EQ(terminal_text(broken), "a\\xffb\\xe2\\x82c\\xc0\\xafd\\xed\\xa0\\x80e\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(xml_escape(broken), terminal_text(broken));
  // Well-formed characters outside ASCII pass: µ, ×, an emoji.
  EXPECT_EQ(terminal_text("17.5 \xc2\xb5s 0.80\xc3\x97 \xf0\x9f\x9a\x80"), "17.5 \xc2\xb5s 0.80\xc3\x97 \xf0\x9f\x9a\x80");
}

TEST(Escape, TerminalShowsEveryControl) {
  EXPECT_EQ(terminal_text("\x1b[31mred\x1b[0m\x07"), "\\x1b[31mred\\x1b[0m\\x07");
  EXPECT_EQ(terminal_text("a\tb\nc\rd"), "a\\tb\\nc\\rd");
  EXPECT_EQ(terminal_text("line 1\nline 2\x1b]0;title\x07", "\n"), "line 1\nline 2\\x1b]0;title\\x07");
  EXPECT_EQ(terminal_text("\xc2\x9b"
                          "31m"),
            "\\u009b31m");  // C1 CSI, as UTF-8
  EXPECT_EQ(terminal_text("abc\xe2\x80\xae"
                          "fed"),
            "abc\\u202efed");  // right-to-left override
  EXPECT_EQ(terminal_text("\x7f"), "\\x7f");
}

TEST(Escape, MarkdownTextHoldsNoMarkup) {
  EXPECT_EQ(markdown_text("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(markdown_text("a & b"), "a &amp; b");
  EXPECT_EQ(markdown_text("**bold** _em_ `code` [link](x) ~~strike~~ a|b \\"),
            "\\*\\*bold\\*\\* \\_em\\_ \\`code\\` \\[link\\](x) \\~\\~strike\\~\\~ a\\|b \\\\");
  EXPECT_EQ(markdown_text("two\nlines\r"), "two lines ");
  EXPECT_EQ(markdown_text("bell\x07"), "bell\\\\x07");  // shown as \x07
}

TEST(Escape, MarkdownTextStartsNoBlock) {
  EXPECT_EQ(markdown_text("# heading", true), "\\# heading");
  EXPECT_EQ(markdown_text("### heading", true), "\\### heading");
  EXPECT_EQ(markdown_text("  - item", true), "  \\- item");
  EXPECT_EQ(markdown_text("-", true), "\\-");  // an empty list item
  EXPECT_EQ(markdown_text("+ item", true), "\\+ item");
  EXPECT_EQ(markdown_text("12. item", true), "12\\. item");
  EXPECT_EQ(markdown_text("3) item", true), "3\\) item");
  // Not markers: no space after them, or not at the start of a line (a table cell, mid-sentence).
  EXPECT_EQ(markdown_text("#5 and -x and 1.5 us", true), "#5 and -x and 1.5 us");
  EXPECT_EQ(markdown_text("# heading"), "# heading");
  EXPECT_EQ(markdown_text("-"), "-");
}

TEST(Escape, MarkdownCodeSpanOutlastsItsBackticks) {
  EXPECT_EQ(markdown_code_span("rmsnorm/vectorized"), "`rmsnorm/vectorized`");
  EXPECT_EQ(markdown_code_span("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code_span("```"), "```` ``` ````");
  EXPECT_EQ(markdown_code_span("`x"), "`` `x ``");
  EXPECT_EQ(markdown_code_span(" x "), "`  x  `");
  EXPECT_EQ(markdown_code_span(""), "`  `");                // a span of spaces is not stripped
  EXPECT_EQ(markdown_code_span("<script>"), "`<script>`");  // a code span shows markup as text
  EXPECT_EQ(markdown_code_span("a\nb"), "`a b`");
  EXPECT_EQ(markdown_code_span("a|b"), "`a|b`");
  EXPECT_EQ(markdown_code_span("a|b", true), "`a\\|b`");
  EXPECT_EQ(markdown_code_span("\x1b[31m"), "`\\x1b[31m`");
}

TEST(Escape, MarkdownCodeBlockOutlastsItsBackticks) {
  EXPECT_EQ(markdown_code_block("ls -l", "sh"), "```sh\nls -l\n```\n");
  EXPECT_EQ(markdown_code_block("echo ```\n```\n"), "````\necho ```\n```\n````\n");
  EXPECT_EQ(markdown_code_block("a\tb\x1b"), "```\na\tb\\x1b\n```\n");
}

TEST(Escape, SlugIsLowerCaseLettersDigitsAndDashes) {
  EXPECT_EQ(slug("fused_add_rmsnorm"), "fused-add-rmsnorm");
  EXPECT_EQ(slug("<img src=x onerror=alert(1)>"), "img-src-x-onerror-alert-1");
  EXPECT_EQ(slug("../../etc/passwd"), "etc-passwd");
  EXPECT_EQ(slug("Decode Attention"), "decode-attention");
  EXPECT_EQ(slug("\xc3\xa9t\xc3\xa9"), "t");
  EXPECT_EQ(slug("%%%"), "x");
}

}  // namespace
}  // namespace kgate
