"""Application factory. Heavy work (litellm import, opening stores) happens in the
lifespan, never at import time, so importing `gateway.app` is cheap and side-effect free."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from gateway.api import chat, embeddings, health, models
from gateway.api.errors import install_error_handlers
from gateway.api.request_id import RequestIdMiddleware
from gateway.auth import KeyRegistry
from gateway.components import ComponentsFactory, load_components
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.runner import ChatPipeline
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.policy.loader import PolicyStore
from gateway.providers.protocol import Provider
from gateway.services import Services
from gateway.settings import GatewayConfig
from gateway.storage import open_storage

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[GatewayConfig], Provider]


def _litellm_provider(config: GatewayConfig) -> Provider:
    from gateway.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider.create(config)


def create_app(
    config: GatewayConfig,
    *,
    provider_factory: ProviderFactory = _litellm_provider,
    components_factory: ComponentsFactory = load_components,
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        policies = PolicyStore.from_directory(config.policies_dir)
        provider = provider_factory(config)
        components = await components_factory(config, provider)
        storage = await open_storage(
            config.storage, components.embedder.name, components.embedding_dimensions
        )
        semantic = SemanticCacheStage(
            components.embedder,
            storage.vectors,
            components.comparator,
            components.reviewer,
            components.guard,
        )
        app.state.services = Services(
            config=config,
            keys=KeyRegistry(config.auth),
            policies=policies,
            provider=provider,
            storage=storage,
            pipeline=ChatPipeline(
                provider,
                ExactCacheStage(storage.exact),
                semantic=semantic,
                classify=ClassifyStage(components.classifier),
            ),
        )
        logger.info(
            "gateway ready: %d models, storage=%s, policies from %s, auth=%s",
            len(config.model_names()),
            config.storage.backend,
            policies.source,
            "open (no tenants configured)" if not config.auth.tenants else "api keys",
        )
        try:
            yield
        finally:
            app.state.services = None
            await storage.close()
            await provider.close()

    app = FastAPI(
        title="LLM cache gateway",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_error_handlers(app)
    for router in (chat.router, models.router, embeddings.router, health.router):
        app.include_router(router)
    app.add_middleware(RequestIdMiddleware)
    return app
