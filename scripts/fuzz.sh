#!/usr/bin/env bash
# Runs the libFuzzer fuzzers of docs/fuzzing.md: scripts/fuzz.sh SECONDS TARGET...
# Each target (embedded, ctf, perf) runs SECONDS from Fuzz/corpus/TARGET plus what earlier runs
# kept (out/fuzz/TARGET/corpus). Crashers land in out/fuzz/TARGET/crashes; the script fails if
# any run found one (add it to Fuzz/regressions/TARGET once fixed). Prints executions per target.
# QTRACE_FUZZ_SEED: libFuzzer's -seed (0 or unset: a new random seed each run).
set -euo pipefail
seconds=$1; shift
fuzzer=${QTRACE_FUZZER:-.build-fuzz/release/qtrace-fuzz}
[ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer not built (make fuzz-build)" >&2; exit 2; }
status=0
for target in "$@"; do
  work=out/fuzz/$target
  mkdir -p "$work/corpus" "$work/crashes"
  log=$work/last-run.log
  # One job at a time (-fork=1) that survives crashes, so one run can find several; inputs
  # up to 128 KiB (the embedded seeds are 16-64 KiB); a run over 10 s or 2 GiB is a finding.
  if ! QTRACE_FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no "$fuzzer" -fork=1 -ignore_crashes=1 "$work/corpus" "Fuzz/corpus/$target" \
      -max_total_time="$seconds" -max_len=131072 -timeout=10 -rss_limit_mb=2048 -seed="${QTRACE_FUZZ_SEED:-0}" \
      -artifact_prefix="$work/crashes/" >"$log" 2>&1; then
    status=1
  fi
  # Fork mode reports progress as "#RUNS: cov: ..."; the last line has the total.
  runs=$(grep -o '^#[0-9]*:' "$log" | tr -d '#:' | tail -1)
  crashes=$(find "$work/crashes" -type f | wc -l)
  echo "fuzz $target: ${runs:-?} executions in ${seconds} s, $crashes crasher(s) in $work/crashes (log: $log)"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status
