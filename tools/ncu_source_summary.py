#!/usr/bin/env python3
"""Where a kernel's warps wait, per SASS instruction, from Nsight Compute's source page.

    ncu --section SourceCounters --section WarpStateStats -o REP ...       (on the GPU machine)
    ncu -i REP.ncu-rep --page source --csv --print-source sass > K.csv
    tools/ncu_source_summary.py K.csv [--top 20] [--regions 0:440,440:880,880:1800] [--by-count 12]

Prints the total of the stall samples, the instructions with the most samples (their index in the
listing, SASS, how often they ran, their two largest stall reasons), the samples by opcode, and,
with --regions, the samples of each half-open range of instruction indices (read the indices off
the top list: the prologue, the K loop and the epilogue of a kernel, say). Run 58's profile of the
block-scale GEMM was read this way (reports/runs/2026-12-03_h200_run58_8bfb398/profile-run58p.md).
With --by-count N, the instructions are also grouped by how often they ran, the N groups with the
most samples first: in a warp-specialised kernel the code a consumer warp runs once per K block,
the producer's once per stage and the epilogue's once per tile each run a different number of times,
so a group's size is that piece's instruction count (its opcodes and stall reasons beside it). Run
60's profiles of the MoE engine were read this way (reports/runs/2026-12-04_h200_run60_c6dabe7/).
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # The page starts with a "Kernel Name" line; the header is the first row naming the samples.
    # An export of several kernels repeats both: only the first kernel's rows are read.
    for i, row in enumerate(rows):
        if SAMPLES in row and "Source" in row:
            data = []
            for r in rows[i + 1:]:
                if r and r[0] == "Kernel Name":
                    break
                if len(r) == len(row):
                    data.append(r)
            return row, data
    sys.exit(f"{path}: no '{SAMPLES}' column (was it exported with --page source --print-source sass?)")


def number(text):
    # ncu may print thousands separators ("1,234"); an empty cell is 0; anything else is an error.
    text = text.replace(",", "").strip()
    if text in ("", "-"):
        return 0
    try:
        return int(float(text))
    except ValueError:
        sys.exit(f"not a count: {text!r}")


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--regions", default="", help="comma-separated START:END instruction index ranges")
    ap.add_argument("--by-count", type=int, default=0, metavar="N",
                    help="the N groups of instructions that ran equally often with the most samples")
    args = ap.parse_args()
    header, data = load(args.csv)
    col = {name: i for i, name in enumerate(header)}
    stalls = [i for i, name in enumerate(header) if name.startswith("stall_") and "Not Issued" not in name]
    samples = [number(row[col[SAMPLES]]) for row in data]
    total = sum(samples)
    print(f"{len(data)} instructions, {total} stall samples")
    if total == 0:
        return
    print(f"\ntop {args.top} instructions by samples:")
    for k in sorted(sorted(range(len(data)), key=lambda k: -samples[k])[:args.top]):
        row = data[k]
        reasons = sorted(((number(row[c]), header[c][len("stall_"):]) for c in stalls), reverse=True)[:2]
        why = ", ".join(f"{name} {n}" for n, name in reasons if n)
        print(f"  [{k:5d}] {samples[k]:6d} ({100 * samples[k] / total:4.1f} %)  x{number(row[col[EXECUTED]]):<8d}"
              f" {row[col['Source']].strip()[:64]:64s}  {why}")
    by_opcode = collections.Counter()
    for row, n in zip(data, samples):
        by_opcode[opcode(row[col["Source"]])] += n
    print("\nsamples by opcode:")
    for name, n in by_opcode.most_common(12):
        print(f"  {name:12s} {n:6d} ({100 * n / total:4.1f} %)")
    if args.regions:
        print("\nsamples by region (instruction indices, half-open):")
        for region in args.regions.split(","):
            start, end = (int(x) for x in region.split(":"))
            n = sum(samples[max(start, 0):min(end, len(samples))])
            print(f"  [{start}, {end}) {n:6d} ({100 * n / total:4.1f} %)")
    if args.by_count:
        groups = collections.defaultdict(list)
        for k, row in enumerate(data):
            groups[number(row[col[EXECUTED]])].append(k)
        print("\nsamples by execution count (instructions that ran equally often):")
        ranked = sorted(groups.items(), key=lambda g: (-sum(samples[k] for k in g[1]), -g[0]))
        for count, members in ranked[:args.by_count]:
            n = sum(samples[k] for k in members)
            ops = collections.Counter(opcode(data[k][col["Source"]]) for k in members).most_common(4)
            reasons = collections.Counter()
            for k in members:
                for c in stalls:
                    reasons[header[c][len("stall_"):]] += number(data[k][c])
            why = ", ".join(f"{name} {100 * m / max(n, 1):.0f} %" for name, m in reasons.most_common(2) if m)
            print(f"  x{count:<10d} {len(members):5d} instructions  {n:6d} ({100 * n / total:4.1f} %)  "
                  f"{' '.join(f'{o} {c}' for o, c in ops)}  |  {why}")


if __name__ == "__main__":
    main()
