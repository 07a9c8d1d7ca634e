#pragma once
// Division by a divisor known only at launch, as a multiply-high, an add and a shift (Granlund and
// Montgomery's method): a kernel that finds its row from its block index by dividing by a runtime
// count otherwise runs the integer-division routine (about 20 dependent instructions: I2F,
// MUFU.RCP, F2I, IMAD.HI and fix-ups) before its first load, which shows where a kernel is short.
// Host and device code alike, so the CPU tests check it.
#include <cstdint>
#include <stdexcept>

namespace kgate::kernels {

class FastDivisor {
 public:
  // divisor >= 1. shift_ is the least l with 2^l >= divisor, and magic_ = floor(2^32 (2^l -
  // divisor) / divisor) + 1, so that n / divisor = (n + (n * magic_) / 2^32) / 2^l for every
  // 32-bit n (the sum needs 33 bits).
  explicit FastDivisor(std::uint32_t divisor) : divisor_(divisor) {
    if (divisor == 0) throw std::invalid_argument("FastDivisor: division by zero");
    while ((std::uint64_t{1} << shift_) < divisor) ++shift_;
    magic_ = static_cast<std::uint32_t>((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift_) - divisor) / divisor + 1);
  }

#ifdef __CUDACC__
  __host__ __device__
#endif
      std::uint32_t
      quotient(std::uint32_t n) const {
    const std::uint64_t high = (static_cast<std::uint64_t>(n) * magic_) >> 32;
    return static_cast<std::uint32_t>((high + n) >> shift_);
  }

#ifdef __CUDACC__
  __host__ __device__
#endif
      std::uint32_t
      divisor() const {
    return divisor_;
  }

 private:
  std::uint32_t divisor_;
  std::uint32_t magic_ = 0;
  std::uint32_t shift_ = 0;
};

}  // namespace kgate::kernels
