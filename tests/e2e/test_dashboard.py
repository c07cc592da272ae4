"""The dashboard: `/dashboard` is a static page served without auth, and headless
Chromium renders the admin stats into it after real traffic.

Chromium is a declared test dependency (Debian package `chromium`). It is driven as a
plain subprocess: `--virtual-time-budget` lets the page's fetches and first refreshes
finish on a virtual clock before `--dump-dom` prints the DOM or `--screenshot` writes a
PNG, so no browser driver is needed and nothing waits on wall-clock time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.browser import PageDom, dump_dom, run_chromium
from tests.e2e.helpers import client_for
from tests.helpers import ADMIN_KEY, TENANT_KEYS, RunningGateway

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
CHARTS = ("timeline", "reasons", "latency", "savings")
LAYERS = ("exact", "semantic", "miss", "bypass")
PAGE_HEADERS = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
CSP_DIRECTIVES = (
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
)
SYSTEM = {"role": "system", "content": "You are a concise geography tutor."}
PIRATE = {"role": "system", "content": "Answer like a pirate."}

# Every gateway test here runs on the embedded store only: the page reads per-process stats.
embedded_only = pytest.mark.parametrize("storage_backend", ["embedded"])


# ---------------------------------------------------------------- traffic


def _ask(gateway: RunningGateway, text: str, system: dict[str, str] = SYSTEM) -> str:
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[system, {"role": "user", "content": text}]
    )
    raw.parse()
    return str(raw.headers["x-gateway-cache"])


def _mixed_traffic(gateway: RunningGateway) -> dict[str, int]:
    """Exact and semantic hits, misses and bypasses, so that every chart has data."""
    layers = [
        _ask(gateway, "How do I sort a list in Python?"),
        _ask(gateway, "How do I sort a list in Python?"),
        _ask(gateway, "How do I sort a list in Python?"),
        _ask(gateway, "How can I sort a list in Python?"),
        _ask(gateway, "How do I reverse a string in Python?"),
        _ask(gateway, "How can I reverse a string in Python?"),
        _ask(gateway, "What is the capital city of Peru?"),
        _ask(gateway, "What is the capital city of Peru?"),
        _ask(gateway, "What is the capital city of Peru?", PIRATE),
        _ask(gateway, "Please cancel my order 12345."),
        _ask(gateway, "What is the weather in Lima today?"),
    ]
    counts = {layer: layers.count(layer) for layer in LAYERS}
    assert all(counts.values()), f"the traffic should reach every layer: {layers}"
    return counts


def _admin_get(gateway: RunningGateway, path: str, key: str | None = ADMIN_KEY) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.get(f"{gateway.url}{path}", headers=headers, timeout=10)


# ---------------------------------------------------------------- tests


@embedded_only
def test_page_is_served_without_auth_and_holds_no_data(gateway: RunningGateway) -> None:
    _mixed_traffic(gateway)
    response = httpx.get(f"{gateway.url}/dashboard", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    for name, value in PAGE_HEADERS.items():
        assert response.headers[name] == value
    csp = [part.strip() for part in response.headers["content-security-policy"].split(";")]
    assert sorted(csp) == sorted(CSP_DIRECTIVES)

    page = response.text
    assert page.lstrip().lower().startswith("<!doctype html>")
    dom = PageDom()
    dom.feed(page)
    assert dom.body.get("data-state") == "loading"
    assert dom.charts == dict.fromkeys(CHARTS, 0)
    assert dom.row_counts == {"audit": 0, "adaptive": 0, "spend": 0, "decisions": 0}
    # Nothing from the traffic, no key, and nothing fetched from elsewhere.
    for secret in (ADMIN_KEY, *TENANT_KEYS.values(), "acme", "fake-model", "sort a list"):
        assert secret not in page
    for external in ("http://", "https://", "//cdn", "@import", "<link"):
        assert external not in page.replace('"http://www.w3.org/2000/svg"', "")


@embedded_only
@pytest.mark.parametrize("path", ["/admin/stats", "/admin/decisions?limit=50"])
def test_admin_data_needs_the_admin_key(gateway: RunningGateway, path: str) -> None:
    assert _admin_get(gateway, path, key=None).status_code == 401
    assert _admin_get(gateway, path, key="sk-wrong").status_code == 401
    assert _admin_get(gateway, path, key=TENANT_KEYS["acme"]).status_code == 403
    assert _admin_get(gateway, path).status_code == 200


@embedded_only
def test_dashboard_renders_the_stats_in_chromium(gateway: RunningGateway, tmp_path: Path) -> None:
    counts = _mixed_traffic(gateway)
    stats: dict[str, Any] = _admin_get(gateway, "/admin/stats").json()
    assert stats["totals"]["by_layer"] == counts
    assert stats["totals"]["tokens_saved"] > 0

    url = f"{gateway.url}/dashboard#key={ADMIN_KEY}"
    dom = dump_dom(url, tmp_path / "profile-dom")
    assert dom.body.get("data-state") == "ready", dom.source[-3000:]
    for chart in CHARTS:
        assert dom.charts.get(chart, 0) > 0, f"chart {chart!r} drew nothing: {dom.charts}"
    # One stacked segment per layer per minute at least; two latency bars per layer.
    assert dom.charts["timeline"] >= len(LAYERS)
    assert dom.charts["latency"] == 2 * len(LAYERS)
    expected_reasons = sum(len(stats["reasons"][layer]) for layer in ("miss", "bypass"))
    assert dom.charts["reasons"] == expected_reasons
    assert dom.row_counts["decisions"] == dom.table_rows["decisions"] == sum(counts.values())
    # Spend next to savings: one row per tenant, model and day (the stats' rows).
    assert dom.row_counts["spend"] == dom.table_rows["spend"] == len(stats["spend"]["rows"]) > 0
    assert "keyform" in dom.hidden_ids
    # The key left the address bar and is not written into the page.
    assert ADMIN_KEY not in dom.source

    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "dashboard.png"
    screenshot.unlink(missing_ok=True)
    run_chromium(url, tmp_path / "profile-shot", f"--screenshot={screenshot}")
    assert screenshot.is_file(), "chromium wrote no screenshot"
    data = screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 10_000, f"the screenshot is suspiciously small ({len(data)} bytes)"


@embedded_only
def test_dashboard_asks_for_the_key_when_refused(gateway: RunningGateway, tmp_path: Path) -> None:
    for fragment, profile in (
        (f"#key={TENANT_KEYS['acme']}", "profile-tenant"),
        ("", "profile-nokey"),
    ):
        dom = dump_dom(f"{gateway.url}/dashboard{fragment}", tmp_path / profile)
        assert dom.body.get("data-state") == "unauthorized", dom.source[-3000:]
        assert "keyform" not in dom.hidden_ids
        assert dom.charts == dict.fromkeys(CHARTS, 0)
