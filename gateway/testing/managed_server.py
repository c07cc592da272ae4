"""The context-manager half shared by the test servers: `with Server() as server:`
starts it and stops it on the way out, whatever the block raised."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ManagedServer:
    """Base of the test servers; subclasses provide `start` and `stop`."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
