"""Application factory: routers, middleware and a lifespan that builds the services.

Heavy work (litellm import, models, opening stores) happens in the lifespan, through the
composition root `gateway/wiring.py`, never at import time, so importing `gateway.app` is
cheap and side-effect free."""

from __future__ import annotations

import gc
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from fastapi import APIRouter, FastAPI

from gateway.api import (
    admin,
    admin_audit,
    admin_keys,
    admin_spend,
    chat,
    completions_legacy,
    dashboard,
    embeddings,
    health,
    knowledge,
    memories,
    memory_lifecycle,
    messages,
    models,
    responses_api,
    tasks,
    tool_cache,
)
from gateway.api.errors import install_error_handlers
from gateway.api.hit_memo import HitMemo
from gateway.api.hit_shortcut import ExactHitShortcut
from gateway.api.request_id import RequestIdMiddleware
from gateway.api.v1_alias import V1AliasMiddleware
from gateway.components import ComponentsFactory, load_components
from gateway.providers.protocol import Provider
from gateway.settings import GatewayConfig, ServerSettings
from gateway.wiring import build_services


@contextmanager
def _process_tuning(server: ServerSettings) -> Iterator[None]:
    """The interpreter settings a serving process runs under, restored on the way out."""
    # Everything loaded so far (spaCy, the encoder, litellm: millions of objects)
    # lives as long as the app. Moved out of the collector's sight, it is no longer
    # re-scanned by every full collection: those scans were the gateway's worst
    # pauses under load (see docs/measurements.md#garbage-collector-freeze).
    if server.gc_freeze:
        gc.collect()
        gc.freeze()
    previous_switch_interval = sys.getswitchinterval()
    if server.gil_switch_interval_ms is not None:
        sys.setswitchinterval(server.gil_switch_interval_ms / 1000)
    try:
        yield
    finally:
        sys.setswitchinterval(previous_switch_interval)
        if server.gc_freeze:
            gc.unfreeze()


def _api_routers() -> tuple[APIRouter, ...]:
    """Every API surface, in the order its routes are matched."""
    return (
        chat.router,
        models.router,
        embeddings.router,
        # Before `memories.router`: `/v1/memories/export` is not a memory id.
        memory_lifecycle.router,
        memories.router,
        knowledge.router,
        admin.router,
        admin_keys.router,
        admin_audit.router,
        admin_spend.router,
        dashboard.router,
        health.router,
        messages.router,
        completions_legacy.router,
        responses_api.router,
        tasks.router,
        tool_cache.router,
    )


def create_app(
    config: GatewayConfig,
    *,
    provider: Provider | None = None,
    components_factory: ComponentsFactory = load_components,
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await build_services(
            config, provider=provider, components_factory=components_factory
        )
        app.state.services = services
        try:
            with _process_tuning(config.server):
                yield
        finally:
            app.state.services = None
            await services.aclose()

    app = FastAPI(
        title="LLM cache gateway",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_error_handlers(app)
    for router in _api_routers():
        app.include_router(router)
    if config.server.cors_allow_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.server.cors_allow_origins),
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["*"],
            expose_headers=["x-request-id", "x-gateway-cache", "x-gateway-cache-reason"],
        )
    shortcut = config.server.exact_hit_shortcut
    if shortcut.enabled:
        # Inside the alias and the request id: it sees `/v1` paths and has an id.
        memo = HitMemo(shortcut.max_entries, shortcut.max_body_bytes)
        app.state.hit_memo = memo
        app.add_middleware(ExactHitShortcut, memo=memo)
    # Every /v1 route also without the prefix (routers included above or later).
    app.add_middleware(V1AliasMiddleware, routes=lambda: app.routes)
    app.add_middleware(RequestIdMiddleware)
    return app
