#!/usr/bin/env python3
"""validate_report.py SCHEMA REPORT_JSON [JUNIT_XML]: the report matches the schema, its summary
matches its cases, and the JUnit file is well-formed XML with consistent counts."""
import json
import sys
import xml.etree.ElementTree as ET

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    report = json.load(open(sys.argv[2]))
    jsonschema.validate(report, schema)
    outcomes = [c["outcome"] for c in report["cases"]]
    summary = report["summary"]
    assert summary["cases"] == len(outcomes), "summary.cases != number of cases"
    for name in ("pass", "fail", "error", "skipped", "mistrusted"):
        assert summary[name] == outcomes.count(name), f"summary.{name} disagrees with the cases"
    if len(sys.argv) > 3:
        root = ET.parse(sys.argv[3]).getroot()
        assert root.tag == "testsuites"
        assert int(root.get("tests")) == len(outcomes), "JUnit test count differs from the report"
        failures = sum(1 for o in outcomes if o in ("fail", "mistrusted"))
        assert int(root.get("failures")) == failures, "JUnit failure count differs from the report"
    print(f"ok: {len(outcomes)} cases, schema {report['schema_version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
