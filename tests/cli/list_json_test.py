#!/usr/bin/env python3
"""`fusebench list kernels --json`: every case's variant_details name its variants in order, each
with launches, a claim against the emulation and the outputs it writes; the block-scale GEMM's
direct form and the vendor variant write C alone (VariantSpec::writes).

    list_json_test.py FUSEBENCH
"""
import json
import subprocess
import sys


def main() -> int:
    out = subprocess.run([sys.argv[1], "list", "kernels", "--json"], check=True, capture_output=True, text=True).stdout
    kernels = json.loads(out)["kernels"]
    assert kernels, "no kernel cases listed"
    for k in kernels:
        details = k["variant_details"]
        assert ", ".join(d["name"] for d in details) == k["variants"], k["name"]
        for d in details:
            assert d["launches"] >= 1, (k["name"], d["name"])
            assert d["emulation"], (k["name"], d["name"])
            assert d["writes"] == "all" or (isinstance(d["writes"], list) and d["writes"]), (k["name"], d["name"])
    gemm = next(k for k in kernels if k["name"] == "fp8_gemm_blockscale/gemm")
    writes = {d["name"]: d["writes"] for d in gemm["variant_details"]}
    assert writes == {"plain": "all", "wgmma": "all", "vendor": ["c"], "direct": ["c"]}, writes
    print(f"list_json_test: {len(kernels)} cases, variant details consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
