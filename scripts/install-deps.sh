#!/usr/bin/env bash
# Installs what qtrace's build (and, with --test, its tests) need: only what is missing.
#   scripts/install-deps.sh          build: gcc, make, zlib, python3, libbabeltrace2 (CTF reading),
#                                    LTTng-UST + lttng-tools + systemtap-sdt-dev (the LTTng backend)
#   scripts/install-deps.sh --test   also Chromium + chromedriver, babeltrace2 (Debian), linux-perf
#                                    (`qtrace record --sched`), selenium, DuckDB (PyPI: the fleet
#                                    tables' documented queries) and perfetto (its official
#                                    protos decode the Perfetto export in the tests)
set -euo pipefail
packages=(gcc make zlib1g-dev python3 libbabeltrace2-dev liblttng-ust-dev lttng-tools systemtap-sdt-dev)
if [ "${1:-}" = "--test" ]; then packages+=(chromium chromium-driver fonts-liberation babeltrace2 util-linux linux-perf); fi
# The packages of "$@" not installed, one per line. One dpkg-query for all of them: `make build`
# runs this every time, and the usual answer is "none" (then nothing else runs: no apt, no sudo).
missing_packages() {
  local installed
  installed=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null | awk '/ install ok installed$/ {print $1}' || true)
  for p in "$@"; do grep -qxF "$p" <<<"$installed" || echo "$p"; done
}
mapfile -t missing < <(missing_packages "${packages[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  echo "qtrace: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = "--test" ]; then
  if ! python3 -c "import selenium, pytest, PIL, duckdb" 2>/dev/null; then
    echo "qtrace: installing Python packages: selenium pytest pillow duckdb"
    python3 -m pip install -q selenium pytest pillow duckdb
  fi
  if ! python3 -c "from perfetto.protos.perfetto.trace import perfetto_trace_pb2" 2>/dev/null; then
    echo "qtrace: installing Python packages: perfetto"
    python3 -m pip install -q perfetto
  fi
fi
