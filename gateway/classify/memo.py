"""A bounded memo of the classifier's verdicts on recent turns.

Every request is classified before its cache lookup, and what repeats most is what the
cache serves: the same question again (an exact hit) or a popular paraphrase (a
semantic hit, which is never stored under its own key). A verdict is a pure function
of the turn's text, whether a dialogue precedes it and the policy's classifier settings
(the rules and the write model are fixed when the classifier is built), so all three
are the key: another policy's patterns never reuse a verdict. A verdict carries no user
text, only the class and the rule's name.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

from gateway.bounded_lru import BoundedLRU
from gateway.classify.classes import NonCacheableClass

# ~4,000 short turns: a few hundred KiB. Longer turns are classified each time: they
# repeat rarely and would cost memory.
DEFAULT_MAX_ENTRIES = 4096
V = TypeVar("V")
DEFAULT_MAX_TEXT_CHARS = 600


def settings_key(
    enabled: frozenset[NonCacheableClass],
    extra_patterns: Mapping[NonCacheableClass, tuple[str, ...]],
    write_model: bool,
) -> Hashable:
    """The classifier settings as a hashable key (patterns in a fixed order)."""
    patterns = tuple(sorted((str(cls), tuple(p)) for cls, p in extra_patterns.items()))
    return (enabled, patterns, write_model)


class VerdictMemo(Generic[V]):
    """Least-recently-used map (text, has earlier turns, settings key) -> verdict.

    Used on the event loop only (no lock).
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        self._max_text_chars = max_text_chars
        self._verdicts: BoundedLRU[tuple[str, bool, Hashable], V] = BoundedLRU(max_entries)

    def __len__(self) -> int:
        return len(self._verdicts)

    def get(self, text: str, has_earlier_turns: bool, settings: Hashable) -> V | None:
        return self._verdicts.get((text, has_earlier_turns, settings))

    def put(self, text: str, has_earlier_turns: bool, settings: Hashable, verdict: V) -> None:
        if len(text) <= self._max_text_chars:
            self._verdicts.put((text, has_earlier_turns, settings), verdict)
