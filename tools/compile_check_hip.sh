#!/usr/bin/env bash
# Compile-checks every HIP source (kernels/**/*.hip) for an AMD target with hipcc, with the
# project's numeric flags (docs/numeric-contract.md#one-result-on-every-platform). Needs Debian's
# hipcc (apt-get install hipcc); no AMD GPU.
#   tools/compile_check_hip.sh [gfx90a|gfx940|...]
#   JOBS=N tools/compile_check_hip.sh      sources compiled N at a time (default: nproc)
# Sources compile in parallel (the check is most of a minute per router or SwiGLU source, serial
# it was a fifth of CI); each source's compiler output is printed whole, after its verdict line.
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-gfx90a}"
jobs="${JOBS:-$(nproc)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

check_one() {
  local source="$1" name verdict=ok status=0
  name="$(echo "$source" | tr / _)"
  hipcc --offload-arch="$arch" -std=c++17 -O2 -ffp-contract=off -fno-gpu-flush-denormals-to-zero \
    -fhip-fp32-correctly-rounded-divide-sqrt -DFUSEBENCH_HAS_GPU=1 -I. -c "$source" \
    -o "$out/$name.o" >"$out/$name.log" 2>&1 || { verdict=FAILED; status=1; touch "$out/$name.failed"; }
  # verdict and compiler output in one write, so a parallel job's lines do not land inside them
  local log nl=$'\n'; log="$(cat "$out/$name.log")"
  printf '%s\n' "hipcc $arch $verdict: $source${log:+$nl$log}"
  return $status
}
export -f check_one
export arch out

# xargs exits 123 when any source failed; every source is still tried.
if find kernels -name '*.hip' | sort | xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {}; then
  echo "hipcc $arch: every HIP source compiles"
else
  echo "hipcc $arch: $(ls "$out"/*.failed 2>/dev/null | wc -l) HIP source(s) failed to compile (above)"
  exit 1
fi
