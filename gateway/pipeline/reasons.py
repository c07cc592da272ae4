"""Cache layers and the reason codes that explain each decision (a stable vocabulary:
they appear in `x-gateway-cache-reason`, decision records and metrics)."""

from __future__ import annotations

from enum import StrEnum


class Layer(StrEnum):
    EXACT = "exact"
    SEMANTIC = "semantic"
    MISS = "miss"
    BYPASS = "bypass"


class Reason(StrEnum):
    # misses
    NOT_FOUND = "not_found"  # no stored answer matched
    CLIENT_NO_CACHE = "client_no_cache"  # Cache-Control: no-cache, lookup skipped
    STORE_UNAVAILABLE = "store_unavailable"  # the cache store failed; failed open
    NO_CANDIDATE = "no_candidate"  # nothing stored with the same fingerprint
    BELOW_THRESHOLD = "below_threshold"  # best candidate under the review band
    ENTITY_MISMATCH = "entity_mismatch"  # numbers, dates, names... differ
    # what separates the two asks changes the meaning: a quantifier, conjunction,
    # operator, quoted span, role swap, the question's focus (gateway/difference/)
    MEANING_DIFFERS = "meaning_differs"
    REVIEW_REJECTED = "review_rejected"  # gray band, the reviewer said no
    REVIEW_UNAVAILABLE = "review_unavailable"  # gray band, reviewer failed or timed out
    EMBEDDER_UNAVAILABLE = "embedder_unavailable"  # could not embed: no semantic lookup
    QUERY_TOO_LONG = "query_too_long"  # the ask is longer than semantic matching is trusted for
    LONG_PROMPT = "long_prompt"  # a long turn with no material/ask split: exact cache only
    MATERIAL_ONLY = "material_only"  # material or attachments but no ask: exact cache only
    # a matching entry lacks a field the request asks for (token logprobs, n choices)
    REPLAY_INCOMPLETE = "replay_incomplete"
    # a matching entry is older than the request's `Cache-Control: max-age`
    OLDER_THAN_MAX_AGE = "older_than_max_age"
    # bypasses (never looked up, never stored)
    POLICY_DISABLED = "policy_disabled"
    TEMPERATURE_ABOVE_CAP = "temperature_above_cap"
    N_GT_1 = "n_gt_1"
    # the non-cacheable classes (gateway.classify.classes.NonCacheableClass; same values)
    WRITE_INTENT = "write_intent"
    TIME_SENSITIVE = "time_sensitive"
    ENTITY_ID = "entity_id"
    UNRESOLVED_FOLLOWUP = "unresolved_followup"
    PERSONALIZED = "personalized"
    # this user's memories went into the prompt: the shared answer is not theirs
    MEMORY_PERSONALIZED = "memory_personalized"
    # the request names a task (`x-gateway-task`): its answer depends on that state
    TASK_STATE = "task_state"
    NAMESPACE_LIMIT = "namespace_limit"  # the tenant already uses its cap of namespaces
