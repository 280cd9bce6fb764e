#!/usr/bin/env bash
# Runs a command on a loaded machine: QTRACE_HOGS (default 2) busy loops beside it, each
# started here and killed by its PID when the command ends (or this script is interrupted).
# Findings must not depend on how busy the machine is (docs/findings.md, "What no rule fires
# on"); this is how to check that.
#
#   scripts/loaded-suite.sh                 # make test, with two hogs
#   scripts/loaded-suite.sh --gallery       # the findings corpus: gallery and fixtures (after make build)
#   scripts/loaded-suite.sh CMD ARGS...     # any command
#
# Exits with the command's status.
set -u
cd "$(dirname "$0")/.."

hogs=${QTRACE_HOGS:-2}
pids=()
stop_hogs() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
    pids=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT TERM

if [ "${1:-}" = "--gallery" ]; then
    shift
    bin=$(swift build --show-bin-path)
    set -- env QTRACE_SHIM="$bin/libqtrace-shim.so" swift test --skip-build \
        --filter "FindingsCorpusTests" "$@"
elif [ $# -eq 0 ]; then
    set -- make test
fi

for _ in $(seq "$hogs"); do
    ( while :; do :; done ) &
    pids+=("$!")
done
echo "loaded-suite: $hogs hogs (pids ${pids[*]}) beside: $*" >&2
"$@"
status=$?
stop_hogs
exit "$status"
