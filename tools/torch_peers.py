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
    rows += gemm_peer_rows(dev)  # fp8 GEMM peers (section below)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "timer": "triton do_bench median (hot)"}
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


if __name__ == "__main__":
    main()
