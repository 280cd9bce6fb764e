"""The findings precision corpus (Tests/Fixtures/findings-corpus.txt, docs/findings.md
"Precision"), read for the real programs the browser tests record: their finding groups are
compared with the file (the gallery and the fixtures are compared by FindingsCorpusTests), and
what fired is written for scripts/findings-precision.py."""
import json
import os
import pathlib
import re

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "Fixtures" / "findings-corpus.txt"


def load(path=CORPUS):
    """{program: {"record": [options], "expected": {rule: (low, high, text)}}}; `may` is (0, inf)."""
    programs, current = {}, None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        header = re.fullmatch(r"\[([^\]]+)\]\s*(.*)", line)
        if header:
            current = header.group(1).split()[0]
            programs[current] = {"record": header.group(2).split(), "expected": {}}
            continue
        words = line.split()
        bounds = re.fullmatch(r"(\d+)(?:-(\d+))?", words[1]) if len(words) == 2 else None
        if current is None or not (bounds or words[1:] == ["may"]):
            raise ValueError(f"{path.name}:{number}: cannot read {line!r}")
        low, high = (0, float("inf")) if not bounds else (int(bounds.group(1)), int(bounds.group(2) or bounds.group(1)))
        programs[current]["expected"][words[0]] = (low, high, words[1])
    return programs


def fired(summary):
    """Finding groups per rule of a `qtrace stats --json` summary (one process or a recording)."""
    groups = summary["overview"]["findingGroups"] if "overview" in summary else summary["findingGroups"]
    counts = {}
    for group in groups:
        counts[group["id"]] = counts.get(group["id"], 0) + 1
    return counts


def mismatches(program, counts):
    """Lines where `counts` and the corpus disagree (noise, or a lost true finding)."""
    expected = load()[program]["expected"]
    out = []
    for rule, count in sorted(counts.items()):
        low, high, text = expected.get(rule, (0, 0, "0: must not fire"))
        if not low <= count <= high:
            out.append(f"{program}: {rule} fired {count}x (expected {text})")
    for rule, (low, _, text) in sorted(expected.items()):
        if rule not in counts and low > 0:
            out.append(f"{program}: {rule} did not fire (expected {text}): a true finding was lost")
    return out


def check(program, summary, messages=()):
    """Asserts the program's findings match the corpus; writes what fired (QTRACE_BROWSER_FIXTURES)."""
    counts = fired(summary)
    directory = os.environ.get("QTRACE_BROWSER_FIXTURES")
    if directory:
        folder = pathlib.Path(directory) / "findings-corpus"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (program.replace("/", "_") + ".json")).write_text(json.dumps({"program": program, "fired": counts},
                                                                               sort_keys=True))
    problems = mismatches(program, counts)
    assert not problems, "\n".join(problems + list(messages)[:20])
