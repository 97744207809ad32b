#!/usr/bin/env python3
"""The SASS instruction mix of the kernels in an object file (a GPU machine with cuobjdump).

    tools/sass_mix.py OBJECT NAME_REGEX [--dump DIR]

For each kernel whose mangled name matches NAME_REGEX: its static instruction count and the
opcodes (without modifiers) by count, so a change to a kernel's arithmetic can be read as
instructions added or removed. --dump writes each matching kernel's full SASS to DIR.
"""
import argparse
import collections
import pathlib
import re
import subprocess


def kernels(sass: str):
    name, lines = None, []
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            if name:
                yield name, lines
            name, lines = m.group(1), []
        elif name:
            lines.append(line)
    if name:
        yield name, lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("object")
    ap.add_argument("name_regex")
    ap.add_argument("--dump")
    a = ap.parse_args()
    sass = subprocess.run(["cuobjdump", "-sass", a.object], check=True, capture_output=True, text=True).stdout
    for name, lines in kernels(sass):
        if not re.search(a.name_regex, name):
            continue
        ops = collections.Counter()
        for line in lines:
            m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
            if m and m.group(2) != "NOP":
                ops[m.group(2)] += 1
        print(f"{name}: {sum(ops.values())} instructions")
        print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common()))
        if a.dump:
            out = pathlib.Path(a.dump)
            out.mkdir(parents=True, exist_ok=True)
            (out / (re.sub(r"\W", "_", name)[-120:] + ".sass")).write_text("\n".join(lines))


if __name__ == "__main__":
    main()
