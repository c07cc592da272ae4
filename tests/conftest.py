"""Shared fixtures: a real fake upstream on loopback, and gateways started on demand."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The gateway sets these itself at start-up; tests must not hit the network either.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from gateway.app import create_app
from gateway.components import (
    ComponentsFactory,
    SemanticComponents,
    build_embedder,
    build_reviewer,
    load_guard,
    load_local_embedder,
    load_text_components,
)
from gateway.providers.protocol import Provider
from gateway.settings import GatewayConfig, parse_config
from gateway.testing.fake_upstream import UpstreamLog, create_fake_upstream
from gateway.testing.redis_server import RedisServer
from gateway.testing.threaded_server import ThreadedServer
from tests.helpers import FakeUpstream, GatewayFactory, RunningGateway, gateway_config_dict


@pytest.fixture(scope="session")
def upstream() -> Iterator[FakeUpstream]:
    log = UpstreamLog()
    server = ThreadedServer(create_fake_upstream(log)).start()
    yield FakeUpstream(url=server.url, log=log)
    server.stop()


@pytest.fixture(scope="session")
def components_factory() -> ComponentsFactory:
    """Loads spaCy and the local embedder once for the whole session (seconds each)."""
    loaded: dict[str, Any] = {}

    async def factory(config: GatewayConfig, provider: Provider) -> SemanticComponents:
        if "text" not in loaded:
            loaded["text"] = await load_text_components()
            loaded["embedder"] = await load_local_embedder()
        classifier, comparator = loaded["text"]
        embedder = build_embedder(config, provider, loaded["embedder"])
        return SemanticComponents(
            classifier=classifier,
            comparator=comparator,
            embedder=embedder,
            embedding_dimensions=config.semantic.embedding_dimensions or embedder.dimensions,
            reviewer=build_reviewer(config, provider),
            guard=load_guard(),
        )

    return factory


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real Redis 8 with RediSearch on a free port, for the whole session."""
    server = RedisServer(log_path=tmp_path_factory.mktemp("redis") / "redis.log").start()
    yield server
    server.stop()


@pytest.fixture(params=["embedded", "redis"])
def storage_backend(request: pytest.FixtureRequest) -> str:
    """End-to-end tests run once per storage backend."""
    return str(request.param)


@pytest.fixture
def start_gateway(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_backend: str,
    request: pytest.FixtureRequest,
) -> Iterator[GatewayFactory]:
    started: list[RunningGateway] = []
    # One key prefix per test: tests share the Redis server, never each other's entries.
    prefix = f"t{uuid.uuid4().hex[:12]}"

    def start(data_dir: Path | None = None, **overrides: Any) -> RunningGateway:
        directory = data_dir or tmp_path / "data"
        if storage_backend == "redis" and "storage" not in overrides:
            redis = request.getfixturevalue("redis_server")
            overrides["storage"] = {
                "backend": "redis",
                "redis_url": redis.url,
                "redis_prefix": prefix,
                "path": str(directory),
            }
        raw = gateway_config_dict(upstream.url, directory, **overrides)
        config, _ = parse_config(raw)
        app = create_app(config, components_factory=components_factory)
        server = ThreadedServer(app).start()
        running = RunningGateway(url=server.url, config=config, server=server)
        started.append(running)
        return running

    yield start
    for running in started:
        running.server.stop()


@pytest.fixture
def gateway(start_gateway: GatewayFactory) -> RunningGateway:
    return start_gateway()
