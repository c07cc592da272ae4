"""The embedded response store: per tenant, expired by its TTL."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.storage.embedded.responses import SQLiteResponseStore
from gateway.storage.protocols import StoredResponse


@pytest.mark.asyncio
async def test_put_get_delete_per_tenant_and_ttl(tmp_path: Path) -> None:
    now = [1000.0]
    store = await SQLiteResponseStore.open(tmp_path, clock=lambda: now[0])
    stored = StoredResponse(response={"id": "resp_1"}, input_items=[{"role": "user"}], created_at=1)
    await store.put("acme", "resp_1", stored, ttl_seconds=60)
    assert await store.get("acme", "resp_1") == stored
    assert await store.get("globex", "resp_1") is None
    assert not await store.delete("globex", "resp_1")
    now[0] += 61
    assert await store.get("acme", "resp_1") is None
    assert await store.sweep_expired() == 1
    await store.put("acme", "resp_2", stored, ttl_seconds=60)
    assert await store.delete("acme", "resp_2")
    assert await store.get("acme", "resp_2") is None
    await store.close()
