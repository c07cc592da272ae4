"""The embedded spend store: upserts add up by (day, tenant, key, model), reads cover
exactly the days asked for, and rows past the retention are swept."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.spend.records import SpendRow
from gateway.storage.embedded.spend import SQLiteSpendStore


async def test_rows_add_up_and_reads_cover_the_days_asked(tmp_path: Path) -> None:
    store = await SQLiteSpendStore.open(tmp_path)
    try:
        spent = SpendRow("2026-03-02", "acme", "k1", "m", spent_usd=0.5, requests=1)
        await store.add(
            [spent, spent, SpendRow("2026-03-02", "acme", "k1", "m", hits=1, saved_usd=0.2)]
        )
        await store.add([SpendRow("2026-03-04", "acme", "k2", "m", spent_usd=1.0, requests=1)])
        await store.add([SpendRow("2026-03-02", "globex", "k3", "m", spent_usd=9.0, requests=1)])
        (row,) = await store.rows(["2026-03-02"], "acme")
        assert row.requests == 2 and row.hits == 1
        assert row.spent_usd == pytest.approx(1.0) and row.saved_usd == pytest.approx(0.2)
        # Days between the ones asked for are not read.
        assert await store.tenant_spent("acme", ["2026-03-02", "2026-03-04"]) == pytest.approx(
            {"2026-03-02": 1.0, "2026-03-04": 1.0}
        )
        assert await store.tenant_spent("acme", ["2026-03-01", "2026-03-03"]) == {
            "2026-03-01": 0.0,
            "2026-03-03": 0.0,
        }
        assert len(await store.rows(["2026-03-02"])) == 2  # every tenant
    finally:
        await store.close()


async def test_rows_past_the_retention_are_swept(tmp_path: Path) -> None:
    # 2027-01-15 UTC
    store = await SQLiteSpendStore.open(tmp_path, clock=lambda: 1_800_000_000.0)
    try:
        await store.add(
            [
                SpendRow("2025-01-01", "acme", "k", "m", spent_usd=1.0),  # > 400 days before
                SpendRow("2026-12-31", "acme", "k", "m", spent_usd=1.0),
            ]
        )
        assert await store.sweep_expired() == 1
        assert [row.day for row in await store.rows(["2025-01-01", "2026-12-31"])] == ["2026-12-31"]
    finally:
        await store.close()
