"""What a user would run instead of each kgate family -- PyTorch eager, torch.compile (Inductor),
Liger-Kernel -- and kgate's definition of the problem in fp64 for checking it (docs/peers.md).

A family's FamilyCode draws the inputs with the dimensions of the registry listing's shape and the
input distributions of its tensors (by kgate's tensor names), so that every peer solves the problem
kgate's family declares; the constants a family keeps in code (eps, RoPE base) are named here with
the header they come from. Each peer returns its outputs under kgate's tensor names, for the check.
Another library is one `Peer(...)` entry in all_peers() with `requires` naming its module
(docs/peers.md, "Adding a peer"); peer_registration.py makes them kgate families' variants."""

import math
import warnings

import torch
import torch.nn.functional as F

import kgate
from peer_registration import FamilyCode, Peer

RMSNORM_EPS = 1e-5  # RmsNormFamily::kEps, FusedAddRmsNormFamily::kEps (kernels/rmsnorm/rmsnorm.hpp)
ROPE_BASE = 500000.0  # RopeFamily::kBase (kernels/rope/rope.hpp): Llama-3's rope_theta

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


# ------------------------------------------------------------------------------------------------
# Inputs drawn as kgate draws them, with the distribution the listing gives the tensor.

def random_tensor(spec, size, generator, dtype):
    return kgate.random_tensor(size, dtype, generator, **(spec.distribution or {}))


def act_dtype(shape):
    return TORCH_DTYPES[shape.dtype]


# ------------------------------------------------------------------------------------------------
# RMSNorm and fused add + RMSNorm

def rms_reference(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * weight


def rmsnorm_inputs(shape, g):
    m, n = shape.dim("m"), shape.dim("n")
    return {"x": random_tensor(shape.tensor("x"), (m, n), g, act_dtype(shape)),
            "weight": random_tensor(shape.tensor("weight"), (n,), g, act_dtype(shape))}


def rmsnorm_run(t):
    return {"y": F.rms_norm(t["x"], (t["x"].shape[-1],), t["weight"], eps=RMSNORM_EPS)}


def fused_add_inputs(shape, g):
    """x and residual, updated in place by kgate's kernels; `stored_as`, the dtype the residual is
    stored in, for the reference (which sees the inputs in fp64)."""
    m, n = shape.dim("m"), shape.dim("n")
    return {"x": random_tensor(shape.tensor("x"), (m, n), g, act_dtype(shape)),
            "residual": random_tensor(shape.tensor("residual"), (m, n), g, act_dtype(shape)),
            "weight": random_tensor(shape.tensor("weight"), (n,), g, act_dtype(shape)), "stored_as": act_dtype(shape)}


def fused_add_run(t):
    residual = t["x"] + t["residual"]
    return {"x": F.rms_norm(residual, (residual.shape[-1],), t["weight"], eps=RMSNORM_EPS), "residual": residual}


def fused_add_reference(t):
    # kgate's definition normalizes the residual as stored: rounded to the activation dtype.
    residual = (t["x"] + t["residual"]).to(t["stored_as"]).double()
    return {"x": rms_reference(residual, t["weight"]), "residual": residual}


# ------------------------------------------------------------------------------------------------
# RoPE: the Hugging Face Llama code (rotate_half, cos/sin cast to the activation dtype), fed from
# kgate's fp32 cos/sin cache [max_pos, d/2] indexed by the tokens' positions.

def rope_angles(positions, d):
    inverse_frequency = ROPE_BASE ** (-2.0 * torch.arange(d // 2, device="cuda", dtype=torch.float64) / d)
    return positions.double()[:, None] * inverse_frequency[None, :]


def rope_inputs(shape, g):
    """kgate's inputs, q and k rotated in place, and each token's cos/sin rows [1, t, d/2] fp32 for
    Liger's call, gathered from the cache as a model's rotary embedding does once per forward for all
    its layers (so not in the timed call)."""
    t, hq, hk, d, max_pos = shape.dim("t"), shape.dim("hq"), shape.dim("hk"), shape.dim("d"), shape.dim("max_pos")
    angles = rope_angles(torch.arange(max_pos, device="cuda"), d)
    cos, sin = angles.cos().float(), angles.sin().float()
    positions = torch.randint(0, max_pos, (t,), generator=g, device="cuda", dtype=torch.int64)
    return {"q": random_tensor(shape.tensor("q"), (t, hq, d), g, act_dtype(shape)),
            "k": random_tensor(shape.tensor("k"), (t, hk, d), g, act_dtype(shape)),
            "positions": positions, "cos": cos, "sin": sin,
            "cos_rows": cos.index_select(0, positions).unsqueeze(0), "sin_rows": sin.index_select(0, positions).unsqueeze(0)}


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_run(t):
    q, k = t["q"], t["k"]
    cos = t["cos"].index_select(0, t["positions"])
    sin = t["sin"].index_select(0, t["positions"])
    cos = torch.cat((cos, cos), dim=-1).to(q.dtype).unsqueeze(1)  # [tokens, 1, d]: broadcast over heads
    sin = torch.cat((sin, sin), dim=-1).to(q.dtype).unsqueeze(1)
    return {"q": q * cos + rotate_half(q) * sin, "k": k * cos + rotate_half(k) * sin}


def rope_reference(t):
    angles = rope_angles(t["positions"], t["q"].shape[-1])[:, None, :]  # exact angles, not the cache's
    cos, sin = torch.cat((angles.cos(),) * 2, -1), torch.cat((angles.sin(),) * 2, -1)
    return {name: t[name] * cos + rotate_half(t[name]) * sin for name in ("q", "k")}


# ------------------------------------------------------------------------------------------------
# SiLU-and-mul, GEMV

def silu_inputs(shape, g):
    m, i = shape.dim("m"), shape.dim("i")
    return {"x": random_tensor(shape.tensor("x"), (m, 2 * i), g, act_dtype(shape))}


def silu_run(t):
    i = t["x"].shape[-1] // 2
    return {"out": F.silu(t["x"][:, :i]) * t["x"][:, i:]}


def silu_reference(t):
    x = t["x"]
    i = x.shape[-1] // 2
    return {"out": x[:, :i] / (1 + torch.exp(-x[:, :i])) * x[:, i:]}


def gemv_inputs(shape, g):
    m, n, k = shape.dim("m"), shape.dim("n"), shape.dim("k")
    return {"x": random_tensor(shape.tensor("x"), (m, k), g, act_dtype(shape)),
            "w": random_tensor(shape.tensor("w"), (n, k), g, act_dtype(shape))}


# ------------------------------------------------------------------------------------------------
# Attention through F.scaled_dot_product_attention, one peer per backend.

def attention_reference(q, k, v, causal):
    """softmax(q·kᵀ / sqrt(d) [+ top-left causal mask]) · v in fp64; q [B, H, Sq, d], k and v
    [B, Hkv, Sk, d], query head h reading KV head h / (H / Hkv). A few heads at a time."""
    heads, kv_heads, d = q.shape[1], k.shape[1], q.shape[-1]
    out = torch.empty(q.shape, dtype=torch.float64, device=q.device)
    step = max(1, int(2**27 // max(1, q.shape[0] * q.shape[2] * k.shape[2])))
    for h0 in range(0, heads, step):
        hs = range(h0, min(heads, h0 + step))
        kv = [h * kv_heads // heads for h in hs]
        scores = q[:, hs.start:hs.stop].double() @ k[:, kv].double().transpose(-1, -2) / math.sqrt(d)
        if causal:
            sq, sk = scores.shape[-2:]
            scores = scores.masked_fill(torch.ones(sq, sk, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        out[:, hs.start:hs.stop] = torch.softmax(scores, dim=-1) @ v[:, kv].double()
    return out


def sdpa(backend, q, k, v, causal):
    """The call restricted to `backend`, skipped with the reason the backend gives when it refuses the
    inputs."""
    from torch.nn.attention import sdpa_kernel
    with sdpa_kernel([backend]), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1])
        except RuntimeError as e:
            reasons = "; ".join(dict.fromkeys(str(w.message).strip() for w in caught))
            raise kgate.Unsupported(f"{str(e).splitlines()[0]}{': ' + reasons if reasons else ''}") from None


def query_grouping(shape):
    """Whether query heads share KV heads (GQA): the memory-efficient backend refuses such shapes, so
    the peers are checked at the smallest shape with and the smallest without."""
    return shape.dim("hq", "h", "heads") != shape.dim("hkv", "kv_heads", "hk", "h", "hq")


def decode_unsupported(shape):
    if shape.dims.get("l_min", shape.dim("l")) != shape.dim("l"):
        return "ragged sequence lengths: SDPA over a padded batch needs a mask and computes the padding; not the same problem"
    return None


def decode_inputs(shape, g):
    b, hq, hkv, d, l = (shape.dim(n) for n in ("b", "hq", "hkv", "d", "l"))
    dtype = act_dtype(shape)
    return {"q": random_tensor(shape.tensor("q"), (b, hq, 1, d), g, dtype),
            "k": random_tensor(shape.tensor("k_cache", "k_pages"), (b, hkv, l, d), g, dtype),
            "v": random_tensor(shape.tensor("v_cache", "v_pages"), (b, hkv, l, d), g, dtype)}


def decode_run(backend):
    return lambda t: {"out": sdpa(backend, t["q"], t["k"], t["v"], causal=False)}


def decode_reference(t):
    return {"out": attention_reference(t["q"], t["k"], t["v"], causal=False)}


def prefill_dims(shape):
    """prefill_attention's dimensions (kernels/prefill_attention/): q, o [B, H, S, d], k, v [B, Hkv, S, d];
    a causal shape carries causal:1."""
    return (shape.dim("b", "batch"), shape.dim("h", "hq", "heads"), shape.dim("hkv", "kv_heads", "h", "hq"),
            shape.dim("s", "seq", "seq_len", "l"), shape.dim("d", "head_dim"), shape.dims.get("causal", 0) == 1)


def prefill_inputs(shape, g):
    b, h, hkv, s, d, causal = prefill_dims(shape)
    dtype = act_dtype(shape)
    return {"q": random_tensor(shape.tensor("q"), (b, h, s, d), g, dtype),
            "k": random_tensor(shape.tensor("k"), (b, hkv, s, d), g, dtype),
            "v": random_tensor(shape.tensor("v"), (b, hkv, s, d), g, dtype), "causal": causal}


def prefill_run(backend):
    return lambda t: {"o": sdpa(backend, t["q"], t["k"], t["v"], causal=t["causal"])}


def prefill_reference(t):
    return {"o": attention_reference(t["q"], t["k"], t["v"], causal=t["causal"])}


def sdpa_backends():
    """(variant suffix, backend, its name) for each backend this torch build has."""
    from torch.nn.attention import SDPBackend
    wanted = [("flash", "FLASH_ATTENTION", "FlashAttention-2"), ("cudnn", "CUDNN_ATTENTION", "cuDNN"),
              ("efficient", "EFFICIENT_ATTENTION", "memory-efficient (xFormers)")]
    return [(suffix, getattr(SDPBackend, attr), title) for suffix, attr, title in wanted if hasattr(SDPBackend, attr)]


PAGED_NOTE = ("PyTorch has no paged-KV attention in F.scaled_dot_product_attention: this peer runs the contiguous "
              "equivalent (K, V [b, hkv, l, d], same dimensions); kgate's paged kernels also read the page table "
              "and gather scattered 16-key pages")
PREFILL_NOTE = "SDPA's forward returns no log-sum-exp; kgate's prefill kernels also write lse [B, H, S] in fp32"


# ------------------------------------------------------------------------------------------------
# torch.compile: the same PyTorch formulas through Inductor, as a serving engineer compiles a model.

# Inductor's default mode, not max-autotune. max-autotune times up to seven launch configurations of
# each kernel (for these row reductions, 1 to 64 rows a block) and then searches around the fastest,
# by its own benchmark (after zeroing an L2-sized buffer, the fastest of up to 100 runs); at decode
# sizes it kept a different configuration in each process, some of them several times slower on a
# cold L2: rmsnorm m:64 n:4096 ran 64 blocks of 512 threads (2.56 us) in one H100 run and 8 blocks of
# 128 (18.75 us) in the next; 38 of the 48 torch-compile benchmarks launched differently in those two
# runs (docs/peers.md, "torch.compile"). For these row reductions the default mode generates at most
# two configurations, both one row to a block, so no process gets a few-block kernel. No CUDA graphs,
# as the eager call.
INDUCTOR_MODE = "default"


def inductor(run):
    """`run` for torch.compile: a fresh static-shape compile per shape (dynamo's caches reset, so no
    recompile limit falls back to eager; dynamic=False, so no generic kernel of an earlier shape), its
    first call compiling the kernels."""
    def compile_for_shape(inputs):
        torch._dynamo.reset()
        compiled = torch.compile(run, mode=INDUCTOR_MODE, dynamic=False, fullgraph=True)
        compiled(inputs)
        return compiled
    return compile_for_shape


# ------------------------------------------------------------------------------------------------
# Liger-Kernel (pip install liger-kernel): hand-written Triton kernels for these exact problems.
# Its RMSNorm computes in fp32 and rounds once in casting mode "gemma" (offset 0), kgate's formula;
# "llama" mode rounds x/rms to bf16 before the weight, a different problem. It implements no GEMV
# and no attention forward of these shapes, so those families have no Liger peer.

LIGER_CASTING = "gemma"


def liger_rmsnorm_run(t):
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    return {"y": LigerRMSNormFunction.apply(t["x"], t["weight"], RMSNORM_EPS, 0.0, LIGER_CASTING, False)}


def liger_fused_add_run(t):
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    y, residual = LigerFusedAddRMSNormFunction.apply(t["x"], t["residual"], t["weight"], RMSNORM_EPS, 0.0,
                                                     LIGER_CASTING, False)
    return {"x": y, "residual": residual}


def liger_rope_run(t):
    """Rotates q and k in place, as kgate's kernels do: q [t, hq, d] is Liger's [1, hq, t, d] layout
    transposed; cos/sin are the half-width rows, so the rotary width is passed."""
    from liger_kernel.ops.rope import LigerRopeFunction
    q, k = t["q"], t["k"]
    q_out, k_out = LigerRopeFunction.apply(q.unsqueeze(0).transpose(1, 2), k.unsqueeze(0).transpose(1, 2),
                                           t["cos_rows"], t["sin_rows"], None, 1, q.shape[-1])
    return {"q": q_out.transpose(1, 2).squeeze(0), "k": k_out.transpose(1, 2).squeeze(0)}


def liger_silu_run(t):
    from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction
    return {"out": LigerFusedGateUpSiLUMulFunction.apply(t["x"])}


LIGER = dict(requires="liger_kernel", install="pip install liger-kernel", distributions=("liger-kernel", "triton"))
LIGER_ROPE_NOTE = ("cos/sin rows gathered per token before the call (a model's rotary embedding does it once per "
                   "forward for every layer); kgate's kernels gather them from the cache by position inside the call")


# ------------------------------------------------------------------------------------------------
# The families the peers solve, by kgate's family name, and the peers.

def attention_output(shape):
    b, h, _, s, d, _ = prefill_dims(shape)
    return b, h, s, d


FAMILY_CODE = {
    "rmsnorm": FamilyCode(rmsnorm_inputs, {"y": lambda s: (s.dim("m"), s.dim("n"))}, lambda t: {"y": rms_reference(t["x"], t["weight"])}),
    "fused_add_rmsnorm": FamilyCode(fused_add_inputs, {}, fused_add_reference, in_place=("x", "residual")),
    "rope": FamilyCode(rope_inputs, {}, rope_reference, in_place=("q", "k")),
    "silu_and_mul": FamilyCode(silu_inputs, {"out": lambda s: (s.dim("m"), s.dim("i"))}, silu_reference),
    "gemv": FamilyCode(gemv_inputs, {"y": lambda s: (s.dim("m"), s.dim("n"))}, lambda t: {"y": t["x"] @ t["w"].T}),
    "decode_attention": FamilyCode(decode_inputs, {"out": lambda s: (s.dim("b"), s.dim("hq"), 1, s.dim("d"))},
                                   decode_reference, unsupported=decode_unsupported, check_group=query_grouping),
    "prefill_attention": FamilyCode(prefill_inputs, {"o": attention_output}, prefill_reference, check_group=query_grouping),
}
FAMILY_CODE["decode_attention_paged"] = FAMILY_CODE["decode_attention"]


def all_peers():
    peers = [
        Peer("rmsnorm", "torch", "F.rms_norm(x, (n,), weight, eps=1e-05)", rmsnorm_run),
        Peer("fused_add_rmsnorm", "torch", "residual = x + residual; x = F.rms_norm(residual, (n,), weight, eps=1e-05)",
             fused_add_run),
        Peer("rope", "torch", "Hugging Face Llama apply_rotary_pos_emb (rotate_half) with cos/sin = cache[positions]",
             rope_run),
        Peer("silu_and_mul", "torch", "F.silu(x[:, :i]) * x[:, i:]", silu_run),
        Peer("gemv", "torch", "F.linear(x, w) (cuBLAS)", lambda t: {"y": F.linear(t["x"], t["w"])}),
    ]
    memory_bound = [p for p in peers if p.family != "gemv"]
    peers += [Peer(p.family, "torch-compile", f"torch.compile(lambda: {p.call}, mode='{INDUCTOR_MODE}', dynamic=False)",
                   p.run, compile=inductor(p.run), distributions=("triton",))
              for p in memory_bound]
    peers += [
        Peer("rmsnorm", "liger", f"LigerRMSNormFunction.apply(x, weight, 1e-05, 0.0, '{LIGER_CASTING}')",
             liger_rmsnorm_run, **LIGER),
        Peer("fused_add_rmsnorm", "liger",
             f"LigerFusedAddRMSNormFunction.apply(x, residual, weight, 1e-05, 0.0, '{LIGER_CASTING}')",
             liger_fused_add_run, **LIGER),
        Peer("rope", "liger", "LigerRopeFunction.apply(q, k, cos[positions], sin[positions], rotary_dim=d) (in place)",
             liger_rope_run, note=LIGER_ROPE_NOTE, **LIGER),
        Peer("silu_and_mul", "liger", "LigerFusedGateUpSiLUMulFunction.apply(x)", liger_silu_run, **LIGER),
    ]
    for suffix, backend, title in sdpa_backends():
        call = f"F.scaled_dot_product_attention(q, k, v, enable_gqa=True) under sdpa_kernel({title})"
        peers.append(Peer("decode_attention", f"torch-{suffix}", call, decode_run(backend)))
        peers.append(Peer("decode_attention_paged", f"torch-{suffix}", call, decode_run(backend), note=PAGED_NOTE))
        peers.append(Peer("prefill_attention", f"torch-{suffix}",
                          f"F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True) under "
                          f"sdpa_kernel({title})", prefill_run(backend), note=PREFILL_NOTE))
    return peers
