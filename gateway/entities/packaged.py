"""The shared loading of the entity word lists: each table class builds itself from a
rule book (`load`), and `packaged()` loads it from the installed rule files once per
class, on first use (an extractor's constructor), so no work happens at import."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Self

from gateway.rules.compile import RuleBook


class PackagedTables:
    """Base of the frozen word-list dataclasses (`EnglishLexicon`, `Units`, ...)."""

    __slots__ = ()

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        """The tables as `book`'s rule files give them."""
        raise NotImplementedError

    @classmethod
    def packaged(cls) -> Self:
        """Loaded from the installed rule files on first use, then shared."""
        tables = _packaged(cls.load)
        assert isinstance(tables, cls)  # the cache is keyed by the class's own `load`
        return tables


@functools.cache
def _packaged(load: Callable[[RuleBook], PackagedTables]) -> PackagedTables:
    return load(RuleBook.packaged())
