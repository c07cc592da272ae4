"""Application factory. Heavy work (litellm import, opening stores) happens in the
lifespan, never at import time, so importing `gateway.app` is cheap and side-effect free."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from gateway.api import chat, embeddings, health, memories, models
from gateway.api.errors import install_error_handlers
from gateway.api.request_id import RequestIdMiddleware
from gateway.auth import KeyRegistry
from gateway.components import ComponentsFactory, load_components
from gateway.memory.limits import model_limits
from gateway.memory.service import MemoryService
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.memory import MemoryStage
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


def _context_window_lookup(provider: Provider) -> Callable[[str], int | None]:
    """litellm's bundled model map, when the provider is litellm's; tests' fake
    providers know no windows (the policy default applies)."""
    from gateway.providers.litellm_provider import LiteLLMProvider, litellm_context_window

    if isinstance(provider, LiteLLMProvider):
        return litellm_context_window
    return lambda model: None


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
        # Loads the tiktoken encodings offline now, so a broken install fails at start.
        tokenizers = Tokenizers()
        memory = MemoryService(storage.memories, storage.sessions, components.embedder)
        limits = model_limits(config, _context_window_lookup(provider))
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
                memory=MemoryStage(memory, tokenizers, limits),
            ),
            memory=memory,
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
    for router in (
        chat.router,
        models.router,
        embeddings.router,
        memories.router,
        health.router,
    ):
        app.include_router(router)
    app.add_middleware(RequestIdMiddleware)
    return app
