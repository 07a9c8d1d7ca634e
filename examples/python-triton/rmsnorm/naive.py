"""naive: RMSNorm as a first Triton kernel is written. One program per row holds the whole row in registers
(BLOCK = the next power of two of n, the tail masked), with Triton's default 4 warps whatever the row's length:
at n 4096 each thread holds 32 of the row's values, at n 8192 64 (and as many of the weight's)."""

import triton
import triton.language as tl

from .family import rmsnorm


@triton.jit
def rmsnorm_naive_kernel(x_ptr, weight_ptr, out_ptr, n, x_row_stride, out_row_stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row * stride passes 2^31 on large inputs
    cols = tl.arange(0, BLOCK)
    in_row = cols < n
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + cols, mask=in_row, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
    out = x * rstd * weight
    tl.store(out_ptr + row * out_row_stride + cols, out.to(out_ptr.dtype.element_ty), mask=in_row)


@rmsnorm.variant(name="naive", description="one program per row, the whole row in registers, Triton's default 4 warps")
def naive(x, weight, eps, out):
    m, n = x.shape
    rmsnorm_naive_kernel[(m,)](x, weight, out, n, x.stride(0), out.stride(0), eps, BLOCK=triton.next_power_of_2(n))
