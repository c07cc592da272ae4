"""The model-backed parts of the gateway (spaCy pipelines, the sentence encoder, the
pair reviewer and guard), which take seconds to load: how each is loaded, and the
factory `build_services` takes them from (tests load them once per session)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gateway.classify.classifier import RequestClassifier
from gateway.embed.calibration import load_calibration_file
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.nlp import TextAnalyzer
from gateway.pipeline.judge import StructureGuard
from gateway.providers.protocol import Provider
from gateway.review.protocol import Reviewer
from gateway.settings import GatewayConfig


@dataclass(frozen=True, slots=True)
class SemanticComponents:
    """The model-backed parts (spaCy, the encoder, the reviewer models)."""

    classifier: RequestClassifier
    comparator: EntityComparator
    embedder: Embedder
    embedding_dimensions: int
    reviewer: Reviewer | None
    guard: StructureGuard | None = None


ComponentsFactory = Callable[[GatewayConfig, Provider], Awaitable[SemanticComponents]]


async def load_text_components() -> tuple[RequestClassifier, EntityComparator]:
    analyzer = await asyncio.to_thread(TextAnalyzer.load)
    return RequestClassifier(analyzer), EntityComparator(analyzer)


async def load_local_embedder() -> Embedder:
    from gateway.embed.local_use import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    await embedder.warm_up()
    return embedder


def build_embedder(config: GatewayConfig, provider: Provider, local: Embedder | None) -> Embedder:
    if config.semantic.embedder == "local":
        if local is None:
            raise RuntimeError("the local embedder was not loaded")
        return local
    from gateway.embed.litellm_embedder import LiteLLMEmbedder

    name = config.semantic.embedder
    path = config.semantic.calibration
    # A bad file stops the start with a CalibrationError that names it.
    calibration = load_calibration_file(path, f"litellm:{name}") if path is not None else None
    return LiteLLMEmbedder(provider, name, calibration=calibration)


def build_reviewer(config: GatewayConfig, provider: Provider) -> Reviewer | None:
    if config.semantic.reviewer == "none":
        return None
    if config.semantic.reviewer == "local":
        from gateway.review.local import LocalPairReviewer

        return LocalPairReviewer.load()
    from gateway.memory.tokens import Tokenizers
    from gateway.review.budget import ReviewTokenBudget
    from gateway.review.litellm_reviewer import LiteLLMReviewer
    from gateway.spend.pricing import Pricer

    model = config.semantic.reviewer
    upstream = next(d.litellm_params.model for d in config.model_list if d.model_name == model)
    return LiteLLMReviewer(
        provider,
        model,
        # Tokens counted in the upstream model's encoding when the provider reports none,
        # priced as spend is; each tenant's hourly budget kept here, in this process.
        counter=Tokenizers().for_model(upstream),
        price=Pricer.from_config(config, provider.cost_usd).cost_usd,
        budget=ReviewTokenBudget(),
    )


def load_guard() -> StructureGuard:
    from gateway.review.local import LocalPairReviewer

    return LocalPairReviewer.load()


async def load_components(config: GatewayConfig, provider: Provider) -> SemanticComponents:
    classifier, comparator = await load_text_components()
    local = await load_local_embedder() if config.semantic.embedder == "local" else None
    embedder = build_embedder(config, provider, local)
    dimensions = config.semantic.embedding_dimensions or embedder.dimensions
    return SemanticComponents(
        classifier=classifier,
        comparator=comparator,
        embedder=embedder,
        embedding_dimensions=dimensions,
        reviewer=build_reviewer(config, provider),
        guard=load_guard(),
    )
