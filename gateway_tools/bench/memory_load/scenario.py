"""Who sends what in `benchmarks/memory_load.py`: two tenants, two users in each, and
the request kinds measured side by side.

- tenant `bench-kb` holds the knowledge base (10,000 items by default), tenant
  `bench-plain` none;
- in each tenant, user `user-full` holds the memories (1,000 by default) and
  `user-empty` none.

So "memories + knowledge", "knowledge only", "memories only" and the reference
"neither" (a user with no memories in a tenant with no knowledge) are four users, each
sent with and without `x-gateway-session`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ADMIN_KEY = "sk-bench-admin"
FULL_USER = "user-full"
EMPTY_USER = "user-empty"


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    api_key: str


KNOWLEDGE_TENANT = Tenant("bench-kb", "sk-bench-kb")
PLAIN_TENANT = Tenant("bench-plain", "sk-bench-plain")
TENANTS = (KNOWLEDGE_TENANT, PLAIN_TENANT)


def auth_section() -> dict[str, Any]:
    """The gateway config's `auth`: both tenants and the admin key (knowledge writes,
    decision records)."""
    return {
        "tenants": [{"name": t.name, "api_keys": [t.api_key]} for t in TENANTS],
        "admin_keys": [ADMIN_KEY],
    }


@dataclass(frozen=True, slots=True)
class Kind:
    """One series of requests: a tenant, a user (None: no user) and a session."""

    name: str
    tenant: Tenant
    user: str | None
    session: bool = False

    @property
    def slug(self) -> str:
        """The kind as request-id characters (`[A-Za-z0-9._:-]`)."""
        return "".join(c if c.isalnum() else "-" for c in self.name).strip("-")

    def headers(self, request_id: str, session_id: str) -> str:
        """Header lines (each ending in CRLF) of one request of this kind."""
        lines = [f"x-request-id: {request_id}\r\n"]
        if self.user is not None:
            lines.append(f"x-gateway-user: {self.user}\r\n")
        if self.session:
            lines.append(f"x-gateway-session: {session_id}\r\n")
        return "".join(lines)


BOTH_KIND = "memories + knowledge"
KNOWLEDGE_KIND = "knowledge only"
MEMORIES_KIND = "memories only"
NEITHER_KIND = "neither (reference)"
_SCOPES = (
    (BOTH_KIND, KNOWLEDGE_TENANT, FULL_USER),
    (KNOWLEDGE_KIND, KNOWLEDGE_TENANT, EMPTY_USER),
    (MEMORIES_KIND, PLAIN_TENANT, FULL_USER),
    (NEITHER_KIND, PLAIN_TENANT, EMPTY_USER),
)
SESSION_SUFFIX = ", session"


def miss_kinds() -> tuple[Kind, ...]:
    """Every scope without a session, then with one."""
    plain = tuple(Kind(name, tenant, user) for name, tenant, user in _SCOPES)
    with_session = tuple(
        Kind(name + SESSION_SUFFIX, tenant, user, session=True) for name, tenant, user in _SCOPES
    )
    return plain + with_session


NO_USER_HIT = "no user"
MEMORIES_HIT = "user with memories"
BOTH_HIT = "user with memories, tenant with knowledge"


def hit_kinds() -> tuple[Kind, ...]:
    """Exact hits: without a user, and by users whose memories (and, in the knowledge
    tenant, the tenant's knowledge) are retrieved before the lookup."""
    return (
        Kind(NO_USER_HIT, KNOWLEDGE_TENANT, None),
        Kind(MEMORIES_HIT, PLAIN_TENANT, FULL_USER),
        Kind(BOTH_HIT, KNOWLEDGE_TENANT, FULL_USER),
    )
