#!/usr/bin/env bash
# run_fuzz.sh FUZZER SECONDS DICT OUT_CORPUS SEED_DIR...
# A bounded libFuzzer run: new inputs go to OUT_CORPUS, the seed folders are read only. Exits
# non-zero on a crash, a sanitizer report, a leak, a timeout (30 s per input) or memory past 4 GiB;
# the failing input is written to OUT_CORPUS/../ (crash-*, timeout-*, oom-*) and its name printed.
set -euo pipefail
fuzzer="$1"; seconds="$2"; dict="$3"; out="$4"; shift 4
mkdir -p "$out"
seeds=()
for d in "$@"; do [ -d "$d" ] && seeds+=("$d"); done
cd "$(dirname "$out")"
exec "$fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -dict="$dict" -max_len=65536 \
  -print_final_stats=1 "$out" "${seeds[@]}"
