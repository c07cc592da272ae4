"""Where the adaptive counters live (protocol `storage.protocols.AdaptiveCounterStore`).

Counters are grouped by scope (a string naming tenant, and language or model) and are
all additive floats (`BucketStats` buckets, shadow and judge tallies, judge error
counts), so replicas merge by addition and a write is an increment, never a replace:

- embedded: one SQLite table in the data directory (`adaptive.sqlite3`), on the
  database's own thread like the other embedded stores; survives restarts;
- redis: one hash per scope (`<prefix>:adaptive:<scope>`), written with HINCRBYFLOAT,
  and a set of the scopes (`<prefix>:adaptive:scopes`); shared by every replica.

Nobody reads these on the request path: `AdaptiveStats` keeps an in-process view and
syncs it in the background.
"""

from __future__ import annotations

from pathlib import Path

from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase
from gateway.storage.protocols import Counters

ADAPTIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS adaptive_counters (
    scope TEXT NOT NULL,
    field TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (scope, field)
);
"""


class SQLiteAdaptiveStore(OwnedDatabase):
    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteAdaptiveStore:
        database = SQLiteDatabase(data_dir / "adaptive.sqlite3")
        await database.open(ADAPTIVE_SCHEMA)
        return cls(database)

    async def add(self, deltas: Counters) -> None:
        rows = [
            (scope, name, value)
            for scope, fields in deltas.items()
            for name, value in fields.items()
            if value
        ]
        if not rows:
            return

        def _add() -> None:
            connection = self._db.connection
            connection.execute("BEGIN")
            try:
                connection.executemany(
                    "INSERT INTO adaptive_counters (scope, field, value) VALUES (?, ?, ?) "
                    "ON CONFLICT (scope, field) DO UPDATE SET value = value + excluded.value",
                    rows,
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

        await self._db.run(_add)

    async def load(self) -> Counters:
        def _load() -> Counters:
            counters: Counters = {}
            for scope, name, value in self._db.connection.execute(
                "SELECT scope, field, value FROM adaptive_counters"
            ):
                counters.setdefault(scope, {})[name] = float(value)
            return counters

        return await self._db.run(_load)
