"""The embedded backend reports its own failures (sqlite3 and disk errors) as the one
storage error, `StoreUnavailable`, with the cause chained: nothing above `storage/`
handles sqlite3 types."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.exact import EXACT_CACHE_SCHEMA, SQLiteExactCache
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import StoreUnavailable


async def test_a_sqlite_error_comes_back_as_store_unavailable(tmp_path: Path) -> None:
    database = SQLiteDatabase(tmp_path / "t.sqlite3")
    await database.open("CREATE TABLE t (x INTEGER);")
    try:
        with pytest.raises(StoreUnavailable) as raised:
            await database.run(lambda: database.connection.execute("SELECT * FROM missing"))
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
        assert await database.ping() is True  # the database itself still answers
    finally:
        await database.close()


async def test_a_broken_exact_cache_raises_store_unavailable(tmp_path: Path) -> None:
    database = SQLiteDatabase(tmp_path / "gateway.sqlite3")
    await database.open(EXACT_CACHE_SCHEMA)
    cache = SQLiteExactCache(database)
    try:
        await database.run(lambda: database.connection.execute("DROP TABLE exact_cache"))
        with pytest.raises(StoreUnavailable):
            await cache.get("k")
    finally:
        await database.close()


async def test_a_broken_memory_store_raises_store_unavailable(tmp_path: Path) -> None:
    memories, _sessions, database = await open_embedded_memory(tmp_path)
    try:
        await database.run(lambda: database.connection.execute("DROP TABLE memories"))
        with pytest.raises(StoreUnavailable) as raised:
            await memories.get("acme", "m1")
        assert isinstance(raised.value.__cause__, sqlite3.Error)
    finally:
        await database.close()
