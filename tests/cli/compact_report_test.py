#!/usr/bin/env python3
"""compact_report_test.py TOOL SCHEMA REPORT_JSON WORK_DIR: tools/compact_report.py keeps what a
report's reader needs and drops only the checks of passing cases.

From a real report (the ci-quick run) plus a copy whose first case is made to fail: the compact
form validates against the schema, keeps the summary, every case's outcome, fingerprints,
timings and repro line, counts each passing case's checks per id, keeps every check of a case
that did not pass, records its source, and compacting it again changes nothing."""
import collections
import json
import os
import subprocess
import sys

import jsonschema


def compact(tool: str, source: str, target: str) -> dict:
    subprocess.run([sys.executable, tool, source, target], check=True)
    with open(target) as f:
        return json.load(f)


def main() -> int:
    tool, schema_path, report_path, work = sys.argv[1:5]
    schema = json.load(open(schema_path))
    full = json.load(open(report_path))
    assert full["cases"], "the source report has no cases"

    # A failing case must keep its checks: make the first one fail.
    full["cases"][0]["outcome"] = "fail"
    full["cases"][0]["checks"][0]["passed"] = False
    full["summary"]["pass"] -= 1
    full["summary"]["fail"] += 1
    source = os.path.join(work, "compact-source.json")
    with open(source, "w") as f:
        json.dump(full, f)

    small_path = os.path.join(work, "compact.json")
    small = compact(tool, source, small_path)
    jsonschema.validate(small, schema)
    assert small["summary"] == full["summary"], "summary changed"
    assert small["compact"]["source"] == "compact-source.json"
    assert len(small["compact"]["source_sha256"]) == 64
    assert len(small["cases"]) == len(full["cases"])
    for before, after in zip(full["cases"], small["cases"]):
        for key in ("case", "point", "outcome", "reason", "inputs", "outputs", "fingerprints", "repro"):
            assert after[key] == before[key], f"{before['case']}: {key} changed"
        assert after.get("timings") == before.get("timings"), f"{before['case']}: timings changed"
        if before["outcome"] == "pass":
            assert after["checks"] == [], f"{before['case']}: a passing case kept its checks"
            counts = collections.Counter(c["id"] for c in before["checks"])
            assert after["check_summary"] == dict(counts), f"{before['case']}: check counts differ"
        else:
            assert after["checks"] == before["checks"], f"{before['case']}: a failing case lost checks"
    assert os.path.getsize(small_path) < os.path.getsize(source), "the compact report is not smaller"

    again_path = os.path.join(work, "compact-again.json")
    compact(tool, small_path, again_path)
    assert open(again_path).read() == open(small_path).read(), "compacting twice changed the report"
    print(f"ok: {len(small['cases'])} cases, {os.path.getsize(source)} -> {os.path.getsize(small_path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
