"""The composition root without HTTP: `build_services` on the embedded backend with the
shipped fakes builds what the gateway serves with, and `aclose` takes it down; routes
take those services through a FastAPI dependency that `dependency_overrides` replaces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import spacy

from gateway.api.deps import get_services
from gateway.app import create_app
from gateway.classify.classifier import RequestClassifier
from gateway.components import SemanticComponents
from gateway.entities.entities import EntityComparator
from gateway.nlp import TextAnalyzer
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome
from gateway.providers.protocol import Provider
from gateway.settings import GatewayConfig, parse_config
from gateway.testing.fake_provider import FakeProvider
from gateway.testing.fakes import StaticReviewer, TableEmbedder
from gateway.wiring import Services, build_services
from tests.helpers import ADMIN_KEY, TENANT_KEYS, gateway_config_dict

BACKGROUND_TASKS = {"policy-watcher", "expiry-sweep"}


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    # Blank pipelines: building the services parses nothing, so no model is needed.
    return TextAnalyzer(spacy.blank("en"), spacy.blank("zh"))


@pytest.fixture
def config(tmp_path: Path) -> GatewayConfig:
    # Nothing listens on port 9: the fake provider is the only upstream.
    parsed, _ = parse_config(gateway_config_dict("http://127.0.0.1:9", tmp_path / "data"))
    return parsed


@pytest.fixture
def embedder() -> TableEmbedder:
    return TableEmbedder(spare_axes=16)


@pytest.fixture
async def built(
    config: GatewayConfig, analyzer: TextAnalyzer, embedder: TableEmbedder
) -> AsyncIterator[tuple[Services, FakeProvider]]:
    provider = FakeProvider(answer="from the fake")

    async def components(config: GatewayConfig, given: Provider) -> SemanticComponents:
        assert given is provider
        return SemanticComponents(
            classifier=RequestClassifier(analyzer),
            comparator=EntityComparator(analyzer),
            embedder=embedder,
            embedding_dimensions=embedder.dimensions,
            reviewer=StaticReviewer(same_meaning=True),
        )

    services = await build_services(config, provider=provider, components_factory=components)
    yield services, provider
    await services.aclose()


def _running_task_names() -> set[str]:
    return {task.get_name() for task in asyncio.all_tasks() if not task.done()}


async def test_builds_the_embedded_services_from_the_given_parts(
    built: tuple[Services, FakeProvider], config: GatewayConfig
) -> None:
    services, provider = built
    assert services.config is config
    assert services.provider is provider
    assert provider.warmed_up
    assert services.storage.backend == "embedded"
    described = await services.storage.describe()
    assert described["backend"] == "embedded"
    assert services.policies.source == "built-in defaults"  # no policy directory
    assert _running_task_names() >= BACKGROUND_TASKS
    # The pipeline answers through the given provider and stores in the opened store.
    principal = services.keys.authenticate(f"Bearer {next(iter(TENANT_KEYS.values()))}")
    chat = ChatRequest(
        request_id="r1",
        principal=principal,
        model="fake-model",
        body={"model": "fake-model", "messages": [{"role": "user", "content": "Hi there"}]},
        policy=services.policies.resolve(principal.tenant, "fake-model"),
    )
    outcome = await services.pipeline.handle(chat)
    assert isinstance(outcome, CompletionOutcome)
    assert outcome.completion["choices"][0]["message"]["content"] == "from the fake"
    assert len(provider.chat_bodies) == 1


async def test_closing_stops_the_tasks_and_closes_the_stores_not_the_given_provider(
    built: tuple[Services, FakeProvider],
) -> None:
    services, provider = built
    await services.aclose()
    assert not BACKGROUND_TASKS & _running_task_names()
    # The embedded database's worker thread is shut down with it.
    with pytest.raises(RuntimeError, match="after shutdown"):
        await services.storage.exact.get("any-key")
    assert not provider.closed


async def test_routes_take_the_services_from_the_dependency(
    built: tuple[Services, FakeProvider], config: GatewayConfig
) -> None:
    services, _ = built
    app = create_app(config, provider=services.provider)
    # ASGITransport runs no lifespan: without the override the app has no services yet.
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        headers = {"authorization": f"Bearer {ADMIN_KEY}"}
        starting = await client.get("/v1/models", headers=headers)
        assert starting.status_code == 503
        assert starting.json()["error"]["code"] == "not_ready"
        app.dependency_overrides[get_services] = lambda: services
        served = await client.get("/v1/models", headers=headers)
    assert served.status_code == 200
    assert [model["id"] for model in served.json()["data"]] == list(config.model_names())


def test_the_configured_models_encodings_are_loaded_at_start() -> None:
    """A gpt-4o deployment counts with o200k_base: loaded with the services, not by the
    first request (which read the BPE file on the event loop, ~1.3 s here)."""
    from gateway.memory.limits import ModelLimits
    from gateway.wiring import loaded_tokenizers

    limits = ModelLimits({"chat": "openai/gpt-4o-mini", "old": "gpt-4", "own": "fake"}, {})
    tokenizers = loaded_tokenizers(limits)
    # What the tokenizers hold (private: no request path may load one later).
    assert set(tokenizers._counters) == {"cl100k_base", "o200k_base"}
    assert tokenizers.for_model("openai/gpt-4o-mini").encoding_name == "o200k_base"
