#!/usr/bin/env python3
"""compact_report.py IN.json OUT.json: a fusebench report small enough to keep in the tree.

Kept: everything a later reader or `fusebench compare` needs (tool, run, build, device,
methodology, environment with the copy bandwidth and launch floor, scenario, summary, and per
case its point, outcome, reason, seeds, outputs, fingerprints, timings, speedup and repro line).
Dropped: the per-check detail of cases that passed (a passing case's checks are listed as a count
per check id in `check_summary`); cases that did not pass keep every check. The result still
validates against reports/schema/report.schema.json, and `compact` at the top says what was done
and which file it came from (its SHA-256, so the full report can be found in git history).
Compacting a compact report changes nothing.
"""
import argparse
import collections
import hashlib
import json
import os
import sys


def compact_case(case: dict) -> dict:
    out = dict(case)
    checks = case.get("checks", [])
    if case.get("outcome") == "pass" and checks:
        counts = collections.Counter(check["id"] for check in checks)
        out["check_summary"] = dict(sorted(counts.items()))
        out["checks"] = []
    return out


def compact_report(report: dict, source_name: str, source_sha256: str) -> dict:
    if "compact" in report:
        return report
    out = dict(report)
    out["cases"] = [compact_case(c) for c in report.get("cases", [])]
    out["compact"] = {
        "by": "tools/compact_report.py",
        "source": source_name,
        "source_sha256": source_sha256,
        "dropped": "the checks of passing cases (counted per id in check_summary)",
    }
    return out


def to_text(report: dict) -> str:
    """Indented JSON with one line per case, so that a diff of two reports reads case by case."""
    head = {k: v for k, v in report.items() if k != "cases"}
    lines = [json.dumps(c, separators=(",", ":")) for c in report.get("cases", [])]
    text = json.dumps(head, indent=1)
    return text[:-2] + ',\n "cases": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="a fusebench verify or bench report (JSON)")
    parser.add_argument("output", help="where to write the compact report ('-' for stdout)")
    args = parser.parse_args()

    with open(args.input, "rb") as f:
        raw = f.read()
    report = json.loads(raw)
    if not isinstance(report, dict) or "cases" not in report or "schema_version" not in report:
        print(f"compact_report: {args.input}: not a fusebench report", file=sys.stderr)
        return 2
    result = compact_report(report, os.path.basename(args.input), hashlib.sha256(raw).hexdigest())
    text = to_text(result)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        tmp = args.output + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
