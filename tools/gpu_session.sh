#!/usr/bin/env bash
# One call on a lent GPU machine: unpack the Debian dependencies, build, run the GPU unit tests,
# then the given `fusebench verify` / `bench` steps; reports and logs come back in one archive.
#
#   FUSEBENCH_GIT_SHA=<sha> tools/gpu_session.sh DEBS_DIR OUT_DIR STEP...
# Give the commit as a literal (`git rev-parse --short HEAD` run here, pasted into the device
# command): a lent machine's copy of the tree may carry older git metadata (run 41's reports read
# an earlier commit that way).
# Each STEP is verify:GLOB[:WHERE] or bench:GLOB[:WHERE[:OPTIONS]] on the scenario $SCENARIO (default
# m31-flash-tp4), or verify@SCENARIO:GLOB[:WHERE] for another scenario, or ablate:NAME[:OPTIONS]
# (`fusebench ablate` with OPTIONS split on spaces, e.g. "ablate:run1:--rounds 30"; its JSON,
# markdown and SVG are kept as <n>-ablate-NAME.*); reports
# (<n>-<step>.json/.md) and logs are packed into OUT_DIR/results.tgz. Bench takes
# --mode $BENCH_MODE (default graph,cold) and any extra options in $BENCH_OPTS, then the step's own
# OPTIONS (split on spaces, e.g. "bench:moe_gemm/stage*:T=192:--variants exact").
# Every ctest test has a timeout (CTEST_TIMEOUT, default 120 s) and every step one too (STEP_TIMEOUT,
# default 300 s; PEERS_TIMEOUT for the peers), so a hung kernel costs minutes, not the whole call.
# SKIP_TESTS=1 skips the GPU unit tests (CTEST_FILTER narrows them, default "-L kernels"); TORCH_PEERS=1 also times the same operations in PyTorch
# eager and torch.compile (tools/torch_peers.py); TORCH_PEERS=router only the router section.
# EXTRA_CMAKE_ARGS go to the configure step (e.g. -DCMAKE_CUDA_FLAGS=-lineinfo for a profile).
# BUILD_TARGETS (e.g. "fusebench router_test") builds only those, to save a short call's minutes;
# CTEST_FILTER must then name tests of those executables only.
# The lent machine gets a copy of the tracked files (at most 64 MiB); reports/runs stays small
# (compact reports, tools/compact_report.py; under 5 MB), so the tree fits as it is. Run from an
# export of the commit (git archive HEAD) so that the reports say git_dirty false.
set -uo pipefail
debs="$1"; final="$2"; shift 2
status=0  # non-zero when any test or step failed
# The device tool brings back at most 8 files: everything goes into one archive at exit.
out=$(mktemp -d)
trap 'tar -czf "$final/results.tgz" -C "$out" . && cp "$out/session.log" "$final/" 2>/dev/null' EXIT
deps=/tmp/fusebench-deps
mkdir -p "$deps" "$final"
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
log() { echo "== $*" | tee -a "$out/session.log"; }

log "build ($(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null))"
build="${BUILD_DIR:-/tmp/fusebench-build}"  # outside the tree, so a warm machine keeps it between calls
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBENCH_GPU=cuda -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DCMAKE_PREFIX_PATH="$deps/usr" ${EXTRA_CMAKE_ARGS:-} > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# shellcheck disable=SC2086  # BUILD_TARGETS are words on purpose
cmake --build "$build" --parallel "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -40; exit 1; }

if [ "${SKIP_TESTS:-0}" != 1 ]; then
log "GPU unit tests"
ctest --test-dir "$build" ${CTEST_FILTER:--L kernels} --timeout "${CTEST_TIMEOUT:-120}" --output-on-failure > "$out/ctest-kernels.log" 2>&1 || status=1
tail -5 "$out/ctest-kernels.log"
fi

fb="$build/cli/fusebench"
n=0
for step in "$@"; do
  n=$((n + 1))
  IFS=: read -r command glob where step_opts <<< "$step"
  scenario="${SCENARIO:-m31-flash-tp4}"
  case "$command" in *@*) scenario="${command#*@}"; command="${command%%@*}";; esac
  name="$n-${command%%@*}-$(echo "$glob" | tr -c 'a-zA-Z0-9_\n' '_' | sed 's/_*$//')"
  log "$command $glob ${where:+--where $where}"
  if [ "$command" = ablate ]; then
    # shellcheck disable=SC2086  # OPTIONS are words on purpose
    timeout "${STEP_TIMEOUT:-300}" $fb ablate --scenario "$scenario" --backend gpu $where \
      --json "$out/$name.json" --markdown "$out/$name.md" --svg "$out/$name.svg" 2>&1 | tail -60
  elif [ "$command" = verify ]; then
    timeout "${STEP_TIMEOUT:-300}" $fb verify --scenario "$scenario" --kernel "$glob" ${where:+--where "$where"} --backend gpu -q \
      --json "$out/$name.json" 2>&1 | tail -15
  else
    timeout "${STEP_TIMEOUT:-300}" $fb bench --scenario "$scenario" --kernel "$glob" ${where:+--where "$where"} --backend gpu \
      --mode "${BENCH_MODE:-graph,cold}" ${BENCH_OPTS:-} ${step_opts:-} -q --json "$out/$name.json" --markdown "$out/$name.md" 2>&1 | tail -60
  fi
  code=${PIPESTATUS[0]}
  if [ "$code" != 0 ]; then log "step $n exited $code"; status=1; fi
done
if [ "${TORCH_PEERS:-0}" = 1 ]; then
  log "peers: PyTorch eager and torch.compile"
  timeout "${PEERS_TIMEOUT:-300}" python3 tools/torch_peers.py "$out/torch-peers.json" 2>&1 | grep -v Warning | tail -40
elif [ "${TORCH_PEERS:-0}" = router ]; then
  log "peers: PyTorch router + gate, eager and torch.compile"
  timeout "${PEERS_TIMEOUT:-300}" python3 tools/torch_peers.py "$out/torch-peers.json" --router 2>&1 | grep -v Warning | tail -40
fi
log "done"
exit $status
