"""`DeploymentRouter` with a fake provider call: which deployment is called, how often,
after which waits, and when a fallback model takes over."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any

import pytest

from gateway.providers.routing import (
    Deployment,
    DeploymentRouter,
    RouteTrace,
    backoff_seconds,
    deployments_from_config,
    is_retryable,
)
from gateway.settings import GatewayConfig, RouterSettings


class StatusError(Exception):
    def __init__(self, status_code: int, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code
        self.litellm_response_headers = dict(headers or {})


class Timeout(Exception):  # named like litellm's: retryable whatever its status
    status_code = 500


class FakeProvider:
    """Answers per deployment model: a queue of outcomes, then success."""

    def __init__(self, outcomes: dict[str, list[BaseException]] | None = None) -> None:
        self.outcomes = outcomes or {}
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        queue = self.outcomes.get(kwargs["model"], [])
        if queue:
            raise queue.pop(0)
        return f"answer from {kwargs['model']}"

    def models(self) -> list[str]:
        return [call["model"] for call in self.calls]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def make_router(deployments: list[Deployment], clock: Clock, **settings: Any) -> DeploymentRouter:
    return DeploymentRouter(
        deployments,
        RouterSettings(**settings),
        sleep=clock.sleep,
        clock=clock,
        rng=random.Random(7),
    )


def one(name: str, model: str | None = None, weight: float = 1.0) -> Deployment:
    return Deployment(name, {"model": model or f"openai/{name}", "api_key": "k"}, weight)


def route(router: DeploymentRouter, provider: FakeProvider, model: str, **request: Any) -> Any:
    return asyncio.run(router.route(provider, model, {"messages": [], **request}))


def test_a_healthy_deployment_is_called_once_with_its_params_and_the_request() -> None:
    provider = FakeProvider()
    router = make_router([one("a")], Clock(), timeout_seconds=12)
    assert route(router, provider, "a", temperature=0.2) == "answer from openai/a"
    (call,) = provider.calls
    assert call == {
        "model": "openai/a",
        "api_key": "k",
        "messages": [],
        "temperature": 0.2,
        "timeout": 12,
        "num_retries": 0,  # litellm must not retry on its own as well
    }


def test_streams_get_the_stream_timeout() -> None:
    provider = FakeProvider()
    router = make_router([one("a")], Clock(), timeout_seconds=12, stream_timeout_seconds=3)
    route(router, provider, "a", stream=True)
    assert provider.calls[0]["timeout"] == 3


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_retryable_errors_are_retried_with_backoff_on_a_single_deployment(status: int) -> None:
    provider = FakeProvider({"openai/a": [StatusError(status), StatusError(status)]})
    clock = Clock()
    router = make_router([one("a")], clock, num_retries=2)
    assert route(router, provider, "a") == "answer from openai/a"
    assert len(provider.calls) == 3
    assert clock.slept == [0.5, 1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_errors_of_the_request_or_credentials_are_not_retried(status: int) -> None:
    provider = FakeProvider({"openai/a": [StatusError(status)]})
    router = make_router([one("a")], Clock(), num_retries=3)
    with pytest.raises(StatusError):
        route(router, provider, "a")
    assert len(provider.calls) == 1


def test_retries_stop_at_num_retries_and_raise_the_last_error() -> None:
    errors: list[BaseException] = [StatusError(500) for _ in range(5)]
    provider = FakeProvider({"openai/a": errors})
    router = make_router([one("a")], Clock(), num_retries=2)
    with pytest.raises(StatusError):
        route(router, provider, "a")
    assert len(provider.calls) == 3


def test_timeouts_and_connection_errors_are_retryable_whatever_their_status() -> None:
    assert is_retryable(Timeout())
    assert not is_retryable(StatusError(400))
    assert is_retryable(ConnectionResetError())  # not wrapped by litellm: no status


def test_the_retry_goes_to_another_deployment_without_waiting() -> None:
    provider = FakeProvider({"openai/a1": [StatusError(503)]})
    clock = Clock()
    router = make_router([one("a", "openai/a1"), one("a", "openai/a2")], clock, num_retries=1)
    outcomes = [route(router, provider, "a") for _ in range(6)]
    assert outcomes.count("answer from openai/a2") >= 1
    assert clock.slept == []
    # The first try that failed was the only call to a1 in its cool-down.
    assert provider.models().count("openai/a1") == 1


def test_a_cooled_down_deployment_comes_back_after_cooldown_seconds() -> None:
    provider = FakeProvider({"openai/a1": [StatusError(500)]})
    clock = Clock()
    router = make_router(
        [one("a", "openai/a1"), one("a", "openai/a2")], clock, num_retries=1, cooldown_seconds=5
    )
    while "openai/a1" not in provider.models():
        route(router, provider, "a")
    provider.calls.clear()
    for _ in range(20):
        route(router, provider, "a")
    assert set(provider.models()) == {"openai/a2"}
    clock.now += 5.0
    provider.calls.clear()
    for _ in range(40):
        route(router, provider, "a")
    assert set(provider.models()) == {"openai/a1", "openai/a2"}


def test_weights_spread_requests() -> None:
    provider = FakeProvider()
    router = make_router(
        [one("a", "openai/heavy", weight=9), one("a", "openai/light", weight=1)], Clock()
    )
    for _ in range(1000):
        route(router, provider, "a")
    heavy = provider.models().count("openai/heavy")
    assert 850 <= heavy <= 950


def test_fallbacks_take_over_in_order_once_the_group_is_exhausted() -> None:
    provider = FakeProvider(
        {"openai/a": [StatusError(500)] * 2, "openai/b": [StatusError(429)] * 2}
    )
    router = make_router(
        [one("a"), one("b"), one("c")], Clock(), num_retries=1, fallbacks=[{"a": ["b", "c"]}]
    )
    assert route(router, provider, "a") == "answer from openai/c"
    assert provider.models() == ["openai/a", "openai/a", "openai/b", "openai/b", "openai/c"]


def test_each_fallback_is_tried_once_and_never_the_model_itself_again() -> None:
    provider = FakeProvider(
        {"openai/a": [StatusError(500)] * 3, "openai/b": [StatusError(500)] * 3}
    )
    router = make_router(
        [one("a"), one("b")], Clock(), num_retries=0, fallbacks=[{"a": ["a", "b"]}, {"a": ["b"]}]
    )
    with pytest.raises(StatusError):
        route(router, provider, "a")
    assert provider.models() == ["openai/a", "openai/b"]


def test_a_bad_request_does_not_fall_back() -> None:
    provider = FakeProvider({"openai/a": [StatusError(400)]})
    router = make_router([one("a"), one("b")], Clock(), fallbacks=[{"a": ["b"]}])
    with pytest.raises(StatusError):
        route(router, provider, "a")
    assert provider.models() == ["openai/a"]


def test_bad_credentials_fall_back_without_retrying() -> None:
    provider = FakeProvider({"openai/a": [StatusError(401)]})
    router = make_router([one("a"), one("b")], Clock(), num_retries=2, fallbacks=[{"a": ["b"]}])
    assert route(router, provider, "a") == "answer from openai/b"
    assert provider.models() == ["openai/a", "openai/b"]


def test_the_last_fallbacks_error_is_raised() -> None:
    provider = FakeProvider({"openai/a": [StatusError(500)], "openai/b": [StatusError(503)]})
    router = make_router([one("a"), one("b")], Clock(), num_retries=0, fallbacks=[{"a": ["b"]}])
    with pytest.raises(StatusError) as raised:
        route(router, provider, "a")
    assert raised.value.status_code == 503


def test_backoff_honours_the_providers_retry_after_and_the_configured_minimum() -> None:
    assert backoff_seconds(0, StatusError(429, {"retry-after": "3"}), 0.0) == 3.0
    assert backoff_seconds(0, StatusError(429, {"retry-after-ms": "250"}), 0.0) == 0.25
    assert backoff_seconds(0, StatusError(429, {"retry-after": "3600"}), 0.0) == 3600.0
    assert backoff_seconds(1, StatusError(429, {"retry-after": "junk"}), 0.0) == 1.0
    assert backoff_seconds(10, StatusError(500), 0.0) == 8.0
    assert backoff_seconds(0, StatusError(500), 2.0) == 2.0


def test_routing_only_params_stay_with_the_gateway(tmp_path: Any) -> None:
    config = GatewayConfig.model_validate(
        {
            "model_list": [
                {
                    "model_name": "m",
                    "litellm_params": {"model": "openai/m", "weight": 3, "rpm": 10, "seed": 1},
                }
            ]
        }
    )
    (deployment,) = deployments_from_config(config)
    assert deployment.weight == 3.0
    assert dict(deployment.params) == {"model": "openai/m", "seed": 1}


def test_weight_zero_drains_a_deployment_and_bad_weights_are_config_errors() -> None:
    def config(weight: Any) -> GatewayConfig:
        return GatewayConfig.model_validate(
            {
                "model_list": [
                    {"model_name": "m", "litellm_params": {"model": "x", "weight": weight}}
                ]
            }
        )

    assert deployments_from_config(config(0))[0].weight == 0.0
    for bad in (-1, "heavy", float("nan")):
        with pytest.raises(ValueError, match="weight"):
            config(bad)
    provider = FakeProvider()
    router = make_router([one("a", "openai/drained", weight=0), one("a", "openai/live")], Clock())
    for _ in range(50):
        route(router, provider, "a")
    assert set(provider.models()) == {"openai/live"}


def test_a_provider_asking_for_a_longer_wait_than_the_gateway_allows_is_not_retried() -> None:
    # Retrying after our own 0.5 s back-off would only be refused again: the client
    # gets the error (and the provider's Retry-After) at once.
    provider = FakeProvider({"openai/a": [StatusError(429, {"retry-after": "120"})]})
    clock = Clock()
    router = make_router([one("a")], clock, num_retries=2, max_retry_after_seconds=60)
    trace = RouteTrace()
    with pytest.raises(StatusError):
        asyncio.run(router.route(provider, "a", {"messages": []}, trace))
    assert provider.models() == ["openai/a"]
    assert clock.slept == []
    assert trace.attempts == 1 and trace.model is None


def test_the_trace_names_the_fallback_that_answered_and_counts_every_call() -> None:
    provider = FakeProvider({"openai/a": [StatusError(503), StatusError(503)]})
    router = make_router([one("a"), one("b")], Clock(), num_retries=1, fallbacks=[{"a": ["b"]}])
    trace = RouteTrace()
    answer = asyncio.run(router.route(provider, "a", {"messages": []}, trace))
    assert answer == "answer from openai/b"
    assert trace.model == "b"
    assert trace.attempts == 3
