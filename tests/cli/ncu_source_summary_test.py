#!/usr/bin/env python3
"""tools/ncu_source_summary.py on a small source page written here: totals, order, opcodes, regions,
groups by execution count."""
import csv
import os
import subprocess
import sys
import tempfile

tool = sys.argv[1]
header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
          "Instructions Executed", "stall_barrier", "stall_long_sb", "stall_long_sb (Not Issued)"]
rows = [
    ["0x0", "      LDC R1, c[0x0][0x28]", "2", "2", "96", "0", "2", "2"],
    ["0x10", "@!P0  LDG.E.STRONG.SYS R8, desc[UR16][R26.64]", "30", "30", "768", "0", "30", "30"],
    ["0x20", "      FADD R34, R34, R93", "8", "8", "768", "0", "8", "8"],
    ["0x30", "@P3   EXIT", "60", "60", "1,152", "60", "0", "0"],
]
with tempfile.TemporaryDirectory() as d:
    page = os.path.join(d, "page.csv")
    with open(page, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["Kernel Name", "k(int)"])
        w.writerow(header)
        w.writerows(rows)
        w.writerow([])  # a blank line, then a second kernel's page: neither is read
        w.writerow(["Kernel Name", "other(int)"])
        w.writerow(header)
        w.writerow(["0x0", "NOP", "999", "999", "1", "999", "0", "0"])
    out = subprocess.run([sys.executable, tool, page, "--top", "2", "--regions", "0:2,2:4", "--by-count", "2"],
                         check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    assert lines[0] == "4 instructions, 100 stall samples", out
    top = [l for l in lines if l.startswith("  [")]
    # the two largest in listing order: the load (index 1) and the exit (index 3), with their reasons
    assert "[    1]" in top[0] and "long_sb 30" in top[0] and "LDG.E.STRONG.SYS" in top[0], out
    assert "[    3]" in top[1] and "barrier 60" in top[1] and "x1152" in top[1], out
    assert any(l.split() == ["EXIT", "60", "(60.0", "%)"] for l in lines), out
    assert any(l.split() == ["LDG", "30", "(30.0", "%)"] for l in lines), out
    assert "  [0, 2)     32 (32.0 %)" in lines and "  [2, 4)     68 (68.0 %)" in lines, out
    # by execution count: the exit alone (60 samples) first, then the load and the add (both ran
    # 768 times: 38 samples, two instructions); the LDC group (2 samples) is past N = 2
    groups = [l.split() for l in lines if l.startswith("  x")]
    assert len(groups) == 2, out
    assert groups[0][:5] == ["x1152", "1", "instructions", "60", "(60.0"] and "barrier" in groups[0], out
    assert groups[1][:5] == ["x768", "2", "instructions", "38", "(38.0"] and "LDG" in groups[1] and "FADD" in groups[1], out
    assert "long_sb" in groups[1], out
    # a page without the samples column is a one-line error and a non-zero exit
    bad = os.path.join(d, "bad.csv")
    with open(bad, "w") as f:
        f.write('"Address","Source"\n"0x0","NOP"\n')
    r = subprocess.run([sys.executable, tool, bad], capture_output=True, text=True)
    assert r.returncode != 0 and "no 'Warp Stall Sampling (All Samples)' column" in r.stderr, (r.returncode, r.stderr)
print("ok")
