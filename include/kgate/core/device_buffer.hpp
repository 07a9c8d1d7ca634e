#pragma once
// Owning, typed device allocation. Plain cudaMalloc (never managed memory): the benchmark must
// see the same memory the kernels see in production.
#include <cstddef>
#include <utility>

#include "kgate/core/cuda_check.hpp"

namespace kgate {

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  explicit DeviceAllocation(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) KGATE_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceAllocation() {
    if (ptr_) cudaFree(ptr_);  // a destructor cannot throw; a failing free means the context is already lost
  }
  DeviceAllocation(DeviceAllocation&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace kgate
