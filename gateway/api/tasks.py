"""The task API: `PUT/POST/GET/PATCH/DELETE /v1/tasks/{id}`, `GET /v1/tasks`.

A task is per tenant (the API key's; an admin key names it with `x-gateway-tenant`) and
user (`x-gateway-user`, or the body's / query's `user`), looked up by its exact id:
`order_id=123` and `order_id=124` are two tasks, whatever they say. Another user's
task answers 404, exactly like one that does not exist.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.responses import json_response
from gateway.api.schemas import parse_body
from gateway.api.scope import memory_user, request_tenant
from gateway.api.task_schemas import TaskIn, TaskPatchIn, size_problem
from gateway.auth import Principal
from gateway.errors import GatewayError, InvalidRequest, StoreUnavailableResponse
from gateway.policy.working_memory import TaskPolicy
from gateway.storage.agent_protocols import TaskStore
from gateway.storage.protocols import StoreUnavailable
from gateway.tasks.patch import apply_patch, with_status
from gateway.tasks.records import MAX_TASK_ID_CHARS, TASK_ID, TaskRecord, TaskStatus
from gateway.wiring import Services

router = APIRouter()

# A PATCH re-reads and retries this often when concurrent writes keep changing the task.
_PATCH_ATTEMPTS = 5


class TaskNotFound(
    GatewayError, status_code=404, error_type="invalid_request_error", code="task_not_found"
):
    pass


class TaskConflict(GatewayError, status_code=409, error_type="invalid_request_error"):
    pass


@asynccontextmanager
async def _store_errors() -> AsyncIterator[None]:
    try:
        yield
    except StoreUnavailable:
        raise StoreUnavailableResponse("The task store is unavailable; retry shortly.") from None


class _Scope:
    """Who a task request acts for, and with what."""

    def __init__(
        self, request: Request, services: Services, principal: Principal, body_user: object
    ) -> None:
        self.tenant = request_tenant(request, principal)
        user = memory_user(request, body_user or request.query_params.get("user"), principal)
        if user is None:
            raise InvalidRequest(
                "Name the user with 'x-gateway-user' or the 'user' field.",
                param="user",
                code="user_required",
            )
        self.user = user
        self.store: TaskStore = services.storage.tasks
        self.policy: TaskPolicy = services.policies.resolve(self.tenant, "").tasks
        self.include_archived = _flag(request, "include_archived")
        self.now = time.time()

    def show(self, record: TaskRecord) -> dict[str, object]:
        return record.to_api(self.now, self.policy.archive_after_done_seconds)

    async def live(self, task_id: str) -> TaskRecord:
        """The task, or a 404 (also for an archived one unless `include_archived`)."""
        async with _store_errors():
            record = await self.store.get(self.tenant, self.user, task_id)
        if record is None:
            raise TaskNotFound(f"No task '{task_id}'.", param="id")
        if not self.include_archived and record.archived(
            self.now, self.policy.archive_after_done_seconds
        ):
            raise TaskNotFound(
                f"Task '{task_id}' is archived (done for longer than "
                f"tasks.archive_after_done_seconds); read it with ?include_archived=true.",
                param="id",
                code="task_archived",
            )
        return record


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw.lower() in ("false", "0"):
        return False
    if raw.lower() in ("true", "1"):
        return True
    raise InvalidRequest(f"'{name}' must be true or false.", param=name)


def _checked_id(task_id: str) -> str:
    if not TASK_ID.fullmatch(task_id):
        raise InvalidRequest(
            f"A task id is 1-{MAX_TASK_ID_CHARS} characters of letters, digits and . _ : = @ + -.",
            param="id",
            code="invalid_task_id",
        )
    return task_id


def _new_record(scope: _Scope, task_id: str, body: TaskIn) -> TaskRecord:
    record = TaskRecord(
        tenant=scope.tenant,
        user=scope.user,
        task_id=task_id,
        goal=body.goal,
        created_at=scope.now,
        updated_at=scope.now,
        constraints=tuple(body.constraints),
        decisions=tuple(body.decisions),
        artifacts=tuple(body.artifacts),
        open_questions=tuple(body.open_questions),
    )
    status, done_at = with_status(record, body.status, scope.now)
    return replace(record, status=status, done_at=done_at)


def _checked_size(record: TaskRecord) -> TaskRecord:
    problem = size_problem(record)
    if problem is not None:
        raise InvalidRequest(problem[0], param=problem[1], code="task_too_large")
    return record


async def _create(scope: _Scope, record: TaskRecord) -> bool:
    """True when created; False when the id is taken; 409 at the per-user cap."""
    async with _store_errors():
        outcome = await scope.store.create(record, scope.policy.max_tasks_per_user)
    if outcome == "limit":
        raise TaskConflict(
            f"The user already has {scope.policy.max_tasks_per_user} tasks "
            "(tasks.max_tasks_per_user); delete some to make room.",
            param="id",
            code="task_limit_reached",
        )
    return outcome == "created"


async def _scope(request: Request, services: Services, body_user: object = None) -> _Scope:
    return _Scope(request, services, await authenticate(request, services), body_user)


async def _body(request: Request, services: Services, schema: type[TaskIn]) -> TaskIn:
    raw = await read_body(request, services.config.server.max_request_bytes)
    return parse_body(raw, schema)[1]


@router.post("/v1/tasks/{task_id}", status_code=201)
async def create_task(request: Request, services: AppServices, task_id: str) -> Response:
    body = await _body(request, services, TaskIn)
    scope = await _scope(request, services, body.user)
    record = _checked_size(_new_record(scope, _checked_id(task_id), body))
    if not await _create(scope, record):
        raise TaskConflict(
            f"Task '{task_id}' already exists; PUT replaces it, PATCH updates it.",
            param="id",
            code="task_exists",
        )
    return json_response(scope.show(record), status=201)


@router.put("/v1/tasks/{task_id}")
async def put_task(request: Request, services: AppServices, task_id: str) -> Response:
    """Create or replace; a replaced task keeps its creation time."""
    body = await _body(request, services, TaskIn)
    scope = await _scope(request, services, body.user)
    fresh = _checked_size(_new_record(scope, _checked_id(task_id), body))
    for _ in range(_PATCH_ATTEMPTS):
        async with _store_errors():
            stored = await scope.store.get(scope.tenant, scope.user, task_id)
        if stored is None:
            if await _create(scope, fresh):
                return json_response(scope.show(fresh), status=201)
            continue  # created concurrently: replace it
        status, done_at = with_status(stored, body.status, scope.now)
        record = replace(
            fresh,
            created_at=stored.created_at,
            revision=stored.revision + 1,
            status=status,
            done_at=done_at,
        )
        async with _store_errors():
            if await scope.store.replace(record, stored.revision):
                return json_response(scope.show(record))
    raise _busy(task_id)


def _busy(task_id: str) -> TaskConflict:
    return TaskConflict(
        f"Task '{task_id}' kept changing during this write; retry.", code="task_write_conflict"
    )


@router.patch("/v1/tasks/{task_id}")
async def patch_task(request: Request, services: AppServices, task_id: str) -> Response:
    raw = await read_body(request, services.config.server.max_request_bytes)
    patch_in = parse_body(raw, TaskPatchIn)[1]
    scope = await _scope(request, services, patch_in.user)
    patch = patch_in.to_patch()
    for _ in range(_PATCH_ATTEMPTS):
        stored = await scope.live(_checked_id(task_id))
        record = _checked_size(apply_patch(stored, patch, scope.now))
        async with _store_errors():
            if await scope.store.replace(record, stored.revision):
                return json_response(scope.show(record))
    raise _busy(task_id)


@router.get("/v1/tasks/{task_id}")
async def get_task(request: Request, services: AppServices, task_id: str) -> Response:
    scope = await _scope(request, services)
    return json_response(scope.show(await scope.live(_checked_id(task_id))))


@router.delete("/v1/tasks/{task_id}")
async def delete_task(request: Request, services: AppServices, task_id: str) -> Response:
    scope = await _scope(request, services)
    async with _store_errors():
        deleted = await scope.store.delete(scope.tenant, scope.user, _checked_id(task_id))
    if not deleted:
        raise TaskNotFound(f"No task '{task_id}'.", param="id")
    return json_response({"id": task_id, "object": "task.deleted", "deleted": True})


@router.get("/v1/tasks")
async def list_tasks(request: Request, services: AppServices) -> Response:
    scope = await _scope(request, services)
    status = _status_filter(request)
    async with _store_errors():
        records = await scope.store.list(scope.tenant, scope.user, status)
    keep_after = scope.policy.archive_after_done_seconds
    shown = [
        scope.show(record)
        for record in records
        if scope.include_archived or not record.archived(scope.now, keep_after)
    ]
    return json_response({"object": "list", "data": shown})


def _status_filter(request: Request) -> TaskStatus | None:
    raw = request.query_params.get("status")
    if raw is None:
        return None
    if raw not in ("open", "done"):
        raise InvalidRequest("'status' must be open or done.", param="status")
    return "open" if raw == "open" else "done"
