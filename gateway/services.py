"""Everything a request handler needs, built once in the app's lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.adaptive.shadow import ShadowVerifier
from gateway.adaptive.stats import AdaptiveStats
from gateway.api.body_parsing import BodyParser
from gateway.api.prompt_tokens import PromptTokens
from gateway.auth import KeyRegistry
from gateway.memory.service import MemoryService
from gateway.pipeline.audit import HitAuditor
from gateway.pipeline.runner import ChatPipeline
from gateway.policy.loader import PolicyStore
from gateway.providers.protocol import Provider
from gateway.settings import GatewayConfig
from gateway.storage import Storage
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.recorder import DecisionRecorder


@dataclass(frozen=True, slots=True)
class Services:
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
    prompt_tokens: PromptTokens
