"""Supersession in the embedded memory store: inside the write's transaction, each old
version gets `superseded_by`, or the whole write is refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

import orjson

from gateway.storage.protocols import SupersedeConflict


def mark_superseded(
    connection: sqlite3.Connection, tenant: str, user: str, supersedes: Mapping[str, str]
) -> None:
    """Raises `SupersedeConflict` (the caller's transaction rolls back) when an old
    version is missing, another user's, or superseded already."""
    for old_id, new_id in supersedes.items():
        row = connection.execute(
            "SELECT record FROM memories WHERE tenant = ? AND user = ? AND id = ?",
            (tenant, user, old_id),
        ).fetchone()
        if row is None:
            raise SupersedeConflict(old_id, None)
        value = orjson.loads(row[0])
        if value.get("superseded_by"):
            raise SupersedeConflict(old_id, str(value["superseded_by"]))
        value["superseded_by"] = new_id
        connection.execute(
            "UPDATE memories SET record = ? WHERE tenant = ? AND id = ?",
            (orjson.dumps(value), tenant, old_id),
        )
