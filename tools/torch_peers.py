#!/usr/bin/env python3
"""Peer timings on the GPU machine: the same fp8 quant and producers written in PyTorch (eager and
torch.compile), timed as fusebench's graph mode times its own kernels: R calls captured in one CUDA
graph, replayed, median replay time / R (a serving engine replays decode steps from graphs, so the
launch path is not in the figures). Where a function cannot be captured, do_bench's hot median is
used and the row says so. For context next to fusebench's bench JSON; not a correctness oracle.

  python3 tools/torch_peers.py OUT.json   # also OUT-router.json: router + gate and the router GEMM alone
"""
import json
import sys

import torch
import triton.testing

FP8 = torch.float8_e4m3fn
MAX = 448.0


def quant_per_token(x):
    amax = x.float().abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    scale = amax * (1.0 / MAX)
    q = (x.float() * (1.0 / scale)).clamp(-MAX, MAX).to(FP8)
    return q, scale


def quant_per_1x128(x):
    m, k = x.shape
    g = x.float().view(m, k // 128, 128)
    amax = g.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    scale = amax * (1.0 / MAX)
    q = (g * (1.0 / scale)).clamp(-MAX, MAX).to(FP8).view(m, k)
    return q, scale.view(m, k // 128)


def gemma_rmsnorm_quant(x, residual, w, eps=1e-6):
    s = x.float() + residual.float()
    r = torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + eps)
    y = (s * r * (1.0 + w.float())).to(torch.bfloat16)
    return quant_per_1x128(y), s.to(torch.bfloat16)


def swiglu_oai_quant(x):
    d = x.shape[1] // 2
    g = x[:, :d].float().clamp(max=7.0)
    u = x[:, d:].float().clamp(-7.0, 7.0)
    out = (g * torch.sigmoid(1.702 * g) * (u + 1.0)).to(torch.bfloat16)
    return quant_per_1x128(out)


TIMER = {"last": "graph"}


def time_us(fn, target_us=50.0, replays=200):
    """Median per-call time of fn() in microseconds, graph-replayed (see the module docstring)."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # One call's time from a one-call graph (not do_bench: its figure includes the launch path
        # and would make R too small), then R calls in one graph so a replay lasts ~target_us.
        single = torch.cuda.CUDAGraph()
        with torch.cuda.graph(single):
            fn()
        probe = []
        for _ in range(7):
            start.record()
            single.replay()
            stop.record()
            stop.synchronize()
            probe.append(1000.0 * start.elapsed_time(stop))
        one = sorted(probe)[3]
        calls = max(1, min(256, int(-(-target_us // max(one, 0.1)))))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        for _ in range(5):
            graph.replay()
        samples = []
        for _ in range(replays):
            start.record()
            graph.replay()
            stop.record()
            stop.synchronize()
            samples.append(1000.0 * start.elapsed_time(stop) / calls)
        samples.sort()
        TIMER["last"] = f"graph x{calls}"
        return samples[len(samples) // 2]
    except Exception as e:  # not capturable: fall back to the hot event median, and say so
        torch.cuda.synchronize()
        TIMER["last"] = f"do_bench hot ({type(e).__name__})"
        return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


# ---- MoE grouped GEMM peers (kernels/moe_gemm): torch._grouped_mm (bf16) and
# torch._scaled_grouped_mm (fp8 e4m3, row-wise scales) at the m31 TP4 shapes (E = 128, k = 4,
# K = 6144, I = 768) and the moe_gemm routings. Rows are grouped by expert and each group padded to
# 32 rows (the sort block B), as the sorted MXFP4 GEMMs see them; FLOPs count the T*k routed rows only.
MOE_E, MOE_K, MOE_HIDDEN, MOE_INTER, MOE_BLOCK = 128, 4, 6144, 768, 32


def moe_routing(t, routing, dev):
    """topk ids [T][k] with the moe_gemm routing patterns (not the same draws, the same shape)."""
    e, k = MOE_E, MOE_K
    if routing == "uniform":
        return torch.rand(t, e, device=dev).topk(k, dim=1).indices
    if routing == "one_expert":  # every token sends one slot to expert 0
        rest = torch.rand(t, e - 1, device=dev).topk(k - 1, dim=1).indices + 1
        return torch.cat([torch.zeros(t, 1, dtype=rest.dtype, device=dev), rest], dim=1)
    active = max(k, (e + 3) // 4)  # empty_experts: only `active` evenly spaced experts get tokens
    return torch.rand(t, active, device=dev).topk(k, dim=1).indices * e // active


def moe_group_offsets(ids):
    counts = torch.bincount(ids.flatten(), minlength=MOE_E)
    padded = (counts + MOE_BLOCK - 1) // MOE_BLOCK * MOE_BLOCK
    return torch.cumsum(padded, 0).to(torch.int32), int(padded.sum())


def moe_grouped_peers(rows):
    dev = "cuda"
    if not hasattr(torch, "_grouped_mm"):
        print("torch._grouped_mm not in this PyTorch: MoE peers skipped", flush=True)
        return
    shapes = {"stage1": (MOE_HIDDEN, 2 * MOE_INTER), "stage2": (MOE_INTER, MOE_HIDDEN)}
    weights = {}
    for stage, (kdim, ndim) in shapes.items():
        w = torch.randn(MOE_E, ndim, kdim, device=dev, dtype=torch.bfloat16) * kdim ** -0.5
        w8 = w.to(FP8)
        ws = torch.ones(MOE_E, ndim, device=dev, dtype=torch.float32)
        weights[stage] = (w.transpose(-2, -1), w8.transpose(-2, -1), ws)  # [E][K][N], column-major
    for routing in ("uniform", "one_expert", "empty_experts"):
        for t in (3, 24, 48, 96, 192, 4096, 32768):
            if routing != "uniform" and t not in (96, 4096):
                continue
            ids = moe_routing(t, routing, dev)
            offs, total = moe_group_offsets(ids)
            for stage, (kdim, ndim) in shapes.items():
                w, w8, ws = weights[stage]
                a = torch.randn(total, kdim, device=dev, dtype=torch.bfloat16)
                a8 = a.to(FP8)
                sa = torch.ones(total, device=dev, dtype=torch.float32)
                flops = 2.0 * t * MOE_K * kdim * ndim
                peers = {
                    "torch._grouped_mm bf16": lambda: torch._grouped_mm(a, w, offs=offs, out_dtype=torch.bfloat16),
                    "torch._scaled_grouped_mm fp8 rowwise": lambda: torch._scaled_grouped_mm(
                        a8, w8, sa, ws, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=True),
                }
                for peer, fn in peers.items():
                    try:
                        us = time_us(fn)
                    except Exception as e:  # a PyTorch or GPU without the op: recorded, not fatal
                        print(f"moe_gemm/{stage} {peer} T={t} {routing}: {type(e).__name__}: {e}", flush=True)
                        continue
                    rows.append({"case": f"moe_gemm/{stage}", "peer": peer, "T": t, "routing": routing,
                                 "E": MOE_E, "k": MOE_K, "K": MOE_HIDDEN, "I": MOE_INTER, "us": us,
                                 "tflops": flops / us * 1e-6})
                    print(f"moe_gemm/{stage:6s} {peer:38s} T={t:6d} {routing:13s} {us:9.2f} us "
                          f"{flops / us * 1e-6:7.1f} TFLOP/s", flush=True)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    rows = []
    for m in (3, 24, 192, 1024, 32768):
        x = torch.randn(m, 6144, device=dev, dtype=torch.bfloat16)
        res = torch.randn_like(x)
        w = 0.1 * torch.randn(6144, device=dev, dtype=torch.bfloat16)
        gu = torch.randn(m, 2 * 768, device=dev, dtype=torch.bfloat16)
        cases = {
            "fp8_quant/per_token K=6144": (quant_per_token, (x,)),
            "fp8_quant/per_1x128 K=6144": (quant_per_1x128, (x,)),
            "rmsnorm_fp8/per_1x128 H=6144 residual": (gemma_rmsnorm_quant, (x, res, w)),
            "swiglu_fp8/per_1x128 d=768": (swiglu_oai_quant, (gu,)),
        }
        for name, (fn, args) in cases.items():
            eager = time_us(lambda: fn(*args))
            compiled = torch.compile(fn, dynamic=False)
            compiled(*args)
            comp = time_us(lambda: compiled(*args))
            rows.append({"case": name, "M": m, "torch_eager_us": eager, "torch_compile_us": comp, "timer": TIMER["last"]})
            print(f"{name:42s} M={m:6d}  eager {eager:9.2f} us   torch.compile {comp:9.2f} us", flush=True)
    moe_grouped_peers(rows)
    rows += gemm_peer_rows(dev)  # fp8 GEMM peers (section below)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
            "timer": "CUDA graph of R calls, median replay / R (per row: 'timer')"}
    json.dump({"meta": meta, "rows": rows}, open(sys.argv[1], "w"), indent=1)


# ==================================================================================================
# fp8 GEMM peers (issue 14: kernels/fp8_gemm, kernels/fp8_gemm_blockscale): torch._scaled_mm with
# tensorwise, rowwise (per token x per channel) and blockwise (1x128 x 128x128) scales, on the
# shapes of m31-flash-tp4. Each result is also compared with the fp32 dequantized product, so a
# layout the library accepts but computes wrongly shows up as "WRONG" (the known trap: an unpadded
# 128x128 scale at K/128 % 4 != 0), and a refused point is recorded with the library's message.
# ==================================================================================================

GEMM_SHAPES = {  # name: (N, K)
    "shared_gate_up": (1536, 6144),
    "shared_down": (6144, 768),
    "qkv": (2304, 6144),
    "o_proj": (6144, 2048),
}


def gemm_operands(m, n, k, dev):
    a = (32.0 * torch.randn(m, k, device=dev)).clamp(-MAX, MAX).to(FP8)
    w = (32.0 * torch.randn(n, k, device=dev)).clamp(-MAX, MAX).to(FP8)
    return a, w


def blockwise_128x128_scale(scale, padded):
    """A 128x128 scale of shape [R][C] whose row stride is C rounded up to 4 (cuBLASLt's documented
    layout) or C itself (unpadded: accepted by some versions, wrong answers when C % 4 != 0)."""
    r, c = scale.shape
    if not padded:
        return scale.contiguous()
    ld = (c + 3) // 4 * 4
    buf = torch.zeros(r, ld, device=scale.device, dtype=scale.dtype)
    buf[:, :c] = scale
    return buf.as_strided((r, c), (ld, 1))


def gemm_peer_rows(dev):
    rows = []
    for shape, (n, k) in GEMM_SHAPES.items():
        for m in (1, 3, 16, 192, 4096, 32768):
            a, w = gemm_operands(m, n, k, dev)
            ref32 = a.float() @ w.float().t()
            kb, nb = k // 128, n // 128
            a_row = 1.0 / 64 + torch.rand(m, 1, device=dev) / 64
            w_col = 1.0 / 64 + torch.rand(1, n, device=dev) / 64
            a_blk = 1.0 / 64 + torch.rand(m, kb, device=dev) / 64
            w_blk = 1.0 / 64 + torch.rand(nb, kb, device=dev) / 64
            one = torch.ones((), device=dev)
            a_deq_blk = (a.float().view(m, kb, 128) * a_blk.view(m, kb, 1)).view(m, k)
            w_deq_blk = (w.float().view(nb, 128, kb, 128) * w_blk.view(nb, 1, kb, 1)).view(n, k)
            peers = {
                "tensorwise": (lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16), ref32),
                "rowwise": (lambda: torch._scaled_mm(a, w.t(), a_row, w_col, out_dtype=torch.bfloat16),
                            ref32 * a_row * w_col),
            }
            # Blockwise: A's 1x128 scale outer-dim-major ([M][K/128] with stride (1, M)); B = w^T
            # ([K][N], column-major) with its 128x128 scale as [K/128][N/128]... both the padded and the
            # unpadded leading dimension are tried, and each is checked.
            a_s = a_blk.t().contiguous().t()
            for padded in (True, False):
                b_s = blockwise_128x128_scale(w_blk.t().contiguous(), padded)
                name = "blockwise" + ("" if padded else "_unpadded")
                peers[name] = ((lambda b_s=b_s: torch._scaled_mm(a, w.t(), a_s, b_s, out_dtype=torch.bfloat16)),
                               a_deq_blk @ w_deq_blk.t())
            for name, (fn, want) in peers.items():
                row = {"case": f"fp8_gemm {shape} {name}", "M": m, "N": n, "K": k}
                try:
                    got = fn().float()
                    err = ((got - want).norm() / want.norm()).item()
                    row["rel_l2_vs_fp32"] = err
                    row["verdict"] = "ok" if err < 2.0 ** -6 else "WRONG"
                    us = time_us(fn)
                    row["us"] = us
                    row["timer"] = TIMER["last"]
                    row["tflops"] = 2.0 * m * n * k / us * 1e-6
                    print(f"{row['case']:44s} M={m:6d} {us:9.2f} us {row['tflops']:8.1f} TFLOP/s  rel_l2 {err:.2e} "
                          f"{row['verdict']}", flush=True)
                except Exception as e:  # a refusal is a skip with the library's reason, never a number
                    row["skipped"] = str(e).splitlines()[0][:300]
                    print(f"{row['case']:44s} M={m:6d} skipped: {row['skipped']}", flush=True)
                rows.append(row)
            del a, w, ref32, a_deq_blk, w_deq_blk
            torch.cuda.empty_cache()
    return rows


# ---- Router GEMV + gate (issue 16): PyTorch eager and torch.compile, each replayed from a CUDA graph.
# MiniMax-M3's router: fp32 W_gate [128][6144] (or bf16), logits = x.float() @ W.T in fp32,
# p = sigmoid(logits), top-4 of p + bias, weights = p of the chosen / their sum * 2.0. Writes
# OUT-router.json next to OUT.json.

def router_sigmoid_bias(x, w, bias, k=4, rsf=2.0):
    logits = torch.nn.functional.linear(x.to(w.dtype), w).float()
    p = torch.sigmoid(logits)
    ids = torch.topk(p + bias, k, dim=-1, sorted=True).indices
    wts = p.gather(-1, ids)
    return ids.to(torch.int32), wts / wts.sum(dim=-1, keepdim=True) * rsf


def router_softmax(x, w, k=4):
    logits = torch.nn.functional.linear(x.to(w.dtype), w).float()
    p = torch.softmax(logits, dim=-1)
    wts, ids = torch.topk(p, k, dim=-1, sorted=True)
    return ids.to(torch.int32), wts / wts.sum(dim=-1, keepdim=True)


def router_gemm(x, w):
    """The router GEMM alone (what vLLM's 1.72 us figure at M = 1 times): fp32 logits."""
    return torch.nn.functional.linear(x.to(w.dtype), w).float()


def router_main(out_path):
    """Router + gate peers, eager and torch.compile, each timed as time_us does (R calls in one
    CUDA graph, median replay / R), plus the GEMM alone; fusebench's router/gate times the same
    work (GEMV + gate) in graph mode."""
    torch.manual_seed(0)
    dev = "cuda"
    rows = []
    # Every (M, dtype) is a new compiled graph: past dynamo's recompile limit (8) torch.compile
    # falls back to eager without an error (run 37's bf16 rows did), so raise the limit.
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    # fp32 W (the default) at every M of the issue; bf16 W and softmax at two decode sizes (each
    # torch.compile of a new shape costs seconds: the whole section stays near a minute).
    for wdtype, sizes in ((torch.float32, (1, 3, 8, 16, 24, 96, 192, 512)), (torch.bfloat16, (1, 16))):
        w = (torch.randn(128, 6144, device=dev) / 6144 ** 0.5).to(wdtype)
        bias = 0.05 * torch.randn(128, device=dev)
        wname = "f32" if wdtype == torch.float32 else "bf16"
        for m in sizes:
            x = torch.randn(m, 6144, device=dev, dtype=torch.bfloat16)
            peers = (("router/gate gate=sigmoid_bias", router_sigmoid_bias, (x, w, bias)),
                     ("router GEMM alone", router_gemm, (x, w)))
            if m in (1, 16) and wdtype == torch.float32:
                peers += (("router/gate gate=softmax", router_softmax, (x, w)),)
            for case, fn, args in peers:
                compiled = torch.compile(fn, dynamic=False)
                compiled(*args)
                eager = time_us(lambda: fn(*args))
                eager_timer = TIMER["last"]
                comp = time_us(lambda: compiled(*args))
                name = f"{case} weight={wname}"
                w_bytes = w.numel() * w.element_size()
                rows.append({"case": name, "M": m, "torch_eager_us": eager, "torch_compile_us": comp,
                             "timer": f"eager {eager_timer}, compile {TIMER['last']}",
                             "weight_gb_per_s_compile": w_bytes / comp * 1e-3})
                print(f"{name:48s} M={m:4d}  eager {eager:8.2f} us   torch.compile {comp:8.2f} us "
                      f"(W {w_bytes / comp * 1e-3:7.1f} GB/s)", flush=True)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
            "timer": "CUDA graph of R calls, median replay / R (per row: 'timer')"}
    json.dump({"meta": meta, "rows": rows}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    # `torch_peers.py OUT.json --router`: the router section alone (OUT-router.json).
    if sys.argv[2:] != ["--router"]:
        main()
    router_main(sys.argv[1][:-5] + "-router.json" if sys.argv[1].endswith(".json") else sys.argv[1] + "-router.json")
