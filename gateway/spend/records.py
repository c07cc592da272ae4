"""The rows the spend store keeps: one per (UTC day, tenant, key, model), additive, so
replicas merge by addition and a write is an increment."""

from __future__ import annotations

from dataclasses import dataclass

# The additive columns of a row, in the order the stores keep them.
SPEND_COLUMNS = ("spent_usd", "saved_usd", "requests", "hits", "estimated_requests")


@dataclass(frozen=True, slots=True)
class SpendRow:
    day: str  # UTC, "YYYY-MM-DD"
    tenant: str
    key: str  # what identifies the API key (`spend.keys.spend_key_of`)
    model: str  # the gateway model name that answered
    spent_usd: float = 0.0  # what forwarded requests cost
    saved_usd: float = 0.0  # what cache hits would have cost
    requests: int = 0  # forwarded requests (misses and bypasses that reached the provider)
    hits: int = 0  # requests answered from the cache
    estimated_requests: int = 0  # forwarded requests priced from a tiktoken estimate

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.day, self.tenant, self.key, self.model)

    def plus(self, other: SpendRow) -> SpendRow:
        return SpendRow(
            self.day,
            self.tenant,
            self.key,
            self.model,
            spent_usd=self.spent_usd + other.spent_usd,
            saved_usd=self.saved_usd + other.saved_usd,
            requests=self.requests + other.requests,
            hits=self.hits + other.hits,
            estimated_requests=self.estimated_requests + other.estimated_requests,
        )

    def values(self) -> tuple[float, float, int, int, int]:
        return (self.spent_usd, self.saved_usd, self.requests, self.hits, self.estimated_requests)
