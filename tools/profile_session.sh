#!/usr/bin/env bash
# One call on a lent GPU machine: build (as tools/gpu_session.sh does), then Nsight Compute on the
# named kernels of `fusebench verify` points: where the time of a kernel goes, before changing it.
#
#   tools/profile_session.sh DEBS_DIR OUT_DIR "KERNEL_REGEX|CASE|WHERE" ...
# e.g. "router_gemv_kernel|router/gate|M=1,split_k=4". Each profile is one text file in OUT_DIR
# (the first 2 matching launches after 1 skipped; sections: speed of light, launch, occupancy,
# warp states, memory). ncu runs with --clock-control none (leave the clocks as they are).
# SOURCE_CSV=1 also exports each point's per-SASS-instruction stall samples (<n>-...-sass.csv) and
# their summary (tools/ncu_source_summary.py: top instructions, opcodes, groups by execution count;
# -sass-summary.txt). KERNEL_NAME_BASE=demangled matches the regex against the name with its
# template arguments, to pick one instance of a kernel template (ncu writes a bool argument as 0 or 1:
# "moe_wgmma_kernel<1, 1, 1>"). A spec is split on '|', so its regex cannot use one.
set -uo pipefail
debs="$1"; out="$2"; shift 2
mkdir -p "$out"
[ -x "${BUILD_DIR:-/tmp/fusebench-build}/cli/fusebench" ] && [ "${REBUILD:-1}" = 0 ] ||
  SKIP_TESTS=1 tools/gpu_session.sh "$debs" "$out/build" > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
export LD_LIBRARY_PATH="/tmp/fusebench-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fb="${BUILD_DIR:-/tmp/fusebench-build}/cli/fusebench"
n=0
for spec in "$@"; do
  n=$((n + 1))
  IFS='|' read -r regex kase where <<< "$spec"
  file="$out/$n-$(echo "$kase-$where" | tr -c 'a-zA-Z0-9_\n' '_').txt"
  echo "== $spec" | tee "$file"
  pick=(--kernel-name-base "${KERNEL_NAME_BASE:-function}" -k "regex:$regex" --launch-skip "${LAUNCH_SKIP:-1}")
  timeout "${STEP_TIMEOUT:-240}" ncu --clock-control none "${pick[@]}" \
    --launch-count "${LAUNCH_COUNT:-2}" --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section SourceCounters \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    "$fb" verify --scenario "${SCENARIO:-m31-flash-tp4}" --kernel "$kase" --where "$where" --backend gpu -q \
    >> "$file" 2>&1
  echo "exit $?" >> "$file"
  if [ "${SOURCE_CSV:-0}" = 1 ]; then
    # Per-instruction stall samples (build with EXTRA_CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo to see
    # source lines too): the page as csv, and its summary by tools/ncu_source_summary.py.
    rep="/tmp/profile-$n"
    rm -f "$rep.ncu-rep"  # never summarise an earlier call's report
    timeout "${STEP_TIMEOUT:-240}" ncu --clock-control none "${pick[@]}" \
      --launch-count 1 --section SourceCounters --section WarpStateStats -f -o "$rep" \
      "$fb" verify --scenario "${SCENARIO:-m31-flash-tp4}" --kernel "$kase" --where "$where" --backend gpu -q \
      > /dev/null 2>&1
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "${file%.txt}-sass.csv" 2>&1
    python3 tools/ncu_source_summary.py "${file%.txt}-sass.csv" --by-count 12 > "${file%.txt}-sass-summary.txt" 2>&1
    head -20 "${file%.txt}-sass-summary.txt"
  fi
  grep -E "^  [a-z_].*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Stall|Issued Warp|No Eligible|One or More" "$file" | head -40
done
