"""Fixtures for the report's browser tests: the reports (written by a Swift XCTest) and a
headless Chromium driven by selenium. See README.md."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ("small", "hostile", "medium", "empty")
# Written with them, opened by their own tests only (test_many_queues.py, test_report.py).
EXTRA_FIXTURES = ("manyqueues", "bomlabels", "manyblocked", "parkedpool")


def _write_fixtures(directory):
    env = dict(os.environ, QTRACE_BROWSER_FIXTURES=str(directory))
    subprocess.run(
        ["swift", "test", "--scratch-path", ".build-report", "--filter", "QTraceReportTests.BrowserFixtureTests"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def fixtures_dir(tmp_path_factory):
    """QTRACE_BROWSER_FIXTURES if it already holds the reports, else reports written now."""
    given = os.environ.get("QTRACE_BROWSER_FIXTURES")
    if given and all((pathlib.Path(given) / f"{name}.html").exists() for name in FIXTURES + EXTRA_FIXTURES):
        return pathlib.Path(given)
    directory = pathlib.Path(given) if given else tmp_path_factory.mktemp("reports")
    _write_fixtures(directory)
    return directory


@pytest.fixture(scope="session")
def expectations(fixtures_dir):
    return {name: json.loads((fixtures_dir / f"{name}.expect.json").read_text()) for name in FIXTURES}


def _chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("chromium is not installed (apt-get install -y chromium chromium-driver)")


@pytest.fixture(scope="session")
def driver():
    home = tempfile.mkdtemp(prefix="qtrace-chromium-")
    # Chromium writes into HOME and the XDG directories: keep it out of the real ones.
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[key] = home
    options = Options()
    options.binary_location = _chromium_binary()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1600,1000", f"--user-data-dir={home}/profile", "--enable-precise-memory-info"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    browser = webdriver.Chrome(service=Service(chromedriver), options=options)
    browser.set_window_size(1600, 1000)
    browser.set_script_timeout(60)
    yield browser
    browser.quit()
    shutil.rmtree(home, ignore_errors=True)


class Report:
    """One report opened in the browser, with helpers over the window.qtrace hook."""

    def __init__(self, driver, path):
        self.driver = driver
        driver.get_log("browser")  # drop what earlier pages logged
        driver.get(path.as_uri())
        status = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.qtrace.ready.then(() => done('ok'), (e) => done('error: ' + e));")
        assert status == "ok", status

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def state(self):
        return self.js("return window.qtrace.state()")

    def severe_logs(self):
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]


def recorded_report(driver, fixtures_dir, name):
    """A report the Swift tests wrote from a real recording (not the synthetic FIXTURES)."""
    path = fixtures_dir / f"{name}.html"
    if not path.exists():
        pytest.fail(f"{path} missing: run the Swift tests with QTRACE_BROWSER_FIXTURES set (make test)")
    return Report(driver, path)


@pytest.fixture
def open_report(driver, fixtures_dir):
    def opener(name):
        return Report(driver, fixtures_dir / f"{name}.html")
    return opener
