// ctest's GPU allocation (CTEST_RESOURCE_GROUP_<n>_GPUS) turned into CUDA_VISIBLE_DEVICES.
#include "kgate/core/ctest_gpu.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

using kgate::ctest_visible_devices;

TEST(CtestGpu, IdsAreNvidiaSmiIndicesWithoutVisibleDevices) {
  EXPECT_EQ(ctest_visible_devices("id:1,slots:1", ""), "1");
  EXPECT_EQ(ctest_visible_devices("slots:2,id:0", ""), "0");
  EXPECT_EQ(ctest_visible_devices("id:0,slots:1;id:3,slots:1", ""), "0,3");
}

TEST(CtestGpu, IdsArePositionsInVisibleDevicesWhenSet) {
  EXPECT_EQ(ctest_visible_devices("id:1,slots:1", "4,5"), "5");
  EXPECT_EQ(ctest_visible_devices("id:0,slots:1", "GPU-64e3bac5-eef5-b6a3-7e37-aac9f1303246,GPU-1"),
            "GPU-64e3bac5-eef5-b6a3-7e37-aac9f1303246");
  EXPECT_THROW(ctest_visible_devices("id:2,slots:1", "4,5"), std::invalid_argument);
}

TEST(CtestGpu, MalformedAllocationsAreRefused) {
  for (const char* bad : {"", "slots:1", "id:,slots:1", "id:gpu0,slots:1", "id:-1,slots:1"})
    EXPECT_THROW(ctest_visible_devices(bad, ""), std::invalid_argument) << bad;
}

TEST(CtestGpu, AppliesTheAllocationToTheEnvironment) {
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string restore = saved ? saved : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CTEST_RESOURCE_GROUP_COUNT");
  EXPECT_EQ(kgate::use_ctest_gpu(), "") << "nothing allocated: the default device";
  EXPECT_EQ(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);

  setenv("CTEST_RESOURCE_GROUP_COUNT", "1", 1);
  setenv("CTEST_RESOURCE_GROUP_0", "gpus", 1);
  setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1", 1);
  EXPECT_EQ(kgate::use_ctest_gpu(), "ctest allocated GPU id:1,slots:1: CUDA_VISIBLE_DEVICES=1");
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_STREQ(std::getenv("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");

  for (const char* name : {"CTEST_RESOURCE_GROUP_COUNT", "CTEST_RESOURCE_GROUP_0", "CTEST_RESOURCE_GROUP_0_GPUS", "CUDA_DEVICE_ORDER"})
    unsetenv(name);
  if (saved) setenv("CUDA_VISIBLE_DEVICES", restore.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
