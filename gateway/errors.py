"""The gateway's two roots of exceptions.

`GatewayError`: errors the gateway answers with, in OpenAI's envelope (the HTTP layer).
An HTTP error whose cause is an internal exception of the same concept carries the
internal name with `Response` appended (`StoreUnavailable` -> `StoreUnavailableResponse`,
`MemoryRejected` -> `MemoryRejectedResponse`).

GatewayError                         any error a client may see
├── InvalidRequest           400     invalid_request_error
├── RequestTooLarge          413     invalid_request_error
├── ClientClosed             499     invalid_request_error / client_closed_request
├── Unauthorized             401     authentication_error
├── Forbidden                403     permission_error
├── ModelNotFound            404     invalid_request_error / model_not_found
├── MemoryNotFound           404     invalid_request_error / memory_not_found
├── MemoryRejectedResponse   422     invalid_request_error / memory_rejected
├── MemoryLimitReached       409     invalid_request_error / memory_limit_reached
├── IdempotencyKeyReused     422     invalid_request_error / idempotency_key_reused
├── StoreUnavailableResponse 503     server_error / store_unavailable
├── ToolCacheMiss            404     invalid_request_error / tool_cache_miss
├── ToolCacheDisabled        403     permission_error / tool_cache_disabled
├── ToolResultRefused        422     invalid_request_error / tool_result_is_error
├── ToolResultTooLarge       413     invalid_request_error / tool_result_too_large
└── UpstreamError            429/502/504/4xx  raised by providers/ after mapping
                                     litellm's exceptions; never carries upstream text
                                     that could hold a secret.

`GatewayInternalError`: what the gateway's parts raise to each other (a store that is
down, a guard that refused, a file that does not parse); never shown to a client as is.
Each keeps the standard base it had (`RuntimeError`, `ValueError`) as a second base, so
callers that catch those still do. The classifier's and the entity rules' own errors
(`gateway/classify`, `gateway/entities`) are not under it yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class GatewayInternalError(Exception):
    """The root of the exceptions the gateway's parts raise to each other (see above)."""


class GatewayError(Exception):
    status_code: int = 500
    error_type: str = "server_error"
    code: str | None = "internal_error"

    def __init_subclass__(
        cls,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        code: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Each error class names its status, type and code in its header, e.g.
        `class Forbidden(GatewayError, status_code=403, error_type=..., code=...)`."""
        super().__init_subclass__(**kwargs)
        if status_code is not None:
            cls.status_code = status_code
        if error_type is not None:
            cls.error_type = error_type
        if code is not None:
            cls.code = code

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        # Response headers sent with the error (an upstream error: the provider's
        # allow-listed headers and `x-should-retry`).
        self.headers = dict(headers or {})
        if status_code is not None:
            self.status_code = status_code
        if error_type is not None:
            self.error_type = error_type
        if code is not None:
            self.code = code
        self.param = param

    def envelope(self) -> dict[str, Any]:
        return error_envelope(self.message, self.error_type, self.code, self.param)


class InvalidRequest(
    GatewayError, status_code=400, error_type="invalid_request_error", code="invalid_request"
):
    pass


class RequestTooLarge(
    GatewayError, status_code=413, error_type="invalid_request_error", code="request_too_large"
):
    pass


class ClientClosed(
    GatewayError, status_code=499, error_type="invalid_request_error", code="client_closed_request"
):
    """The client went away before its body arrived: nobody is left to answer (499 is
    nginx's status for it), and it is no fault of the gateway's."""


class Unauthorized(
    GatewayError, status_code=401, error_type="authentication_error", code="invalid_api_key"
):
    pass


class Forbidden(GatewayError, status_code=403, error_type="permission_error", code="forbidden"):
    pass


class ModelNotFound(
    GatewayError, status_code=404, error_type="invalid_request_error", code="model_not_found"
):
    pass


class MemoryNotFound(
    GatewayError, status_code=404, error_type="invalid_request_error", code="memory_not_found"
):
    pass


class MemoryRejectedResponse(
    GatewayError, status_code=422, error_type="invalid_request_error", code="memory_rejected"
):
    """The write guard refused the content (prompt injection or secret): the HTTP answer
    to `gateway.memory.service.MemoryRejected`."""


class MemorySuperseded(
    GatewayError, status_code=409, error_type="invalid_request_error", code="memory_superseded"
):
    """A new version of a memory that already has one: revise the current version."""


class MemoryLimitReached(
    GatewayError, status_code=409, error_type="invalid_request_error", code="memory_limit_reached"
):
    """The write would take the user past a per-user cap (count or bytes). 409: the
    request conflicts with the state of the user's memories, and retrying it unchanged
    cannot succeed until some are deleted."""


class KnowledgeNotFound(
    GatewayError, status_code=404, error_type="invalid_request_error", code="knowledge_not_found"
):
    pass


class KnowledgeRejectedResponse(
    GatewayError, status_code=422, error_type="invalid_request_error", code="knowledge_rejected"
):
    """The write guard refused a knowledge item (prompt injection or secret)."""


class KnowledgeLimitReached(
    GatewayError,
    status_code=409,
    error_type="invalid_request_error",
    code="knowledge_limit_reached",
):
    """The write would take the tenant past `knowledge.limits.max_items_per_tenant`."""


class KnowledgeItemTooLarge(
    GatewayError,
    status_code=413,
    error_type="invalid_request_error",
    code="knowledge_item_too_large",
):
    """An item (or a document's chunk) is over `knowledge.limits.max_bytes_per_item`."""


class IdempotencyKeyReused(
    GatewayError, status_code=422, error_type="invalid_request_error", code="idempotency_key_reused"
):
    """The `Idempotency-Key` was already used for a different request."""


class StoreUnavailableResponse(
    GatewayError, status_code=503, error_type="server_error", code="store_unavailable"
):
    """A store the request needs is down and its policy fails closed: the HTTP answer to
    the internal `gateway.storage.protocols.StoreUnavailable`."""


class ToolCacheMiss(
    GatewayError, status_code=404, error_type="invalid_request_error", code="tool_cache_miss"
):
    """No fresh result under the key: the agent calls its tool (and may put the result)."""


class ToolCacheDisabled(
    GatewayError, status_code=403, error_type="permission_error", code="tool_cache_disabled"
):
    """The tenant's policy turns the tool-result cache off (`tool_cache.enabled`)."""


class ToolResultRefused(
    GatewayError, status_code=422, error_type="invalid_request_error", code="tool_result_is_error"
):
    """A put of an error result (`status` >= 400, `is_error`, or a result that says it is
    an error): errors are never cached."""


class ToolResultTooLarge(
    GatewayError, status_code=413, error_type="invalid_request_error", code="tool_result_too_large"
):
    """The result is larger than the policy's `tool_cache.max_result_bytes`."""


class UpstreamError(
    GatewayError, status_code=502, error_type="upstream_error", code="upstream_error"
):
    pass


def error_envelope(
    message: str, error_type: str, code: str | None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}
