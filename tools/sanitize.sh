#!/usr/bin/env bash
# ASan + UBSan build of the CPU backend (clang), then:
#   1. the unit tests (without the exhaustive 2^32 codec sweeps: the release build runs those),
#   2. the bad-input corpus (ctest -L bad_input) and the other CLI tests,
#   3. among them fusebench verify --scenario ci-quick --backend cpu (the test cli.verify_ci_quick),
#   4. the fuzz smoke runs (tests/fuzz: scenario loader, report reader), FUSEBENCH_FUZZ_SECONDS each.
# Fails on any failed test and on any sanitizer report, even one from a process whose exit code a
# test does not look at: every report is written under $BUILD_DIR/sanitizer-logs and the run fails
# when that folder is not empty at the end.
#
#   tools/sanitize.sh                              build into build-sanitize/, run all of the above
#   FUSEBENCH_FUZZ_SECONDS=0 tools/sanitize.sh     no fuzzing
#   BUILD_DIR=... JOBS=... tools/sanitize.sh
# The longer local fuzz run is in tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build-sanitize}"
jobs="${JOBS:-$(nproc)}"
fuzz_seconds="${FUSEBENCH_FUZZ_SECONDS:-60}"

packages=(clang libclang-rt-dev libomp-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "sanitize: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# fuzzer-no-link: coverage counters everywhere, so the fuzz targets see inside the libraries; the
# unit tests and the CLI run the same instrumented code (a little slower, one build for all).
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# -O1 with line tables only: a third faster to build than -O2 -g, and reports still name file:line.
# Assertions stay on (no NDEBUG).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBENCH_GPU=none \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$sanitizers -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" \
  -DFUSEBENCH_FUZZ=ON -DFUSEBENCH_FUZZ_SECONDS="$fuzz_seconds" \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake --build "$build" --parallel "$jobs"

logs="$(cd "$build" && pwd)/sanitizer-logs"
rm -rf "$logs"; mkdir -p "$logs"
# exitcode 86: a sanitizer's exit is never mistaken for a test's expected exit 1 or 2.
common="halt_on_error=1:exitcode=86:log_path=$logs/report:print_summary=1"
export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="$common:print_stacktrace=1"
export LSAN_OPTIONS="exitcode=86:log_path=$logs/report"

status=0
# The 2^32 sweeps of fp32 inputs (codec thresholds, exp, sigmoid, the CUDA-header oracle) take
# 15 minutes under the sanitizers and exercise no memory: the release build's ctest runs them.
# (By name: the oracle's "exhaustive" label does not reach its discovered tests.)
exhaustive='CodecsCudaOracle|EveryFp32Input|OverItsWholeRange|ForEveryZAtMost|EncoderIsCorrectlyRoundedOnAStride|OutsideTheSweptRange'
echo "== sanitize: unit tests, CLI tests and the bad-input corpus"
ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE 'exhaustive|fuzz' -E "$exhaustive" || status=1

# ci-quick ran inside the ctest above (cli.verify_ci_quick: verify --scenario ci-quick --backend cpu,
# every report written), under the same sanitizer options; running it again cost CI five minutes.
# Fail if that test ever leaves the list, so the gate cannot drop out unseen.
if ! ctest --test-dir "$build" -N -R '^cli\.verify_ci_quick$' -LE 'exhaustive|fuzz' | grep -q 'Total Tests: 1$'; then
  echo "sanitize: cli.verify_ci_quick is no longer among the sanitized tests"; status=1
fi

if [ "$fuzz_seconds" != 0 ]; then
  echo "== sanitize: fuzz smoke (${fuzz_seconds} s per target)"
  ctest --test-dir "$build" --output-on-failure -L fuzz || status=1
fi

if [ -n "$(ls -A "$logs")" ]; then
  echo "== sanitize: sanitizer reports:"
  for f in "$logs"/*; do echo "--- $f"; head -60 "$f"; done
  status=1
fi
[ "$status" = 0 ] && echo "== sanitize: clean" || echo "== sanitize: FAILED"
exit "$status"
