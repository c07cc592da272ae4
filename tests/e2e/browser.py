"""Headless Chromium for the dashboard tests, driven as a plain subprocess.

`--virtual-time-budget` lets the page's fetches and first refreshes finish on a virtual
clock before `--dump-dom` prints the DOM or `--screenshot` writes a PNG, so no browser
driver is needed and nothing waits on wall-clock time. Chromium is a declared test
dependency (Debian package `chromium`).
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM_CANDIDATES = ("chromium", "/usr/bin/chromium")
CHROMIUM_TIMEOUT_SECONDS = 60


def chromium_path() -> str:
    for candidate in CHROMIUM_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    pytest.fail(
        "Chromium is required for the dashboard test and was not found on PATH. "
        "Install it from Debian: `apt-get install -y chromium` (provides /usr/bin/chromium).",
        pytrace=False,
    )


def run_chromium(url: str, profile: Path, *action: str) -> subprocess.CompletedProcess[str]:
    command = [
        chromium_path(),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-proxy-server",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--window-size=1280,1800",
        "--run-all-compositor-stages-before-draw",
        "--virtual-time-budget=10000",
        *action,
        url,
    ]
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=CHROMIUM_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"Chromium did not finish in {CHROMIUM_TIMEOUT_SECONDS} s: {exc}")
    assert result.returncode == 0, f"chromium exited {result.returncode}: {result.stderr[-2000:]}"
    return result


def dump_dom(url: str, profile: Path) -> PageDom:
    result = run_chromium(url, profile, "--dump-dom")
    dom = PageDom()
    dom.feed(result.stdout)
    dom.close()
    dom.source = result.stdout
    return dom


class PageDom(HTMLParser):
    """What a test needs from the rendered page: body state, charts, table rows."""

    def __init__(self) -> None:
        super().__init__()
        self.source = ""
        self.body: dict[str, str] = {}
        self.charts: dict[str, int] = {}
        self.table_rows: dict[str, int] = {}
        self.row_counts: dict[str, int] = {}
        self.hidden_ids: set[str] = set()
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values and "hidden" in values:
            self.hidden_ids.add(values["id"])
        if tag == "body":
            self.body = values
        elif tag == "svg" and "data-chart" in values:
            self.charts[values["data-chart"]] = int(values.get("data-points") or 0)
        elif tag == "table" and "id" in values:
            self._table = values["id"]
            self.table_rows[self._table] = int(values.get("data-rows") or 0)
            self.row_counts[self._table] = 0
        elif tag == "tr" and self._table is not None and "data-row" in values:
            self.row_counts[self._table] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
