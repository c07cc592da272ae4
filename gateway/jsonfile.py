"""Parse a JSON document that must hold an object (weights and calibration files)."""

from __future__ import annotations

from typing import Any

import orjson


def parse_json_object(text: str | bytes, error: type[ValueError], what: str) -> dict[str, Any]:
    """The object in `text`; `error` (a ValueError subclass) naming `what` otherwise."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise error(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise error(f"{what} must be a JSON object")
    return data
