"""Supersession in the Redis memory store: the old versions are read under the write's
WATCH, and their new records are written in its MULTI/EXEC."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import orjson
from redis.asyncio.client import Pipeline

from gateway.storage.protocols import SupersedeConflict


async def superseded_records(
    pipe: Pipeline, item_key: Callable[[str], str], user: str, supersedes: Mapping[str, str]
) -> dict[str, bytes]:
    """The old versions' item keys -> their `record` with `superseded_by` set; raises
    `SupersedeConflict` when one is missing, another user's, or superseded already.
    `pipe` is in WATCH mode (commands run at once), with the item keys watched."""
    updates: dict[str, bytes] = {}
    for old_id, new_id in supersedes.items():
        key = item_key(old_id)
        raw = await pipe.hget(key, "record")
        if raw is None:
            raise SupersedeConflict(old_id, None)
        value = orjson.loads(raw)
        if value.get("user") != user:
            raise SupersedeConflict(old_id, None)
        if value.get("superseded_by"):
            raise SupersedeConflict(old_id, str(value["superseded_by"]))
        value["superseded_by"] = new_id
        updates[key] = orjson.dumps(value)
    return updates
