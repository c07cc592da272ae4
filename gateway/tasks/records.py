"""One task's state as stored and as the API shows it; the same JSON document in both
storage backends."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from gateway.memory.records import iso

TaskStatus = Literal["open", "done"]
TASK_STATUSES: tuple[TaskStatus, ...] = ("open", "done")
# The list fields a PATCH can append to or remove from.
LIST_FIELDS = ("constraints", "decisions", "artifacts", "open_questions")
# A task id is a key the application chose (`order_id=123`, `ticket-7`, a UUID): it is
# matched exactly, so it is kept to characters that need no escaping in a URL path or
# a header.
MAX_TASK_ID_CHARS = 128
TASK_ID = re.compile(rf"[A-Za-z0-9._:=@+-]{{1,{MAX_TASK_ID_CHARS}}}")


@dataclass(frozen=True, slots=True)
class TaskRecord:
    tenant: str
    user: str
    task_id: str
    goal: str
    created_at: float
    updated_at: float
    constraints: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    artifacts: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    status: TaskStatus = "open"
    done_at: float | None = None  # when it was last marked done; None while open
    # Bumped by every write: a read-modify-write (PATCH) replaces only the revision it
    # read, so two concurrent appends never lose one.
    revision: int = 1

    def archived(self, now: float, archive_after_done_seconds: int) -> bool:
        """Done for longer than the policy keeps finished tasks live: still readable
        (`include_archived`), never injected."""
        return (
            self.status == "done"
            and self.done_at is not None
            and now >= self.done_at + archive_after_done_seconds
        )

    def lists(self) -> dict[str, tuple[str, ...]]:
        return {name: getattr(self, name) for name in LIST_FIELDS}

    def updated(self, at: float, **changes: Any) -> TaskRecord:
        return replace(self, updated_at=at, revision=self.revision + 1, **changes)

    def to_api(self, now: float, archive_after_done_seconds: int) -> dict[str, Any]:
        archived_at = (
            None
            if self.status != "done" or self.done_at is None
            else self.done_at + archive_after_done_seconds
        )
        return {
            "id": self.task_id,
            "object": "task",
            "user": self.user,
            "goal": self.goal,
            **{name: list(values) for name, values in self.lists().items()},
            "status": self.status,
            "archived": self.archived(now, archive_after_done_seconds),
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "done_at": iso(self.done_at),
            "archives_at": iso(archived_at),
            "revision": self.revision,
        }


def task_to_json(record: TaskRecord) -> bytes:
    return orjson.dumps(
        {
            "id": record.task_id,
            "goal": record.goal,
            **{name: list(values) for name, values in record.lists().items()},
            "status": record.status,
            "created_at": record.created_at,
            "updated_at": record.updated_at,
            "done_at": record.done_at,
            "revision": record.revision,
        }
    )


def task_from_json(tenant: str, user: str, raw: bytes | str) -> TaskRecord:
    data = orjson.loads(raw)
    status = data["status"]
    return TaskRecord(
        tenant=tenant,
        user=user,
        task_id=str(data["id"]),
        goal=str(data["goal"]),
        created_at=float(data["created_at"]),
        updated_at=float(data["updated_at"]),
        constraints=tuple(data["constraints"]),
        decisions=tuple(data["decisions"]),
        artifacts=tuple(data["artifacts"]),
        open_questions=tuple(data["open_questions"]),
        status="done" if status == "done" else "open",
        done_at=None if data.get("done_at") is None else float(data["done_at"]),
        revision=int(data["revision"]),
    )
