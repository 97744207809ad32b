#!/usr/bin/env bash
# expect_exit.sh CODE REGEX COMMAND...
# Runs COMMAND; passes when it exits with CODE and its combined output matches the extended REGEX
# (an empty REGEX matches anything). Prints the output either way, for the CTest log.
set -u
want="$1"; pattern="$2"; shift 2
output="$("$@" 2>&1)"; got=$?
printf '%s\n' "$output"
if [ "$got" != "$want" ]; then echo "expect_exit: exit code $got, wanted $want" >&2; exit 1; fi
if [ -n "$pattern" ] && ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  echo "expect_exit: output does not match /$pattern/" >&2; exit 1
fi
exit 0
