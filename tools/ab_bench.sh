#!/usr/bin/env bash
# A same-call A/B on a lent GPU machine: a base commit and the working tree built side by side (the
# fusebench target only), then the same `fusebench bench` with the base's binary first and the new
# one second, and `fusebench compare` of the two reports. Timings of two builds only compare within
# one call on one machine (reports/runs/README.md), so an A/B of a change that cannot be switched
# off at run time is made this way (run 65).
#
#   here:        git archive -o .base/base.tar BASE_SHA -- . ':!reports/runs'   (.base ignored)
#   on the GPU:  BASE_SHA=<sha> NEW_SHA=<sha> tools/ab_bench.sh DEBS_DIR OUT_DIR BENCH_ARGS...
#                (carry .deps and .base; BASE_TAR overrides .base/base.tar)
# e.g. BENCH_ARGS: --kernel 'moe_gemm/stage*' --where 'T=4096|32768,routing=uniform' --mode graph
# --variants exact,fast. Writes OUT_DIR/bench-base.{json,md}, bench-new.{json,md} and compare.txt;
# exits non-zero when a build or a bench failed.
set -uo pipefail
debs="$1"; out="$2"; shift 2
: "${BASE_SHA:?give the base commit (stamped into its build)}" "${NEW_SHA:?give the new commit}"
tarball="${BASE_TAR:-.base/base.tar}"
[ -f "$tarball" ] || { echo "ab_bench: no base tree at $tarball (make it with git archive, see the header)"; exit 2; }
deps=/tmp/fusebench-deps
mkdir -p "$out" "$deps" /tmp/ab-base
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
tar -xf "$tarball" -C /tmp/ab-base
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
build() {  # SOURCE BUILD_DIR SHA
  FUSEBENCH_GIT_SHA="$3" cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBENCH_GPU=cuda \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH="$deps/usr" > "$2.configure.log" 2>&1 &&
    FUSEBENCH_GIT_SHA="$3" cmake --build "$2" --target fusebench -j "$(( $(nproc) / 2 ))" > "$2.build.log" 2>&1 ||
    { echo "ab_bench: build of $3 failed:"; grep -E "error|Error" "$2".*.log | head -20; return 1; }
}
build /tmp/ab-base /tmp/ab-base-build "$BASE_SHA" & b=$!
build . /tmp/ab-new-build "$NEW_SHA" & n=$!
wait $b || exit 1
wait $n || exit 1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
status=0
for side in base new; do
  echo "== bench $side"
  timeout "${STEP_TIMEOUT:-300}" /tmp/ab-$side-build/cli/fusebench bench --scenario "${SCENARIO:-m31-flash-tp4}" \
    --backend gpu -q --json "$out/bench-$side.json" --markdown "$out/bench-$side.md" "$@" 2>&1 | tail -30
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
/tmp/ab-new-build/cli/fusebench compare "$out/bench-base.json" "$out/bench-new.json" > "$out/compare.txt" 2>&1
tail -24 "$out/compare.txt"
exit $status
