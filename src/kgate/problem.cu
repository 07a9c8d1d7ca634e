#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <stdexcept>

#include "kgate/problem.hpp"

namespace kgate {

std::size_t TensorSpec::bytes() const { return count * size_of(dtype); }

bool InstanceCheck::passed() const {
  for (const auto& t : tensors)
    if (!t.passed()) return false;
  return !tensors.empty();
}

std::string InstanceCheck::describe() const {
  std::string out;
  for (const auto& t : tensors) {
    if (!out.empty()) out += '\n';
    out += t.describe();
  }
  return out;
}

namespace {

template <class T>
__device__ T from_float(float v);
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ float from_float<float>(float v) { return v; }

template <class T>
__global__ void fill_random_kernel(T* out, std::size_t count, std::uint64_t seed, Distribution dist) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = from_float<T>(random_value(seed, i, dist));
}

template <class T>
__global__ void fill_pattern_kernel(T* out, std::size_t count, T pattern) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = pattern;
}

constexpr int kFillThreads = 256;
unsigned fill_blocks(std::size_t count) {
  const std::size_t blocks = (count + kFillThreads - 1) / kFillThreads;
  return static_cast<unsigned>(std::min<std::size_t>(blocks, 65535));
}

void fill_random_on_device(const TensorSpec& spec, void* ptr, std::uint64_t seed, cudaStream_t stream) {
  const unsigned blocks = fill_blocks(spec.count);
  switch (spec.dtype) {
    case DType::bf16:
      fill_random_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(ptr), spec.count, seed, spec.distribution);
      break;
    case DType::fp16:
      fill_random_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<__half*>(ptr), spec.count, seed, spec.distribution);
      break;
    case DType::fp32:
      fill_random_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<float*>(ptr), spec.count, seed, spec.distribution);
      break;
    case DType::i32: throw std::logic_error("tensor '" + spec.name + "': i32 tensors need a custom_init");
  }
  KGATE_CHECK_LAUNCH();
}

// The value the device stores for `value` in `dtype`, as a double.
double round_to(DType dtype, double value) {
  switch (dtype) {
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(value)));
    case DType::fp16: return fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(value)));
    case DType::fp32: return static_cast<float>(value);
    case DType::i32: return static_cast<double>(static_cast<std::int32_t>(value));
  }
  return value;
}

std::vector<std::byte> encode(DType dtype, const std::vector<double>& values) {
  std::vector<std::byte> raw(values.size() * size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* dst = raw.data() + i * size_of(dtype);
    switch (dtype) {
      case DType::bf16: {
        const std::uint16_t bits = float_to_bf16_bits(static_cast<float>(values[i]));
        std::memcpy(dst, &bits, 2);
        break;
      }
      case DType::fp16: {
        const std::uint16_t bits = float_to_fp16_bits(static_cast<float>(values[i]));
        std::memcpy(dst, &bits, 2);
        break;
      }
      case DType::fp32: {
        const float v = static_cast<float>(values[i]);
        std::memcpy(dst, &v, 4);
        break;
      }
      case DType::i32: {
        const std::int32_t v = static_cast<std::int32_t>(values[i]);
        std::memcpy(dst, &v, 4);
        break;
      }
    }
  }
  return raw;
}

std::vector<double> generate_on_host(const TensorSpec& spec, std::uint64_t seed) {
  std::vector<double> values(spec.count);
  if (spec.custom_init) {
    spec.custom_init(seed, values);
  } else {
    for (std::size_t i = 0; i < spec.count; ++i) values[i] = random_value(seed, i, spec.distribution);
  }
  for (double& v : values) v = round_to(spec.dtype, v);
  return values;
}

std::uint64_t tensor_seed(std::uint64_t seed, int copy, const TensorSpec& spec) {
  return derive_seed(derive_seed(seed, "copy" + std::to_string(copy)), spec.name);
}

}  // namespace

std::size_t instance_bytes(const Family& family, const Shape& shape, int copies) {
  std::size_t total = 0;
  for (const TensorSpec& spec : family.tensors(shape)) total += spec.bytes();
  return total * static_cast<std::size_t>(copies);
}

ProblemInstance::ProblemInstance(const Family& family, Shape shape, int copies)
    : family_(&family), shape_(std::move(shape)), specs_(family.tensors(shape_)) {
  if (copies < 1) throw std::invalid_argument("ProblemInstance needs at least one copy");
  for (int c = 0; c < copies; ++c) {
    std::vector<DeviceAllocation> buffers;
    std::vector<void*> pointers;
    for (const TensorSpec& spec : specs_) {
      buffers.emplace_back(spec.bytes());
      pointers.push_back(buffers.back().get());
    }
    copies_.push_back(std::move(buffers));
    views_.emplace_back(std::move(pointers));
  }
}

std::size_t ProblemInstance::bytes_per_copy() const {
  std::size_t total = 0;
  for (const TensorSpec& spec : specs_) total += spec.bytes();
  return total;
}

void ProblemInstance::fill_inputs(std::uint64_t seed, bool keep_host_copy, cudaStream_t stream) {
  host_inputs_.assign(specs_.size(), {});
  for (int c = 0; c < copies(); ++c) {
    for (std::size_t t = 0; t < specs_.size(); ++t) {
      const TensorSpec& spec = specs_[t];
      if (spec.access == Access::output || spec.access == Access::scratch) continue;
      const std::uint64_t tseed = tensor_seed(seed, c, spec);
      void* ptr = copies_[c][t].get();
      if (spec.custom_init || (keep_host_copy && c == 0)) {
        std::vector<double> values = generate_on_host(spec, tseed);
        const std::vector<std::byte> raw = encode(spec.dtype, values);
        KGATE_CUDA_CHECK(cudaMemcpyAsync(ptr, raw.data(), raw.size(), cudaMemcpyHostToDevice, stream));
        KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));  // `raw` dies at the end of this scope
        if (c == 0 && keep_host_copy) host_inputs_[t] = std::move(values);
      } else {
        fill_random_on_device(spec, ptr, tseed, stream);
      }
    }
  }
  if (!keep_host_copy) host_inputs_.clear();
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void ProblemInstance::poison_outputs(cudaStream_t stream) {
  for (auto& buffers : copies_) {
    for (std::size_t t = 0; t < specs_.size(); ++t) {
      const TensorSpec& spec = specs_[t];
      if (spec.access != Access::output && spec.access != Access::scratch) continue;
      const unsigned blocks = fill_blocks(spec.count);
      if (size_of(spec.dtype) == 2) {
        fill_pattern_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint16_t*>(buffers[t].get()), spec.count,
                                                                 poison_bits_16());
      } else {
        fill_pattern_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint32_t*>(buffers[t].get()), spec.count,
                                                                 poison_bits_32());
      }
      KGATE_CHECK_LAUNCH();
    }
  }
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

InstanceCheck ProblemInstance::check() const {
  if (host_inputs_.size() != specs_.size())
    throw std::logic_error("ProblemInstance::check() needs fill_inputs(seed, keep_host_copy=true) first");
  HostTensors expected = host_inputs_;
  for (std::size_t t = 0; t < specs_.size(); ++t)
    if (specs_[t].access == Access::output) expected[t].assign(specs_[t].count, 0.0);
  family_->reference(shape_, expected);

  InstanceCheck result;
  const Tolerance tolerance = family_->tolerance(shape_);
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    const TensorSpec& spec = specs_[t];
    if (spec.access == Access::input || spec.access == Access::scratch) continue;
    std::vector<std::byte> raw(spec.bytes());
    KGATE_CUDA_CHECK(cudaMemcpy(raw.data(), copies_[0][t].get(), raw.size(), cudaMemcpyDeviceToHost));
    result.tensors.push_back(compare(spec.name, spec.dtype, raw, expected[t], tolerance));
  }
  return result;
}

}  // namespace kgate
