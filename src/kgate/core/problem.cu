#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kgate/core/host_values.hpp"
#include "kgate/core/problem.hpp"
#include "kgate/core/registry.hpp"

namespace kgate {

std::size_t TensorSpec::bytes() const { return count * size_of(dtype); }

namespace {

template <class T>
__device__ T from_float(float v);
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ float from_float<float>(float v) {
  return v;
}

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

// A tensor's bytes on the device, read back once the stream's work before it is done.
std::vector<std::byte> download_bytes(const TensorSpec& spec, const void* ptr, cudaStream_t stream = nullptr) {
  std::vector<std::byte> raw(spec.bytes());
  KGATE_CUDA_CHECK(cudaMemcpyAsync(raw.data(), ptr, raw.size(), cudaMemcpyDeviceToHost, stream));
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return raw;
}

std::vector<double> download_values(const TensorSpec& spec, const void* ptr, cudaStream_t stream) {
  return decode_values(spec.dtype, download_bytes(spec, ptr, stream));
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

CopyLayout copy_layout(std::size_t tensor_bytes, int copies) {
  if (copies < 1) throw std::invalid_argument("copy_layout needs at least one copy, got " + std::to_string(copies));
  constexpr int kSharedAbove = 16;
  constexpr std::size_t kLargePage = std::size_t{2} << 20, kAlignment = 256;
  if (copies <= kSharedAbove || tensor_bytes >= kLargePage) return {.allocations = copies, .allocation_bytes = tensor_bytes, .stride = 0};
  const std::size_t stride = (tensor_bytes + kAlignment - 1) / kAlignment * kAlignment;
  return {.allocations = 1,
          .allocation_bytes = tensor_bytes == 0 ? 0 : stride * static_cast<std::size_t>(copies - 1) + tensor_bytes,
          .stride = stride};
}

ProblemInstance::ProblemInstance(const Family& family, Shape shape, int copies)
    : family_(&family), shape_(std::move(shape)), specs_(family.tensors(shape_)) {
  if (copies < 1) throw std::invalid_argument("ProblemInstance needs at least one copy");
  std::vector<CopyLayout> layouts;
  for (const TensorSpec& spec : specs_) layouts.push_back(copy_layout(spec.bytes(), copies));
  allocations_.resize(specs_.size());
  // The shared allocations first; then the others copy by copy, each copy's tensors in turn: the
  // order every allocation was made in before some were shared. Allocated tensor by tensor, a
  // copy's K and V lay nine copies apart rather than side by side, and the naive decodes' medians
  // split 5% apart between processes (docs/timing.md).
  for (std::size_t t = 0; t < specs_.size(); ++t)
    if (layouts[t].allocations == 1) allocations_[t].emplace_back(layouts[t].allocation_bytes);
  for (int c = 0; c < copies; ++c)
    for (std::size_t t = 0; t < specs_.size(); ++t)
      if (layouts[t].allocations > 1) allocations_[t].emplace_back(layouts[t].allocation_bytes);

  std::vector<std::vector<void*>> pointers(static_cast<std::size_t>(copies));
  bool zeroed = false;
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    const bool shared = layouts[t].allocations == 1;  // an empty tensor's copies: null, at any stride
    for (int c = 0; c < copies; ++c) {
      const auto own = static_cast<std::size_t>(shared ? 0 : c);
      pointers[static_cast<std::size_t>(c)].push_back(static_cast<std::byte*>(allocations_[t][own].get()) +
                                                      (shared ? c * layouts[t].stride : 0));
    }
    // The only time the harness writes it: from here on, launches keep it zeroed themselves.
    if (specs_[t].access == Access::zeroed_scratch && specs_[t].count > 0) {
      for (const DeviceAllocation& allocation : allocations_[t])
        KGATE_CUDA_CHECK(cudaMemsetAsync(allocation.get(), 0, allocation.bytes(), nullptr));
      zeroed = true;
    }
  }
  for (std::vector<void*>& copy : pointers) views_.emplace_back(std::move(copy));
  // Launches come on other streams: the zeros must be in place before any of them.
  if (zeroed) KGATE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

std::size_t ProblemInstance::bytes_per_copy() const {
  std::size_t total = 0;
  for (const TensorSpec& spec : specs_) total += spec.bytes();
  return total;
}

void ProblemInstance::fill_inputs(std::uint64_t seed, bool keep_host_copy, cudaStream_t stream) {
  seed_ = seed;
  host_inputs_.assign(specs_.size(), {});
  for (int c = 0; c < copies(); ++c) {
    for (std::size_t t = 0; t < specs_.size(); ++t) {
      const TensorSpec& spec = specs_[t];
      if (spec.access != Access::input && spec.access != Access::inout) continue;  // only what a launch reads
      const std::uint64_t tseed = tensor_seed(seed, c, spec);
      void* ptr = pointer(c, t);
      if (!spec.shared_init_key.empty()) {
        if (c > 0) {
          // The key's values are the same in every copy: copy 0's, copied at the device's
          // bandwidth rather than again from the host's pageable memory.
          KGATE_CUDA_CHECK(cudaMemcpyAsync(ptr, pointer(0, t), spec.bytes(), cudaMemcpyDeviceToDevice, stream));
          continue;
        }
        const auto raw = shared_encoded_values(spec);  // held by the cache beyond this copy
        KGATE_CUDA_CHECK(cudaMemcpyAsync(ptr, raw->data(), raw->size(), cudaMemcpyHostToDevice, stream));
        if (keep_host_copy) host_inputs_[t] = decode_values(spec.dtype, *raw);
      } else if (spec.custom_init) {
        std::vector<double> values = generate_on_host(spec, tseed);
        const std::vector<std::byte> raw = encode_values(spec.dtype, values);
        KGATE_CUDA_CHECK(cudaMemcpyAsync(ptr, raw.data(), raw.size(), cudaMemcpyHostToDevice, stream));
        KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));  // `raw` dies at the end of this scope
        if (c == 0 && keep_host_copy) host_inputs_[t] = std::move(values);
      } else {
        fill_random_on_device(spec, ptr, tseed, stream);
        // The reference's copy is read back rather than drawn again on the host: the same values,
        // and the device draws them in a fraction of the time the host takes (0.3-0.8 s of host
        // time for the largest test shapes, most of a case's).
        if (c == 0 && keep_host_copy) host_inputs_[t] = download_values(spec, ptr, stream);
      }
    }
  }
  if (!keep_host_copy) host_inputs_.clear();
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void ProblemInstance::poison_outputs(cudaStream_t stream) {
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    const TensorSpec& spec = specs_[t];
    // A shape may need no scratch at all (a split plan of one split): nothing to poison. Zeroed
    // scratch keeps the zeros the launches maintain.
    if ((spec.access != Access::output && spec.access != Access::scratch) || spec.count == 0) continue;
    // A whole allocation at once, with the padding between its copies: one launch per allocation.
    for (const DeviceAllocation& allocation : allocations_[t]) {
      const std::size_t count = allocation.bytes() / size_of(spec.dtype);
      const unsigned blocks = fill_blocks(count);
      if (size_of(spec.dtype) == 2) {
        fill_pattern_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint16_t*>(allocation.get()), count, poison_bits_16());
      } else {
        fill_pattern_kernel<<<blocks, kFillThreads, 0, stream>>>(static_cast<std::uint32_t*>(allocation.get()), count, poison_bits_32());
      }
      KGATE_CHECK_LAUNCH();
    }
  }
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::optional<HostTensors> ProblemInstance::compute_on_host(const std::function<bool(HostTensors&)>& compute) {
  if (host_inputs_.size() != specs_.size())
    throw std::logic_error("ProblemInstance::check() needs fill_inputs(seed, keep_host_copy=true) first");
  HostTensors tensors(specs_.size());
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    if (specs_[t].access == Access::input) tensors[t] = std::move(host_inputs_[t]);
    if (specs_[t].access == Access::inout) tensors[t] = host_inputs_[t];
    if (specs_[t].access == Access::output) tensors[t].assign(specs_[t].count, 0.0);
  }
  const auto give_back = [&] {
    for (std::size_t t = 0; t < specs_.size(); ++t)
      if (specs_[t].access == Access::input) host_inputs_[t] = std::move(tensors[t]);
  };
  bool computed = false;
  try {
    computed = compute(tensors);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
  if (!computed) return std::nullopt;
  return tensors;
}

HostTensors ProblemInstance::device_expected(const Variant& reference) const {
  if (!seed_) throw std::logic_error("ProblemInstance::check() needs fill_inputs first");
  ProblemInstance instance(*family_, shape_);
  instance.fill_inputs(*seed_, /*keep_host_copy=*/false);
  instance.poison_outputs();
  reference.launch(instance, 0, nullptr);
  KGATE_CUDA_CHECK(cudaGetLastError());
  KGATE_CUDA_CHECK(cudaDeviceSynchronize());

  HostTensors expected(specs_.size());
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    const TensorSpec& spec = specs_[t];
    if (!is_checked(spec.access)) continue;
    const std::vector<std::byte> raw = download_bytes(spec, instance.pointer(0, t));
    expected[t] = decode_values(spec.dtype, raw);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < expected[t].size(); ++i)
      if (!std::isfinite(expected[t][i]) || (is_floating(spec.dtype) && is_poison(spec.dtype, raw.data() + i * size_of(spec.dtype)))) ++bad;
    if (bad > 0)
      throw std::runtime_error("the reference " + reference.info.full_name() + " left " + std::to_string(bad) + " of " +
                               std::to_string(expected[t].size()) + " elements of '" + spec.name + "' unwritten or not finite at " +
                               shape_.id());
  }
  return expected;
}

InstanceCheck ProblemInstance::check() {
  std::vector<std::vector<std::byte>> outputs(specs_.size());
  for (std::size_t t = 0; t < specs_.size(); ++t) {
    if (is_checked(specs_[t].access)) outputs[t] = download_bytes(specs_[t], pointer(0, t));
  }
  if (const Variant* reference = Registry::instance().device_reference(*family_, shape_))
    return check_outputs(*family_, shape_, specs_, device_expected(*reference), nullptr, outputs,
                         "the outputs of " + reference->info.full_name());

  const HostTensors expected = *compute_on_host([&](HostTensors& t) {
    family_->reference(shape_, t);
    return true;
  });
  if (const std::optional<HostTensors> baseline = compute_on_host([&](HostTensors& t) { return family_->baseline(shape_, t); }))
    return check_outputs(*family_, shape_, specs_, expected, &*baseline, outputs,
                         "the fp64 host reference (tolerance widened by twice the error of a straightforward " +
                             std::string(to_string(shape_.dtype())) + " implementation)");
  return check_outputs(*family_, shape_, specs_, expected, nullptr, outputs, "the fp64 host reference");
}

}  // namespace kgate
