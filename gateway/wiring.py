"""The composition root: `build_services` builds everything the gateway serves with, in
dependency order, and `Services.aclose` takes it down in reverse.

The app (`gateway/app.py`) only calls it from its lifespan; tests and tools call it
without HTTP. Two seams: `provider` (the chat and embedding provider; the litellm one
when none is given) and `components_factory` (the model-backed parts, which take seconds
to load: tests load them once per session and hand the same factory to every build).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from gateway.adaptive.serving import AdaptiveServing
from gateway.adaptive.shadow import ShadowVerifier
from gateway.adaptive.stats import AdaptiveStats
from gateway.api.body_parsing import BodyLimits, BodyParser
from gateway.api.prompt_tokens import PromptTokens
from gateway.auth import KeyRegistry
from gateway.cache.sweeper import start_sweeper, stop_sweeper
from gateway.classify.classifier import RequestClassifier
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.limits.build import request_limits
from gateway.limits.service import RequestLimits
from gateway.memory.limits import ModelLimits, model_limits
from gateway.memory.service import MemoryService
from gateway.memory.tokens import Tokenizers
from gateway.nlp import TextAnalyzer
from gateway.pipeline.audit import HitAuditor
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.namespaces import NamespaceLimiter
from gateway.pipeline.runner import ChatPipeline
from gateway.pipeline.semantic import SemanticCacheStage, StructureGuard
from gateway.pipeline.single_flight import SingleFlight
from gateway.policy.loader import PolicyStore, stop_watching
from gateway.providers.deployment_limits import attach_deployment_limits
from gateway.providers.protocol import ChatProvider, Provider
from gateway.review.protocol import Reviewer
from gateway.settings import GatewayConfig
from gateway.storage import Storage, open_storage
from gateway.telemetry.exports import (
    export_adaptive,
    export_audit,
    export_capacity,
    export_policy_reloads,
)
from gateway.telemetry.hit_rate_alert import HitRateDropMonitor
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.recorder import CostEstimator, DecisionRecorder
from gateway.toolcache.service import ToolCacheService
from gateway.toolcache.stats import ToolCacheStats

logger = logging.getLogger(__name__)


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

    return LiteLLMEmbedder(provider, config.semantic.embedder)


def build_reviewer(config: GatewayConfig, provider: Provider) -> Reviewer | None:
    if config.semantic.reviewer == "none":
        return None
    if config.semantic.reviewer == "local":
        from gateway.review.local import LocalPairReviewer

        return LocalPairReviewer.load()
    from gateway.review.litellm_reviewer import LiteLLMReviewer

    return LiteLLMReviewer(provider, config.semantic.reviewer)


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


@dataclass(frozen=True, slots=True)
class Services:
    """Everything a request handler needs. Routes get it through the FastAPI dependency
    `gateway.api.deps.get_services`; `aclose` stops and closes what `build_services`
    started and opened, last built first."""

    config: GatewayConfig
    keys: KeyRegistry
    policies: PolicyStore
    provider: Provider
    storage: Storage
    pipeline: ChatPipeline
    memory: MemoryService
    recorder: DecisionRecorder
    metrics: GatewayMetrics
    auditor: HitAuditor
    body_parser: BodyParser
    adaptive: AdaptiveStats
    shadow: ShadowVerifier
    prompt_tokens: PromptTokens  # `POST /v1/messages/count_tokens`
    tool_cache: ToolCacheService  # `/v1/tool-cache`
    rate_limits: RequestLimits  # policy `rate_limits`, in front of the pipeline
    exit_stack: AsyncExitStack = field(repr=False, compare=False)

    async def aclose(self) -> None:
        await self.exit_stack.aclose()


def _litellm_provider(config: GatewayConfig) -> Provider:
    """Imported here, at build time: importing litellm costs seconds."""
    from gateway.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider.create(config)


def _cost_estimator(provider: ChatProvider, limits: ModelLimits) -> CostEstimator:
    """Prices by the upstream model a gateway model name stands for."""

    def estimate(model: str, prompt_tokens: int, completion_tokens: int) -> float:
        return provider.cost_usd(limits.tokenizer_model(model), prompt_tokens, completion_tokens)

    return estimate


def _single_flight(storage: Storage) -> SingleFlight:
    """Within a process always; across replicas through what the backend shares (on
    Redis, the lease and the exact cache where the leader's answer lands)."""
    return SingleFlight(storage.flight.lock, storage.flight.exact)


@dataclass(frozen=True, slots=True)
class _Observers:
    """What watches the served traffic beside the pipeline."""

    metrics: GatewayMetrics
    recorder: DecisionRecorder
    alerts: HitRateDropMonitor
    auditor: HitAuditor
    shadow: ShadowVerifier


def _observers(
    config: GatewayConfig,
    upstream: Provider,
    components: SemanticComponents,
    adaptive: AdaptiveStats,
    cost: CostEstimator,
) -> _Observers:
    metrics = GatewayMetrics()
    alerts = HitRateDropMonitor(config.alerts.hit_rate_drop)
    auditor = HitAuditor(
        upstream,
        components.reviewer,
        on_semantic_verdict=AdaptiveServing(adaptive).audit_verdict,
    )
    shadow = ShadowVerifier(
        adaptive,
        components.comparator,
        components.embedder,
        upstream,
        components.guard,
        cost=cost,
    )
    recorder = DecisionRecorder(metrics, cost, alerts=alerts)
    return _Observers(metrics, recorder, alerts, auditor, shadow)


@dataclass(frozen=True, slots=True)
class _Stores:
    """What the pipeline reads and writes: the backend's stores and what sits on them."""

    storage: Storage
    adaptive: AdaptiveStats
    memory: MemoryService
    namespaces: NamespaceLimiter


def _pipeline(
    config: GatewayConfig,
    upstream: Provider,
    components: SemanticComponents,
    policies: PolicyStore,
    stores: _Stores,
    limits: ModelLimits,
    observers: _Observers,
    tokenizers: Tokenizers,
) -> ChatPipeline:
    semantic = SemanticCacheStage(
        components.embedder,
        stores.storage.vectors,
        components.comparator,
        components.reviewer,
        components.guard,
        adaptive=AdaptiveServing(stores.adaptive),
    )
    metrics = observers.metrics
    return ChatPipeline(
        upstream,
        ExactCacheStage(stores.storage.exact),
        semantic=semantic,
        classify=ClassifyStage(components.classifier),
        memory=MemoryStage(
            stores.memory,
            tokenizers,
            limits,
            metrics.store_failure,
            tasks=stores.storage.tasks,
            summariser=upstream,
        ),
        on_store_failure=metrics.store_failure,
        single_flight=_single_flight(stores.storage),
        policy_for=policies.resolve,
        namespaces=stores.namespaces,
        shadow=observers.shadow,
        auditor=observers.auditor,
        recorder=observers.recorder,
    )


def _tool_cache(storage: Storage, metrics: GatewayMetrics) -> ToolCacheService:
    stats = ToolCacheStats()
    stats.export(metrics)
    return ToolCacheService(storage.tool_cache, stats, on_store_failure=metrics.store_failure)


def _export_metrics(policies: PolicyStore, stores: _Stores, observers: _Observers) -> None:
    metrics = observers.metrics
    export_audit(metrics, observers.auditor)
    export_adaptive(metrics, stores.adaptive, policies, observers.alerts)
    export_policy_reloads(metrics, policies)
    export_capacity(metrics, stores.storage.ledger, stores.namespaces)


async def _open_stores(
    stack: AsyncExitStack, config: GatewayConfig, components: SemanticComponents
) -> _Stores:
    storage = await open_storage(
        config.storage,
        components.embedder.name,
        components.embedding_dimensions,
        config.capacity,
    )
    stack.push_async_callback(storage.close)
    adaptive = AdaptiveStats(storage.adaptive, config.adaptive.sync_seconds)
    await adaptive.start()
    # The last counter changes are written before the store closes.
    stack.push_async_callback(adaptive.close)
    return _Stores(
        storage=storage,
        adaptive=adaptive,
        memory=MemoryService(storage.memories, storage.sessions, components.embedder),
        namespaces=NamespaceLimiter(
            config.capacity.max_namespaces_per_tenant, config.capacity.namespace_idle_seconds
        ),
    )


def _start_background_tasks(
    stack: AsyncExitStack, config: GatewayConfig, policies: PolicyStore, storage: Storage
) -> None:
    # Policy files are re-read within a couple of seconds of an edit; a broken edit
    # leaves the previous policies active (see gateway/policy/loader.py).
    policy_watcher = asyncio.create_task(
        policies.watch(interval_seconds=config.policy_reload_seconds), name="policy-watcher"
    )
    sweeper = start_sweeper(storage.sweep, config.capacity.sweep_interval_seconds)
    # Stopped in reverse: the policy watcher first, then the sweeper.
    stack.push_async_callback(stop_sweeper, sweeper)
    stack.push_async_callback(stop_watching, policy_watcher)


async def build_services(
    config: GatewayConfig,
    *,
    provider: Provider | None = None,
    components_factory: ComponentsFactory = load_components,
) -> Services:
    """Everything the gateway serves with, its background tasks started. A failure part
    way closes what was already opened. A `provider` given stays its caller's to close;
    the one built here closes with the services."""
    async with AsyncExitStack() as stack:
        policies = PolicyStore.from_directory(config.policies_dir)
        upstream = provider if provider is not None else _litellm_provider(config)
        if provider is None:
            stack.push_async_callback(upstream.close)
        await upstream.warm_up()
        components = await components_factory(config, upstream)
        stores = await _open_stores(stack, config, components)
        attach_deployment_limits(upstream, stores.storage.rate_limiter)
        limits = model_limits(config, upstream.context_window)
        cost = _cost_estimator(upstream, limits)
        observers = _observers(config, upstream, components, stores.adaptive, cost)
        # Closed before the stores they write to: the shadow, then the auditor first.
        stack.push_async_callback(observers.shadow.close)
        stack.push_async_callback(observers.auditor.close)
        _export_metrics(policies, stores, observers)
        # Loads the tiktoken encodings offline now, so a broken install fails at start.
        tokenizers = Tokenizers()
        pipeline = _pipeline(
            config, upstream, components, policies, stores, limits, observers, tokenizers
        )
        _start_background_tasks(stack, config, policies, stores.storage)
        logger.info(
            "gateway ready: %d models, storage=%s, policies from %s, auth=%s",
            len(config.model_names()),
            config.storage.backend,
            policies.source,
            "open (no tenants configured)" if not config.auth.tenants else "api keys",
        )
        return Services(
            config=config,
            keys=KeyRegistry(config.auth),
            policies=policies,
            provider=upstream,
            storage=stores.storage,
            pipeline=pipeline,
            memory=stores.memory,
            recorder=observers.recorder,
            metrics=observers.metrics,
            auditor=observers.auditor,
            body_parser=BodyParser(BodyLimits.from_settings(config.server), upstream),
            adaptive=stores.adaptive,
            shadow=observers.shadow,
            prompt_tokens=PromptTokens(tokenizers, limits),
            tool_cache=_tool_cache(stores.storage, observers.metrics),
            rate_limits=request_limits(
                stores.storage.rate_limiter, policies.resolve, tokenizers, limits, observers.metrics
            ),
            exit_stack=stack.pop_all(),
        )
    raise AssertionError("unreachable: the block returns or raises")
