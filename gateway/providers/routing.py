"""Which deployment serves a request, and what happens when it fails.

The gateway's own small router over `litellm.acompletion` / `litellm.aembedding`:

- a model name (`model_list[].model_name`) is a group of deployments; each request goes
  to one of the group's healthy deployments, picked at random by `weight` (default 1);
- an error that another try may not repeat (timeout, connection error, 408, 409, 429,
  5xx) is retried up to `num_retries` times, on another deployment of the group when
  there is a healthy one; otherwise after a back-off (the provider's `Retry-After` /
  `retry-after-ms` when it gives one, else 0.5 s doubling up to 8 s, never under
  `retry_after_seconds`). A provider that asks for a longer wait than
  `max_retry_after_seconds` is not retried on that deployment at all: the error, with
  its `Retry-After`, goes to the client, whose own retry can obey it (a retry sooner
  than the provider asked would only be refused again);
- a deployment that failed that way is cooled down (skipped while the group has another
  healthy one) for `cooldown_seconds`;
- once the group is exhausted, the `fallbacks` of the requested model are tried in
  order, each as a group of its own; errors that are the request's fault (400, 422, a
  context window exceeded) are not retried and do not fall back.

Why not litellm's Router: it did all of this and more, at a CPU cost on every forwarded
request (see docs/measurements.md#deployment-routing), while the gateway uses none of
its other features (usage-based routing, budgets, its caches). litellm still does every
provider call.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.providers.as_sent import AS_SENT_PARAM, as_sent_setting
from gateway.providers.deployment_limits import DeploymentLimits, DeploymentsBusy
from gateway.settings import GatewayConfig, RouterSettings

# Read by litellm's Router for its own routing; litellm's call functions would forward
# them to the provider as request parameters.
ROUTING_ONLY_PARAMS = frozenset(
    {"rpm", "tpm", "weight", "order", "max_parallel_requests", "region_name"}
)
_BACKOFF_START_SECONDS = 0.5
_BACKOFF_MAX_SECONDS = 8.0
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
# litellm exception classes that carry a status of 500 but mean "could not reach" or
# "no answer in time": retryable whatever the status says.
_RETRYABLE_CLASS_NAMES = frozenset({"Timeout", "APIConnectionError"})
# Errors that are the deployment's fault, not the request's: worth a fallback model.
_FALLBACK_STATUSES = frozenset({401, 403, 404})

Call = Callable[..., Awaitable[Any]]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Deployment:
    model_name: str
    params: Mapping[str, Any]  # litellm_params without the routing-only keys
    weight: float = 1.0
    rpm: int | None = None  # this deployment's own limits (deployment_limits.py)
    tpm: int | None = None


def deployments_from_config(config: GatewayConfig) -> list[Deployment]:
    deployments = []
    for entry in config.model_list:
        params = entry.litellm_params.model_dump(exclude_none=True)
        weight = entry.litellm_params.weight
        clean = {k: v for k, v in params.items() if k not in ROUTING_ONLY_PARAMS}
        as_sent = as_sent_setting(entry.model_info)
        if as_sent is not None:
            clean[AS_SENT_PARAM] = as_sent  # read (and removed) by as_sent.py
        deployments.append(
            Deployment(
                entry.model_name,
                clean,
                1.0 if weight is None else weight,
                entry.litellm_params.rpm,
                entry.litellm_params.tpm,
            )
        )
    return deployments


def error_status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_retryable(exc: BaseException) -> bool:
    """Might the same request succeed if sent again?"""
    if any(cls.__name__ in _RETRYABLE_CLASS_NAMES for cls in type(exc).__mro__):
        return True
    status = error_status(exc)
    if status is None:
        # Not an HTTP answer (a transport error litellm did not wrap): worth a retry.
        return not isinstance(exc, (ValueError, TypeError))
    return status in _RETRYABLE_STATUSES or status >= 500


def may_fall_back(exc: BaseException) -> bool:
    return is_retryable(exc) or error_status(exc) in _FALLBACK_STATUSES


def error_headers(exc: BaseException) -> Any:
    """The provider's response headers an error carries (a mapping), or None."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def retry_after_header_seconds(exc: BaseException) -> float | None:
    """The wait the provider asked for: `retry-after-ms`, else `Retry-After` in seconds
    (the HTTP-date form is not used by providers and is ignored)."""
    headers = error_headers(exc)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = headers.get(name)
            if value is not None:
                return float(value) * scale
        except (TypeError, ValueError, AttributeError):
            continue
    return None


def backoff_seconds(retries_done: int, exc: BaseException, minimum_seconds: float) -> float:
    given = retry_after_header_seconds(exc)
    if given is not None and given > 0:
        wait = given
    else:
        wait = min(_BACKOFF_START_SECONDS * 2**retries_done, _BACKOFF_MAX_SECONDS)
    return max(wait, minimum_seconds)


@dataclass(slots=True)
class RouteTrace:
    """What routing one request did, filled in as it goes (also when it fails)."""

    model: str | None = None  # the model group whose deployment answered
    attempts: int = 0  # provider calls made, over the group and its fallbacks
    deployment: int | None = None  # the index of the deployment called last


@dataclass
class _Health:
    """Deployments cooled down after a retryable failure, until a monotonic time."""

    cooldown_seconds: float
    clock: Callable[[], float]
    until: dict[int, float] = field(default_factory=dict)

    def cool_down(self, deployment_id: int) -> None:
        self.until[deployment_id] = self.clock() + self.cooldown_seconds

    def healthy(self, deployment_id: int) -> bool:
        until = self.until.get(deployment_id)
        if until is None:
            return True
        if self.clock() >= until:
            del self.until[deployment_id]
            return True
        return False


class DeploymentRouter:
    """Routes calls to `call(**deployment.params, **request)`; see the module docstring.

    `call` is `litellm.acompletion` or `litellm.aembedding` in production; tests give a
    fake. `sleep`, `clock` and `rng` are injectable for the same reason.
    """

    def __init__(
        self,
        deployments: Sequence[Deployment],
        settings: RouterSettings,
        *,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._settings = settings
        self._groups: dict[str, list[int]] = {}
        self._deployments = list(deployments)
        for index, deployment in enumerate(self._deployments):
            self._groups.setdefault(deployment.model_name, []).append(index)
        self._fallbacks: dict[str, list[str]] = {}
        for entry in settings.fallbacks:
            for source, targets in entry.items():
                self._fallbacks.setdefault(source, []).extend(targets)
        self._health = _Health(settings.cooldown_seconds, clock)
        self._sleep = sleep
        self._rng = rng or random.Random()
        # rpm/tpm per deployment; the store is attached once the backend is open.
        self.limits = DeploymentLimits()

    def has_model(self, model: str) -> bool:
        return model in self._groups

    async def route(
        self,
        call: Call,
        model: str,
        request: Mapping[str, Any],
        trace: RouteTrace | None = None,
    ) -> Any:
        """The first answer from `model`'s group, then from each of its fallbacks;
        `trace` learns which group answered and how many calls it took."""
        trace = trace if trace is not None else RouteTrace()
        chain = list(dict.fromkeys([model, *self._fallbacks.get(model, [])]))
        last: BaseException | None = None
        for position, group in enumerate(chain):
            try:
                response = await self._route_group(call, group, request, trace)
                trace.model = group
                return response
            except Exception as exc:
                last = exc
                if position + 1 == len(chain) or not may_fall_back(exc):
                    raise
        raise AssertionError("unreachable") from last

    async def _route_group(
        self, call: Call, group: str, request: Mapping[str, Any], trace: RouteTrace
    ) -> Any:
        members = self._groups.get(group)
        if not members:
            raise KeyError(group)
        timeout = self._settings.timeout_seconds
        if request.get("stream") and self._settings.stream_timeout_seconds is not None:
            timeout = self._settings.stream_timeout_seconds
        failed: set[int] = set()
        retries_done = 0
        while True:
            chosen = await self._pick_with_room(group, members, failed)
            deployment = self._deployments[chosen]
            trace.attempts += 1
            trace.deployment = chosen
            try:
                return await call(
                    **{"timeout": timeout, **deployment.params, **request, "num_retries": 0}
                )
            except Exception as exc:
                retryable = is_retryable(exc)
                if retryable and len(members) > 1:
                    self._health.cool_down(chosen)
                if not retryable or retries_done >= self._settings.num_retries:
                    raise
                failed.add(chosen)
                if not self._has_other(members, failed):
                    wait = backoff_seconds(retries_done, exc, self._settings.retry_after_seconds)
                    if wait > self._settings.max_retry_after_seconds:
                        raise  # the client waits as long as the provider asked, not us
                    await self._sleep(wait)
                elif self._settings.retry_after_seconds > 0:
                    await self._sleep(self._settings.retry_after_seconds)
                retries_done += 1

    async def _pick_with_room(self, group: str, members: list[int], failed: set[int]) -> int:
        """`_pick` among the deployments under their rpm/tpm (each charged one request
        when chosen); `DeploymentsBusy` when none has room."""
        busy: dict[int, float] = {}
        while True:
            open_members = [m for m in members if m not in busy]
            if not open_members:
                raise DeploymentsBusy(group, min(busy.values()))
            chosen = self._pick(open_members, failed)
            deployment = self._deployments[chosen]
            wait = await self.limits.admit(_bucket_key(deployment, chosen), *_limits(deployment))
            if wait is None:
                return chosen
            busy[chosen] = wait

    def spend(self, trace: RouteTrace, tokens: int) -> None:
        """Charge the tokens of an answer to the deployment that gave it (its `tpm`), in
        the background: the answer does not wait for the store."""
        if trace.deployment is None:
            return
        deployment = self._deployments[trace.deployment]
        if deployment.tpm is None or tokens <= 0:
            return
        key = _bucket_key(deployment, trace.deployment)
        self.limits.spend_later(key, deployment.tpm, tokens)

    def _has_other(self, members: list[int], failed: set[int]) -> bool:
        return any(m not in failed and self._health.healthy(m) for m in members)

    def _pick(self, members: list[int], failed: set[int]) -> int:
        """A healthy deployment not yet tried for this request, by weight; failing that,
        a healthy one; failing that, any (a cooled-down deployment beats no answer)."""
        for candidates in (
            [m for m in members if m not in failed and self._health.healthy(m)],
            [m for m in members if self._health.healthy(m)],
            members,
        ):
            if candidates:
                if len(candidates) == 1:
                    return candidates[0]
                weights = [self._deployments[m].weight for m in candidates]
                if sum(weights) <= 0:
                    return self._rng.choice(candidates)
                return self._rng.choices(candidates, weights=weights)[0]
        raise AssertionError("a model group is never empty")


def _bucket_key(deployment: Deployment, index: int) -> str:
    # Replicas read the same model_list, so the same index is the same deployment.
    return f"d:{deployment.model_name}:{index}"


def _limits(deployment: Deployment) -> tuple[int | None, int | None]:
    return deployment.rpm, deployment.tpm
