#include "kgate/measure/device.hpp"

#include <cuda_runtime.h>

#include <iostream>
#include <string>

#include "kgate/base/text.hpp"
#include "kgate/core/cuda_check.hpp"

namespace kgate {

static std::string format_uuid(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    out += printf_string("%02x", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

static DeviceProbe run_probe() {
  DeviceProbe probe;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    probe.reason = std::string("no CUDA device found (") +
                   (status != cudaSuccess ? std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status)
                                          : std::string("device count is 0")) +
                   ")";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return probe;
  }
  DeviceInfo info;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&info.ordinal) != cudaSuccess || cudaGetDeviceProperties(&prop, info.ordinal) != cudaSuccess) {
    probe.reason = "a CUDA device is present but its properties cannot be read";
    return probe;
  }
  info.name = prop.name;
  info.uuid = format_uuid(prop.uuid);
  info.compute_capability = prop.major * 10 + prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.global_memory_bytes = prop.totalGlobalMem;
  info.memory_bus_bits = prop.memoryBusWidth;
  cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, info.ordinal);
  cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, info.ordinal);
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  probe.device = info;
  return probe;
}

const DeviceProbe& probe_device() {
  static const DeviceProbe probe = run_probe();
  return probe;
}

void create_context() { KGATE_CUDA_CHECK(cudaFree(nullptr)); }

void release_device() {
  if (const cudaError_t status = cudaDeviceReset(); status != cudaSuccess)
    std::cerr << "kgate: warning: releasing the device for the next timing process: " << cudaGetErrorString(status) << "\n";
}

}  // namespace kgate
