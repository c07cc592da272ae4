"""Forwarding and everything after the response: the answer is stored, the single
flight released, the decision recorded, the shadow check and the hit audit handed
their work. The route only renders; what happens once the response is sent is here.

Stores happen only for cacheable requests whose answer finished normally, and for
streams only once the last chunk has arrived: an aborted or failed stream is never
stored. A JSON answer is stored and recorded by `CompletionOutcome.after_response`,
which the route runs once the body is sent (the client does not wait for the write);
a stream, when its last chunk has gone out or the client has left.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from gateway.adaptive.shadow import ShadowVerifier
from gateway.completions import (
    StreamAssembler,
    finished_normally,
    hit_usage,
    new_completion_id,
    normalise_completion,
)
from gateway.errors import GatewayError, UpstreamError
from gateway.pipeline.admission import Admission
from gateway.pipeline.audit import HitAuditor
from gateway.pipeline.decision import Decision, DecisionBuilder
from gateway.pipeline.layers import CacheLayers
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.single_flight import Flight, SingleFlight
from gateway.policy.models import Policy
from gateway.providers.protocol import DROP_UNKNOWN_PARAMS, Provider
from gateway.spend.tracker import SpendTracker
from gateway.telemetry.recorder import DecisionRecorder
from gateway.telemetry.records import DecisionRecord

# (tenant, model) -> the policy in force for that model (the policy store's resolve).
PolicyResolver = Callable[[str, str], Policy]
CLIENT_CLOSED_STATUS = 499  # nginx's convention for "client went away"


@dataclass(frozen=True, slots=True)
class CompletionOutcome:
    """A whole `chat.completion`, from a cache layer or from the provider.

    The route runs `after_response` once the response has been sent: it stores the
    answer (a forwarded one) and records the decision; it returns the record."""

    completion: dict[str, Any]
    decision: Decision
    after_response: Callable[[], Awaitable[DecisionRecord]]


@dataclass(frozen=True, slots=True)
class StreamOutcome:
    """Upstream chunks, passed through as they arrive (the first is already fetched).
    Closing `chunks` early (the client left) ends the upstream call; the stream stores
    and records itself when it ends."""

    chunks: AsyncGenerator[dict[str, Any], None]
    decision: Decision


Outcome = CompletionOutcome | StreamOutcome


class AfterSend:
    def __init__(
        self,
        provider: Provider,
        layers: CacheLayers,
        flights: SingleFlight | None = None,
        policy_for: PolicyResolver | None = None,
        shadow: ShadowVerifier | None = None,
        auditor: HitAuditor | None = None,
        recorder: DecisionRecorder | None = None,
        spend: SpendTracker | None = None,
    ) -> None:
        self._spend = spend
        self._provider = provider
        self._layers = layers
        self._flights = flights
        self._policy_for = policy_for
        self._shadow = shadow
        self._auditor = auditor
        self._recorder = recorder

    # --- recording ---------------------------------------------------------------------

    def record(self, builder: DecisionBuilder, status: int) -> DecisionRecord:
        recorder, served = self._recorder, builder.served
        cost = 0.0
        if recorder is not None and served is not None:
            # Priced before the record is built: a frozen record copied to add it
            # cost a hit ~10 µs.
            cost = recorder.saved_cost(builder.request.model, served.tokens_saved, served.usage)
        record = builder.record(status, cost)
        if recorder is not None:
            record = recorder.record(record)
        if self._spend is not None and builder.served is not None and status == 200:
            self._spend.saved(builder.request, record.model, record.cost_saved_usd)
        return record

    # --- a stored answer ---------------------------------------------------------------

    def serve(self, builder: DecisionBuilder, stored: dict[str, Any]) -> CompletionOutcome:
        """The stored answer as this request's answer: the gateway's id and the
        requested model name; usage per policy `cache_hit_usage` (the stored counts,
        marked cached, or zeros; what it saved is in the decision record and the
        `x-gateway-tokens-saved` header). Sampled hits are re-asked upstream in the
        background (the false-hit audit)."""
        completion = {
            **stored,
            "id": new_completion_id(),
            "created": int(time.time()),
            "model": builder.request.model,
            "usage": hit_usage(stored.get("usage"), builder.request.policy.cache_hit_usage),
        }
        decision = builder.decision()
        if self._auditor is not None:
            self._auditor.maybe_audit(decision, completion)

        async def after_response() -> DecisionRecord:
            return self.record(builder, 200)

        return CompletionOutcome(completion, decision, after_response)

    # --- a forwarded answer ------------------------------------------------------------

    async def forward(
        self, builder: DecisionBuilder, flight: Flight | None, admission: Admission | None = None
    ) -> Outcome:
        body = builder.memory.body or builder.request.body
        if builder.request.policy.unknown_params == "drop":
            body = {**body, DROP_UNKNOWN_PARAMS: True}
        try:
            # The token limits charge only what reaches the provider (429).
            if admission is not None:
                with builder.timings.timed("rate_limit_tokens"):
                    await admission.before_forward()
            # Only what reaches the provider costs: the budget stops it here (402).
            if self._spend is not None:
                with builder.timings.timed("budget"):
                    builder.budget = await self._spend.admit(builder.request)
        except BaseException:
            await self._end_flight(flight, None)
            raise
        if builder.request.stream:
            return await self._forward_stream(builder, body, flight)
        try:
            with builder.timings.timed("forward"):
                completion = await self._provider.complete(body, report=builder.upstream)
        except BaseException:
            await self._end_flight(flight, None)
            raise
        # Noted in memory as soon as the provider answered (charged even if the client
        # leaves before the body is sent); written to the store in the background.
        self._charge(builder, body, completion)
        shareable = _shareable(builder, completion)
        if flight is not None and self._flights is not None:
            self._flights.share(flight, shareable)
        decision = builder.decision()

        async def after_response() -> DecisionRecord:
            try:
                builder.stored = await self.store(builder, completion)
            finally:
                # Replicas poll the exact cache: free their lease only once stored.
                await self._end_flight(flight, shareable)
                self._shadow_work(decision, completion)
            return self.record(builder, 200)

        return CompletionOutcome(completion, decision, after_response)

    async def _forward_stream(
        self, builder: DecisionBuilder, body: dict[str, Any], flight: Flight | None
    ) -> StreamOutcome:
        upstream = self._provider.stream(body, report=builder.upstream)
        forward_started = time.perf_counter()
        # Fetch the first chunk before answering, so that a provider that fails at once
        # gets a proper HTTP error status instead of a broken 200 stream.
        try:
            first = await anext(upstream)
        except StopAsyncIteration:
            await self._end_flight(flight, None)
            raise UpstreamError(
                f"The provider for model '{builder.request.model}' sent an empty stream."
            ) from None
        except BaseException:
            await self._end_flight(flight, None)
            raise
        builder.timings.since("forward_first_chunk", forward_started)
        relay = self._relay(builder, body, first, upstream, flight)
        return StreamOutcome(relay, builder.decision())

    async def _relay(
        self,
        builder: DecisionBuilder,
        body: dict[str, Any],
        first: dict[str, Any],
        upstream: AsyncGenerator[dict[str, Any], None],
        flight: Flight | None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        status = CLIENT_CLOSED_STATUS  # unless the stream ends or fails
        completion: dict[str, Any] | None = None
        assembler = StreamAssembler()
        try:
            assembler.add(first)
            try:
                yield first
                async for chunk in upstream:
                    assembler.add(chunk)
                    yield chunk
            except UpstreamError as exc:
                raise UpstreamError(
                    "The provider's stream for model "
                    f"'{builder.request.model}' broke off before the end.",
                    code="upstream_stream_interrupted",
                ) from exc
            finally:
                # On a client disconnect this closes the upstream call too. Shielded: the
                # disconnect cancels the response's scope, and anyio's cancellation
                # would stop any await here before it ran.
                with anyio.CancelScope(shield=True):
                    await upstream.aclose()
            # Reached only when the upstream stream ended normally and the client is
            # still reading: a disconnect closes this generator before this line.
            completion = assembler.completion()
            if flight is not None and self._flights is not None:
                self._flights.share(flight, _shareable(builder, completion))
            builder.stored = await self.store(builder, completion)
            self._shadow_work(builder.decision(), completion)
            status = 200
        except GatewayError as exc:
            # The route reports it in-band (the headers are gone already).
            status = exc.status_code
            raise
        finally:
            # Recorded first, and the flight ended shielded: after a client disconnect
            # every unshielded await here raises at once (anyio cancels the whole
            # response scope), which lost the record and left a Redis lease to expire.
            # A stream that broke off or was left is charged for what arrived.
            self._charge(builder, body, completion or _partial(assembler))
            self.record(builder, status)
            # Followers of a broken or abandoned stream forward on their own.
            with anyio.CancelScope(shield=True):
                await self._end_flight(
                    flight, None if completion is None else _shareable(builder, completion)
                )

    # --- storing -----------------------------------------------------------------------

    async def store(self, builder: DecisionBuilder, completion: dict[str, Any]) -> bool:
        """Stage 6: stores a forwarded answer in the layers its request may use;
        whether any took it."""
        target = self._store_target(builder)
        if target is None or not _should_store(builder, target, completion):
            return False
        # One stored shape whether the answer came as JSON or as a stream.
        completion = normalise_completion(completion)
        with builder.timings.timed("store"):
            stored = await self._layers.store(target, completion, builder.embedding)
        if stored and self._flights is not None:
            self._flights.note_stored(target.exact_key)
        return stored

    def _store_target(self, builder: DecisionBuilder) -> ChatRequest | None:
        """The request as the model that answered it: the request itself, or, when a
        fallback model answered, the request for that model (its own keys, its TTL and
        caches). None: not stored.

        Stored under the requested model's key, the fallback's answer would be served as
        the requested model's for the whole TTL, long after that model is back."""
        request = builder.request
        answered_by = builder.upstream.model or request.model
        if answered_by == request.model:
            return request
        if not request.policy.cache_fallback_answers:
            return None
        policy = (
            self._policy_for(request.tenant, answered_by) if self._policy_for else request.policy
        )
        return request.for_model(answered_by, policy)

    # --- spend -------------------------------------------------------------------------

    def _charge(
        self, builder: DecisionBuilder, body: dict[str, Any], answer: dict[str, Any]
    ) -> None:
        if self._spend is not None:
            self._spend.charge(
                builder.request, builder.upstream.model or builder.request.model, body, answer
            )

    # --- single flight and shadow ------------------------------------------------------

    async def _end_flight(self, flight: Flight | None, completion: dict[str, Any] | None) -> None:
        if flight is None or self._flights is None:
            return
        self._flights.share(flight, completion)
        await self._flights.release(flight)

    def _shadow_work(self, decision: Decision, completion: dict[str, Any]) -> None:
        """Shadow verification of a forwarded answer, in its own task."""
        if self._shadow is not None:
            self._shadow.schedule(decision, completion)


def _shareable(builder: DecisionBuilder, completion: dict[str, Any]) -> dict[str, Any] | None:
    """The leader's answer for its followers, unless a fallback model gave it:
    followers asked for the requested model and would be served the answer as
    that model's. They forward on their own instead (and fall back themselves)."""
    request = builder.request
    return completion if (builder.upstream.model or request.model) == request.model else None


def _partial(assembler: StreamAssembler) -> dict[str, Any]:
    """What a stream had brought when it ended early (its usage, if it came)."""
    try:
        return assembler.completion()
    except Exception:  # nothing assembled to speak of: priced by its usage alone
        return {"usage": assembler.usage} if assembler.usage else {}


def _should_store(
    builder: DecisionBuilder, target: ChatRequest, completion: dict[str, Any]
) -> bool:
    return (
        builder.cacheable
        and not target.cache_control.no_store
        # An answer written with this user's memories in the prompt is about this
        # user: it never goes into the shared cache. One written with tenant knowledge
        # alone is stored under keys naming those items (`knowledge_digest.py`).
        and (builder.memory.tokens == 0 or target.knowledge_digest is not None)
        and finished_normally(completion, target.policy.cacheable_finish_reasons)
    )
