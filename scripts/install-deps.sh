#!/usr/bin/env bash
# Installs what qtrace's build (and, with --test, its tests) need: only what is missing.
#   scripts/install-deps.sh          build: gcc, make, zlib, python3, libbabeltrace2 (CTF reading),
#                                    LTTng-UST + lttng-tools + systemtap-sdt-dev (the LTTng backend)
#   scripts/install-deps.sh --test   also Chromium + chromedriver, babeltrace2 (Debian), linux-perf
#                                    (`qtrace record --sched`) and selenium (PyPI)
set -euo pipefail
packages=(gcc make zlib1g-dev python3 libbabeltrace2-dev liblttng-ust-dev lttng-tools systemtap-sdt-dev)
if [ "${1:-}" = "--test" ]; then packages+=(chromium chromium-driver fonts-liberation babeltrace2 util-linux linux-perf); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "qtrace: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = "--test" ]; then
  if ! python3 -c "import selenium, pytest, PIL" 2>/dev/null; then
    echo "qtrace: installing Python packages: selenium pytest pillow"
    python3 -m pip install -q selenium pytest pillow
  fi
fi
