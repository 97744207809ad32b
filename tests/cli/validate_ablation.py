#!/usr/bin/env python3
"""validate_ablation.py SCHEMA REPORT_JSON [--untimed] [--svg SVG]: the ablation report matches its
schema, its summary matches its points, every selected fusion that applies has a check, every
timed configuration has its samples; --untimed: nothing was timed (a failed check); --svg: every
bar of the chart carries the JSON's share."""
import json
import sys
import xml.etree.ElementTree as ET

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    report = json.load(open(sys.argv[2]))
    jsonschema.validate(report, schema)
    untimed = "--untimed" in sys.argv
    points = report["points"]
    checks = sum((p["all_off_check"] is not None) + sum(f["check"] is not None for f in p["fusions"]) for p in points)
    failed = sum((p["all_off_check"] or {}).get("outcome") == "fail" for p in points)
    failed += sum(f["check"] is not None and f["check"]["outcome"] == "fail" for p in points for f in p["fusions"])
    assert report["summary"]["points"] == len(points), "summary.points disagrees"
    assert report["summary"]["checks"] == checks, "summary.checks disagrees"
    assert report["summary"]["checks_failed"] == failed, "summary.checks_failed disagrees"
    for p in points:
        for f in p["fusions"]:
            if f["applies"] and f["selected"]:
                assert f["check"] is not None, f"{p['id']} {f['fusion']}: applies but was not checked"
            else:
                assert f["check"] is None and f.get("timed") is False, f"{p['id']} {f['fusion']}: does not apply but has results"
        for c in p["configs"]:
            if untimed:
                assert c["samples_us"] == [], f"{p['id']} {c['name']}: timed after a failed check"
            else:
                assert len(c["samples_us"]) == c["time"]["samples"] >= 3, f"{p['id']} {c['name']}: too few samples"
    if "--svg" in sys.argv:
        svg = ET.parse(sys.argv[sys.argv.index("--svg") + 1]).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        bars = [r for r in svg.iter(ns + "rect") if r.get("class") == "bar"]
        want = {}
        for p in points:
            for f in p["fusions"]:
                if "share" in f:
                    want[(f["fusion"], p["id"])] = 100 * f["share"]
            if "share" in p["all_off"]:
                want[("all off", p["id"])] = 100 * p["all_off"]["share"]
        assert len(bars) == len(want), f"{len(bars)} bars for {len(want)} shares"
        # The chart writes 9 significant digits, so the tolerance is relative: a CPU run's noisy
        # shares reach 1000 % and more, where 1e-6 absolute is below the printed precision.
        for b in bars:
            share = want[(b.get("data-fusion"), b.get("data-point"))]
            assert abs(float(b.get("data-value")) - share) <= 1e-8 * max(1.0, abs(share)), (b.get("data-value"), share)
    print(f"ok: {len(points)} points, {checks} checks, {failed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
