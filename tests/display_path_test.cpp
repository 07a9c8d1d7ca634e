#include "kgate/base/display_path.hpp"

#include <filesystem>

#include <gtest/gtest.h>

namespace kgate {
namespace {

TEST(DisplayPath, UnderTheWorkingDirectoryRelativeElseTheFileName) {
  const std::filesystem::path here = std::filesystem::current_path();
  EXPECT_EQ(display_path((here / "runs" / "new.json").string()), "runs/new.json");
  EXPECT_EQ(display_path("runs/./new.json"), "runs/new.json");
  EXPECT_EQ(display_path("/elsewhere/ci/baselines/kgate.json"), "kgate.json");
  EXPECT_EQ(display_path("../outside/run.json"), "run.json");
  EXPECT_EQ(display_path("-"), "-");
}

}  // namespace
}  // namespace kgate
