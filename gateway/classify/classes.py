"""The non-cacheable classes: the one vocabulary of why a request may not use the cache.

The classifier reports these, policies switch them on and off (`enabled_classes`,
`extra_patterns`), and the pipeline's `Reason` codes carry the same strings (a test
checks that every class is a `Reason`). The string values are stable: they appear in
policy files, `x-gateway-cache-reason` and metrics.
"""

from __future__ import annotations

from enum import StrEnum


class NonCacheableClass(StrEnum):
    WRITE_INTENT = "write_intent"
    TIME_SENSITIVE = "time_sensitive"
    ENTITY_ID = "entity_id"
    UNRESOLVED_FOLLOWUP = "unresolved_followup"
    PERSONALIZED = "personalized"
