"""A Hummingbird 2 server written as people write them (Tests/Fixtures/real-nio-server, hb-server),
recorded under a bounded loopback load (docs/swift-concurrency.md):

- every route's code is named by the program's own closure or function with its file:line,
  never by a thunk or a library frame where the program's is known; the TaskGroup children
  by their closure;
- the actor appears with one visit per /count request;
- the blocking route raises swift.blocking-in-async at both of its lines;
- a run of the clean routes only raises none of the Swift Concurrency rules;
- the report opens and shows actor and task lanes.

The server builds into .build-real/ with the SwiftNIO server of test_real_programs.py (one
package: NIO is built once; kept between runs). If it cannot be built (no Hummingbird among
the offline packages), the tests are skipped with the build's error.
"""
import http.client
import json
import re
import subprocess

import pytest

import test_real_programs as real
from test_real_programs import tools  # noqa: F401 (the module's fixture, shared)

SOURCE = real.FIXTURES / "real-nio-server" / "Sources" / "hb-server" / "main.swift"
REQUESTS_PER_CLIENT = 40
ALL_ROUTES = ("plain", "group", "blocking", "count")
CLEAN_ROUTES = ("plain", "group", "count")


def _route_lines():
    """`ROUTE: name` markers of the server's source → line numbers."""
    lines = {}
    for n, text in enumerate(SOURCE.read_text().splitlines(), start=1):
        match = re.search(r"ROUTE: ([\w-]+)", text)
        if match:
            lines[match.group(1)] = n
    return lines


def _load(port, routes, client, answers):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for n in range(REQUESTS_PER_CLIENT):
            path = "/" + routes[(n + client) % len(routes)]
            connection.request("GET", path)
            response = connection.getresponse()
            answers.append((path, response.status, response.read().decode()))
    finally:
        connection.close()


def _stats_json(tools, trace, cache):
    out = subprocess.run([tools["qtrace"], "stats", "--json", str(trace)],
                         env=dict(real._clean_env(), XDG_CACHE_HOME=str(cache)), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def server_binary():
    try:
        return str(real._build_package("real-nio-server") / "hb-server")
    except AssertionError as error:
        pytest.skip(f"the Hummingbird server could not be built: {str(error)[-600:]}")


@pytest.fixture(scope="module")
def hummingbird(tools, server_binary, tmp_path_factory):
    work = tmp_path_factory.mktemp("hummingbird")
    runs = {}
    for name, routes in (("all", ALL_ROUTES), ("clean", CLEAN_ROUTES)):
        trace = work / f"{name}.qtrace"
        status, _, err, answers, _ = real._serve_and_load(
            real._record_argv(tools, trace, [server_binary]), real._record_env(tools),
            load=lambda port, client, answers, routes=routes: _load(port, routes, client, answers))
        assert status == 0, err[-3000:]
        assert len(answers) == REQUESTS_PER_CLIENT * real.CLIENTS and all(code == 200 for _, code, _ in answers), answers[:5]
        runs[name] = {"trace": trace, "answers": answers, "summary": _stats_json(tools, trace, work)}
    real._write_report(tools, runs["all"]["trace"], {})
    return runs


def test_routes_are_named_by_their_own_code(hummingbird):
    lines = _route_lines()
    sites = hummingbird["all"]["summary"]["statistics"]["sites"]
    names = [s["name"] for s in sites]
    for bad in ("generic", "reabstraction thunk", "partial apply"):
        assert not [n for n in names if bad in n], f"a row named {bad!r}: {names}"
    child = next((s for s in sites if s["name"] == "closure #1 in closure #1 in groupRoute()"), None)
    assert child, names
    assert child["line"] == lines["group-child"] and child["file"].endswith("main.swift")
    group_requests = sum(1 for path, _, _ in hummingbird["all"]["answers"] if path == "/group")
    assert child["items"] == 4 * group_requests, "4 children per /group request"
    # The group's body, resumed as children finish: "closure #1 in groupRoute() (await #2)".
    assert any("in groupRoute()" in s["name"] and (s.get("file") or "").endswith("main.swift") for s in sites), names
    sync = next((s for s in sites if s["name"].startswith("closure in blockingRoute()")), None)
    assert sync and sync["line"] == lines["blocking-sync"], names


def test_actor_has_one_visit_per_count_request(hummingbird):
    actors = hummingbird["all"]["summary"]["statistics"]["actors"]
    counter = next((a for a in actors if (a.get("type") or "").endswith(".HitCounter")), None)
    assert counter, [a["name"] for a in actors]
    count_requests = sum(1 for path, _, _ in hummingbird["all"]["answers"] if path == "/count")
    assert counter["visits"] == count_requests
    assert any("countRoute()" in entry for entry in counter["enteredAt"]), counter["enteredAt"]


def test_blocking_route_raises_blocking_in_async_at_its_lines(hummingbird):
    lines = _route_lines()
    findings = [f for f in hummingbird["all"]["summary"]["findings"] if f["id"] == "swift.blocking-in-async"]
    messages = " | ".join(f["message"] for f in findings)
    for marker in ("blocking-wait", "blocking-sync"):
        assert f"main.swift:{lines[marker]}" in messages, f"{marker}: {messages[:2000]}"


def test_clean_routes_raise_no_swift_concurrency_finding(hummingbird):
    findings = hummingbird["clean"]["summary"]["findings"]
    assert not [f for f in findings if f["id"].startswith("swift.")], [f["message"] for f in findings]


def test_findings_match_the_corpus(hummingbird):
    import findings_corpus

    for run, program in (("all", "real/hummingbird"), ("clean", "real/hummingbird-clean")):
        summary = hummingbird[run]["summary"]
        findings_corpus.check(program, summary, [g["worst"]["message"] for g in summary["findingGroups"]])


def test_report_shows_actor_and_task_lanes(hummingbird, driver):
    report = real._check_report(driver, hummingbird["all"]["trace"], "hummingbird-server", {})
    lanes = report.state()["lanes"]
    assert any(lane["kind"] == "actor" and lane["title"].startswith("actor HitCounter") for lane in lanes), lanes[:40]
    # Thousands of tasks: their group starts collapsed, with its count.
    sections = {lane["key"]: lane.get("count") for lane in lanes if lane["kind"] == "section"}
    assert sections.get("section:tasks", 0) > 100, sections
