#!/usr/bin/env python3
"""shard_merge_test.py FUSEBENCH OUT_DIR: `verify --shard I/3` three times, `fusebench merge`, and
the merged report equals the unsharded run's in everything but timestamps and wall times: the
case list in order, outcomes, checks, fingerprints, the summary, the methodology."""
import json
import os
import subprocess
import sys

SELECT = ["--scenario", "ci-quick", "--backend", "cpu", "--kernel", "fp8_quant/*", "--where", "M=5", "--quiet"]


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"exit {done.returncode}: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return done


def without_times(report):
    report = json.loads(json.dumps(report))
    run_block = report.pop("run")
    for case in report["cases"]:
        case.pop("wall_ms")
    return report, run_block


def main() -> int:
    fb, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    whole = os.path.join(out, "unsharded.json")
    run([fb, "verify", *SELECT, "--json", whole])
    shards = []
    for i in range(3):
        path = os.path.join(out, f"shard-{i}.json")
        notes = run([fb, "verify", *SELECT, "--shard", f"{i}/3", "--json", path]).stderr
        assert f"--shard {i}/3:" in notes, f"no selection note for shard {i}: {notes!r}"
        shards.append(path)
    merged = os.path.join(out, "merged.json")
    run([fb, "merge", shards[2], shards[0], shards[1], "-o", merged])  # any order on the command line
    a, a_run = without_times(json.load(open(whole)))
    b, b_run = without_times(json.load(open(merged)))
    parts = [json.load(open(p)) for p in shards]
    sizes = [len(p["cases"]) for p in parts]
    assert sorted(sizes) == [6, 7, 7] and sum(sizes) == len(a["cases"]) == 20, f"shard sizes {sizes}"
    assert [p["methodology"]["shard"] for p in parts] == ["0/3", "1/3", "2/3"]
    keys = lambda r: [(c["case"], json.dumps(c["point"], sort_keys=True)) for c in r["cases"]]
    assert keys(a) == keys(b), "cases are not in the unsharded order"
    assert [c["outcome"] for c in a["cases"]] == [c["outcome"] for c in b["cases"]]
    assert [c["fingerprints"] for c in a["cases"]] == [c["fingerprints"] for c in b["cases"]]
    for key in a:
        assert a[key] == b[key], f"merged report differs from the unsharded one at {key}"
    assert a == b
    assert "--shard" not in b_run["argv"], b_run["argv"]
    assert [s["shard"] for s in b_run["shards"]] == ["0/3", "1/3", "2/3"]
    assert b_run["started_at"] == min(json.load(open(p))["run"]["started_at"] for p in shards)
    print(f"ok: 3 shards ({sizes}) merge into the unsharded report's {len(a['cases'])} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
