"""What a user would run instead of each kgate family -- PyTorch eager, torch.compile (Inductor),
Liger-Kernel -- and kgate's definition of the problem in fp64 for checking it (docs/peers.md).

A peer takes its dimensions from the registry listing's shape and its input distributions from the
listing's tensors (by kgate's tensor names), so it solves the problem kgate's family declares; the
constants a family keeps in code (eps, RoPE base) are named here with the header they come from.
Each peer returns its outputs under kgate's tensor names, for the check. Another library is one
`Peer(...)` entry in all_peers() with `requires` naming its module (docs/peers.md, "Adding a peer")."""

import contextlib
import importlib
import importlib.metadata
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

RMSNORM_EPS = 1e-5  # RmsNormFamily::kEps, FusedAddRmsNormFamily::kEps (kernels/rmsnorm/rmsnorm.hpp)
ROPE_BASE = 500000.0  # RopeFamily::kBase (kernels/rope/rope.hpp): Llama-3's rope_theta

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


class Unsupported(Exception):
    """The peer cannot run this shape (a backend refuses it, the problem is not expressible): skipped."""


@dataclass
class Peer:
    family: str
    variant: str  # in the benchmark name's variant position: "torch", "torch-cudnn", "liger", ...
    call: str  # the code a user writes, for the record
    make_inputs: Callable  # (shape, generator) -> dict of tensors: one copy of the inputs
    run: Callable  # (inputs) -> dict of outputs under kgate's tensor names: the timed call
    reference: Callable  # (inputs) -> dict of fp64 expected outputs, kgate's definition
    backend: object = None  # torch.nn.attention.SDPBackend the call is restricted to
    note: str = ""  # what differs from kgate's problem, stated in every record
    unsupported: Callable = field(default=lambda shape: None)  # shape -> reason it cannot run, or None
    requires: str = ""  # the Python module the peer needs beyond torch ("liger_kernel"); absent: the peer is left out
    install: str = ""  # how a user gets that module, said when it is absent ("pip install liger-kernel")
    distributions: tuple = ()  # packages beside torch whose versions every record names ("liger-kernel", "triton")
    # (inputs) -> the callable to time, built for the inputs' shape (torch.compile, a JIT library's
    # first call): timed apart and recorded as compile_s, never sampled. None: `run` is timed as it is.
    compile: Callable = None

    @property
    def name(self):
        return f"{self.family}/{self.variant}"

    def missing(self):
        """Why the peer cannot run in this Python (its module is not installed), or None."""
        if not self.requires:
            return None
        try:
            importlib.import_module(self.requires)
        except ImportError as e:
            return f"{self.requires} is not importable ({e}); {self.install or 'install it'}"
        return None

    def library(self, torch_version):
        """The libraries and versions the records name: "torch 2.11.0, liger-kernel 0.8.5, triton 3.6.0"."""
        return ", ".join([f"torch {torch_version}"] +
                         [f"{name} {importlib.metadata.version(name)}" for name in self.distributions])

    def runner(self, inputs):
        """What to time for inputs of this shape: `run`, or what `compile` built for it."""
        return self.compile(inputs) if self.compile else self.run

    def context(self):
        """The scope every call of the peer runs in (timed or not): its SDPA backend, if any."""
        if self.backend is None:
            return contextlib.nullcontext()
        from torch.nn.attention import sdpa_kernel
        return sdpa_kernel([self.backend])


# ------------------------------------------------------------------------------------------------
# Inputs drawn as kgate draws them: magnitudes uniform in [min, max) with a random sign.

def random_tensor(spec, size, generator, dtype):
    d = spec.distribution or {"min_magnitude": 1 / 64, "max_magnitude": 1.0, "symmetric": True}
    unit = torch.rand(size, generator=generator, device="cuda", dtype=torch.float32)
    values = d["min_magnitude"] + unit * (d["max_magnitude"] - d["min_magnitude"])
    if d["symmetric"]:
        values = torch.where(torch.rand(size, generator=generator, device="cuda") < 0.5, -values, values)
    return values.to(dtype)


def act_dtype(shape):
    return TORCH_DTYPES[shape.dtype]


# ------------------------------------------------------------------------------------------------
# RMSNorm and fused add + RMSNorm

def rms_reference(x, weight):
    x = x.double()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * weight.double()


def rmsnorm_inputs(shape, g):
    m, n = shape.dim("m"), shape.dim("n")
    return {"x": random_tensor(shape.tensor("x"), (m, n), g, act_dtype(shape)),
            "weight": random_tensor(shape.tensor("weight"), (n,), g, act_dtype(shape))}


def rmsnorm_run(t):
    return {"y": F.rms_norm(t["x"], (t["x"].shape[-1],), t["weight"], eps=RMSNORM_EPS)}


def fused_add_inputs(shape, g):
    m, n = shape.dim("m"), shape.dim("n")
    return {"x": random_tensor(shape.tensor("x"), (m, n), g, act_dtype(shape)),
            "residual": random_tensor(shape.tensor("residual"), (m, n), g, act_dtype(shape)),
            "weight": random_tensor(shape.tensor("weight"), (n,), g, act_dtype(shape))}


def fused_add_run(t):
    residual = t["x"] + t["residual"]
    return {"x": F.rms_norm(residual, (residual.shape[-1],), t["weight"], eps=RMSNORM_EPS), "residual": residual}


def fused_add_reference(t):
    # kgate's definition normalizes the residual as stored: rounded to the activation dtype.
    residual = (t["x"].double() + t["residual"].double()).to(t["x"].dtype).double()
    return {"x": rms_reference(residual, t["weight"]), "residual": residual}


# ------------------------------------------------------------------------------------------------
# RoPE: the Hugging Face Llama code (rotate_half, cos/sin cast to the activation dtype), fed from
# kgate's fp32 cos/sin cache [max_pos, d/2] indexed by the tokens' positions.

def rope_angles(positions, d):
    inverse_frequency = ROPE_BASE ** (-2.0 * torch.arange(d // 2, device="cuda", dtype=torch.float64) / d)
    return positions.double()[:, None] * inverse_frequency[None, :]


def rope_inputs(shape, g):
    t, hq, hk, d, max_pos = shape.dim("t"), shape.dim("hq"), shape.dim("hk"), shape.dim("d"), shape.dim("max_pos")
    angles = rope_angles(torch.arange(max_pos, device="cuda"), d)
    return {"q": random_tensor(shape.tensor("q"), (t, hq, d), g, act_dtype(shape)),
            "k": random_tensor(shape.tensor("k"), (t, hk, d), g, act_dtype(shape)),
            "positions": torch.randint(0, max_pos, (t,), generator=g, device="cuda", dtype=torch.int64),
            "cos": angles.cos().float(), "sin": angles.sin().float()}


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
    return {name: t[name].double() * cos + rotate_half(t[name].double()) * sin for name in ("q", "k")}


# ------------------------------------------------------------------------------------------------
# SiLU-and-mul, GEMV

def silu_inputs(shape, g):
    m, i = shape.dim("m"), shape.dim("i")
    return {"x": random_tensor(shape.tensor("x"), (m, 2 * i), g, act_dtype(shape))}


def silu_run(t):
    i = t["x"].shape[-1] // 2
    return {"out": F.silu(t["x"][:, :i]) * t["x"][:, i:]}


def silu_reference(t):
    x = t["x"].double()
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


def sdpa(q, k, v, causal):
    """The call, with the reason a restricted backend gives when it refuses the inputs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1])
        except RuntimeError as e:
            reasons = "; ".join(dict.fromkeys(str(w.message).strip() for w in caught))
            raise Unsupported(f"{str(e).splitlines()[0]}{': ' + reasons if reasons else ''}") from None


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


def decode_run(t):
    return {"out": sdpa(t["q"], t["k"], t["v"], causal=False)}


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


def prefill_run(t):
    return {"o": sdpa(t["q"], t["k"], t["v"], causal=t["causal"])}


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
        import torch
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


def liger_rope_inputs(shape, g):
    """kgate's inputs plus each token's cos/sin rows [1, t, d/2] fp32, gathered from the cache as a
    model's rotary embedding does once per forward for all its layers (so not in the timed call)."""
    t = rope_inputs(shape, g)
    t["cos_rows"] = t["cos"].index_select(0, t["positions"]).unsqueeze(0)
    t["sin_rows"] = t["sin"].index_select(0, t["positions"]).unsqueeze(0)
    return t


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


def all_peers():
    peers = [
        Peer("rmsnorm", "torch", "F.rms_norm(x, (n,), weight, eps=1e-05)", rmsnorm_inputs, rmsnorm_run,
             lambda t: {"y": rms_reference(t["x"], t["weight"])}),
        Peer("fused_add_rmsnorm", "torch", "residual = x + residual; x = F.rms_norm(residual, (n,), weight, eps=1e-05)",
             fused_add_inputs, fused_add_run, fused_add_reference),
        Peer("rope", "torch", "Hugging Face Llama apply_rotary_pos_emb (rotate_half) with cos/sin = cache[positions]",
             rope_inputs, rope_run, rope_reference),
        Peer("silu_and_mul", "torch", "F.silu(x[:, :i]) * x[:, i:]", silu_inputs, silu_run, silu_reference),
        Peer("gemv", "torch", "F.linear(x, w) (cuBLAS)", gemv_inputs, lambda t: {"y": F.linear(t["x"], t["w"])},
             lambda t: {"y": t["x"].double() @ t["w"].double().T}),
    ]
    memory_bound = [p for p in peers if p.family != "gemv"]
    peers += [Peer(p.family, "torch-compile", f"torch.compile(lambda: {p.call}, mode='{INDUCTOR_MODE}', dynamic=False)",
                   p.make_inputs, p.run, p.reference, compile=inductor(p.run), distributions=("triton",))
              for p in memory_bound]
    peers += [
        Peer("rmsnorm", "liger", f"LigerRMSNormFunction.apply(x, weight, 1e-05, 0.0, '{LIGER_CASTING}')",
             rmsnorm_inputs, liger_rmsnorm_run, lambda t: {"y": rms_reference(t["x"], t["weight"])}, **LIGER),
        Peer("fused_add_rmsnorm", "liger",
             f"LigerFusedAddRMSNormFunction.apply(x, residual, weight, 1e-05, 0.0, '{LIGER_CASTING}')",
             fused_add_inputs, liger_fused_add_run, fused_add_reference, **LIGER),
        Peer("rope", "liger", "LigerRopeFunction.apply(q, k, cos[positions], sin[positions], rotary_dim=d) (in place)",
             liger_rope_inputs, liger_rope_run, rope_reference, note=LIGER_ROPE_NOTE, **LIGER),
        Peer("silu_and_mul", "liger", "LigerFusedGateUpSiLUMulFunction.apply(x)", silu_inputs, liger_silu_run,
             silu_reference, **LIGER),
    ]
    for suffix, backend, title in sdpa_backends():
        call = f"F.scaled_dot_product_attention(q, k, v, enable_gqa=True) under sdpa_kernel({title})"
        peers.append(Peer("decode_attention", f"torch-{suffix}", call, decode_inputs, decode_run, decode_reference,
                          backend=backend, unsupported=decode_unsupported))
        peers.append(Peer("decode_attention_paged", f"torch-{suffix}", call, decode_inputs, decode_run,
                          decode_reference, backend=backend, note=PAGED_NOTE, unsupported=decode_unsupported))
        peers.append(Peer("prefill_attention", f"torch-{suffix}",
                          f"F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True) under "
                          f"sdpa_kernel({title})", prefill_inputs, prefill_run, prefill_reference, backend=backend,
                          note=PREFILL_NOTE))
    return peers


# ------------------------------------------------------------------------------------------------
# The check: kgate's figures (src/kgate/core/accuracy.cpp) of each output against the fp64 definition.

def ulp(values, dtype):
    """Unit in the last place at |value| in `dtype`, as kgate's ulp()."""
    bits, min_exponent = {torch.bfloat16: (8, -125), torch.float16: (11, -13), torch.float32: (24, -125)}[dtype]
    exponent = torch.frexp(values.abs()).exponent.clamp(min=min_exponent)
    exponent = torch.where(values == 0, torch.full_like(exponent, min_exponent), exponent)
    return torch.ldexp(torch.ones_like(values), (exponent - bits).to(values.dtype))


def check_outputs(outputs, expected, shape):
    """(passed, detail) with one line per output tensor in kgate's accuracy format. A peer passes when
    every output is finite and within the family's relative L2 limit: that catches a different
    problem (eps, rotation style, mask); its per-element bound violations are reported, not judged,
    since a library's rounding steps are its own."""
    lines, passed = [], True
    for name, ref in expected.items():
        got = outputs[name]
        own = shape.tensors.get(name)
        tolerance = own.tolerance if own and own.tolerance else shape.tolerance
        got64 = got.double()
        finite = torch.isfinite(got64)
        diff = torch.where(finite, (got64 - ref).abs(), torch.zeros_like(ref))
        ref_norm = ref.pow(2).sum().sqrt().item()
        rel_l2 = (diff.pow(2).sum().sqrt().item() / ref_norm) if ref_norm > 0 else diff.pow(2).sum().sqrt().item()
        bound = tolerance["max_ulps"] * ulp(ref, got.dtype) + tolerance["abs_floor"]
        violations = int((diff > bound).sum().item())
        non_finite = int((~finite).sum().item())
        ok = non_finite == 0 and rel_l2 <= tolerance["rel_l2"]
        passed = passed and ok
        lines.append(f"{name}: rel_l2={rel_l2:.3g} (limit {tolerance['rel_l2']:.3g}) max_abs={diff.max().item():.3g} "
                     f"violations={violations}/{ref.numel()} nan/inf={non_finite} {'PASS' if ok else 'FAIL'}")
    return passed, "\n".join(lines)
