"""tuned: the naive kernel with its launch shaped to the problem. What it does differently, and why:

* Warps from the tile's size, not Triton's default 4: num_warps = tile elements / 512, from 4 to 16, so each
  thread holds 16 of x's values (two 16-byte vectors of bf16) at any n. naive's 4 warps hold 32 values a thread
  at n 4096 and 64 at n 8192 (as many of the weight's), which costs registers, hence resident programs, at large
  m, and lengthens each thread's serial chain of loads, multiplies and its share of the reduction, which a
  latency-bound call at small m waits on.
* Several rows to a program where rows are short and many: a program normalizes BLOCK_M rows as one
  [BLOCK_M, BLOCK_N] tile (at most 8192 elements), loading the weight once for all of them, as long as that
  leaves at least two programs per SM (so that one program's loads are in flight while another reduces);
  otherwise one row, which keeps every SM busy at small m.
* No masks where none is needed: n a power of two and m a multiple of BLOCK_M (every bench shape) compile a
  kernel without predicates (EVEN_N, EVEN_M constexprs); the masked kernel is kept for the other shapes.
* Cache hints: x is read once, so its lines are loaded evict_first; the weight is re-read by every program, so
  evict_last keeps it resident against the stream of x. out is stored without a hint: the next kernel of a
  model reads it, and should find it in the L2.

Compiled for sm_90 by Triton 3.6 (triton.compile for a GPUTarget, no GPU needed; ptxas's resource usage):
naive takes 61 registers a thread at n 4096 and 120 at n 8192, tuned 38 and 39. Both kernels load and store
in 16-byte vectors where n is a multiple of 16 (Triton specializes pointers and strides that are), so that is
not a difference; at n 1000 both move 2 bytes an instruction.

Measured (H100 80GB HBM3, cold medians of tests/data/recorded-h100-triton.json.gz; naive / tuned): faster
where the call is latency-bound, 1.03-1.05x at n 4096 and m 1-64, 1.04x at m 1024, 1.12x at n 8192 m 16, the
same at m 256; slower where it is bandwidth-bound, 0.986x at m 4096 n 4096 and 0.981x at m 4096 n 8192 (two
rows a program there, one in naive: which change costs it is not measured apart yet).
"""

import functools

import torch
import triton
import triton.language as tl

from .family import rmsnorm

TILE_ELEMENTS = 8192  # elements of x one program normalizes at most, when rows are short
ELEMENTS_PER_THREAD = 16  # of x, in registers: two 16-byte vectors of bf16
PROGRAMS_PER_SM = 2  # fewest programs per SM that several rows to a program may leave


@triton.jit
def rmsnorm_tuned_kernel(x_ptr, weight_ptr, out_ptr, m, n, x_row_stride, out_row_stride, eps, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr):
    first_row = tl.program_id(0) * BLOCK_M
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    # 64-bit for the tile's first row only: the offsets within a tile stay 32-bit.
    x_tile = x_ptr + first_row.to(tl.int64) * x_row_stride + rows * x_row_stride + cols
    out_tile = out_ptr + first_row.to(tl.int64) * out_row_stride + rows * out_row_stride + cols
    in_tile = (first_row + rows < m) & (cols < n)
    if EVEN_M and EVEN_N:
        x = tl.load(x_tile, eviction_policy="evict_first").to(tl.float32)
    else:
        x = tl.load(x_tile, mask=in_tile, other=0.0, eviction_policy="evict_first").to(tl.float32)
    if EVEN_N:
        weight = tl.load(weight_ptr + cols, eviction_policy="evict_last").to(tl.float32)
    else:
        weight = tl.load(weight_ptr + cols, mask=cols < n, other=0.0, eviction_policy="evict_last").to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / n + eps)
    out = (x * rstd[:, None] * weight).to(out_ptr.dtype.element_ty)
    if EVEN_M and EVEN_N:
        tl.store(out_tile, out)
    else:
        tl.store(out_tile, out, mask=in_tile)


@functools.cache
def sm_count(device_index):
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def tile_config(m, n, sms):
    """(BLOCK_M, BLOCK_N, num_warps) for m rows of n elements on a GPU of `sms` SMs."""
    block_n = triton.next_power_of_2(n)
    block_m = max(1, TILE_ELEMENTS // block_n)
    while block_m > 1 and triton.cdiv(m, block_m) < PROGRAMS_PER_SM * sms:
        block_m //= 2
    num_warps = min(16, max(4, block_m * block_n // (32 * ELEMENTS_PER_THREAD)))
    return block_m, block_n, num_warps


@rmsnorm.variant(name="tuned", follows="naive",
                 description="warps from the tile's size, several short rows to a program, no masks where n is a power "
                             "of two, evict_first on x and evict_last on the weight")
def tuned(x, weight, eps, out):
    m, n = x.shape
    block_m, block_n, num_warps = tile_config(m, n, sm_count(x.device.index))
    rmsnorm_tuned_kernel[(triton.cdiv(m, block_m),)](
        x, weight, out, m, n, x.stride(0), out.stride(0), eps, BLOCK_M=block_m, BLOCK_N=block_n,
        EVEN_M=m % block_m == 0, EVEN_N=n == block_n, num_warps=num_warps)
