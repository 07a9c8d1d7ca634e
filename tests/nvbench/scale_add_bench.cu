// out = alpha * x + y over n floats, written as an nvbench benchmark (scripts/record-nvbench.sh
// builds and runs it on a GPU to record the nvbench files of tests/data): one axis of element counts,
// its global-memory traffic declared, cold timing with nvbench's defaults. Built with
// KGATE_PLANTED_SLOWDOWN it also reads an extra array of n/2 floats: 14 bytes per element instead of
// 12, a sixth more traffic.
#include <nvbench/nvbench.cuh>

#include <thrust/device_vector.h>

__global__ void scale_add(const float* x, const float* y, const float* extra, float* out, float alpha, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float value = alpha * x[i] + y[i];
  if (extra != nullptr && i % 2 == 0) value += extra[i / 2];
  out[i] = value;
}

void scale_add_bench(nvbench::state& state) {
  const auto n = state.get_int64("Elements");
  thrust::device_vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
#ifdef KGATE_PLANTED_SLOWDOWN
  thrust::device_vector<float> extra_values(n / 2 + 1, 0.0f);
  const float* extra = thrust::raw_pointer_cast(extra_values.data());
#else
  const float* extra = nullptr;
#endif
  state.add_element_count(n);
  state.add_global_memory_reads<float>(2 * n);
  state.add_global_memory_writes<float>(n);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  state.exec([&](nvbench::launch& launch) {
    scale_add<<<blocks, 256, 0, launch.get_stream()>>>(thrust::raw_pointer_cast(x.data()), thrust::raw_pointer_cast(y.data()), extra,
                                                       thrust::raw_pointer_cast(out.data()), 1.5f, n);
  });
}
NVBENCH_BENCH(scale_add_bench).set_name("scale_add").add_int64_power_of_two_axis("Elements", {20, 24, 26});
