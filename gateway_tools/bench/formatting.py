"""Small text helpers shared by the measurements and the report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def ranked_counts(counter: Counter[str]) -> dict[str, int]:
    """Most frequent first, for JSON and for humans."""
    return dict(counter.most_common())


def fmt(value: Any, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}{suffix}" if abs(value) < 100 else f"{value:.1f}{suffix}"
    return f"{value}{suffix}"


def fmt_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {count}" for key, count in counts.items()) or "none"
