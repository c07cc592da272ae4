"""Which kind a new memory is, which key it states a fact about, and which stored
versions it supersedes (README, "Memory kinds and lifecycle").

The rule, in order:
1. `supersedes: <id>` on the write (or `PATCH /v1/memories/{id}`): that version;
2. unless `supersede: false`: every current memory of the same user and namespace with
   the same `key`. The key is the write's own, or, for a semantic memory that states
   one fact in the form "my <attribute> is/are <value>" (also "I live in <place>",
   "I work at/for <employer>", "call me <name>"), `user.<attribute>`, lower case with
   `_` between words. "I prefer ..." is not keyed: "I prefer tea" and "I prefer aisle
   seats" are about different things and must not replace each other;
3. within one batch, a later item supersedes an earlier one with the same key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from gateway.memory.records import MemoryKind, MemoryRecord

# One statement, short: a longer text holds more than the one fact a key names.
_MAX_KEYED_CHARS = 200
_VALUE = r"(?P<value>[^.!?;\n]{1,120}?)\s*[.!]?\s*"
_RULES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (
        re.compile(
            r"\s*my\s+(?P<attr>[a-z][a-z'\- ]{0,40}?)\s+(?:is|are|was|were)\s+" + _VALUE,
            re.IGNORECASE,
        ),
        None,
    ),
    (re.compile(r"\s*i\s+(?:now\s+)?live\s+in\s+" + _VALUE, re.IGNORECASE), "home_location"),
    (re.compile(r"\s*i\s+(?:now\s+)?work\s+(?:at|for)\s+" + _VALUE, re.IGNORECASE), "employer"),
    (re.compile(r"\s*(?:please\s+)?call\s+me\s+" + _VALUE, re.IGNORECASE), "name"),
)
_SEPARATORS = re.compile(r"[\s'\-]+")


def infer_kind(
    kind: MemoryKind | None,
    valid_from: float | None,
    valid_to: float | None,
    occurred_at: float | None,
) -> MemoryKind:
    """The write's kind; else temporal with a validity window, episodic with
    `occurred_at`, semantic otherwise."""
    if kind is not None:
        return kind
    if valid_from is not None or valid_to is not None:
        return "temporal"
    if occurred_at is not None:
        return "episodic"
    return "semantic"


def rule_key(content: str) -> str | None:
    """`user.<attribute>` for a one-fact statement of the forms above, else None."""
    if len(content) > _MAX_KEYED_CHARS:
        return None
    for pattern, attribute in _RULES:
        match = pattern.fullmatch(content)
        if match is None:
            continue
        name = attribute or _SEPARATORS.sub("_", match["attr"].strip().lower()).strip("_")
        return f"user.{name}" if name else None
    return None


def plan_supersession(
    new: Sequence[MemoryRecord],
    replace_by_key: Sequence[bool],
    stored: Iterable[MemoryRecord],
) -> tuple[list[MemoryRecord], dict[str, str]]:
    """The new records with `supersedes` / `superseded_by` filled in, and the stored
    versions to mark (old id -> new id). `replace_by_key[i]`: whether item i replaces
    same-key memories (`supersede`, default true); an explicit `supersedes` on a
    record is kept as it is."""
    current_by_key: dict[tuple[str, str], list[str]] = {}
    for record in stored:
        if record.current and record.key:
            current_by_key.setdefault((record.namespace, record.key), []).append(record.id)
    records = list(new)
    marks: dict[str, str] = {}
    latest_in_batch: dict[tuple[str, str], int] = {}
    for index, record in enumerate(records):
        if record.supersedes:
            marks[record.supersedes] = record.id
        if not record.key or not replace_by_key[index]:
            continue
        slot = (record.namespace, record.key)
        for old_id in current_by_key.pop(slot, []):
            if old_id not in marks:
                marks[old_id] = record.id
        earlier = latest_in_batch.get(slot)
        if earlier is not None:
            records[earlier] = replace(records[earlier], superseded_by=record.id)
        latest_in_batch[slot] = index
    # A record names the one version it replaced: the explicit one, else the newest.
    for index, record in enumerate(records):
        if record.supersedes is None:
            replaced = [old for old, new_id in marks.items() if new_id == record.id]
            if replaced:
                records[index] = replace(record, supersedes=replaced[-1])
    return records, marks
