"""Application factory. Heavy work (litellm import, opening stores) happens in the
lifespan, never at import time, so importing `gateway.app` is cheap and side-effect free."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from gateway.adaptive.report import export_judge_metrics, tenant_rows
from gateway.adaptive.serving import AdaptiveServing
from gateway.adaptive.shadow import ShadowVerifier
from gateway.adaptive.stats import AdaptiveStats
from gateway.api import (
    admin,
    chat,
    completions_legacy,
    dashboard,
    embeddings,
    health,
    memories,
    messages,
    models,
    responses_api,
)
from gateway.api.body_parsing import BodyLimits, BodyParser
from gateway.api.errors import install_error_handlers
from gateway.api.prompt_tokens import PromptTokens
from gateway.api.request_id import RequestIdMiddleware
from gateway.api.v1_alias import V1AliasMiddleware
from gateway.auth import KeyRegistry
from gateway.cache.eviction import CapacityLedger
from gateway.cache.sweeper import start_sweeper, stop_sweeper
from gateway.components import ComponentsFactory, load_components
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
from gateway.providers.protocol import ChatProvider, Provider
from gateway.services import Services
from gateway.settings import GatewayConfig
from gateway.storage import Storage, open_storage
from gateway.telemetry.hit_rate_alert import HitRateDropMonitor
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.recorder import CostEstimator, DecisionRecorder

logger = logging.getLogger(__name__)

ScrapeRows = Callable[[], Iterable[tuple[tuple[str, ...], float]]]


def _litellm_provider(config: GatewayConfig) -> Provider:
    """Imported here, in the lifespan: importing litellm costs seconds."""
    from gateway.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider.create(config)


def _single_flight(storage: Storage) -> SingleFlight:
    """Within a process always; across replicas through what the backend shares (on
    Redis, the lease and the exact cache where the leader's answer lands)."""
    return SingleFlight(storage.flight.lock, storage.flight.exact)


def _cost_estimator(provider: ChatProvider, limits: ModelLimits) -> CostEstimator:
    """Prices by the upstream model a gateway model name stands for."""

    def estimate(model: str, prompt_tokens: int, completion_tokens: int) -> float:
        return provider.cost_usd(limits.tokenizer_model(model), prompt_tokens, completion_tokens)

    return estimate


def _export_policy_reloads(metrics: GatewayMetrics, policies: PolicyStore) -> None:
    metrics.counter_at_scrape(
        "gateway_policy_reloads",
        "Policy reloads attempted.",
        (),
        lambda: [((), float(policies.reloads_total))],
    )
    metrics.counter_at_scrape(
        "gateway_policy_reload_errors",
        "Policy reloads rejected (previous policies kept).",
        (),
        lambda: [((), float(policies.reload_errors_total))],
    )
    metrics.gauge_at_scrape(
        "gateway_policy_reload_failing",
        "1 while the last policy reload failed.",
        (),
        lambda: [((), 1.0 if policies.status().get("last_error") else 0.0)],
    )


def _export_audit(metrics: GatewayMetrics, auditor: HitAuditor) -> None:
    def rows(field: str) -> list[tuple[tuple[str, ...], float]]:
        return [((row["tenant"], row["layer"]), float(row[field])) for row in auditor.estimates()]

    labels = ("tenant", "layer")
    metrics.counter_at_scrape(
        "gateway_audit_samples",
        "Cache hits audited against a fresh answer.",
        labels,
        lambda: rows("sampled"),
    )
    metrics.counter_at_scrape(
        "gateway_audit_false_hits",
        "Audited hits whose fresh answer disagreed.",
        labels,
        lambda: rows("false_hits"),
    )
    metrics.gauge_at_scrape(
        "gateway_audit_false_hit_rate",
        "Estimated false-hit rate (audited share).",
        labels,
        lambda: rows("rate"),
    )
    metrics.gauge_at_scrape(
        "gateway_audit_false_hit_rate_upper95",
        "Upper end of the 95 % Wilson interval of the false-hit rate.",
        labels,
        lambda: [
            ((row["tenant"], row["layer"]), float(row["ci95"][1])) for row in auditor.estimates()
        ],
    )


def _export_adaptive(
    metrics: GatewayMetrics,
    stats: AdaptiveStats,
    policies: PolicyStore,
    alerts: HitRateDropMonitor,
) -> None:
    def rows() -> list[dict[str, Any]]:
        return tenant_rows(stats, lambda tenant: policies.resolve(tenant, ""))

    def read(pick: Callable[[dict[str, Any]], float | None]) -> ScrapeRows:
        return lambda: [
            ((row["tenant"],), float(value)) for row in rows() if (value := pick(row)) is not None
        ]

    labels = ("tenant",)
    gauges: list[tuple[str, str, Callable[[dict[str, Any]], float | None]]] = [
        ("gateway_adaptive_threshold", "Semantic serving threshold in force (calibrated).",
         lambda r: r["threshold"]),
        ("gateway_adaptive_supported_threshold",
         "Lowest threshold the statistics support at the target (what adapt serves at).",
         lambda r: r["supported_threshold"]),
        ("gateway_adaptive_precision", "Estimated precision of what that threshold serves.",
         lambda r: r["precision"]),
        ("gateway_adaptive_precision_lower95", "Its one-sided 95 % lower bound.",
         lambda r: r["precision_lower95"]),
        ("gateway_adaptive_precision_upper95", "Its one-sided 95 % upper bound.",
         lambda r: r["precision_interval"][1] if r["precision_interval"] else None),
    ]  # fmt: skip
    for name, documentation, pick in gauges:
        metrics.gauge_at_scrape(name, documentation, labels, read(pick))
    counters: list[tuple[str, str, Callable[[dict[str, Any]], float | None]]] = [
        ("gateway_adaptive_shadow_judged", "Semantic misses judged in the shadow.",
         lambda r: r["shadow_judged"]),
        ("gateway_adaptive_left_on_table_hits",
         "Shadow-accepted misses: hits left on the table (corrected for judge errors).",
         lambda r: r["left_on_table"]["hits"]),
        ("gateway_adaptive_left_on_table_tokens", "Tokens those misses cost upstream.",
         lambda r: r["left_on_table"]["tokens"]),
        ("gateway_adaptive_left_on_table_cost_usd", "Estimated cost of those misses.",
         lambda r: r["left_on_table"]["cost_usd"]),
        ("gateway_adaptive_judge_calls", "Shadow judgments made.", lambda r: r["judge"]["calls"]),
        ("gateway_adaptive_judge_tokens", "Tokens the judge model used.",
         lambda r: r["judge"]["tokens"]),
        ("gateway_adaptive_judge_cost_usd", "Estimated cost of the judge model.",
         lambda r: r["judge"]["cost_usd"]),
    ]  # fmt: skip
    for name, documentation, pick in counters:
        metrics.counter_at_scrape(name, documentation, labels, read(pick))
    export_judge_metrics(metrics, stats)
    metrics.gauge_at_scrape(
        "gateway_hit_rate_drop_alert",
        "1 while the tenant's hit rate has fallen by the configured points within the window.",
        labels,
        lambda: [((s.tenant,), 1.0 if s.firing else 0.0) for s in alerts.states()],
    )
    metrics.gauge_at_scrape(
        "gateway_hit_rate_drop_points",
        "Percentage points the tenant's hit rate fell within the alert window.",
        labels,
        lambda: [((s.tenant,), s.drop_points) for s in alerts.states()],
    )


def _export_capacity(
    metrics: GatewayMetrics, ledger: CapacityLedger, namespaces: NamespaceLimiter
) -> None:
    metrics.counter_at_scrape(
        "gateway_cache_evictions",
        "Entries the capped stores removed, by store and reason "
        "(capacity, tenant_capacity, expired).",
        ("store", "reason"),
        lambda: [((store, reason), float(n)) for (store, reason), n in ledger.evictions().items()],
    )
    metrics.gauge_at_scrape(
        "gateway_cache_entries",
        "Entries held by each capped store (embedded backend).",
        ("store",),
        lambda: [((store,), float(u.entries)) for store, u in ledger.usage().items()],
    )
    metrics.gauge_at_scrape(
        "gateway_cache_bytes",
        "Bytes counted against each capped store's cap (embedded backend).",
        ("store",),
        lambda: [((store,), float(u.bytes)) for store, u in ledger.usage().items()],
    )
    metrics.counter_at_scrape(
        "gateway_namespace_refusals",
        "Requests not cached because their tenant already used its cap of namespaces.",
        (),
        lambda: [((), float(namespaces.refused_total))],
    )


def create_app(
    config: GatewayConfig,
    *,
    provider: Provider | None = None,
    components_factory: ComponentsFactory = load_components,
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        policies = PolicyStore.from_directory(config.policies_dir)
        # The app closes the provider it made; one it was given stays its caller's.
        upstream = provider if provider is not None else _litellm_provider(config)
        await upstream.warm_up()
        components = await components_factory(config, upstream)
        storage = await open_storage(
            config.storage,
            components.embedder.name,
            components.embedding_dimensions,
            config.capacity,
        )
        adaptive = AdaptiveStats(storage.adaptive, config.adaptive.sync_seconds)
        await adaptive.start()
        semantic = SemanticCacheStage(
            components.embedder,
            storage.vectors,
            components.comparator,
            components.reviewer,
            components.guard,
            adaptive=AdaptiveServing(adaptive),
        )
        # Loads the tiktoken encodings offline now, so a broken install fails at start.
        tokenizers = Tokenizers()
        memory = MemoryService(storage.memories, storage.sessions, components.embedder)
        limits = model_limits(config, upstream.context_window)
        metrics = GatewayMetrics()
        cost = _cost_estimator(upstream, limits)
        alerts = HitRateDropMonitor(config.alerts.hit_rate_drop)
        recorder = DecisionRecorder(metrics, cost, alerts=alerts)
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
        _export_audit(metrics, auditor)
        _export_adaptive(metrics, adaptive, policies, alerts)
        _export_policy_reloads(metrics, policies)
        namespaces = NamespaceLimiter(
            config.capacity.max_namespaces_per_tenant, config.capacity.namespace_idle_seconds
        )
        _export_capacity(metrics, storage.ledger, namespaces)
        app.state.services = Services(
            config=config,
            keys=KeyRegistry(config.auth),
            policies=policies,
            provider=upstream,
            storage=storage,
            pipeline=ChatPipeline(
                upstream,
                ExactCacheStage(storage.exact),
                semantic=semantic,
                classify=ClassifyStage(components.classifier),
                memory=MemoryStage(memory, tokenizers, limits, metrics.store_failure),
                on_store_failure=metrics.store_failure,
                single_flight=_single_flight(storage),
                policy_for=policies.resolve,
                namespaces=namespaces,
                shadow=shadow,
                auditor=auditor,
                recorder=recorder,
            ),
            memory=memory,
            recorder=recorder,
            metrics=metrics,
            auditor=auditor,
            body_parser=BodyParser(BodyLimits.from_settings(config.server), upstream),
            adaptive=adaptive,
            shadow=shadow,
            prompt_tokens=PromptTokens(tokenizers, limits),
        )
        logger.info(
            "gateway ready: %d models, storage=%s, policies from %s, auth=%s",
            len(config.model_names()),
            config.storage.backend,
            policies.source,
            "open (no tenants configured)" if not config.auth.tenants else "api keys",
        )
        # Policy files are re-read within a couple of seconds of an edit; a broken edit
        # leaves the previous policies active (see gateway/policy/loader.py).
        policy_watcher = asyncio.create_task(
            policies.watch(interval_seconds=config.policy_reload_seconds), name="policy-watcher"
        )
        sweeper = start_sweeper(storage.sweep, config.capacity.sweep_interval_seconds)
        # Everything loaded so far (spaCy, the encoder, litellm: millions of objects)
        # lives as long as the app. Moved out of the collector's sight, it is no longer
        # re-scanned by every full collection: those scans were the gateway's worst
        # pauses under load (see docs/measurements.md#garbage-collector-freeze).
        if config.server.gc_freeze:
            gc.collect()
            gc.freeze()
        previous_switch_interval = sys.getswitchinterval()
        if config.server.gil_switch_interval_ms is not None:
            sys.setswitchinterval(config.server.gil_switch_interval_ms / 1000)
        try:
            yield
        finally:
            sys.setswitchinterval(previous_switch_interval)
            if config.server.gc_freeze:
                gc.unfreeze()
            await stop_watching(policy_watcher)
            await stop_sweeper(sweeper)
            app.state.services = None
            await auditor.close()
            await shadow.close()
            # The last counter changes are written before the store closes.
            await adaptive.close()
            await storage.close()
            if provider is None:
                await upstream.close()

    app = FastAPI(
        title="LLM cache gateway",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_error_handlers(app)
    for router in (
        chat.router,
        messages.router,
        completions_legacy.router,
        responses_api.router,
        models.router,
        embeddings.router,
        memories.router,
        admin.router,
        dashboard.router,
        health.router,
    ):
        app.include_router(router)
    if config.server.cors_allow_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.server.cors_allow_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["*"],
            expose_headers=["x-request-id", "x-gateway-cache", "x-gateway-cache-reason"],
        )
    # Every /v1 route also without the prefix (routers included above or later).
    app.add_middleware(V1AliasMiddleware, routes=lambda: app.routes)
    app.add_middleware(RequestIdMiddleware)
    return app
