"""Log a recurring failure once per interval, with a count of the ones suppressed."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class ThrottledLogger:
    def __init__(
        self,
        logger: logging.Logger,
        interval_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval_seconds = interval_seconds
        self._clock = clock
        self._last_logged_at: float | None = None
        self._suppressed = 0
        self.total = 0

    def warning(self, message: str, *args: object) -> None:
        self.total += 1
        now = self._clock()
        if self._last_logged_at is not None and now - self._last_logged_at < self._interval_seconds:
            self._suppressed += 1
            return
        suffix = f" ({self._suppressed} similar suppressed)" if self._suppressed else ""
        self._logger.warning(message + suffix, *args)
        self._last_logged_at = now
        self._suppressed = 0
