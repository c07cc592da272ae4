"""Who a request's memories belong to: user, session and namespace from headers (or
the body's `user`), validated the same way for chat and the memory API."""

from __future__ import annotations

import re

from fastapi import Request

from gateway.auth import Principal
from gateway.errors import Forbidden, InvalidRequest
from gateway.tasks.records import MAX_TASK_ID_CHARS, TASK_ID

USER_HEADER = "x-gateway-user"
SESSION_HEADER = "x-gateway-session"
NAMESPACE_HEADER = "x-gateway-namespace"
TASK_HEADER = "x-gateway-task"
TENANT_HEADER = "x-gateway-tenant"
# Printable, no control characters; long enough for emails and UUIDs.
_IDENTIFIER = re.compile(r"[^\x00-\x1f\x7f]{1,256}")


def checked_identifier(value: str, name: str) -> str:
    if not _IDENTIFIER.fullmatch(value) or not value.strip():
        raise InvalidRequest(
            f"'{name}' must be 1-256 printable characters.", param=name, code="invalid_scope"
        )
    return value


def scope_header(request: Request, header: str) -> str | None:
    value = request.headers.get(header)
    return None if value is None else checked_identifier(value, header)


def memory_user(request: Request, body_user: object, principal: Principal) -> str | None:
    """`x-gateway-user`, else the body's `user` (a string), else None. Both given and
    different is refused: the gateway will not guess whose memories to use. A key bound
    to a user speaks for that user: naming another is a 403, naming none is that user."""
    user = _named_user(request, body_user)
    return user if principal.bound_user is None else bound_user(principal.bound_user, user)


def bound_user(bound: str, named: str | None) -> str:
    """The user of a key bound to `bound`, when the request names `named`."""
    if named is not None and named != bound:
        raise Forbidden(
            "This API key speaks for one user only; it cannot act for another.",
            param="user",
            code="user_not_allowed",
        )
    return bound


def _named_user(request: Request, body_user: object) -> str | None:
    header = scope_header(request, USER_HEADER)
    body = body_user if isinstance(body_user, str) and body_user else None
    if body is not None:
        checked_identifier(body, "user")
    if header is not None and body is not None and header != body:
        raise InvalidRequest(
            f"'{USER_HEADER}' and the body's 'user' name different users.",
            param="user",
            code="conflicting_user",
        )
    return header or body


def task_header(request: Request) -> str | None:
    """`x-gateway-task`: a task id (the same characters as the task API's ids)."""
    value = request.headers.get(TASK_HEADER)
    if value is None:
        return None
    if not TASK_ID.fullmatch(value):
        raise InvalidRequest(
            f"'{TASK_HEADER}' must be a task id: 1-{MAX_TASK_ID_CHARS} letters, digits "
            "and . _ : = @ + -.",
            param=TASK_HEADER,
            code="invalid_task_id",
        )
    return value


def request_tenant(request: Request, principal: Principal) -> str:
    """The tenant an API request acts for: the key's own; an admin key names it with
    `x-gateway-tenant` (or the `tenant` query parameter)."""
    asked = request.headers.get(TENANT_HEADER) or request.query_params.get("tenant")
    if principal.is_admin:
        if not asked:
            raise InvalidRequest(
                f"Admin keys must name the tenant with '{TENANT_HEADER}'.",
                param=TENANT_HEADER,
                code="tenant_required",
            )
        return checked_identifier(asked, TENANT_HEADER)
    if asked and asked != principal.tenant:
        raise Forbidden("This API key cannot act for another tenant.")
    return principal.tenant
