#!/usr/bin/env python3
"""Writes docs/gallery.md from samples/README.md's scenario table and the screenshots that
scripts/gallery.sh took (docs/gallery/NAME.png, NAME-findings.png)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
rows = []
for line in (ROOT / "samples/README.md").read_text().splitlines():
    m = re.match(r"^\| `([a-z-]+)` \| (.*?) \| (.*?) \| [^|]* \|$", line)
    if m:
        rows.append(m.groups())

out = ["# The gallery: the GCD talks' scenarios, recorded",
       "",
       "Each sample in `samples/` reproduces one picture or pitfall of the classic GCD talks. It was",
       "recorded with `qtrace record -- qtrace-samples NAME`; the pictures are the real reports in",
       "headless Chromium. Regenerate them with `scripts/gallery.sh` (after `make build`).",
       "The end-to-end tests (`Tests/QTraceRecordTests/GalleryTests.swift`) check each sample's",
       "defining property on its trace.",
       ""]
for name, what, look in rows:
    png = ROOT / "docs/gallery" / f"{name}.png"
    if not png.exists():
        continue
    out += [f"## `{name}`", "", what, "", f"**What to look for:** {look}", "", f"![{name}](gallery/{name}.png)", ""]
    findings = ROOT / "docs/gallery" / f"{name}-findings.png"
    if findings.exists():
        out += [f"Its findings:", "", f"![{name} findings](gallery/{name}-findings.png)", ""]
(ROOT / "docs/gallery.md").write_text("\n".join(out))
print(f"wrote docs/gallery.md ({len(rows)} scenarios)")
