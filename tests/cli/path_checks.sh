#!/usr/bin/env bash
# path_checks.sh FUSEBENCH SOURCE_DIR WORK_DIR CHECK
# Bad-input checks that need a file system set-up (special files, symlinks, pipes, spaces in
# paths, a closed stdout). Each CHECK is one CTest (tests/cli/bad_inputs.cmake); it prints what it
# ran and exits non-zero with the reason when fusebench's answer is wrong.
set -u
fb="$1"; src="$2"; work="$3/$4"; check="$4"
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
one=(--scenario ci-quick --backend cpu --kernel fp8_quant/per_token --where M=1,K=128,fp8=e4m3fn,scale_format=f32,dist=normal)
fail() { echo "path_checks $check: $*" >&2; exit 1; }
run() {  # run WANT_CODE COMMAND...: runs it, prints its output, checks its exit code
  local want="$1"; shift
  out="$("$@" 2>&1)"; code=$?
  printf '%s\n' "$out"
  [ "$code" = "$want" ] || fail "exit $code, wanted $want"
}
has() { printf '%s\n' "$out" | grep -Eq -- "$1" || fail "output lacks /$1/"; }

case "$check" in
dev_null)  # as root, a rename over /dev/null would turn the device into a regular file
  run 0 "$fb" verify "${one[@]}" --json /dev/null --junit /dev/null --markdown /dev/null
  [ -c /dev/null ] || fail "/dev/null is no longer a character device"
  ;;
fifo)  # written through; the FIFO stays a FIFO
  mkfifo report.fifo
  cat report.fifo > received.json &
  reader=$!
  run 0 "$fb" verify "${one[@]}" --json report.fifo
  wait "$reader"
  [ -p report.fifo ] || fail "the FIFO was replaced"
  grep -q '"schema_version"' received.json || fail "the report did not come through the FIFO"
  ;;
fifo_without_reader_keeps_fail_code)  # the run fails (1) and the late report write fails too: exit 1, both said
  mkfifo nobody.fifo
  run 1 "$fb" verify "${one[@]}" --fault-injection flip-fused --json nobody.fifo
  has "a FIFO that no process is reading"
  has "exit 1 for the run's own outcome"
  has "fusebench verify: 1 cases: 0 pass, 1 fail"
  ;;
symlink_followed)
  echo old > target.json
  ln -s target.json link.json
  run 0 "$fb" verify "${one[@]}" --json link.json
  [ -L link.json ] || fail "the symlink was replaced"
  grep -q '"schema_version"' target.json || fail "the link's target was not written"
  ;;
dangling_symlink)
  ln -s missing/dir/x.json dangling.json
  run 2 "$fb" verify "${one[@]}" --json dangling.json
  has "a symbolic link to a missing"
  ;;
directory_up_front)  # refused before the run, not after it
  mkdir out.json
  run 2 "$fb" verify --scenario ci-quick --backend cpu --json out.json
  has "--json out.json: cannot write report \(it is a directory\)"
  printf '%s\n' "$out" | grep -q "cases:" && fail "the run went ahead before refusing the path"
  ;;
same_path_twice)
  run 2 "$fb" verify "${one[@]}" --json r.out --junit r.out
  has "--json r.out and --junit r.out name the same file"
  ;;
report_over_scenario)
  cp "$src/scenarios/ci-quick.json" mine.json
  run 2 "$fb" verify --scenario ./mine.json --backend cpu --kernel fp8_quant/per_token --json mine.json
  has "is the scenario file"
  cmp -s mine.json "$src/scenarios/ci-quick.json" || fail "the scenario was changed"
  ;;
compare_over_input)
  cp "$src/tests/reports/golden/base.json" base.json
  run 2 "$fb" compare base.json "$src/tests/reports/golden/base.json" --json base.json
  has "is BASE"
  cmp -s base.json "$src/tests/reports/golden/base.json" || fail "BASE was changed"
  ;;
stdout_dash)
  run 0 "$fb" verify "${one[@]}" --quiet --json -
  has '"schema_version"'
  ;;
sigpipe)  # `verify | head`: the run outlives its reader and still writes its report
  "$fb" verify --scenario ci-quick --backend cpu --kernel fp8_quant/per_token --json piped.json | head -1
  code=${PIPESTATUS[0]}
  [ "$code" = 0 ] || fail "exit $code after the reader left (SIGPIPE?)"
  grep -q '"schema_version"' piped.json || fail "no report after the reader left"
  ;;
non_utf8_argument)
  run 2 "$fb" verify "${one[@]}" --json "$(printf 'r\377.json')"
  has "is not UTF-8"
  ;;
repro_quoted_absolute)  # a relative scenario path with a space: quoted, made absolute
  mkdir "my dir"; cp "$src/scenarios/ci-quick.json" "my dir/ci quick.json"
  run 1 "$fb" verify --scenario "my dir/ci quick.json" --backend cpu --kernel fp8_quant/per_1x128 \
    --where "M=5|19,K=384,fp8=e4m3fn,scale_layout=row_major" --fault-injection flip-fused --quiet
  has "repro: fusebench verify --scenario '$work/my dir/ci quick.json' --kernel fp8_quant/per_1x128 --where M=5,"
  line=$(printf '%s\n' "$out" | sed -n 's/^ *repro: fusebench //p' | head -1)
  cd /  # the repro line works from anywhere and pins the same failing point
  eval "run 1 \"\$fb\" $line --quiet"
  has "1 cases: 0 pass, 1 fail"
  ;;
junit_control_characters)  # well-formed XML whatever the scenario's name holds
  run 0 "$fb" verify --scenario "$src/tests/cli/bad_inputs/control_chars_name.json" --backend cpu --junit r.xml
  python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(d.documentElement.getAttribute('name'))" r.xml \
    || fail "the JUnit report is not well-formed XML"
  ;;
list_scenarios_json)
  mkdir scen; cp "$src/scenarios/ci-quick.json" scen/; cp "$src/tests/cli/bad_inputs/duplicate_axis.json" scen/
  out="$(FUSEBENCH_SCENARIOS="$work/scen" "$fb" list scenarios --json)" || fail "list failed"
  printf '%s\n' "$out"
  python3 - "$out" <<'EOF' || fail "list scenarios --json lacks name, points or validity"
import json, sys
s = {e["path"].rsplit("/", 1)[1]: e for e in json.loads(sys.argv[1])["scenarios"]}
ok = s["ci-quick.json"]
assert ok["valid"] and ok["name"] == "ci-quick" and ok["points"] > 0, ok
bad = s["duplicate_axis.json"]
assert not bad["valid"] and "duplicate key" in bad["error"], bad
EOF
  ;;
*) fail "unknown check" ;;
esac
echo "path_checks $check: ok"
