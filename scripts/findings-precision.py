#!/usr/bin/env python3
"""Prints each rule's precision on the findings corpus (docs/findings.md, "Precision"): true
firings / all firings, from the outcomes the last test run wrote.

    make test                                       # writes out/browser-fixtures/findings-corpus/
    python3 scripts/findings-precision.py [DIR]     # DIR: that folder (the default)

A firing is true when the corpus file (Tests/Fixtures/findings-corpus.txt) lists the rule for
that program with a count (up to its upper bound); a firing of an unlisted rule, one beyond the
count, or of a rule marked `may` is false. Programs without an outcome are named at the end."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "BrowserTests"))
import findings_corpus  # noqa: E402


def main():
    folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "out" / "browser-fixtures" / "findings-corpus")
    if not folder.is_dir():
        sys.exit(f"findings-precision: no outcomes in {folder}: run make test (or the corpus tests with QTRACE_BROWSER_FIXTURES)")
    corpus = findings_corpus.load()
    rules, missing = {}, []
    for program, entry in corpus.items():
        outcome = folder / (program.replace("/", "_") + ".json")
        if not outcome.exists():
            missing.append(program)
            continue
        for rule, count in json.loads(outcome.read_text())["fired"].items():
            low, high, text = entry["expected"].get(rule, (0, 0, "0"))
            true = 0 if text == "may" else min(count, high)
            row = rules.setdefault(rule, {"true": 0, "all": 0, "programs": set()})
            row["true"] += true
            row["all"] += count
            row["programs"].add(program)
    print(f"{'rule':32} {'true':>5} {'all':>5} {'precision':>9}  programs")
    for rule, row in sorted(rules.items()):
        print(f"{rule:32} {row['true']:5} {row['all']:5} {row['true'] / row['all']:9.0%}  {', '.join(sorted(row['programs']))}")
    listed = sorted({r for e in corpus.values() for r, (low, _, _) in e["expected"].items() if low > 0} - set(rules))
    if listed:
        print("expected but not fired:", ", ".join(listed))
    print(f"{len(corpus) - len(missing)} of {len(corpus)} programs" + (f"; no outcome for: {', '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
