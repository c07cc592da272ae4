"""The request as the pipeline sees it: one immutable value, built by the route.

What the client sent (body, cache controls, memory scope) and what the gateway resolved
for it (principal, policy) never change while the stages run. What is derived from it
is computed once, on first use, and shared by every stage: the parsed last user turn
(ask, material, attachments: `gateway/turn/`), the text memory searches by, the
exact-cache key and the semantic compatibility fingerprint. The stage that runs first
pays for them; the record shows what was computed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from gateway.auth import Principal
from gateway.cache.keys import compatibility_fingerprint, exact_cache_key
from gateway.pipeline.cache_controls import CacheControl
from gateway.policy.models import Policy
from gateway.turn import (
    ParsedTurn,
    key_text,
    last_user_turn_chars,
    parse_last_user_turn,
)

# The last user turn is split in a worker thread above this many characters.
TURN_IN_THREAD_ABOVE_CHARS = 64 * 1024


class _Derived:
    """The memo of what is computed from a request; one per request value."""

    __slots__ = ("exact_key", "fingerprint", "key_text", "turn")

    def __init__(self, turn: ParsedTurn | None = None) -> None:
        self.turn = turn
        self.exact_key: str | None = None
        self.fingerprint: str | None = None
        self.key_text: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    request_id: str
    principal: Principal
    model: str
    body: dict[str, Any]
    policy: Policy
    cache_control: CacheControl = field(default_factory=CacheControl)
    # memory scope: `x-gateway-user` (else the body's `user`), `x-gateway-session`,
    # `x-gateway-namespace`
    user: str | None = None
    session: str | None = None
    namespace: str | None = None
    # `x-gateway-task`: the task whose state is injected (exact key, see task_state.py)
    task: str | None = None
    # The digest of the tenant knowledge injected into a request that stays cacheable
    # (`knowledge_digest.py`): part of its cache namespace, so that an answer is shared
    # only by requests given the same items. None: no knowledge-only injection.
    knowledge_digest: str | None = None
    started_at: float = field(default_factory=time.perf_counter)
    _derived: _Derived = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_derived", _Derived())

    @property
    def tenant(self) -> str:
        return self.principal.tenant

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages") or []

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))

    def cache_namespace(self) -> dict[str, str]:
        """What, besides the request, separates cache entries: the policy's version and
        declared versions, the client's `x-gateway-namespace`, and the digest of the
        knowledge injected when it is all that was (absent otherwise: keys unchanged)."""
        namespace = {**self.policy.cache_namespace(), "namespace": self.namespace or ""}
        if self.knowledge_digest is not None:
            namespace["knowledge"] = self.knowledge_digest
        return namespace

    # --- the last user turn, parsed once -----------------------------------------------

    async def prepare_turn(self) -> None:
        """Splits a long last user turn now, in a worker thread, so that the event loop
        serves other requests meanwhile (a 3 MB turn took ~200 ms to split); shorter
        ones are split in place when first needed (cheaper than the thread hop)."""
        derived = self._derived
        if (
            derived.turn is None
            and last_user_turn_chars(self.messages) > TURN_IN_THREAD_ABOVE_CHARS
        ):
            derived.turn = await asyncio.to_thread(
                parse_last_user_turn, self.messages, self.policy.semantic_cache.max_query_chars
            )

    @property
    def turn(self) -> ParsedTurn:
        """The last user turn split into ask, material and attachments, shared by the
        classifier (which judges the ask) and the semantic cache."""
        derived = self._derived
        if derived.turn is None:
            derived.turn = parse_last_user_turn(
                self.messages, self.policy.semantic_cache.max_query_chars
            )
        return derived.turn

    @property
    def turn_if_parsed(self) -> ParsedTurn | None:
        """The parsed turn when a stage needed it (the decision record's shape)."""
        return self._derived.turn

    @property
    def key_text(self) -> str:
        """The memory and record view of the last user turn (`gateway.turn.key_text`)."""
        derived = self._derived
        if derived.key_text is None:
            derived.key_text = key_text(self.messages)
        return derived.key_text

    # --- cache keys, computed once ------------------------------------------------------

    @property
    def exact_key(self) -> str:
        derived = self._derived
        if derived.exact_key is None:
            derived.exact_key = exact_cache_key(
                tenant=self.tenant,
                namespace=self.cache_namespace(),
                model=self.model,
                body=self.body,
            )
        return derived.exact_key

    @property
    def key_text_if_computed(self) -> str | None:
        return self._derived.key_text

    def reuse_derived(self, exact_key: str, turn: ParsedTurn | None, key_text: str | None) -> None:
        """What was computed for the same body, caller and policy before (the exact-hit
        shortcut, `gateway/api/hit_memo.py`): not computed again."""
        derived = self._derived
        derived.exact_key, derived.turn, derived.key_text = exact_key, turn, key_text

    @property
    def exact_key_if_computed(self) -> str | None:
        """The exact key when a stage needed it (the decision record's `cache_key`)."""
        return self._derived.exact_key

    @property
    def fingerprint(self) -> str:
        """The semantic compatibility fingerprint: everything but the ask."""
        derived = self._derived
        if derived.fingerprint is None:
            derived.fingerprint = compatibility_fingerprint(
                tenant=self.tenant,
                namespace=self.cache_namespace(),
                model=self.model,
                body=self.body,
                turn=self.turn,
            )
        return derived.fingerprint

    def for_model(self, model: str, policy: Policy) -> ChatRequest:
        """This request as one for `model` under `policy` (a fallback model's answer is
        stored as that model's): its own keys, the same parsed turn."""
        # `_derived` is not an init field: `replace` gives the copy a memo of its own.
        other = dataclasses.replace(self, model=model, policy=policy)
        other._derived.turn = self._derived.turn
        return other

    def with_knowledge(self, digest: str) -> ChatRequest:
        """This request as one answered with the knowledge whose digest is `digest`:
        its own cache keys, the same parsed turn and memory text."""
        other = dataclasses.replace(self, knowledge_digest=digest)
        other._derived.turn = self._derived.turn
        other._derived.key_text = self._derived.key_text
        return other

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started_at) * 1000, 3)
