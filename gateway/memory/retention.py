"""Which of one user's memories the retention policy lets go (`memory.retention`)."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.memory.records import MEMORY_KINDS, MemoryRecord
from gateway.policy.memory_lifecycle import MemoryRetentionPolicy

_SECONDS_PER_DAY = 86400.0


def last_used_at(record: MemoryRecord) -> float:
    return max(record.created_at, record.last_access_at or 0.0)


def retention_victims(
    records: Sequence[MemoryRecord], retention: MemoryRetentionPolicy, now: float
) -> list[str]:
    """Per kind: everything older than `max_age_days` (from `created_at`), then, past
    `max_count_per_user`, superseded versions first and then the least recently used
    (last access, else creation), the oldest first."""
    victims: list[str] = []
    for kind in MEMORY_KINDS:
        rule = retention.rule(kind)
        if not rule.limited:
            continue
        kept = [record for record in records if record.kind == kind]
        if rule.max_age_days is not None:
            cutoff = now - rule.max_age_days * _SECONDS_PER_DAY
            victims += [record.id for record in kept if record.created_at < cutoff]
            kept = [record for record in kept if record.created_at >= cutoff]
        cap = rule.max_count_per_user
        if cap is not None and len(kept) > cap:
            order = sorted(
                kept, key=lambda record: (record.current, last_used_at(record), record.id)
            )
            victims += [record.id for record in order[: len(kept) - cap]]
    return victims
