"""How memory vectors, session items and stored responses are written as bytes:
shared by the embedded and Redis backends, so a record reads back the same from either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson

from gateway.memory.records import Vector
from gateway.storage.protocols import SessionItem, StoredResponse

# Little-endian on disk whatever the host.
_DISK_DTYPE = np.dtype("<f4")


def vector_to_bytes(vector: Vector | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=_DISK_DTYPE).tobytes()


def vector_from_bytes(raw: bytes | None) -> Vector | None:
    if not raw:
        return None
    return np.frombuffer(raw, dtype=_DISK_DTYPE).astype(np.float32)


def session_items_to_json(items: Sequence[SessionItem]) -> bytes:
    return orjson.dumps(
        [
            {
                "key": item.key,
                "content": item.content,
                "score": item.score,
                "memory_id": item.memory_id,
                "created_at": item.created_at,
                "admitted_at": item.admitted_at,
                "source": item.source,
            }
            for item in items
        ]
    )


def session_items_from_json(raw: bytes | str) -> list[SessionItem]:
    return [
        SessionItem(
            key=str(value["key"]),
            content=str(value["content"]),
            score=float(value["score"]),
            memory_id=str(value["memory_id"]),
            created_at=float(value["created_at"]),
            admitted_at=float(value["admitted_at"]),
            # Sessions written before the knowledge base hold memories only.
            source=str(value.get("source") or "memory"),
        )
        for value in orjson.loads(raw)
    ]


def encode_stored_response(stored: StoredResponse) -> bytes:
    return orjson.dumps(
        {
            "response": stored.response,
            "input_items": stored.input_items,
            "created_at": stored.created_at,
        }
    )


def decode_stored_response(raw: bytes | str) -> StoredResponse | None:
    """None for a payload this version cannot read (it is treated as absent)."""
    try:
        value: dict[str, Any] = orjson.loads(raw)
        response, items = value["response"], value["input_items"]
        if not isinstance(response, dict) or not isinstance(items, list):
            return None
        return StoredResponse(
            response=response, input_items=items, created_at=float(value["created_at"])
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
