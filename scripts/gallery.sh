#!/usr/bin/env bash
# Regenerates the screenshots of docs/gallery.md: records every sample with qtrace, writes its
# report, and photographs it in headless Chromium (the timeline; the findings tab too for the
# pitfall samples). Usage: scripts/gallery.sh  (after `make build`)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(swift build --show-bin-path)
OUT=out/gallery
mkdir -p "$OUT" docs/gallery
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Chromium writes into HOME and the XDG folders: keep it in the scratch folder.
export HOME=$scratch XDG_CONFIG_HOME=$scratch XDG_CACHE_HOME=$scratch
shoot() {  # report, tab, png
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$scratch/profile" \
    --window-size=1400,820 --virtual-time-budget=5000 --screenshot="$3" "file://$PWD/$1#$2" >/dev/null 2>&1
}
pitfalls=" thread-explosion deadlock priority-inversion global-barrier source-never-resumed group-imbalance "
for sample in $("$BIN/qtrace-samples" --list | awk '{print $1}'); do
  echo "gallery: $sample"
  "$BIN/qtrace" record -q -o "$OUT/$sample.qtrace" -- "$BIN/qtrace-samples" "$sample" >/dev/null
  shoot "$OUT/$sample.html" timeline "docs/gallery/$sample.png"
  if [[ "$pitfalls" == *" $sample "* ]]; then
    shoot "$OUT/$sample.html" findings "docs/gallery/$sample-findings.png"
  fi
done
echo "gallery: screenshots in docs/gallery/"
python3 scripts/gallery-doc.py
