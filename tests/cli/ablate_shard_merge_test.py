#!/usr/bin/env python3
"""ablate_shard_merge_test.py FUSEBENCH OUT_DIR: `ablate --shard I/2` twice on the CPU backend,
`fusebench merge`, and the merged ablation report holds the unsharded run's points in its order
with the same configurations, launch counts and checks (the timings of two runs differ, so they
are compared only for presence)."""
import json
import os
import subprocess
import sys

SELECT = ["ablate", "--scenario", "ci-quick", "--backend", "cpu", "--rounds", "3", "--quiet"]


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"exit {done.returncode}: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return done


def shape(point):
    """What must not depend on how the points were split: everything but the times."""
    return {
        "id": point["id"],
        "phase": point["phase"],
        "rows": point["rows"],
        "configs": [(c["name"], c["off"], c["launches"], len(c["samples_us"]) > 0) for c in point["configs"]],
        "fusions": [(f["fusion"], f["applies"], json.dumps(f.get("check"), sort_keys=True)) for f in point["fusions"]],
    }


def main() -> int:
    fb, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    whole = os.path.join(out, "unsharded.json")
    run([fb, *SELECT, "--json", whole])
    shards = [os.path.join(out, f"shard-{i}.json") for i in range(2)]
    for i, path in enumerate(shards):
        run([fb, *SELECT, "--shard", f"{i}/2", "--json", path])
    merged = os.path.join(out, "merged.json")
    run([fb, "merge", shards[1], shards[0], "-o", merged])
    a, b = json.load(open(whole)), json.load(open(merged))
    parts = [json.load(open(p)) for p in shards]
    sizes = [len(p["points"]) for p in parts]
    assert sum(sizes) == len(a["points"]) >= 3 and min(sizes) >= 1, f"shard sizes {sizes}"
    assert b.get("report_kind") == "ablation", b.get("report_kind")
    assert [p["id"] for p in b["points"]] == [p["id"] for p in a["points"]], "points not in the unsharded order"
    assert [shape(p) for p in b["points"]] == [shape(p) for p in a["points"]]
    assert b["summary"] == a["summary"], (b["summary"], a["summary"])
    print(f"ok: 2 ablation shards ({sizes}) merge into the unsharded run's {len(a['points'])} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
