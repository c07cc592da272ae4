"""Which cache entries an operator's purge removes. Every given field must match;
`namespace`, the versions and `key` compare with what the entry was stored under."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PurgeFilter:
    tenant: str | None = None
    model: str | None = None
    namespace: str | None = None  # the request's `x-gateway-namespace`
    policy_version: str | None = None
    system_prompt_version: str | None = None
    tool_schema_version: str | None = None
    key: str | None = None  # an exact-cache key (`cache_key` in decision records)

    def matches(
        self, tenant: str, model: str, namespace: Mapping[str, str], key: str | None
    ) -> bool:
        checks = (
            (self.tenant, tenant),
            (self.model, model),
            (self.namespace, namespace.get("namespace", "")),
            (self.policy_version, namespace.get("policy_version", "")),
            (self.system_prompt_version, namespace.get("system_prompt_version", "")),
            (self.tool_schema_version, namespace.get("tool_schema_version", "")),
            (self.key, key),
        )
        return all(wanted is None or wanted == actual for wanted, actual in checks)
