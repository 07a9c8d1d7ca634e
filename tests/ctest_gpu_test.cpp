// ctest's GPU allocation (CTEST_RESOURCE_GROUP_<n>_GPUS) turned into CUDA_VISIBLE_DEVICES, and
// KGATE_REQUIRE_GPU's decision between skipping and failing where there is no GPU.
#include "kgate/core/ctest_gpu.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kgate/measure/device.hpp"

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

using kgate::unmet_gpu_requirement;

constexpr const char* kNoDevice = "no CUDA device found (cudaErrorNoDevice: no CUDA-capable device is detected)";

TEST(GpuRequirement, WithoutTheVariableAMissingGpuSkips) {
  EXPECT_EQ(unmet_gpu_requirement(kNoDevice, ""), "");
  EXPECT_EQ(unmet_gpu_requirement(kNoDevice, "0"), "");
}

TEST(GpuRequirement, WithTheVariableAMissingGpuFailsWithTheReason) {
  EXPECT_EQ(unmet_gpu_requirement(kNoDevice, "1"), std::string("KGATE_REQUIRE_GPU=1 but no usable CUDA device: ") + kNoDevice);
  EXPECT_EQ(unmet_gpu_requirement("a CUDA device is present but its properties cannot be read", "yes"),
            "KGATE_REQUIRE_GPU=yes but no usable CUDA device: a CUDA device is present but its properties cannot be read");
}

TEST(GpuRequirement, APresentGpuMeetsIt) {
  EXPECT_EQ(unmet_gpu_requirement("", "1"), "");
  EXPECT_EQ(unmet_gpu_requirement("", ""), "");
}

// The programs' overload reads the variable from the environment.
TEST(GpuRequirement, ReadsTheEnvironment) {
  const char* saved = std::getenv(kgate::kRequireGpuVariable);
  const std::string restore = saved ? saved : "";
  setenv(kgate::kRequireGpuVariable, "1", 1);
  EXPECT_EQ(unmet_gpu_requirement(kNoDevice), std::string("KGATE_REQUIRE_GPU=1 but no usable CUDA device: ") + kNoDevice);
  unsetenv(kgate::kRequireGpuVariable);
  EXPECT_EQ(unmet_gpu_requirement(kNoDevice), "");

  // What the programs decide on a machine without a GPU (CI's): fail with the probe's own reason.
  const kgate::DeviceProbe& probe = kgate::probe_device();
  if (!probe.device) {
    EXPECT_FALSE(probe.reason.empty());
    EXPECT_EQ(unmet_gpu_requirement(probe.reason, "1"), "KGATE_REQUIRE_GPU=1 but no usable CUDA device: " + probe.reason);
    EXPECT_EQ(unmet_gpu_requirement(probe.reason), "");
  } else {
    EXPECT_EQ(unmet_gpu_requirement(probe.reason, "1"), "") << "a GPU is here: " << probe.device->name;
  }
  if (saved) setenv(kgate::kRequireGpuVariable, restore.c_str(), 1);
}

}  // namespace
