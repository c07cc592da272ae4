"""A partial update of a task: JSON merge per field. A scalar field given replaces
the stored one; a list field takes either a list (replaces it), `null` (clears it) or
`{"remove": [...], "append": [...]}` (removes every item equal to one listed, then
appends, so a remove + append of the same text moves it last)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.tasks.records import TaskRecord, TaskStatus


@dataclass(frozen=True, slots=True)
class ListChange:
    replace: tuple[str, ...] | None = None  # None: edit the stored list
    remove: tuple[str, ...] = ()
    append: tuple[str, ...] = ()

    def applied(self, current: tuple[str, ...]) -> tuple[str, ...]:
        base = current if self.replace is None else self.replace
        gone = set(self.remove)
        return tuple(item for item in base if item not in gone) + self.append


@dataclass(frozen=True, slots=True)
class TaskPatch:
    goal: str | None = None
    status: TaskStatus | None = None
    lists: dict[str, ListChange] = field(default_factory=dict)


def with_status(
    record: TaskRecord, status: TaskStatus, now: float
) -> tuple[TaskStatus, float | None]:
    """The fields a status (re)write sets: marking done stamps `done_at` (once: a done
    task marked done again keeps its date, so its archive time does not move);
    reopening clears it."""
    if status == "open":
        return "open", None
    done_at = record.done_at if record.status == "done" and record.done_at is not None else now
    return "done", done_at


def apply_patch(record: TaskRecord, patch: TaskPatch, now: float) -> TaskRecord:
    changes: dict[str, object] = {
        name: change.applied(getattr(record, name)) for name, change in patch.lists.items()
    }
    if patch.goal is not None:
        changes["goal"] = patch.goal
    if patch.status is not None:
        changes["status"], changes["done_at"] = with_status(record, patch.status, now)
    return record.updated(now, **changes)
