#!/usr/bin/env bash
# One call on a lent GPU machine: unpack the Debian dependencies, build, run the GPU unit tests,
# then `fusebench verify` and `fusebench bench` for the given kernel globs, writing every report
# and log into $OUT (the device tool brings that folder back).
#
#   FUSEBENCH_GIT_SHA=<sha> tools/gpu_session.sh DEBS_DIR OUT_DIR "<kernel glob>[;<bench --where>]" ...
# Each argument after OUT_DIR is a kernel glob, optionally followed by ';' and the --where filter
# of the points to bench (all of the scenario's points of that glob are verified). TORCH_PEERS=1
# also times the same operations in PyTorch eager and torch.compile (tools/torch_peers.py).
set -uo pipefail
debs="$1"; out="$2"; shift 2
deps=/tmp/fusebench-deps
mkdir -p "$deps" "$out"
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
log() { echo "== $*" | tee -a "$out/session.log"; }

log "build ($(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null))"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBENCH_GPU=cuda -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DCMAKE_PREFIX_PATH="$deps/usr" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build --parallel "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -40; exit 1; }

log "GPU unit tests"
ctest --test-dir build -L kernels --output-on-failure > "$out/ctest-kernels.log" 2>&1
tail -5 "$out/ctest-kernels.log"

fb=build/cli/fusebench
for spec in "$@"; do
  glob="${spec%%;*}"; where=""; [ "$spec" != "$glob" ] && where="${spec#*;}"
  name=$(echo "$glob" | tr -c 'a-zA-Z0-9_\n' '_' | sed 's/_*$//')
  log "verify $glob"
  $fb verify --scenario m31-flash-tp4 --kernel "$glob" --backend gpu -q --json "$out/verify-$name.json" 2>&1 | tail -15
  log "bench $glob ${where:+--where $where}"
  $fb bench --scenario m31-flash-tp4 --kernel "$glob" ${where:+--where "$where"} --backend gpu --mode both -q \
    --json "$out/bench-$name.json" --markdown "$out/bench-$name.md" 2>&1 | tail -60
done
if [ "${TORCH_PEERS:-0}" = 1 ]; then
  log "peers: PyTorch eager and torch.compile"
  python3 tools/torch_peers.py "$out/torch-peers.json" 2>&1 | grep -v Warning | tail -20
fi
log "done"
