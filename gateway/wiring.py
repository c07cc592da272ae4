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
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from gateway.adaptive.serving import AdaptiveServing
from gateway.adaptive.shadow import ShadowVerifier
from gateway.adaptive.stats import AdaptiveStats
from gateway.api.body_parsing import BodyLimits, BodyParser
from gateway.api.prompt_tokens import PromptTokens
from gateway.audit_trail.trail import AuditTrail
from gateway.auth import KeyRegistry
from gateway.cache.sweeper import start_sweeper, stop_sweeper
from gateway.components import ComponentsFactory, SemanticComponents, load_components
from gateway.keys.admin import KeyAdmin
from gateway.keys.cache import RuntimeKeyCache
from gateway.knowledge.service import KnowledgeService
from gateway.limits.build import request_limits
from gateway.limits.service import RequestLimits
from gateway.memory.lifecycle import MemoryLifecycle, sweep_with_cleanup
from gateway.memory.limits import ModelLimits, model_limits
from gateway.memory.service import MemoryService
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.audit import HitAuditor
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.namespaces import NamespaceLimiter
from gateway.pipeline.runner import ChatPipeline
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.single_flight import SingleFlight
from gateway.policy.loader import PolicyStore, stop_watching
from gateway.providers.deployment_limits import attach_deployment_limits
from gateway.providers.protocol import ChatProvider, Provider
from gateway.review.usage import ReviewUsage, usage_of
from gateway.settings import GatewayConfig
from gateway.spend.build import build_spend
from gateway.spend.pricing import Pricer
from gateway.spend.tracker import SpendTracker
from gateway.storage import Storage, open_storage
from gateway.telemetry.exports import (
    export_adaptive,
    export_audit,
    export_capacity,
    export_policy_reloads,
    export_review,
)
from gateway.telemetry.hit_rate_alert import HitRateDropMonitor
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.recorder import CostEstimator, DecisionRecorder
from gateway.toolcache.service import ToolCacheService
from gateway.toolcache.stats import ToolCacheStats

logger = logging.getLogger(__name__)


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
    knowledge: KnowledgeService  # `/v1/knowledge`, and retrieved by the memory stage
    key_admin: KeyAdmin  # `/admin/keys`
    audit_trail: AuditTrail  # `/admin/audit`
    spend: SpendTracker  # spend per key, tenant, model and day; budgets
    rate_limits: RequestLimits  # policy `rate_limits`, in front of the pipeline
    review_usage: ReviewUsage | None  # a chat-model reviewer's tokens and cost
    exit_stack: AsyncExitStack = field(repr=False, compare=False)

    async def aclose(self) -> None:
        await self.exit_stack.aclose()


def _litellm_provider(config: GatewayConfig) -> Provider:
    """Imported here, at build time: importing litellm costs seconds."""
    from gateway.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider.create(config)


def _cost_estimator(config: GatewayConfig, provider: ChatProvider) -> Pricer:
    """Prices by the upstream model a gateway model name stands for, or by the
    config's `model_info` prices (spend and savings alike)."""
    return Pricer.from_config(config, provider.cost_usd)


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
    export_review(metrics, usage_of(components.reviewer))
    return _Observers(metrics, recorder, alerts, auditor, shadow)


@dataclass(frozen=True, slots=True)
class _Stores:
    """What the pipeline reads and writes: the backend's stores and what sits on them."""

    storage: Storage
    adaptive: AdaptiveStats
    memory: MemoryService
    namespaces: NamespaceLimiter


def _memory_stage(
    stores: _Stores,
    tokenizers: Tokenizers,
    limits: ModelLimits,
    metrics: GatewayMetrics,
    upstream: Provider,
    knowledge: KnowledgeService,
) -> MemoryStage:
    stores.memory.access.count_failures_with(metrics.store_failure)
    stores.memory.session_writes.count_failures_with(metrics.store_failure)
    return MemoryStage(
        stores.memory,
        tokenizers,
        limits,
        metrics.store_failure,
        tasks=stores.storage.tasks,
        summariser=upstream,
        knowledge=knowledge,
    )


def _pipeline(
    upstream: Provider,
    components: SemanticComponents,
    policies: PolicyStore,
    stores: _Stores,
    observers: _Observers,
    memory: MemoryStage,
    spend: SpendTracker,
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
        memory=memory,
        on_store_failure=metrics.store_failure,
        single_flight=_single_flight(stores.storage),
        policy_for=policies.resolve,
        namespaces=stores.namespaces,
        shadow=observers.shadow,
        auditor=observers.auditor,
        recorder=observers.recorder,
        spend=spend,
    )


def _tool_cache(storage: Storage, metrics: GatewayMetrics) -> ToolCacheService:
    stats = ToolCacheStats()
    stats.export(metrics)
    return ToolCacheService(storage.tool_cache, stats, on_store_failure=metrics.store_failure)


def _start_observers(
    stack: AsyncExitStack, policies: PolicyStore, stores: _Stores, observers: _Observers
) -> None:
    # Closed before the stores they write to: the shadow, then the auditor first.
    stack.push_async_callback(observers.shadow.close)
    stack.push_async_callback(observers.auditor.close)
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
    memory = MemoryService(storage.memories, storage.sessions, components.embedder)
    # The queued access counts are written before the store closes.
    stack.push_async_callback(memory.close)
    return _Stores(
        storage=storage,
        adaptive=adaptive,
        memory=memory,
        namespaces=NamespaceLimiter(
            config.capacity.max_namespaces_per_tenant, config.capacity.namespace_idle_seconds
        ),
    )


def loaded_tokenizers(limits: ModelLimits) -> Tokenizers:
    """The tiktoken encodings, loaded offline now: the default one (a broken install fails
    at start) and each configured model's. Loaded lazily, a model's encoding was read on
    its first request, on the event loop: o200k_base (the gpt-4o family) took ~1.3 s on
    this box, every request in flight waiting with it."""
    tokenizers = Tokenizers()
    for model in sorted(set(limits.upstream_models.values())):
        tokenizers.for_model(model)
    return tokenizers


def _knowledge(
    stores: _Stores, components: SemanticComponents, tokenizers: Tokenizers
) -> KnowledgeService:
    # Documents are chunked in the default encoding (cl100k_base): one size for all the
    # models that may later be told a chunk.
    return KnowledgeService(stores.storage.knowledge, components.embedder, tokenizers.for_model(""))


def _start_background_tasks(
    stack: AsyncExitStack,
    config: GatewayConfig,
    policies: PolicyStore,
    storage: Storage,
    memory: MemoryService | None = None,
) -> None:
    # Policy files are re-read within a couple of seconds of an edit; a broken edit
    # leaves the previous policies active (see gateway/policy/loader.py).
    policy_watcher = asyncio.create_task(
        policies.watch(interval_seconds=config.policy_reload_seconds), name="policy-watcher"
    )
    sweep = storage.sweep
    if memory is not None:
        # The same sweep applies the memory retention policies (`memory.retention`).
        sweep = sweep_with_cleanup(
            storage.sweep,
            MemoryLifecycle(memory),
            lambda tenant: policies.resolve(tenant, "").memory,
            lambda: any(
                policy.memory.retention.limited for policy in policies.policies.policies.values()
            ),
        )
    sweeper = start_sweeper(sweep, config.capacity.sweep_interval_seconds)
    # Stopped in reverse: the policy watcher first, then the sweeper.
    stack.push_async_callback(stop_sweeper, sweeper)
    stack.push_async_callback(stop_watching, policy_watcher)


def _log_ready(config: GatewayConfig, policies: PolicyStore) -> None:
    logger.info(
        "gateway ready: %d models, storage=%s, policies from %s, auth=%s",
        len(config.model_names()),
        config.storage.backend,
        policies.source,
        "open (no tenants configured)" if not config.auth.tenants else "api keys",
    )


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
        pricer = _cost_estimator(config, upstream)
        observers = _observers(config, upstream, components, stores.adaptive, pricer.cost_usd)
        _start_observers(stack, policies, stores, observers)
        tokenizers = loaded_tokenizers(limits)
        knowledge = _knowledge(stores, components, tokenizers)
        spend = build_spend(
            stack, config, pricer, stores.storage, limits, tokenizers, observers.metrics, policies
        )
        memory = _memory_stage(stores, tokenizers, limits, observers.metrics, upstream, knowledge)
        pipeline = _pipeline(upstream, components, policies, stores, observers, memory, spend)
        _start_background_tasks(stack, config, policies, stores.storage, stores.memory)
        _log_ready(config, policies)
        runtime_keys = RuntimeKeyCache(stores.storage.keys, config.auth.runtime_keys)
        return Services(
            config=config,
            keys=KeyRegistry(config.auth, runtime_keys),
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
            knowledge=knowledge,
            key_admin=KeyAdmin(stores.storage.keys, runtime_keys),
            audit_trail=AuditTrail(stores.storage.audit, config.audit),
            spend=spend,
            rate_limits=request_limits(
                stores.storage.rate_limiter, policies.resolve, tokenizers, limits, observers.metrics
            ),
            review_usage=usage_of(components.reviewer),
            exit_stack=stack.pop_all(),
        )
    raise AssertionError("unreachable: the block returns or raises")
