// Where a run came from (kgate/results/provenance.hpp): dates as runs are ordered by them.
#include "kgate/results/provenance.hpp"

#include <gtest/gtest.h>

namespace {

TEST(Iso8601Utc, ConvertsEveryFormResultsFilesCarryToUtc) {
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21T13:45:00Z"), "2026-11-21T13:45:00Z");       // kgate's own
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21T13:45:00+01:00"), "2026-11-21T12:45:00Z");  // Google Benchmark >= 1.6
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21T00:30:00+0100"), "2026-11-20T23:30:00Z");   // the day before in UTC
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21T13:45:00.123-05:30"), "2026-11-21T19:15:00Z");
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21 09:35:04"), "2026-11-21T09:35:04Z");  // older Google Benchmark: no zone
  EXPECT_EQ(kgate::iso8601_utc("2026-11-21"), "2026-11-21T00:00:00Z");
  EXPECT_EQ(kgate::iso8601_utc("2028-02-29T12:00Z"), "2028-02-29T12:00:00Z");
}

TEST(Iso8601Utc, RefusesWhatIsNoDate) {
  for (const char* text : {"", "yesterday", "2026-02-30", "2027-02-29", "2026-13-01", "2026-11-21T25:00:00Z", "2026-11-21T12:60:00Z",
                           "2026-11-21T12:00:00+25:00", "21/11/2026", "2026-11-21T12:00:00Z trailing"})
    EXPECT_FALSE(kgate::iso8601_utc(text).has_value()) << text;
}

}  // namespace
