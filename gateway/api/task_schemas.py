"""Request bodies of the task API, strict like the memory API's: an unknown or mistyped
field is a 400 that names it. Size caps keep one task, and the block it injects, small."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gateway.tasks.patch import ListChange, TaskPatch
from gateway.tasks.records import LIST_FIELDS, TaskRecord, task_to_json

MAX_GOAL_CHARS = 4000
MAX_ITEM_CHARS = 2000
MAX_ITEMS_PER_LIST = 100
# The whole stored document (all fields), checked after a PATCH too.
MAX_TASK_BYTES = 64 * 1024

Item = Annotated[str, Field(min_length=1, max_length=MAX_ITEM_CHARS)]
Items = Annotated[list[Item], Field(max_length=MAX_ITEMS_PER_LIST)]


class _StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class TaskIn(_StrictBody):
    """`PUT` / `POST /v1/tasks/{id}`: the whole task."""

    user: str | None = Field(default=None, min_length=1, max_length=256)
    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    constraints: Items = Field(default_factory=list)
    decisions: Items = Field(default_factory=list)
    artifacts: Items = Field(default_factory=list)
    open_questions: Items = Field(default_factory=list)
    status: Literal["open", "done"] = "open"


class ListOpsIn(_StrictBody):
    remove: Items = Field(default_factory=list)
    append: Items = Field(default_factory=list)


ListField = Items | ListOpsIn | None


class TaskPatchIn(_StrictBody):
    """`PATCH /v1/tasks/{id}`: only the fields given change."""

    user: str | None = Field(default=None, min_length=1, max_length=256)
    goal: str | None = Field(default=None, min_length=1, max_length=MAX_GOAL_CHARS)
    status: Literal["open", "done"] | None = None
    constraints: ListField = None
    decisions: ListField = None
    artifacts: ListField = None
    open_questions: ListField = None

    @model_validator(mode="before")
    @classmethod
    def _no_null_scalars(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in ("goal", "status"):
                if name in data and data[name] is None:
                    raise ValueError(f"'{name}' cannot be null (omit it to keep it)")
        return data

    def to_patch(self) -> TaskPatch:
        lists: dict[str, ListChange] = {}
        for name in LIST_FIELDS:
            if name not in self.model_fields_set:
                continue
            value = getattr(self, name)
            if value is None:
                lists[name] = ListChange(replace=())
            elif isinstance(value, ListOpsIn):
                lists[name] = ListChange(remove=tuple(value.remove), append=tuple(value.append))
            else:
                lists[name] = ListChange(replace=tuple(value))
        return TaskPatch(goal=self.goal, status=self.status, lists=lists)


def size_problem(record: TaskRecord) -> tuple[str, str] | None:
    """(message, param) when the task is over a cap (after a PATCH), else None."""
    for name, values in record.lists().items():
        if len(values) > MAX_ITEMS_PER_LIST:
            return (
                f"'{name}' would hold {len(values)} items; the limit is {MAX_ITEMS_PER_LIST}.",
                name,
            )
    size = len(task_to_json(record))
    if size > MAX_TASK_BYTES:
        return (f"The task would take {size} bytes; the limit is {MAX_TASK_BYTES}.", "task")
    return None
