#!/usr/bin/env python3
"""Peer timings on the GPU machine: the same fp8 quant and producers written in PyTorch (eager and
torch.compile), timed as fusebench's graph mode times its own kernels: R calls captured in one CUDA
graph, replayed, median replay time / R (a serving engine replays decode steps from graphs, so the
launch path is not in the figures). Where a function cannot be captured, do_bench's hot median is
used and the row says so. For context next to fusebench's bench JSON; not a correctness oracle.

  python3 tools/torch_peers.py OUT.json
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
        one = 1000.0 * triton.testing.do_bench(fn, warmup=5, rep=20, return_mode="median")
        calls = max(1, min(256, int(-(-target_us // max(one, 0.1)))))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
            "timer": "CUDA graph of R calls, median replay / R (per row: 'timer')"}
    json.dump({"meta": meta, "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
