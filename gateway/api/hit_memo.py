"""The chat requests the exact-hit shortcut may answer: bodies the full path has already
parsed, validated, classified cacheable and keyed, and answered with an exact hit.

Validation, classification and the key depend only on the body's bytes, the caller and
the policy in force, so the same bytes from the same caller under the same policy object
(a reload builds new ones) get the same verdict and key again: the shortcut reuses them
instead of recomputing them. Kept per process, bounded (least recently used first out),
and only for small bodies without any header or field that changes how the request is
handled (those take the full path every time).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from gateway.auth import Principal
from gateway.bounded_lru import BoundedLRU
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer
from gateway.pipeline.request import ChatRequest
from gateway.policy.models import Policy
from gateway.turn import ParsedTurn


def body_digest(raw: bytes) -> bytes:
    return hashlib.sha256(raw).digest()


@dataclass(frozen=True, slots=True)
class KnownRequest:
    """What the full path worked out for one body: reused only by the same caller
    under the same policy object."""

    tenant: str
    key_id: str | None
    model: str
    policy: Policy
    body: dict[str, Any]
    exact_key: str
    turn: ParsedTurn | None
    key_text: str | None

    def matches(self, principal: Principal, policy: Policy) -> bool:
        return (
            principal.tenant == self.tenant
            and principal.key_id == self.key_id
            and principal.bound_user is None
            and not principal.is_admin
            and policy is self.policy
        )


def _plain_exact_hit(chat: ChatRequest, decision: Decision) -> bool:
    """An exact hit of a request nothing but its body, caller and policy shaped."""
    return (
        decision.layer is Layer.EXACT
        and not decision.coalesced
        and decision.memory.tokens == 0
        and not chat.stream
        and chat.user is None
        and chat.session is None
        and chat.namespace is None
        and chat.task is None
        and chat.knowledge_digest is None
        and chat.cache_control.no_cache is False
        and chat.cache_control.no_store is False
        and chat.cache_control.max_age_seconds is None
        and chat.cache_control.ttl_seconds is None
        and chat.principal.bound_user is None
        and not chat.principal.is_admin
    )


class HitMemo:
    def __init__(self, max_entries: int, max_body_bytes: int) -> None:
        self.max_body_bytes = max_body_bytes
        self._max_entries = max_entries
        self._known: BoundedLRU[bytes, KnownRequest] = BoundedLRU(max_entries)

    def __len__(self) -> int:
        return len(self._known)

    def recall(self, digest: bytes) -> KnownRequest | None:
        return self._known.get(digest)

    def learn(self, raw: bytes, chat: ChatRequest, decision: Decision) -> None:
        """Remember `raw` when the full path answered it with a plain exact hit."""
        if self._max_entries == 0 or len(raw) > self.max_body_bytes:
            return
        if not _plain_exact_hit(chat, decision):
            return
        exact_key = chat.exact_key_if_computed
        if exact_key is None:
            return
        self._known.put(
            body_digest(raw),
            KnownRequest(
                tenant=chat.tenant,
                key_id=chat.principal.key_id,
                model=chat.model,
                policy=chat.policy,
                body=chat.body,
                exact_key=exact_key,
                turn=chat.turn_if_parsed,
                key_text=chat.key_text_if_computed,
            ),
        )
