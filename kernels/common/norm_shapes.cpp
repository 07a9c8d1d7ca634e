#include "norm_shapes.hpp"

namespace kgate::kernels {

static Shape rows(std::int64_t m, std::int64_t n, const char* origin) { return Shape({{"m", m}, {"n", n}}, DType::bf16, origin); }

std::vector<Shape> norm_test_shapes() {
  return {
      rows(1, 4096, "llama3-8b hidden, one token"),
      rows(7, 8192, "llama3-70b hidden"),
      rows(3, 1000, "125 vectors: last warp partly idle"),
      rows(5, 4097, "odd n: scalar path"),
      rows(2, 4098, "n % 4 = 2: 2-wide vectors"),
      rows(4, 4100, "n % 8 = 4: 4-wide vectors"),
      rows(33, 127, "short odd rows"),
      rows(256, 64, "many short rows"),
      rows(3, 24576, "3072 vectors: several per thread"),
      rows(2, 32000, "4000 vectors: 8 per thread, last block partly idle"),
      rows(2, 9999, "odd n, 20 elements per thread"),
      // Rows for many waves (m ≥ 8 SMs): rmsnorm/vectorized gives one-vector rows two per thread.
      rows(2501, 4096, "many waves of 512-vector rows: 256 threads of two"),
      rows(1200, 1000, "many waves of 125-vector rows: 64 threads of two, the last partly idle"),
  };
}

std::vector<Shape> norm_bench_shapes() {
  std::vector<Shape> shapes;
  for (std::int64_t n : {4096, 8192}) {
    const char* model = n == 4096 ? "llama3-8b" : "llama3-70b";
    for (std::int64_t m : {1, 16, 64, 256}) shapes.push_back(rows(m, n, model));
    for (std::int64_t m : {4096, 32768}) shapes.push_back(rows(m, n, model));
  }
  return shapes;
}

}  // namespace kgate::kernels
