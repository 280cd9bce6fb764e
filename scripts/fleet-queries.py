#!/usr/bin/env python3
"""Runs the SQL blocks of docs/fleet.md (each starts with `-- query: NAME`) with DuckDB on a
tables directory, and prints {NAME: [row, ...]} as JSON: the fleet test checks the documented
queries as written.
    scripts/fleet-queries.py DIR [docs/fleet.md]"""
import json
import pathlib
import re
import sys

import duckdb


def queries(markdown):
    for block in re.findall(r"```sql\n(.*?)```", markdown, re.S):
        name = re.match(r"-- query: (\S+)", block)
        if name:
            yield name.group(1), block


def main():
    directory = pathlib.Path(sys.argv[1]).resolve()
    doc = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else pathlib.Path(__file__).parents[1] / "docs/fleet.md")
    results = {}
    for name, sql in queries(doc.read_text()):
        sql = sql.replace("'fleet/", f"'{directory}/")
        results[name] = [list(row) for row in duckdb.sql(sql).fetchall()]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
