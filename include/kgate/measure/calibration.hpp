#pragma once
// The ceilings every percentage in a run is taken against, measured on this GPU in this run with
// the same timer as the benchmarks: a device-to-device copy (bytes read + written), a read-only
// stream (read-dominated kernels such as decode attention and GEMV are judged against it: on an
// H200 reads alone outrun a copy), a bf16 tensor-core GEMM through cuBLAS, and the launch floors.
#include "kgate/results/device.hpp"
#include "kgate/results/results.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate {

struct CalibrationOptions {
  std::size_t stream_bytes = std::size_t(1) << 30;  // per buffer: far beyond any L2
  int gemm_size = 8192;                             // m = n = k
};

Calibration measure_calibration(const DeviceInfo& device, GpuTimer& timer, const CalibrationOptions& options = {});

// Peak DRAM bandwidth from the device's memory clock and bus width (double data rate); 0 when the
// driver no longer reports the clock.
double datasheet_bytes_per_s(const DeviceInfo& device);

}  // namespace kgate
