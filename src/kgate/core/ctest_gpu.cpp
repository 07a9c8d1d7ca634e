#include "kgate/core/ctest_gpu.hpp"

#include "kgate/base/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace kgate {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string ctest_visible_devices(std::string_view allocation, std::string_view visible) {
  const std::vector<std::string> listed = split(visible, ',');
  std::string devices;
  for (const std::string& resource : split(allocation, ';')) {
    std::string id;
    for (const std::string& field : split(resource, ','))
      if (field.starts_with("id:")) id = field.substr(3);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("ctest GPU allocation '" + std::string(allocation) +
                                  "': expected id:<GPU number>,slots:<n> (scripts/ctest-resource-spec.sh writes GPU numbers)");
    std::string device = id;
    if (!visible.empty()) {
      const std::size_t position = std::stoul(id);
      if (position >= listed.size())
        throw std::invalid_argument("ctest allocated GPU " + id + ", but CUDA_VISIBLE_DEVICES=" + std::string(visible) + " lists " +
                                    std::to_string(listed.size()) + " (write the resource spec with the same CUDA_VISIBLE_DEVICES)");
      device = listed[position];
    }
    devices += (devices.empty() ? "" : ",") + device;
  }
  if (devices.empty()) throw std::invalid_argument("ctest GPU allocation is empty");
  return devices;
}

std::string use_ctest_gpu() {
  const int groups = std::atoi(env("CTEST_RESOURCE_GROUP_COUNT").c_str());
  for (int g = 0; g < groups; ++g) {
    const std::string allocation = env(("CTEST_RESOURCE_GROUP_" + std::to_string(g) + "_GPUS").c_str());
    if (allocation.empty()) continue;
    const std::string visible = env("CUDA_VISIBLE_DEVICES");
    const std::string devices = ctest_visible_devices(allocation, visible);
    if (visible.empty()) setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    setenv("CUDA_VISIBLE_DEVICES", devices.c_str(), 1);
    return "ctest allocated GPU " + allocation + ": CUDA_VISIBLE_DEVICES=" + devices;
  }
  return "";
}

std::string unmet_gpu_requirement(std::string_view no_device_reason, std::string_view require_gpu) {
  if (no_device_reason.empty() || require_gpu.empty() || require_gpu == "0") return "";
  return std::string(kRequireGpuVariable) + "=" + std::string(require_gpu) + " but no usable CUDA device: " + std::string(no_device_reason);
}

std::string unmet_gpu_requirement(std::string_view no_device_reason) {
  return unmet_gpu_requirement(no_device_reason, env(kRequireGpuVariable));
}

}  // namespace kgate
