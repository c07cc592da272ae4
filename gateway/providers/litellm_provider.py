"""The gateway's only door to litellm: `litellm.acompletion` / `aembedding`, with the
deployment picked, retried and fallen back by `DeploymentRouter` (routing.py); and what
the app asks of it (warm-up, context windows and prices from litellm's bundled model
map, the request parameters litellm reserves: `litellm_params.py`).

litellm is imported inside `LiteLLMProvider.create` (called from the app's lifespan),
never at module import: importing it costs seconds and, unless told otherwise, fetches a
cost map over the network.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from gateway.errors import InvalidRequest, UpstreamError
from gateway.providers.as_sent import as_sent_call, without_as_sent
from gateway.providers.deployment_limits import DeploymentsBusy
from gateway.providers.headers import SHOULD_RETRY_HEADER, passthrough_headers
from gateway.providers.litellm_params import (
    litellm_reserved_parameter,
    litellm_user_content_part_types,
)
from gateway.providers.protocol import UpstreamReport
from gateway.providers.routing import (
    Call,
    DeploymentRouter,
    RouteTrace,
    deployments_from_config,
    error_headers,
    is_retryable,
)
from gateway.settings import GatewayConfig
from gateway.storage.rate_limiting import RateLimiter
from gateway.telemetry.log_hygiene import quiet_leaky_loggers

logger = logging.getLogger(__name__)

# (model, prompt tokens, completion tokens) triples whose price is remembered.
_COST_MEMO_ENTRIES = 4096

# Keys litellm adds to responses that OpenAI's do not have; dropped when empty.
_LITELLM_ONLY_KEYS = frozenset(
    {"provider_specific_fields", "citations", "moderation", "obfuscation", "audio"}
)
# Keys OpenAI sends as explicit nulls; clients may look for them.
_KEEP_NULL_KEYS = frozenset({"content", "finish_reason", "logprobs"})
_SECRET_PATTERN = re.compile(r"(sk|pk|rk|key|token)[-_][A-Za-z0-9_\-]{6,}", re.IGNORECASE)
_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+:\s*)?(\w+Error:\s*)?(\w+Exception\s*-\s*)?")


def clean_response(value: Any) -> Any:
    """Drop nulls and litellm-only fields so clients see OpenAI's shape."""
    if isinstance(value, dict):
        cleaned = {}
        for key, item in value.items():
            if item is None and key not in _KEEP_NULL_KEYS:
                continue
            if key in _LITELLM_ONLY_KEYS and not item:
                continue
            cleaned[key] = clean_response(item)
        return cleaned
    if isinstance(value, list):
        return [clean_response(item) for item in value]
    return value


def _upstream_message(exc: BaseException) -> str:
    """The provider's own explanation, without litellm's prefixes or anything key-like."""
    text = str(getattr(exc, "message", None) or exc).split("\n", 1)[0]
    text = _LITELLM_PREFIX.sub("", text).strip()
    text = _SECRET_PATTERN.sub("[redacted]", text)
    return text[:500] or "upstream error"


@dataclass(frozen=True, slots=True)
class _ErrorRule:
    exception_names: tuple[str, ...]  # classes in litellm.exceptions
    status: int
    error_type: str
    code: str
    # None: pass on the provider's own (redacted) explanation.
    message: str | None


# First match wins: ContextWindowExceededError is a BadRequestError, so it comes first.
_ERROR_RULES = (
    _ErrorRule(
        ("Timeout",),
        504,
        "timeout_error",
        "upstream_timeout",
        "The provider for model '{model}' did not answer in time.",
    ),
    _ErrorRule(
        ("RateLimitError",),
        429,
        "rate_limit_error",
        "rate_limit_exceeded",
        "The provider for model '{model}' is rate limiting requests; retry later.",
    ),
    _ErrorRule(
        ("ContextWindowExceededError",),
        400,
        "invalid_request_error",
        "context_length_exceeded",
        None,
    ),
    _ErrorRule(
        ("AuthenticationError", "PermissionDeniedError"),
        502,
        "upstream_error",
        "upstream_auth_error",
        "The provider rejected the gateway's credentials for model '{model}'.",
    ),
    _ErrorRule(
        ("NotFoundError",),
        502,
        "upstream_error",
        "upstream_not_found",
        "The provider does not know the deployment behind model '{model}'.",
    ),
    _ErrorRule(
        ("BadRequestError", "UnprocessableEntityError"),
        400,
        "invalid_request_error",
        "upstream_rejected_request",
        None,
    ),
    _ErrorRule(
        ("APIConnectionError",),
        502,
        "upstream_error",
        "upstream_unavailable",
        "Could not reach the provider for model '{model}'.",
    ),
)


def map_exception(exc: BaseException, model: str) -> UpstreamError:
    """litellm's exception tree -> the status and envelope the client gets."""
    from litellm import exceptions as errors  # imported by create() already; cheap

    for rule in _ERROR_RULES:
        classes = tuple(getattr(errors, name) for name in rule.exception_names)
        if isinstance(exc, classes):
            message = rule.message.format(model=model) if rule.message else _upstream_message(exc)
            return UpstreamError(
                message, status_code=rule.status, error_type=rule.error_type, code=rule.code
            )
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500 and status not in (401, 403, 404):
        return UpstreamError(
            _upstream_message(exc), status_code=status, error_type="invalid_request_error"
        )
    return UpstreamError(
        f"The provider for model '{model}' failed to answer.",
        status_code=502,
        code="upstream_error",
    )


def error_for_client(exc: BaseException, model: str, trace: RouteTrace) -> UpstreamError:
    """`map_exception`, with the provider's allow-listed headers and `x-should-retry`.

    `x-should-retry: true` only when another try might succeed and the gateway made
    just one call: once it has retried (or fallen back) itself, a client retry would
    multiply the calls by the client's own retry count, so the client is told not to.
    """
    if isinstance(exc, DeploymentsBusy):
        return exc.for_client()  # the gateway's own limit: its own retry-after
    error = map_exception(exc, model)
    should_retry = is_retryable(exc) and trace.attempts <= 1
    error.headers = {
        **passthrough_headers(error_headers(exc)),
        SHOULD_RETRY_HEADER: "true" if should_retry else "false",
    }
    return error


def _total_tokens(body: dict[str, Any]) -> int:
    usage = body.get("usage")
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    return total if isinstance(total, int) else 0


def _fill_report(report: UpstreamReport | None, trace: RouteTrace, response: Any) -> None:
    """Which model answered, and the provider's headers that pass to the client."""
    if report is None:
        return
    report.model = trace.model
    raw = getattr(response, "_response_headers", None)
    if raw is None:
        raw = (getattr(response, "_hidden_params", None) or {}).get("headers")
    report.headers = passthrough_headers(raw)


def _starts_answer(chunk: dict[str, Any]) -> bool:
    """Whether `chunk` holds a choice with something in it.

    When the upstream's 200 holds no event at all (an empty body, a proxy's HTML page,
    a JSON body where SSE was expected) litellm ends the stream with one chunk of its
    own: `finish_reason: "stop"` and an empty delta, without the role every real first
    chunk carries. Passed on, it is an empty answer that looks complete and gets cached.
    """
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if any(value not in (None, "", [], {}) for value in delta.values()):
            return True
        if not choice.get("finish_reason"):
            return True  # an empty delta mid-answer (a keep-alive): the answer has begun
    return False


_WARM_UP_CALL: dict[str, Any] = {
    "model": "openai/gateway-warm-up",
    "api_base": "http://127.0.0.1:9/v1",
    "api_key": "sk-gateway-warm-up",
    "messages": [{"role": "user", "content": "warm up"}],
    "mock_response": "ok",
    "num_retries": 0,
    "timeout": 5,
}


class LiteLLMProvider:
    def __init__(self, router: DeploymentRouter, completion: Call, embedding: Call) -> None:
        self._router = router
        self._completion = completion
        self._embedding = embedding
        # litellm's price lookup is a pure function of its arguments (the bundled map is
        # read once) and costs ~110 Python calls; a hit prices the same stored usage
        # every time it is served, so a bounded per-provider memo serves it from a dict.
        self._cost_usd = functools.lru_cache(maxsize=_COST_MEMO_ENTRIES)(litellm_cost_usd)

    @classmethod
    def create(cls, config: GatewayConfig) -> LiteLLMProvider:
        # Use the cost map litellm ships; never fetch it over the network.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        # No litellm logging callback is ever registered (its loggers are also held at
        # CRITICAL, see log_hygiene), so no prompt leaves through litellm's logging and
        # its redaction pass has nothing to protect. Turned on, that pass deep-copies
        # every request's call details on the success path (CPU per forwarded request:
        # see docs/measurements.md#litellm-message-logging).
        litellm.turn_off_message_logging = False
        quiet_leaky_loggers()  # litellm's loggers exist only after its import
        router = DeploymentRouter(deployments_from_config(config), config.router_settings)
        # Roles, metadata and parameters reach the provider as sent (as_sent.py). This
        # call is most of a miss's CPU, and none of its settings makes it much cheaper
        # (docs/measurements.md#miss-path).
        completion = as_sent_call(litellm.acompletion)
        return cls(router, completion, without_as_sent(litellm.aembedding))

    def has_model(self, model: str) -> bool:
        return self._router.has_model(model)

    def limit_deployments(self, limiter: RateLimiter) -> None:
        """The deployments' rpm/tpm buckets live in `limiter` from now on."""
        self._router.limits.limiter = limiter

    async def warm_up(self) -> None:
        """Pay litellm's first-call cost at start-up, not on the first request.

        litellm imports and builds much of its request path on the first call (see
        docs/measurements.md#litellm-warm-up). The call is mocked
        (`mock_response`) and points at the discard port, so nothing leaves the host
        even if a litellm version ignored the mock.
        """
        try:
            await self._completion(**_WARM_UP_CALL)
        except Exception as exc:  # never worth failing start-up over
            logger.warning("litellm warm-up failed (%s)", type(exc).__name__)

    def reserved_parameter(self, name: str) -> bool:
        return litellm_reserved_parameter(name)

    def user_content_part_types(self) -> frozenset[str]:
        return litellm_user_content_part_types()

    def context_window(self, model: str) -> int | None:
        return litellm_context_window(model)

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        return self._cost_usd(model, prompt_tokens, completion_tokens)

    @staticmethod
    def _split(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        params = dict(body)
        model = params.pop("model")
        return model, params

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        model, params = self._split(body)
        params["stream"] = False
        trace = RouteTrace()
        try:
            response = await self._router.route(self._completion, model, params, trace)
        except Exception as exc:
            raise error_for_client(exc, model, trace) from exc
        _fill_report(report, trace, response)
        result: dict[str, Any] = clean_response(response.model_dump())
        self._router.spend(trace, _total_tokens(result))
        return result

    async def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        model, params = self._split(body)
        params["stream"] = True
        # Chunks without an answer choice (e.g. a usage chunk) held back until the
        # answer starts: a stream that never starts one is an error, not an empty answer.
        held: list[dict[str, Any]] | None = []
        trace = RouteTrace()
        used = 0  # the usage chunk's total, for the deployment's tpm
        try:
            try:
                response = await self._router.route(self._completion, model, params, trace)
            except Exception as exc:
                raise error_for_client(exc, model, trace) from exc
            _fill_report(report, trace, response)
            async for chunk in response:
                data: dict[str, Any] = clean_response(chunk.model_dump())
                used = _total_tokens(data) or used
                if held is not None:
                    if not _starts_answer(data):
                        held.append(data)
                        continue
                    for early in held:
                        yield early
                    held = None
                yield data
        except UpstreamError:
            raise
        except Exception as exc:
            raise map_exception(exc, model) from exc
        self._router.spend(trace, used)
        if held is not None:
            raise UpstreamError(
                f"The provider for model '{model}' answered the stream without any event.",
                status_code=502,
                code="upstream_error",
            )

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        model, params = self._split(body)
        if "input" not in params:
            raise InvalidRequest("'input' is required.", param="input")
        trace = RouteTrace()
        try:
            response = await self._router.route(self._embedding, model, params, trace)
        except Exception as exc:
            raise error_for_client(exc, model, trace) from exc
        result: dict[str, Any] = clean_response(response.model_dump())
        return result

    async def close(self) -> None:
        # litellm holds pooled HTTP clients; it has no public close for them.
        return None


def litellm_context_window(model: str) -> int | None:
    """Input tokens `model` accepts per litellm's bundled model map; None if unknown."""
    import litellm

    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # unknown model: litellm raises a bare Exception
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


def litellm_cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """What `model` (a litellm model string) would charge, per litellm's bundled price
    map; 0.0 when the model has no price there."""
    import litellm

    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # unknown model: litellm raises a bare Exception
        return 0.0
    return float(prompt_cost) + float(completion_cost)
