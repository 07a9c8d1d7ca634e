#include "kgate/base/phase_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

TEST(PhaseClock, LapsAddTheTimeSinceThePreviousLapToTheirPhase) {
  kgate::PhaseSeconds phases;
  kgate::PhaseClock clock(phases);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.lap("first");
  clock.lap("second");  // right after: next to nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.lap("first");  // a phase seen again accumulates
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_GE(phases.at("first"), 0.040);  // both sleeps
  const double second = phases.at("second");
  EXPECT_GE(second, 0.0);
  EXPECT_LT(second, phases.at("first"));  // no sleep of its own
  kgate::PhaseClock another(phases);      // a second clock adds to the same account
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  another.lap("second");
  EXPECT_GE(phases.at("second"), second + 0.020);
}
