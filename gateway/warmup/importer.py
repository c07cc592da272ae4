"""Stores recorded answers as the live pipeline would have stored them.

Each pair goes through what a live request goes through, with the gateway's own parts
built from the config: the request validation of `POST /v1/chat/completions`, the
model check, the policy for (tenant, model), `ClassifyStage` (request-level rules and
the content classifier), the exact key, and `ChatPipeline.store_answer` (stage 6: both
layers, their TTLs, the semantic layer's structure split). Refused are: failed calls,
bypassed classes, answers that did not finish normally or cannot be replayed in full,
answers that may hold a user's memories, and duplicates. What a record held is never
logged; the summary counts reasons and names line numbers only.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from gateway.api.schemas import ChatCompletionRequest, parse_body
from gateway.api.scope import checked_identifier
from gateway.auth import Principal
from gateway.completions import finished_normally, replay_gap
from gateway.components import ComponentsFactory
from gateway.errors import GatewayInternalError, InvalidRequest
from gateway.memory.inject import MEMORY_HEADER
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import ChatPipeline
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.policy.loader import PolicyStore
from gateway.providers.protocol import Provider
from gateway.settings import GatewayConfig
from gateway.storage import open_storage
from gateway.warmup.progress import Progress
from gateway.warmup.records import RecordedPair, RecordError, Refusal, parse_line
from gateway.warmup.seed import AdaptiveSeeder, SeedSummary, open_seeder

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[GatewayConfig], Provider]

# Line numbers kept per refusal reason in the summary (enough to find the pattern).
EXAMPLE_LINES_PER_REASON = 5


class StorageUnavailable(GatewayInternalError):
    """The configured store did not answer at start: nothing would be stored."""


@dataclass(slots=True)
class ImportSummary:
    file: str
    tenant: str
    backend: str
    records: int = 0  # non-blank lines read
    stored: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    example_lines: dict[str, list[int]] = field(default_factory=dict)
    load_seconds: float = 0.0  # building the components and opening the store
    seconds: float = 0.0  # the records themselves
    seeded: SeedSummary | None = None  # with --seed-adaptive

    def refuse(self, reason: str, line_number: int) -> None:
        self.refused[reason] += 1
        lines = self.example_lines.setdefault(reason, [])
        if len(lines) < EXAMPLE_LINES_PER_REASON:
            lines.append(line_number)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "tenant": self.tenant,
            "backend": self.backend,
            "records": self.records,
            "stored": self.stored,
            "refused_total": sum(self.refused.values()),
            "refused": dict(self.refused.most_common()),
            "example_lines": self.example_lines,
            "load_seconds": round(self.load_seconds, 3),
            "seconds": round(self.seconds, 3),
            **({"seeded": self.seeded.to_dict()} if self.seeded is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class ImportOptions:
    tenant: str
    namespace: str | None = None
    # Import records whose body names a user even though the policy injects memory
    # (for logs written before the gateway or without its memory).
    include_user_records: bool = False
    # Judge near pairs in the file and add the verdicts to the adaptive statistics.
    seed_adaptive: bool = False


class StoreFailures:
    """The pipeline's store-failure hook: whether a write failed since the last reset
    (the pipeline has logged and counted it already)."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, store: str, operation: str) -> None:
        self.seen = True


class PairImporter:
    """Judges and stores one recorded pair at a time with the pipeline's stages."""

    def __init__(
        self,
        options: ImportOptions,
        policies: PolicyStore,
        provider: Provider,
        pipeline: ChatPipeline,
        exact: ExactCacheStage,
        classify: ClassifyStage,
        failures: StoreFailures,
        seeder: AdaptiveSeeder | None = None,
    ) -> None:
        self._failures = failures
        self._seeder = seeder
        self._options = options
        self._policies = policies
        self._provider = provider
        self._pipeline = pipeline
        self._exact = exact
        self._classify = classify
        self._stored_keys: set[str] = set()

    async def import_pair(self, pair: RecordedPair, line_number: int) -> str | None:
        """None when stored; else the reason code it was refused with."""
        try:
            body, parsed = parse_body(
                orjson.dumps(pair.body), ChatCompletionRequest, rules=self._provider
            )
            user = body.get("user")
            if isinstance(user, str) and user:
                checked_identifier(user, "user")
        except (InvalidRequest, TypeError):
            # TypeError: a value orjson cannot write back (an integer past 64 bits).
            return Refusal.INVALID_REQUEST
        if not self._provider.has_model(parsed.model):
            return Refusal.UNKNOWN_MODEL
        request = ChatRequest(
            request_id=f"import-{line_number}",
            principal=Principal(tenant=self._options.tenant),
            model=parsed.model,
            body=body,
            policy=self._policies.resolve(self._options.tenant, parsed.model),
            user=user if isinstance(user, str) and user else None,
            namespace=self._options.namespace,
        )
        verdict = self._classify.run(request)
        if verdict.reason is not None:
            return verdict.reason.value
        refusal = self._refusal(request, pair.completion)
        if refusal is not None:
            return refusal
        key = request.exact_key
        if key in self._stored_keys:
            return Refusal.DUPLICATE
        if request.policy.exact_cache.enabled:
            try:
                cached = await self._exact.lookup(request)
            except Exception as exc:
                self._exact.report_failure("lookup", exc)
                return Refusal.STORE_FAILED
            if cached is not None:
                return Refusal.DUPLICATE
        if self._seeder is not None:
            await self._seeder.seed(request, pair.completion)  # before: it finds older entries
        self._failures.seen = False
        if not await self._pipeline.store_answer(request, pair.completion):
            return Refusal.STORE_FAILED if self._failures.seen else Refusal.NOT_STORED
        self._stored_keys.add(key)
        return None

    def _refusal(self, request: ChatRequest, completion: dict[str, Any]) -> Refusal | None:
        """What the live store rules (`ChatPipeline._should_store`) and the replay check
        would refuse, each with its own reason."""
        if _carries_memory_block(request.body):
            return Refusal.MEMORY_PERSONALIZED
        if (
            request.user is not None
            and request.policy.memory.enabled
            and not self._options.include_user_records
        ):
            return Refusal.USER_SCOPED
        if not finished_normally(completion, request.policy.cacheable_finish_reasons):
            return Refusal.FINISH_REASON
        if replay_gap(completion, request.body) is not None:
            return Refusal.REPLAY_INCOMPLETE
        return None


def _carries_memory_block(body: dict[str, Any]) -> bool:
    """The gateway's injected memory message (a log taken after injection)."""
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content.startswith(MEMORY_HEADER):
            return True
    return False


async def _import_one(importer: PairImporter, pair: RecordedPair, number: int) -> str | None:
    """One record; a failure nobody foresaw refuses that record, not the whole file."""
    try:
        return await importer.import_pair(pair, number)
    except Exception as exc:
        # The type only: the message may quote the record.
        logger.warning("record on line %d failed (%s); skipped", number, type(exc).__name__)
        return Refusal.IMPORT_FAILED


def numbered_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, line) for each non-blank line."""
    for number, line in enumerate(handle, start=1):
        if line.strip():
            yield number, line


async def import_file(
    config: GatewayConfig,
    path: Path,
    options: ImportOptions,
    *,
    progress: Progress,
    provider_factory: ProviderFactory,
    components_factory: ComponentsFactory,
) -> ImportSummary:
    """Builds the gateway's parts as `gateway serve` does (provider, components, the
    configured storage, the policies folder) and imports every line of `path`."""
    policies = PolicyStore.from_directory(config.policies_dir)
    started = time.perf_counter()
    summary = ImportSummary(file=str(path), tenant=options.tenant, backend=config.storage.backend)
    async with AsyncExitStack() as stack:
        provider = provider_factory(config)
        stack.push_async_callback(provider.close)
        components = await components_factory(config, provider)
        storage = await open_storage(
            config.storage, components.embedder.name, components.embedding_dimensions
        )
        stack.push_async_callback(storage.close)
        if not (await storage.describe()).get("available"):
            raise StorageUnavailable(f"the {config.storage.backend} storage is unavailable")
        exact = ExactCacheStage(storage.exact)
        semantic = SemanticCacheStage(
            components.embedder,
            storage.vectors,
            components.comparator,
            components.reviewer,
            components.guard,
        )
        failures = StoreFailures()
        seeder = await open_seeder(stack, storage, components) if options.seed_adaptive else None
        summary.seeded = seeder.summary if seeder is not None else None
        pipeline = ChatPipeline(
            provider,
            exact,
            semantic=semantic,
            on_store_failure=failures,
            policy_for=policies.resolve,
        )
        importer = PairImporter(
            options,
            policies,
            provider,
            pipeline,
            exact,
            ClassifyStage(components.classifier),
            failures,
            seeder,
        )
        summary.load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        progress.start()
        await _import_lines(path, importer, summary, progress)
    summary.seconds = time.perf_counter() - started
    return summary


async def _import_lines(
    path: Path, importer: PairImporter, summary: ImportSummary, progress: Progress
) -> None:
    """Every line of `path` through the importer, counted in `summary` as it goes."""
    with path.open("rb") as handle:
        total_bytes = handle.seek(0, os.SEEK_END)
        handle.seek(0)
        for number, line in numbered_lines(handle):
            summary.records += 1
            try:
                pair = parse_line(line)
            except RecordError as exc:
                reason: str | None = exc.refusal
            else:
                reason = await _import_one(importer, pair, number)
            if reason is None:
                summary.stored += 1
            else:
                summary.refuse(str(reason), number)
            progress.update(summary.records, summary.stored, handle.tell(), total_bytes)
