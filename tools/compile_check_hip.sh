#!/usr/bin/env bash
# Compile-checks every HIP source (kernels/**/*.hip) for an AMD target with hipcc, with the
# project's numeric flags (docs/numeric-contract.md#one-result-on-every-platform). Needs Debian's
# hipcc (apt-get install hipcc); no AMD GPU.
#   tools/compile_check_hip.sh [gfx90a|gfx940|...]
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-gfx90a}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
while IFS= read -r source; do
  if hipcc --offload-arch="$arch" -std=c++17 -O2 -ffp-contract=off -fno-gpu-flush-denormals-to-zero \
       -fhip-fp32-correctly-rounded-divide-sqrt -DFUSEBENCH_HAS_GPU=1 -I. -c "$source" -o "$out/$(basename "$source").o"; then
    echo "hipcc $arch ok: $source"
  else
    echo "hipcc $arch FAILED: $source"
    status=1
  fi
done < <(find kernels -name '*.hip' | sort)
exit $status
