"""Per-deployment rpm/tpm in the router, with the in-process limiter on a fake clock:
a full deployment is skipped for another of its model, a full model is a 429 (or its
fallback), and tokens spent after the call close a deployment until it refills."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from gateway.providers.deployment_limits import DeploymentsBusy
from gateway.providers.routing import Deployment, DeploymentRouter, RouteTrace
from gateway.settings import RouterSettings
from gateway.storage.embedded.rate_limiter import InProcessRateLimiter


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


class Calls:
    def __init__(self) -> None:
        self.models: list[str] = []

    async def __call__(self, **kwargs: Any) -> str:
        self.models.append(kwargs["model"])
        return "ok"


def _router(clock: Clock, *deployments: Deployment, **settings: Any) -> DeploymentRouter:
    router = DeploymentRouter(list(deployments), RouterSettings(**settings), rng=random.Random(3))
    router.limits.limiter = InProcessRateLimiter(clock)
    return router


def _deployment(name: str, group: str = "g", **limits: Any) -> Deployment:
    return Deployment(group, {"model": name}, 1.0, limits.get("rpm"), limits.get("tpm"))


async def test_a_deployment_at_its_rpm_is_skipped_then_the_model_is_busy() -> None:
    clock = Clock()
    router = _router(clock, _deployment("a", rpm=1), _deployment("b", rpm=2))
    calls = Calls()
    for _ in range(3):
        await router.route(calls, "g", {"messages": []})
    assert sorted(calls.models) == ["a", "b", "b"]
    with pytest.raises(DeploymentsBusy) as busy:
        await router.route(calls, "g", {"messages": []})
    # b frees up first (2 a minute: one every 30 s); a only after 60 s.
    assert busy.value.retry_after_seconds == pytest.approx(30.0)
    error = busy.value.for_client()
    assert error.status_code == 429 and error.headers["retry-after"] == "30"
    clock.now = 30.0
    await router.route(calls, "g", {"messages": []})
    assert calls.models[-1] == "b"


async def test_a_busy_model_falls_back() -> None:
    clock = Clock()
    router = _router(
        clock,
        _deployment("a", rpm=1),
        _deployment("spare", group="other"),
        fallbacks=[{"g": ["other"]}],
    )
    calls = Calls()
    await router.route(calls, "g", {"messages": []})
    await router.route(calls, "g", {"messages": []})
    assert calls.models == ["a", "spare"]


async def test_tokens_spent_after_the_call_close_the_deployment_until_it_refills() -> None:
    clock = Clock()
    spare = Deployment("g", {"model": "b"}, 0.0)  # weight 0: only when a is closed
    router = _router(clock, _deployment("a", tpm=60), spare)
    calls = Calls()
    trace = RouteTrace()
    await router.route(calls, "g", {"messages": []}, trace)
    router.spend(trace, 90)  # 30 over its minute, charged in its own task
    await asyncio.sleep(0)
    await router.route(calls, "g", {"messages": []})
    clock.now = 30.0  # back to empty
    await router.route(calls, "g", {"messages": []})
    assert calls.models == ["a", "b", "a"]
