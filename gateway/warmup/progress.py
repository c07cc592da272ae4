"""Progress lines for long imports, at most one per interval, on stderr."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


class Progress:
    """Writes `import: N records (P %), S stored, R refused, X records/s` to `stream`
    at most every `interval_seconds`; no stream: silent."""

    def __init__(
        self,
        stream: TextIO | None,
        interval_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._interval_seconds = interval_seconds
        self._clock = clock
        self._started = clock()
        self._last = self._started

    def start(self) -> None:
        """The import proper begins (after the models and the store were loaded): the
        rate counts from here."""
        self._started = self._last = self._clock()

    def update(self, records: int, stored: int, bytes_read: int, total_bytes: int) -> None:
        if self._stream is None:
            return
        now = self._clock()
        if now - self._last < self._interval_seconds:
            return
        self._last = now
        percent = 100 * bytes_read / total_bytes if total_bytes else 100.0
        rate = records / max(now - self._started, 1e-9)
        self._stream.write(
            f"import: {records} records ({percent:.0f} %), {stored} stored, "
            f"{records - stored} refused, {rate:.0f} records/s\n"
        )
        self._stream.flush()
