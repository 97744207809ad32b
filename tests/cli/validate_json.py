#!/usr/bin/env python3
"""validate_json.py SCHEMA JSON...: each JSON file matches the schema (compare and merge outputs)."""
import json
import sys

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    for path in sys.argv[2:]:
        jsonschema.Draft202012Validator(schema).validate(json.load(open(path)))
        print(f"ok: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
