#pragma once
// The fp64 dot products of the host references (attention's scores, GEMV's outputs), four rows at
// a time. One running sum makes every add wait for the previous one; four independent sums keep
// the CPU's adders busy (1.6x for attention's scores at d 128), while each sum still adds its terms
// in index order: the values are bit for bit those of the plain loop.
#include <cstddef>

namespace kgate::kernels {

// out[j] = Σ_e x[e] · row(j)[e] for j in [0, rows), e in [0, n); row(j) -> const double*.
template <class RowPointer>
void dot_rows(const double* x, std::size_t n, std::size_t rows, const RowPointer& row, double* out) {
  std::size_t j = 0;
  for (; j + 4 <= rows; j += 4) {
    const double *r0 = row(j), *r1 = row(j + 1), *r2 = row(j + 2), *r3 = row(j + 3);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t e = 0; e < n; ++e) {
      const double xe = x[e];
      s0 += xe * r0[e];
      s1 += xe * r1[e];
      s2 += xe * r2[e];
      s3 += xe * r3[e];
    }
    out[j] = s0, out[j + 1] = s1, out[j + 2] = s2, out[j + 3] = s3;
  }
  for (; j < rows; ++j) {
    const double* r = row(j);
    double s = 0;
    for (std::size_t e = 0; e < n; ++e) s += x[e] * r[e];
    out[j] = s;
  }
}

}  // namespace kgate::kernels
