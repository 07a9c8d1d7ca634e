// base's text helpers (text.hpp), which every module shares: split, join, printf_string and the
// alignment of figures by the columns they take in a terminal.
#include "kgate/base/text.hpp"

#include <gtest/gtest.h>

namespace {

TEST(Text, SplitKeepsTheNonEmptyPiecesAndJoinPutsThemBack) {
  EXPECT_EQ(kgate::split("a,,b,", ','), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(kgate::split("", ',').empty());
  EXPECT_EQ(kgate::join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(kgate::join({"only"}, ", "), "only");
  EXPECT_EQ(kgate::join({}, ", "), "");
  EXPECT_EQ(kgate::join({"", "x"}, "/"), "/x") << "an empty piece keeps its place";
}

TEST(Text, PrintfStringHoldsWhatPrintfWouldPrintHoweverLong) {
  EXPECT_EQ(kgate::printf_string("%.1f GiB", 1.25), "1.2 GiB");
  EXPECT_EQ(kgate::printf_string("\\x%02x", 7u), "\\x07");
  EXPECT_EQ(kgate::printf_string("%.*f", 3, 2.0), "2.000");
  EXPECT_EQ(kgate::printf_string("%s", ""), "");
  const std::string wide = kgate::printf_string("%.0f", 1e300);  // longer than any fixed buffer the copies had
  EXPECT_EQ(wide.size(), 301u);
  EXPECT_EQ(wide.front(), '1');
}

TEST(Text, AlignmentCountsCharactersNotBytes) {
  EXPECT_EQ(kgate::display_width("24.2 µs"), 7u);
  EXPECT_EQ(kgate::right_aligned("1.5×", 6), "  1.5×");
  EXPECT_EQ(kgate::left_aligned("µs", 4), "µs  ");
  EXPECT_EQ(kgate::right_aligned("too wide", 3), "too wide");
}

}  // namespace
