#!/usr/bin/env bash
# Runs the browser tests against the reports the Swift tests wrote into
# $QTRACE_BROWSER_FIXTURES (see README.md in this folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m pytest -q -p no:cacheprovider Tests/BrowserTests
