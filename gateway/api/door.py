"""What every API in front of the pipeline shares: the neutral request built from a
translated body, the pipeline call, and the gateway's response headers.

Each API (`chat.py` for Chat Completions, and the other doors) parses its own body,
translates it into the chat-completions body the pipeline works on, builds the request
here, lets the pipeline handle it and renders the outcome in its own format. So the
classifier, keys, caches, memory, single flight and store behave the same for the same
question asked through any of them.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from gateway.api.cache_headers import CACHE_TTL_HEADER, request_cache_control
from gateway.api.deps import request_id
from gateway.api.model_access import check_model_allowed
from gateway.api.scope import (
    NAMESPACE_HEADER,
    SESSION_HEADER,
    TASK_HEADER,
    USER_HEADER,
    memory_user,
    scope_header,
    task_header,
)
from gateway.auth import Principal
from gateway.errors import GatewayError, ModelNotFound
from gateway.limits.admission import RateAdmission
from gateway.limits.outcome import settle_outcome
from gateway.limits.service import NO_GRANT, Grant
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome, StreamOutcome
from gateway.wiring import Services

MODEL_HEADER = "x-gateway-model"
# scope["state"] key: the rate-limit grant the exact-hit shortcut (`hit_shortcut.py`)
# charged before handing the request to the full path, which then charges nothing again.
PREADMITTED_GRANT = "gateway.preadmitted_grant"


def cache_headers(decision: Decision) -> dict[str, str]:
    # The provider's allow-listed headers (rate limits, retry-after, its request id)
    # when it was called; the gateway's own come after and win.
    headers = dict(decision.upstream.headers)
    # Which model answered: a fallback's name when the requested model's deployments
    # failed (the body's `model` is what that provider reported).
    headers[MODEL_HEADER] = decision.answered_by
    layer = decision.layer
    headers["x-gateway-cache"] = layer.value
    if decision.reason is not None and layer in (Layer.MISS, Layer.BYPASS):
        headers["x-gateway-cache-reason"] = decision.reason.value
    if layer is Layer.SEMANTIC and decision.similarity is not None:
        diagnostics = decision.diagnostics
        # The raw cosine of the two asks' embeddings; the calibrated estimate (the
        # precision of serving from there, `gateway/embed/calibration.py`) and what
        # separated the asks have headers of their own.
        if diagnostics.cosine is not None:
            headers["x-gateway-similarity"] = f"{diagnostics.cosine:.4f}"
        headers["x-gateway-calibrated-similarity"] = f"{decision.similarity:.4f}"
        if diagnostics.difference is not None:
            headers["x-gateway-difference"] = diagnostics.difference
    if layer in (Layer.EXACT, Layer.SEMANTIC):
        served = decision.served
        headers["x-gateway-tokens-saved"] = str(0 if served is None else served.tokens_saved)
        if served is not None:
            # HTTP's `Age`: how long ago the served answer was stored (cf. max-age).
            headers["age"] = str(served.age_seconds)
    headers["x-gateway-memory-tokens"] = str(decision.memory.tokens)
    if decision.memory.task_outcome is not None:
        headers["x-gateway-task-outcome"] = decision.memory.task_outcome
    if decision.memory.dropped_messages is not None:
        headers["x-gateway-dropped-messages"] = str(decision.memory.dropped_messages)
        headers["x-gateway-truncated-tool-results"] = str(decision.memory.truncated_tool_results)
    if decision.coalesced:
        # Served with the answer of a concurrent identical request (single flight).
        headers["x-gateway-coalesced"] = "1"
    if decision.budget is not None:
        # Forwarded under a budget: what was left of it, and a warning past the soft share.
        headers.update(decision.budget.headers())
    return headers


# Every request header `chat_request` reads to decide how a request is handled. The
# exact-hit shortcut (`hit_shortcut.py`) answers only requests that carry none of them, so
# a header added here is one the shortcut can never ignore.
HANDLING_HEADERS = (
    "cache-control",
    CACHE_TTL_HEADER,
    USER_HEADER,
    SESSION_HEADER,
    NAMESPACE_HEADER,
    TASK_HEADER,
)


def chat_request(
    request: Request, services: Services, principal: Principal, model: str, body: dict[str, Any]
) -> ChatRequest:
    """The pipeline's request for a chat-completions `body` (validated, or translated
    from another API's), asked by `principal` over `request`."""
    check_model_allowed(principal, model)
    if not services.provider.has_model(model):
        raise ModelNotFound(f"The model '{model}' does not exist.", param="model")
    return ChatRequest(
        request_id=request_id(request),
        principal=principal,
        model=model,
        body=body,
        policy=services.policies.resolve(principal.tenant, model),
        cache_control=request_cache_control(request),
        user=memory_user(request, body.get("user"), principal),
        session=scope_header(request, SESSION_HEADER),
        namespace=scope_header(request, NAMESPACE_HEADER),
        task=task_header(request),
    )


def preadmitted(request: Request) -> Grant | None:
    """What the exact-hit shortcut already charged for this request (once)."""
    state = request.scope.get("state")
    grant = None if state is None else state.pop(PREADMITTED_GRANT, None)
    return grant if isinstance(grant, Grant) else None


async def handle(
    services: Services, chat: ChatRequest, grant: Grant | None = None
) -> CompletionOutcome | StreamOutcome:
    """The pipeline's outcome; an unexpected failure becomes the gateway's 500. The
    rate limits come first (a 429 before even an exact hit): their request check runs
    alongside the exact read, their token charge just before the provider is called
    (`gateway/limits/admission.py`), and they settle once the answer is known;
    `grant`: what the exact-hit shortcut charged already."""
    limits = services.rate_limits
    # A tenant without limits has nothing to check or charge: the pipeline gets none.
    admission = (
        RateAdmission(limits, chat, grant) if grant is not None or limits.applies(chat) else None
    )
    try:
        outcome = await services.pipeline.handle(chat, admission)
    except GatewayError:
        limits.settle(await _charged(admission), None)
        raise
    except Exception as exc:
        limits.settle(await _charged(admission), None)
        raise GatewayError("The gateway failed to handle this request.") from exc
    charged = NO_GRANT if admission is None else admission.grant
    return settle_outcome(limits, charged, outcome, chat.model)


async def _charged(admission: RateAdmission | None) -> Grant:
    """What a failed request was charged (its check awaited, if the pipeline had not)."""
    if admission is None:
        return NO_GRANT
    await admission.close()
    return admission.grant
