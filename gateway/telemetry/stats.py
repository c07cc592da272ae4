"""Rolling statistics of this process's decisions for `/admin/stats` and the dashboard:
totals, reasons, per-layer latency percentiles, a per-minute timeline of the last hour.
Per process: with several replicas, each reports its own (Prometheus sums them)."""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from gateway.telemetry.records import DecisionRecord

LAYERS = ("exact", "semantic", "miss", "bypass")
HIT_LAYERS = frozenset({"exact", "semantic"})
BUCKET_SECONDS = 60
TIMELINE_BUCKETS = 60
LATENCY_WINDOW = 2000  # recent requests per layer that the percentiles describe


class DecisionStats:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._started = clock()
        self._by_layer: Counter[str] = Counter()
        self._reasons: dict[str, Counter[str]] = {layer: Counter() for layer in LAYERS}
        self._latency: dict[str, deque[float]] = {
            layer: deque(maxlen=LATENCY_WINDOW) for layer in LAYERS
        }
        self._timeline: dict[int, dict[str, float]] = {}
        self._tokens_saved = 0
        self._cost_saved = 0.0
        self._memory_requests = 0
        self._memory_tokens = 0

    def add(self, record: DecisionRecord) -> None:
        layer = record.layer
        self._by_layer[layer] += 1
        if record.reason is not None and layer in self._reasons:
            self._reasons[layer][record.reason] += 1
        if layer in self._latency:
            self._latency[layer].append(record.total_ms)
        self._tokens_saved += record.tokens_saved
        self._cost_saved += record.cost_saved_usd
        if record.memory_tokens:
            self._memory_requests += 1
            self._memory_tokens += record.memory_tokens
        start = int(record.at // BUCKET_SECONDS) * BUCKET_SECONDS
        bucket = self._timeline.setdefault(start, {})
        bucket[layer] = bucket.get(layer, 0) + 1
        bucket["tokens_saved"] = bucket.get("tokens_saved", 0) + record.tokens_saved
        bucket["cost_saved_usd"] = bucket.get("cost_saved_usd", 0.0) + record.cost_saved_usd
        oldest = start - (TIMELINE_BUCKETS - 1) * BUCKET_SECONDS
        for key in [key for key in self._timeline if key < oldest]:
            del self._timeline[key]

    def snapshot(self) -> dict[str, Any]:
        now = self._clock()
        total = sum(self._by_layer.values())
        hits = sum(self._by_layer[layer] for layer in HIT_LAYERS)
        oldest = (
            int(now // BUCKET_SECONDS) * BUCKET_SECONDS - (TIMELINE_BUCKETS - 1) * BUCKET_SECONDS
        )
        return {
            "generated_at": round(now, 3),
            "uptime_seconds": round(now - self._started, 1),
            "totals": {
                "requests": total,
                "by_layer": {layer: self._by_layer[layer] for layer in LAYERS},
                "hit_rate": round(hits / total, 4) if total else 0.0,
                "tokens_saved": self._tokens_saved,
                "cost_saved_usd": round(self._cost_saved, 8),
            },
            "reasons": {
                layer: dict(self._reasons[layer].most_common()) for layer in ("miss", "bypass")
            },
            "latency_ms": {
                layer: _percentiles(samples) for layer, samples in self._latency.items() if samples
            },
            "timeline": {
                "bucket_seconds": BUCKET_SECONDS,
                "buckets": [
                    {
                        "start": float(start),
                        **{layer: int(bucket.get(layer, 0)) for layer in LAYERS},
                        "tokens_saved": int(bucket.get("tokens_saved", 0)),
                        "cost_saved_usd": round(bucket.get("cost_saved_usd", 0.0), 8),
                    }
                    for start, bucket in sorted(self._timeline.items())
                    if start >= oldest
                ],
            },
            "memory": {
                "requests_with_memory": self._memory_requests,
                "memory_tokens": self._memory_tokens,
            },
        }


def _percentiles(samples: deque[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 3)

    return {"count": len(ordered), "p50": at(0.5), "p99": at(0.99)}
