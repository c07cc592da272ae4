"""Constants of `gateway bench`: addresses, keys, backends, layers, time limits."""

from __future__ import annotations

from gateway.policy.models import SemanticCachePolicy
from gateway.settings import StorageSettings

HOST = "127.0.0.1"
MODEL = "bench-model"
TENANT_KEY = "sk-bench"
UPSTREAM_KEY = "sk-fake"
CHAT_PATH = "/v1/chat/completions"
CLIENT_NAME = "raw asyncio HTTP/1.1 client, keep-alive (one connection per worker)"

# Storage backends (`storage.backend`), in the order `both` runs them.
EMBEDDED, REDIS = "embedded", "redis"
BACKENDS = (EMBEDDED, REDIS)
BOTH = "both"
BACKEND_CHOICES = (*BACKENDS, BOTH)
REDIS_TIMEOUT_SECONDS: float = StorageSettings.model_fields["redis_timeout_seconds"].default

# The bench runs the built-in default policy (an empty policies directory).
ACCEPT_THRESHOLD = SemanticCachePolicy().accept_threshold
# Cacheable prompts (checked with the gateway's classifier). The semantic pair scores
# 1.0 on the calibrated scale with the shipped embedder (raw cosine ~0.992, the top of
# the English curve), above the default 0.97 target; no miss prompt is near any of the
# three (raw cosine < 0.6).
EXACT_PROMPT = "What causes the colours of a rainbow?"
SEMANTIC_PRIME_PROMPT = "How do I sort a list in Python?"
SEMANTIC_PROMPT = "How can I sort a list in Python?"

# Layers (`x-gateway-cache`) and miss reasons (`x-gateway-cache-reason`).
EXACT, SEMANTIC, MISS = "exact", "semantic", "miss"
# Misses that took the whole path: embedded, searched, and (when a candidate was close
# enough) checked. Any other reason means a stage was skipped (`embedder_unavailable`:
# the embedding timed out) and the miss latency understates the path.
FULL_PATH_MISS_REASONS = frozenset(
    {
        "no_candidate",
        "below_threshold",
        "entity_mismatch",
        "meaning_differs",
        "review_rejected",
        "review_unavailable",
    }
)

WARMUP_REQUESTS = 50
HIGH_CONCURRENCY = 16
THROUGHPUT_SECONDS = 3.0
THROUGHPUT_REQUESTS_PER_N = 25
# Caps that keep a pathologically slow gateway from turning the run into an hour.
SEQUENTIAL_PHASE_SECONDS = 25.0
REQUEST_TIMEOUT_SECONDS = 30.0
UPSTREAM_START_SECONDS = 30.0
REDIS_START_SECONDS = 20.0
# Start-up loads spaCy, the sentence encoder (~100 MB of weights) and the pair reviewer:
# ~5 s on a 2-core machine with a warm disk; the margin covers a cold disk and a loaded box.
GATEWAY_START_SECONDS = 90.0
# After a priming miss, how long its (background) cache store may take to become visible.
PRIME_SECONDS = 10.0
# After the last first-seen question was answered, before its paraphrases are sent: its
# store (after the answer) lands well within this on a loaded 2-core machine.
FIRST_SEEN_SETTLE_SECONDS = 1.0
STOP_GRACE_SECONDS = 10.0
LOG_TAIL_LINES = 30


class BenchError(Exception):
    """The benchmark cannot go on (a server did not start, a check failed)."""
