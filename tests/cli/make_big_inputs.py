#!/usr/bin/env python3
"""Writes the bad-input corpus's generated scenarios (too large to commit) into OUT_DIR.

usage: make_big_inputs.py OUT_DIR [CASE]   (CASE: a kernel case with an integer axis M; default
fp8_quant/per_token). Each file is one hostile input of issue 13; tests/cli/bad_inputs.cmake says
what fusebench must answer to each.
"""
import os
import sys

out = sys.argv[1]
case = sys.argv[2] if len(sys.argv) > 2 else "fp8_quant/per_token"
os.makedirs(out, exist_ok=True)


def scenario(body, extra=""):
    return '{"fusebench_scenario": 1, "name": "gen"%s, "cases": {"%s": [%s]}}' % (extra, case, body)


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


# Nesting: 10^6 deep under model (6 MB), 10^5 deep inside an axis value, 10^4 deep under model.
write("deep_model_1e6.json", scenario('{"M": 1}', ', "model": ' + '{"a":' * 10**6 + "1" + "}" * 10**6))
write("deep_axis_1e5.json", scenario('{"M": ' + "[" * 10**5 + "1" + "]" * 10**5 + "}"))
write("deep_model_1e4.json", scenario('{"M": 1}', ', "model": ' + '{"a":' * 10**4 + "1" + "}" * 10**4))
# 100k keys in one object (quadratic to build as an ordered map), in model and in a sweep.
keys = ",".join('"k%d": %d' % (i, i) for i in range(100000))
write("many_keys_model.json", scenario('{"M": 1}', ', "model": {' + keys + "}"))
write("many_keys_sweep.json", scenario("{" + keys + "}"))
# Long sweeps: 20k values (accepted), 2M values (past the point limit).
write("sweep_20k.json", scenario('{"M": [%s]}' % ",".join(str(i) for i in range(1, 20001))))
write("sweep_2m.json", scenario('{"M": [%s]}' % ",".join(str(i) for i in range(1, 2000001))))
# Two short lists whose product is 4 * 10^6 points.
write("sweep_product.json", scenario('{"M": [%s], "K": [%s]}' % (",".join(str(i) for i in range(1, 2001)),
                                                                   ",".join(str(128 * i) for i in range(1, 2001)))))
# 50 MB: past the 16 MiB scenario limit.
write("big_50mb.json", scenario('{"M": 1}', ', "description": "' + "x" * (50 << 20) + '"'))
