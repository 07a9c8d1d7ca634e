#!/usr/bin/env python3
# Writes synthetic-story-llama3-8b.json beside this script: workload benchmarks of Llama-3-8B's
# decode step (batch {1, 8, 64} x context {1024, 4096, 16384}) and prefill step (prompt
# {512, 2048, 8192}) in kgate's results format, with made-up but self-consistent timelines (kernel
# times from the steps' bytes and FLOP models at a fixed share of made-up ceilings, gaps of 1.1 to
# 1.7 us, counters invented). Synthetic: for the CPU tests of `kgate story` only, never a
# measurement. Deterministic (seeded); rerun after changing the results format.
import json, math, os, random, re

random.seed(7)
CAL = {"copy_bytes_per_s": 4.05e12, "read_bytes_per_s": 4.41e12, "gemm_flops_per_s": 7.1e14,
       "launch_floor_s": 2.1e-6, "graph_floor_s": 9.5e-7, "datasheet_bytes_per_s": 4.8e12,
       "datasheet_sm_clock_mhz": 1980, "cached_from": ""}
M = dict(name="llama3-8b", display_name="Llama-3-8B", hidden=4096, q_heads=32, kv_heads=8, head_dim=128,
         intermediate=14336, layers=32, max_position=131072)
H, HQ, HKV, D, I = 4096, 32, 8, 128, 14336

def kernel(name, demangled, grid, block, regs):
    return {"name": name, "demangled": demangled, "grid": grid, "block": block, "registers_per_thread": regs,
            "static_shared_bytes": 0, "dynamic_shared_bytes": 0}

def layer_steps(t, linear_variant, attention):
    def gemv(label, m, n, k):
        return dict(label=label, family="gemv", variant=linear_variant, shape=f"m:{m}/n:{n}/k:{k}/bf16",
                    min_bytes=n*k*2 + m*k*2 + m*n*2, flops=2.0*m*n*k, memory_ceiling="read")
    return [
        dict(label="input_norm", family="rmsnorm", variant="vectorized", shape=f"m:{t}/n:{H}/bf16",
             min_bytes=4*t*H + 2*H, flops=4.0*t*H, memory_ceiling="copy"),
        gemv("qkv_proj", t, (HQ + 2*HKV)*D, H),
        dict(label="rope", family="rope", variant="vectorized", shape=f"t:{t}/hq:{HQ}/hk:{HKV}/d:{D}/max_pos:131072/bf16",
             min_bytes=2*t*(HQ+HKV)*D*2 + 4*t + t*(D/2)*8, flops=6.0*t*(HQ+HKV)*(D/2), memory_ceiling="copy"),
        attention,
        gemv("o_proj", t, H, HQ*D),
        dict(label="post_attention_norm", family="fused_add_rmsnorm", variant="vectorized", shape=f"m:{t}/n:{H}/bf16",
             min_bytes=8*t*H + 2*H, flops=5.0*t*H, memory_ceiling="copy"),
        gemv("gate_up_proj", t, 2*I, H),
        dict(label="silu_and_mul", family="silu_and_mul", variant="vectorized", shape=f"m:{t}/i:{I}/bf16",
             min_bytes=6*t*I, flops=5.0*t*I, memory_ceiling="copy"),
        gemv("down_proj", t, H, I),
    ]

def kernels_of(step, tokens):
    f, v = step["family"], step["variant"]
    if f == "gemv" and v == "vectorized":
        return [kernel("_ZN5kgate7kernels15gemv_mma_kernelILi1EEEvNS0_8GemvArgsE",
                       "void kgate::kernels::(anonymous namespace)::gemv_mma_kernel<1>(kgate::kernels::GemvArgs)",
                       [int(step["shape"].split("/")[1][2:]) // 16, 1, 1], [256, 1, 1], 64)]
    if f == "gemv":
        return [kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                       [132, 1, 1], [384, 1, 1], 168)]
    if f == "decode_attention":
        return [kernel("_ZN5kgate7kernels19decode_splitk_kernelILi4ELi128EEEvNS0_13AttentionArgsE",
                       "void kgate::kernels::decode_splitk_kernel<4, 128>(kgate::kernels::AttentionArgs, kgate::kernels::ContiguousKv)",
                       [8, 16, tokens], [128, 1, 1], 72),
                kernel("_ZN5kgate7kernels20decode_merge_kernelEv", "void kgate::kernels::decode_merge_kernel<128>(kgate::kernels::AttentionArgs)",
                       [HQ, tokens, 1], [128, 1, 1], 32)]
    if f == "prefill_attention":
        return [kernel("_ZN5kgate7kernels17fa3_wgmma_kernelEv", "void kgate::kernels::(anonymous namespace)::fa3_wgmma_kernel<128, true>(kgate::kernels::PrefillAttentionArgs)",
                       [HQ, 16, 1], [384, 1, 1], 168)]
    names = {"rmsnorm": "rmsnorm_vectorized_kernel<8>", "fused_add_rmsnorm": "fused_add_rmsnorm_vectorized_kernel<8>",
             "rope": "rope_cache_kernel<4>", "silu_and_mul": "silu_and_mul_vectorized_kernel<8>"}
    n = names[f]
    return [kernel("_ZN5kgate7kernels" + n.split("<")[0], "void kgate::kernels::(anonymous namespace)::" + n + "(kgate::kernels::Args)",
                   [max(tokens, 1), 1, 1], [256, 1, 1], 32)]

def step_time(step):
    # a roofline time at a plausible share of the roof, never below a small kernel's floor
    bw = CAL["read_bytes_per_s"] if step["memory_ceiling"] == "read" else CAL["copy_bytes_per_s"]
    t = max(step["min_bytes"] / (0.82 * bw), step["flops"] / (0.62 * CAL["gemm_flops_per_s"]))
    return max(t, 2.4e-6)

def samples(center, n, rel=0.006):
    return [float("%.9g" % (center * (1 + random.gauss(0, rel)))) for _ in range(n)]

def summary(xs):
    s = sorted(xs); n = len(s); mean = sum(s)/n
    sd = math.sqrt(sum((x-mean)**2 for x in s)/(n-1))
    q = lambda p: s[min(n-1, int(p*(n-1)))]
    return {"count": n, "median": s[n//2] if n % 2 else (s[n//2-1]+s[n//2])/2, "mean": mean, "stddev": sd, "min": s[0],
            "max": s[-1], "p10": q(0.1), "p90": q(0.9)}

def timing(center, n, launches=1):
    xs = samples(center, n)
    return {"samples_s": xs, "summary": summary(xs), "target_met": True, "target_rel_stddev": 0.005,
            "stop_reason": "target-met", "throttled_samples": 0, "sm_clock_mhz": 1980, "gpu_time_s": sum(xs),
            "wall_time_s": 2*sum(xs), "launches_per_sample": launches}

METRICS = ["gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "lts__t_sector_hit_rate.pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]

def benchmark(variant, shape, workload, tokens, steps):
    timeline, t = [], 0.0
    for index, step in enumerate(steps):
        ks = kernels_of(step, tokens)
        total = step_time(step)
        parts = [total] if len(ks) == 1 else [total * 0.9, max(total * 0.1, 1.8e-6)]
        for k, d in zip(ks, parts):
            if timeline:
                t += 1.1e-6 + random.random() * 0.6e-6
            entry = dict(k)
            entry.update({"duration_s": d, "launches": 1, "step": index, "start_s": t, "end_s": t + d})
            compute_bound = step["flops"] / CAL["gemm_flops_per_s"] > step["min_bytes"] / CAL["read_bytes_per_s"]
            entry["metrics"] = {METRICS[0]: d * 1e9, METRICS[1]: 18.0 if compute_bound else 40 + 45 * min(1, d / 20e-6),
                                METRICS[2]: 78.0 if compute_bound else 12 + 10 * random.random(),
                                METRICS[3]: 30 + 50 * random.random(), METRICS[4]: 20 + 60 * random.random(),
                                METRICS[5]: 70.0 if compute_bound else (4.0 if step["family"] == "gemv" else 0.0)}
            timeline.append(entry)
            t += d
    span = timeline[-1]["end_s"]
    kernel_sum = sum(k["end_s"] - k["start_s"] for k in timeline)
    cold = timing(span + 1.6e-6, 40)
    hot = timing(kernel_sum * 0.97 + 0.6e-6 * (len(timeline) - 1), 20, launches=8)
    min_bytes = sum(s["min_bytes"] for s in steps)
    flops = sum(s["flops"] for s in steps)
    median = cold["summary"]["median"]
    read = sum(s["min_bytes"] for s in steps if s["memory_ceiling"] == "read")
    ceiling = "read" if 2 * read >= min_bytes else "copy"
    bw = CAL["read_bytes_per_s"] if ceiling == "read" else CAL["copy_bytes_per_s"]
    pct_mem, pct_comp = 100 * min_bytes / median / bw, 100 * flops / median / CAL["gemm_flops_per_s"]
    cls = "memory-bound" if pct_mem >= 50 and pct_mem >= pct_comp else "compute-bound" if pct_comp >= 50 else "below-roofs"
    name = f"workload/{variant}/{shape}"
    folded = []
    for k in timeline:
        f = {key: k[key] for key in ["name", "demangled", "grid", "block", "registers_per_thread", "static_shared_bytes",
                                      "dynamic_shared_bytes", "duration_s", "launches"]}
        folded.append(f)
    block = {
        "name": name, "family": "workload", "variant": variant, "shape": shape, "role": "workload", "status": "ok", "error": "",
        "min_bytes": min_bytes, "flops": flops, "headline_mode": "cold", "first_launch_s": 0, "wall_time_s": 1.5,
        "cold": cold, "hot": hot,
        "derived": {"bytes_per_s": min_bytes / median, "flops_per_s": flops / median, "arithmetic_intensity": flops / min_bytes,
                    "pct_of_memory_ceiling": pct_mem, "pct_of_compute_ceiling": pct_comp, "memory_ceiling": ceiling, "roofline": cls},
        "kernels": folded, "metrics": {}, "metrics_unavailable": "", "correct": None,
        "correctness_detail": "not checked: a workload runs variants that the correctness suite checks one by one",
        "workload": {"workload": workload, "model": M, "tokens": tokens, "steps": steps,
                     "traced_event_s": samples(span + 1.5e-6, 16), "traced_span_s": samples(span, 16, 0.004),
                     "timeline": timeline, "timeline_unavailable": ""}}
    us = median * 1e6
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name, "run_type": "iteration",
            "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": len(cold["samples_s"]), "real_time": us,
            "cpu_time": us, "time_unit": "us", "kgate": block}

benchmarks = []
for b in [1, 8, 64]:
    for l in [1024, 4096, 16384]:
        att = dict(label="attention", family="decode_attention", variant="splitk", shape=f"b:{b}/hq:{HQ}/hkv:{HKV}/d:{D}/l:{l}/bf16",
                   min_bytes=2*HKV*D*2*l*b + 2*b*HQ*D*2 + 4*b, flops=4.0*HQ*D*l*b, memory_ceiling="read")
        steps = layer_steps(b, "vectorized" if b <= 16 else "cublas", att)
        benchmarks.append(benchmark("llama3-8b-decode", f"b:{b}/l:{l}/bf16", "decode", b, steps))
for p in [512, 2048, 8192]:
    att = dict(label="attention", family="prefill_attention", variant="fa3_wgmma", shape=f"b:1/h:{HQ}/hkv:{HKV}/s:{p}/d:{D}/causal:1/bf16",
               min_bytes=2*p*HQ*D*2 + 2*p*HKV*D*2 + p*HQ*4, flops=4.0*HQ*D*p*(p+1)/2, memory_ceiling="copy")
    steps = layer_steps(p, "cublas", att)
    benchmarks.append(benchmark("llama3-8b-prefill", f"b:1/p:{p}/bf16", "prefill", p, steps))
for i, b in enumerate(benchmarks):
    b["family_index"] = 0
    b["per_family_instance_index"] = i

context = {"date": "2026-11-21T12:00:00Z", "host_name": "synthetic", "executable": "kgate_bench", "num_cpus": 0, "mhz_per_cpu": 0,
           "cpu_scaling_enabled": False, "caches": [], "library_build_type": "release", "json_schema_version": 1,
           "kgate": {"schema_version": 1, "suite": "kgate",
                     "gpu": {"name": "NVIDIA H200", "uuid": "GPU-synthetic", "compute_capability": 90, "sm_count": 132,
                             "l2_bytes": 52428800, "memory_bytes": 150121955328, "driver_version": 13000, "runtime_version": 13000,
                             "sm_clock_mhz_default": 1980, "memory_clock_mhz": 3201},
                     "calibration": CAL,
                     "provenance": {"git_commit": "synthetic", "git_dirty": False, "build_type": "Release", "cuda_architectures": "90a",
                                    "host": "synthetic", "date": "2026-11-21T12:00:00Z",
                                    "command_line": "kgate_bench --benchmark_filter=^workload/ --kgate_workloads=... --kgate_out=run.json"},
                     "extra": {"synthetic": "made-up timelines for the CPU tests of kgate story"}}}
text = json.dumps({"context": context, "benchmarks": benchmarks}, indent=1)
# Numeric arrays (samples, grids) on one line each, as kgate writes samples.
text = re.sub(r"\[\s*([-0-9.e+,\s]+?)\s*\]", lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic-story-llama3-8b.json"), "w").write(text + "\n")
