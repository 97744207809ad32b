#!/usr/bin/env python3
"""Peer timings on the GPU machine: the same fp8 quant and producers written in PyTorch (eager and
torch.compile), timed with CUDA events (triton.testing.do_bench, median, hot), for context next to
fusebench's own bench JSON. Not a correctness oracle: fusebench's checks are the C++ ones.

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


def time_us(fn):
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def main():
    torch.manual_seed(0)
    dev = "cuda"
    rows = []
    for m in (3, 192, 32768):
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
            rows.append({"case": name, "M": m, "torch_eager_us": eager, "torch_compile_us": comp})
            print(f"{name:42s} M={m:6d}  eager {eager:9.2f} us   torch.compile {comp:9.2f} us", flush=True)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "timer": "triton do_bench median (hot)"}
    json.dump({"meta": meta, "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
