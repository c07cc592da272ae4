"""The task a chat request names (`x-gateway-task`), read by its exact key.

Never ranked by similarity: `order_id=123` finds that task or nothing, never the
similar-looking `order_id=124`. What happened is reported in the response header
`x-gateway-task-outcome`; the request is forwarded in every case (an unknown or
archived task, or a task store that fails, adds no block; a policy with
`failure.memory: closed` answers 503 when the store fails)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.errors import StoreUnavailableResponse
from gateway.pipeline.request import ChatRequest
from gateway.storage.agent_protocols import TaskStore
from gateway.storage.protocols import StoreUnavailable
from gateway.tasks.records import TaskRecord

# x-gateway-task-outcome values
INJECTED = "injected"
NOT_FOUND = "not_found"
ARCHIVED = "archived"
USER_REQUIRED = "user_required"  # no x-gateway-user / body `user`: no scope to look in
UNAVAILABLE = "unavailable"
NO_ROOM = "no_room"  # found, but the context window left no room for its block


@dataclass(frozen=True, slots=True)
class TaskFound:
    record: TaskRecord | None
    outcome: str


class TaskLookup:
    def __init__(self, store: TaskStore | None, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock

    async def find(self, request: ChatRequest) -> TaskFound | None:
        """None when the request names no task."""
        if request.task is None:
            return None
        if not request.user:
            return TaskFound(None, USER_REQUIRED)
        if self._store is None:
            return TaskFound(None, UNAVAILABLE)
        try:
            record = await self._store.get(request.tenant, request.user, request.task)
        except StoreUnavailable as exc:
            if request.policy.failure.memory == "closed":
                raise StoreUnavailableResponse(
                    "The task store is unavailable and this policy fails closed."
                ) from exc
            return TaskFound(None, UNAVAILABLE)
        if record is None:
            return TaskFound(None, NOT_FOUND)
        if record.archived(self._clock(), request.policy.tasks.archive_after_done_seconds):
            return TaskFound(None, ARCHIVED)
        return TaskFound(record, INJECTED)
