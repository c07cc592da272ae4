"""The policy schema: every knob an operator can set in `policies/*.yaml`."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from gateway.classify.classes import NonCacheableClass
from gateway.policy.budget import BudgetPolicy
from gateway.policy.knowledge import KnowledgePolicy
from gateway.policy.memory import MemoryPolicy
from gateway.policy.rate_limits import RateLimitsPolicy
from gateway.policy.tool_cache import ToolCachePolicy
from gateway.policy.working_memory import TaskPolicy, WorkingMemoryPolicy
from gateway.strict_model import StrictModel

# The default share of semantic hits that should be right (`target_precision`).
DEFAULT_TARGET_PRECISION = 0.97

# The class names a policy may name (`enabled_classes`, `extra_patterns`).
NON_CACHEABLE_CLASSES = tuple(cls.value for cls in NonCacheableClass)


class ExactCachePolicy(StrictModel):
    enabled: bool = True
    ttl_seconds: int = Field(default=24 * 3600, ge=1)


class ClientCacheControlPolicy(StrictModel):
    """What a request's own cache controls may change (README, "Response headers and
    request controls"). `no-cache` and `no-store` are always honoured."""

    # `Cache-Control: max-age=N`: serve only entries at most N seconds old (both layers).
    honour_max_age: bool = True
    # `x-gateway-cache-ttl: N`: this answer's entries expire after N seconds.
    honour_ttl_header: bool = True
    # The longest TTL a request may set. None: each layer's own `ttl_seconds`, so a
    # request can shorten its entries' life but not make them outlive the policy.
    max_ttl_seconds: int | None = Field(default=None, ge=1)


class ReviewPolicy(StrictModel):
    enabled: bool = True
    # A review that takes longer is abandoned and the candidate rejected
    # (`review_unavailable`): a miss costs less than a wrong answer.
    timeout_seconds: float = Field(default=2.0, gt=0, le=60)
    # Show a litellm reviewer the candidate's stored answer too ("does this answer fully
    # and correctly answer the new request?"), not only the stored request. The local
    # pair model reads only the two requests.
    show_stored_answer: bool = True
    # The lower edge of the model reviewer's band, on the calibrated scale: a candidate
    # from here up to the serving threshold whose asks differ in a content word the local
    # checks cannot settle goes to a chat-model reviewer (`semantic.reviewer:
    # <model_name>`). The local pair reviewer is never sent this band.
    band_floor: float = Field(default=0.80, gt=0, le=1)
    # Tokens (prompt and completion) one tenant's reviews by a chat model may spend in a
    # sliding hour, per replica (gateway/review/budget.py); beyond it a review is
    # `review_unavailable` (a miss). None: unbounded.
    tokens_per_tenant_per_hour: int | None = Field(default=200_000, ge=0)


class AdaptivePolicy(StrictModel):
    """The operating point learnt from this deployment's traffic (README, "The adaptive
    operating point"). `semantic_cache.adaptive: observe` is short for `{mode: observe}`.

    Misses whose best candidate passed every check but scored below the serving
    threshold (down to `floor`) are sampled and judged after the response: would the
    stored answer have served them? Verdicts per similarity bucket give the served
    precision's lower 95 % bound; `adapt` serves from the lowest bucket that keeps it at
    or above `target_precision` (never below `floor`, never above `accept_threshold`)."""

    # off: nothing counted; observe: statistics and hits left on the table, nothing
    # served differently; adapt: the serving threshold follows the statistics.
    mode: Literal["off", "observe", "adapt"] = "observe"
    # The loosest serving threshold adapt may reach, on the calibrated scale; also the
    # lowest similarity a candidate is judged at.
    floor: float = Field(default=0.80, gt=0.5, le=1)
    # Share of eligible misses judged.
    sample_rate: float = Field(default=0.1, ge=0, le=1)
    # local: the fresh answer and the stored one agree (entities, and embedding cosine
    # >= agreement_min_cosine); no model call, meant for temperature-0 traffic.
    # model: `judge_model` (a model_list name) is asked for a strict yes/no.
    judge: Literal["local", "model"] = "local"
    judge_model: str | None = Field(default=None, min_length=1)
    agreement_min_cosine: float = Field(default=0.90, gt=0, le=1)
    # Judge calls at once (more sampled misses are skipped, and counted) and judge
    # tokens per minute (the model judge; a judgment that would exceed it is skipped).
    max_judges_in_flight: int = Field(default=2, ge=1, le=64)
    judge_tokens_per_minute: int = Field(default=20_000, ge=0)
    judge_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    # A language or model scope decides its own threshold once it has this many
    # verdicts; until then the tenant's statistics decide.
    min_scope_verdicts: int = Field(default=50, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _mode_shorthand(cls, data: Any) -> Any:
        return {"mode": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _judge_named(self) -> AdaptivePolicy:
        if self.judge == "model" and self.judge_model is None:
            raise ValueError("judge: model needs judge_model (a model_list name)")
        return self


class SemanticCachePolicy(StrictModel):
    """L2 semantic cache. Similarities are on the gateway's calibrated scale (see
    `gateway/embed/calibration.py`): the precision of serving every candidate at least
    this close in the ask's language, so the same numbers fit every embedder."""

    enabled: bool = True
    ttl_seconds: int = Field(default=24 * 3600, ge=1)
    # The share of semantic hits that should be right: a candidate that passed the checks
    # is served when its calibrated similarity reaches it (raw cosine per embedder and
    # language: README, "The similarity scale").
    target_precision: float = Field(default=DEFAULT_TARGET_PRECISION, gt=0.5, le=1)
    # Both follow when not set: accept_threshold = target_precision (set one or the
    # other), review_min_similarity = accept_threshold, i.e. no review band (the local
    # reviewer's verdicts below the target are less precise than the target). A lower
    # review_min_similarity sends [it, accept_threshold) to the reviewer.
    accept_threshold: float = Field(default=DEFAULT_TARGET_PRECISION, gt=0, le=1)
    review_min_similarity: float = Field(default=DEFAULT_TARGET_PRECISION, gt=0, le=1)
    top_k: int = Field(default=5, ge=1, le=50)
    entity_check: bool = True
    # Decide on what separates the two asks (gateway/difference/): refuse any
    # meaning-bearing difference (a quantifier, conjunction, preposition, negation,
    # operator, number, quoted span, role swap, the question's focus) at any
    # similarity; serve asks that differ only in rewording (templates, articles,
    # politeness, punctuation, order, known synonyms) from `preserving_floor` up.
    difference_check: bool = True
    # On the calibrated scale: where an ask that differs only in rewording is served.
    preserving_floor: float = Field(default=0.70, gt=0, le=1)
    # A soft meaning-bearing class (a preposition, conjunction, pronoun, modal, time or
    # question word...) refuses when at most this many telling tokens changed: the
    # asks are otherwise identical, so that word is what differs. In a wider rewording
    # it is left to the embedding.
    near_identical_tokens: int = Field(default=1, ge=0, le=10)
    # ...in an ask of at most this many tokens; in a longer sentence one added or
    # dropped function word is more often a paraphrase ("crosses over the river").
    short_ask_tokens: int = Field(default=16, ge=0, le=1000)
    # Also vet candidates ABOVE the review band with the local pair model (cheap, see
    # docs/measurements.md#structure-guard): word-order and role swaps score as
    # near-identical for every embedder.
    structure_guard: bool = True
    # Refuse any added or substituted content word, not only the decisive ones the
    # entity check always refuses: on every candidate (the name is from when it applied
    # in the review band only). The calibration is fitted with it on.
    strict_band_terms: bool = True
    review: ReviewPolicy = Field(default_factory=ReviewPolicy)
    adaptive: AdaptivePolicy = Field(default_factory=AdaptivePolicy)
    embed_timeout_seconds: float = Field(default=1.0, gt=0, le=30)
    # The longest ask (the question or instruction of the last user turn, without the
    # material it carries; a CJK character counts as three) compared by meaning; longer
    # ones use the exact cache only (`query_too_long`, or `long_prompt` when the turn
    # could not be split). Past ~300 characters text shared by two asks dominates the
    # embedding: with 300 shared characters two unrelated questions score a median raw
    # cosine of 0.84 (p99 0.93), with 600 0.93 (README, "Material and ask").
    max_query_chars: int = Field(default=300, ge=1, le=100_000)

    @model_validator(mode="before")
    @classmethod
    def _derive_thresholds(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        target, accept = data.get("target_precision"), data.get("accept_threshold")
        if target is not None and accept is not None and _level(target) != _level(accept):
            raise ValueError(
                "set target_precision or accept_threshold, not both "
                "(accept_threshold = target_precision when it is not set)"
            )
        derived = dict(data)
        target = _level(derived.get("target_precision", DEFAULT_TARGET_PRECISION))
        if derived.get("accept_threshold") is None and target is not None:
            derived["accept_threshold"] = target
        accept = _level(derived.get("accept_threshold", DEFAULT_TARGET_PRECISION))
        if derived.get("review_min_similarity") is None and accept is not None:
            derived["review_min_similarity"] = accept
        return derived

    @model_validator(mode="after")
    def _band_is_ordered(self) -> SemanticCachePolicy:
        if self.review_min_similarity > self.accept_threshold:
            raise ValueError(
                "review_min_similarity must not exceed accept_threshold "
                "(= target_precision unless set)"
            )
        return self


def _level(value: Any) -> float | None:
    """`value` as pydantic will read it, when it is a level in (0, 1]; else None (a
    derived threshold copies only good values: a bad one is reported once, as itself)."""
    try:
        level = float(value)
    except (TypeError, ValueError):
        return None
    return level if 0 < level <= 1 else None


class ClassifierPolicy(StrictModel):
    """Which non-cacheable classes apply, and extra regexes per class."""

    enabled_classes: frozenset[str] = frozenset(NON_CACHEABLE_CLASSES)
    extra_patterns: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    # English write intents also by the learnt model (gateway/classify/write_model.py),
    # not only by the rules: it catches commands the rules do not list.
    write_intent_model: bool = True
    # Requests sampled hotter than this are not cached (`temperature_above_cap`).
    temperature_cap: float | None = Field(default=None, ge=0, le=2)
    # n > 1 asks for several different answers; one cached answer cannot serve it.
    cache_multiple_choices: bool = False

    @model_validator(mode="after")
    def _classes_known(self) -> ClassifierPolicy:
        known = set(NON_CACHEABLE_CLASSES)
        unknown = (set(self.enabled_classes) | set(self.extra_patterns)) - known
        if unknown:
            raise ValueError(
                f"unknown classifier class(es) {sorted(unknown)}; known: {sorted(known)}"
            )
        for name, patterns in self.extra_patterns.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"extra_patterns.{name}: invalid regex ({exc})") from None
        return self


FailureMode = Literal["open", "closed"]


class FailurePolicy(StrictModel):
    """What a stage does when its store or model fails: `open` serves the request from
    the provider as a miss (the default: a cache must never make things worse);
    `closed` answers 503 instead (for deployments that must not reach the provider
    without the gateway's checks, e.g. memory that must be injected)."""

    exact_cache: FailureMode = "open"
    semantic_cache: FailureMode = "open"
    memory: FailureMode = "open"
    # The rate limiter's store (open: the request is not limited while it is down).
    rate_limit: FailureMode = "open"


class SingleFlightPolicy(StrictModel):
    """Concurrent identical cacheable misses share one upstream call."""

    enabled: bool = True
    # How long a follower waits for the leader's answer before forwarding on its own.
    wait_seconds: float = Field(default=30.0, gt=0, le=600)


class TelemetryPolicy(StrictModel):
    # Keep the last user turn in `/admin/decisions` records (never in logs or metrics).
    record_prompts: bool = False


class AuditPolicy(StrictModel):
    """Production false-hit audit: a sample of served cache hits is also sent upstream in
    the background and the fresh answer compared with the served one."""

    sample_rate: float = Field(default=0.0, ge=0, le=1)
    # exact: the answers' texts must match (normalised); reviewer: the configured
    # reviewer judges whether the two answers say the same.
    compare: Literal["exact", "reviewer"] = "exact"
    max_in_flight: int = Field(default=4, ge=1, le=64)


class Policy(StrictModel):
    """Resolved policy for one request.

    `version`, `system_prompt_version` and `tool_schema_version` enter every cache key:
    bumping any of them makes older entries unreachable without purging them.
    """

    version: str = Field(default="1", min_length=1)
    system_prompt_version: str = ""
    tool_schema_version: str = ""
    exact_cache: ExactCachePolicy = Field(default_factory=ExactCachePolicy)
    semantic_cache: SemanticCachePolicy = Field(default_factory=SemanticCachePolicy)
    classifier: ClassifierPolicy = Field(default_factory=ClassifierPolicy)
    memory: MemoryPolicy = Field(default_factory=MemoryPolicy)
    tasks: TaskPolicy = Field(default_factory=TaskPolicy)
    working_memory: WorkingMemoryPolicy = Field(default_factory=WorkingMemoryPolicy)
    knowledge: KnowledgePolicy = Field(default_factory=KnowledgePolicy)
    failure: FailurePolicy = Field(default_factory=FailurePolicy)
    single_flight: SingleFlightPolicy = Field(default_factory=SingleFlightPolicy)
    telemetry: TelemetryPolicy = Field(default_factory=TelemetryPolicy)
    audit: AuditPolicy = Field(default_factory=AuditPolicy)
    cache_control: ClientCacheControlPolicy = Field(default_factory=ClientCacheControlPolicy)
    tool_cache: ToolCachePolicy = Field(default_factory=ToolCachePolicy)
    budget: BudgetPolicy = Field(default_factory=BudgetPolicy)
    rate_limits: RateLimitsPolicy = Field(default_factory=RateLimitsPolicy)
    # A response is stored only if every choice ended with one of these. `length`
    # (truncated) and `content_filter` never qualify.
    cacheable_finish_reasons: frozenset[str] = frozenset({"stop", "tool_calls"})
    # An answer a fallback model gave (the requested model's deployments failed) is
    # stored under the fallback model's key, where a request for that model finds it and
    # one for the requested model does not; false: never store such answers.
    cache_fallback_answers: bool = True
    # The `usage` a cache hit reports. `original`: the stored answer's token counts, all
    # its prompt tokens marked as cached (`prompt_tokens_details.cached_tokens`), so a
    # client's budget and context-size logic sees the size of what it got; `zero`:
    # zeros, as if nothing was spent. Tokens saved are in `x-gateway-tokens-saved` and
    # the metrics either way.
    cache_hit_usage: Literal["original", "zero"] = "original"
    # Request parameters litellm does not know the model to take (e.g. `verbosity` for
    # a model name it has no entry for). `pass`: sent on, the provider decides; `drop`:
    # left out (litellm's `drop_params`).
    unknown_params: Literal["pass", "drop"] = "pass"

    def cache_namespace(self) -> dict[str, str]:
        return {
            "policy_version": self.version,
            "system_prompt_version": self.system_prompt_version,
            "tool_schema_version": self.tool_schema_version,
        }
