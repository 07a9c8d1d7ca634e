"""RMSNorm over the rows of x, times a per-column weight:

    out[i, j] = x[i, j] / sqrt(mean_j x[i, :]^2 + eps) * weight[j]

bf16 in and out, fp32 accumulation in the variants, eps 1e-6, checked against an fp64 reference. The variants
register themselves on this family in their own files (naive.py, tuned.py)."""

import kgate
import torch

EPS = 1e-6


def make_inputs(shape, generator):
    m, n = shape["m"], shape["n"]
    return {
        "x": kgate.random_tensor((m, n), shape.torch_dtype, generator),
        "weight": kgate.random_tensor((n,), shape.torch_dtype, generator),
        "eps": EPS,
    }


def make_outputs(shape):
    return {"out": torch.empty(shape["m"], shape["n"], dtype=shape.torch_dtype, device="cuda")}


def reference(x, weight, eps):
    return {"out": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight}


# Compulsory DRAM traffic of one call: x read once and out written once; the weight is read by every row but
# comes from DRAM once (the caches serve the other rows), so it counts once.
def min_bytes(shape):
    m, n = shape["m"], shape["n"]
    return (2 * m * n + n) * shape.torch_dtype.itemsize


# Per element: square, accumulate, scale by the row's rstd, scale by the weight (4); per row: divide the sum by
# n, add eps, take the reciprocal square root (3, counting rsqrt as one operation).
def flops(shape):
    m, n = shape["m"], shape["n"]
    return 4 * m * n + 3 * m


rmsnorm = kgate.Family(
    "triton_rmsnorm",
    description="RMSNorm over rows of x, times a per-column weight; bf16 in and out, fp32 accumulation, eps 1e-6",
    inputs=make_inputs,
    outputs=make_outputs,
    reference=reference,
    # Small enough for the fp64 reference on a CPU; together they take every path of both variants: one row,
    # n a power of two or not (1000), rows that are not 16-byte aligned (n 33), n 8192 (16 warps in tuned), and
    # several rows to a program in tuned with a partial last tile (m 1027) or masked columns (m 2048, n 1000).
    test_shapes=[kgate.Shape(m=m, n=n, dtype="bf16")
                 for m, n in ((1, 128), (1, 1000), (3, 33), (16, 4096), (5, 8192), (1027, 256), (2048, 1000))],
    # Llama-3-8B's hidden size (4096) from decode batches to prefill, and Llama-3-70B's (8192) at a decode
    # batch and a prefill.
    bench_shapes=[kgate.Shape(m=m, n=4096, dtype="bf16") for m in (1, 16, 64, 256, 1024, 4096)]
    + [kgate.Shape(m=m, n=8192, dtype="bf16") for m in (16, 4096)],
    min_bytes=min_bytes,
    flops=flops,
    # bf16's default (docs/architecture.md, "Tolerances"): the variants accumulate in fp32 and round once, which
    # lands within half an ulp; Triton's approximate rsqrt (relative error about 2^-22) is far below bf16's.
    tolerance=None,
    headline="cold",
)
