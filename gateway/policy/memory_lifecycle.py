"""Policy options of the memory lifecycle: decay per kind and retention per kind
(`memory.ranking.kind_half_life_days`, `memory.retention`; README, "Memory kinds and
lifecycle")."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class KindHalfLives(StrictModel):
    """Days after its last use (its last injection or search hit, else its creation)
    in which a memory's recency weight halves, per kind; None: `recency_half_life_days`.
    Events fade fastest; stable facts and preferences much more slowly. Procedural
    memories are never ranked, so they have none."""

    episodic: float | None = Field(default=None, gt=0)
    semantic: float | None = Field(default=180.0, gt=0)
    temporal: float | None = Field(default=None, gt=0)


class RetentionRule(StrictModel):
    """None: no limit. Age counts from `created_at`; past the count, superseded versions
    go first, then the least recently used (last access, else creation)."""

    max_age_days: float | None = Field(default=None, gt=0)
    max_count_per_user: int | None = Field(default=None, ge=1, le=1_000_000)

    @property
    def limited(self) -> bool:
        return self.max_age_days is not None or self.max_count_per_user is not None


class MemoryRetentionPolicy(StrictModel):
    """What the clean-up job (the background sweep, `POST /admin/memories/cleanup`,
    `gateway memory cleanup`) deletes, per kind. Nothing by default: deleting what
    users stored is the operator's decision."""

    episodic: RetentionRule = Field(default_factory=RetentionRule)
    semantic: RetentionRule = Field(default_factory=RetentionRule)
    temporal: RetentionRule = Field(default_factory=RetentionRule)
    procedural: RetentionRule = Field(default_factory=RetentionRule)

    def rule(self, kind: str) -> RetentionRule:
        rule: RetentionRule = getattr(self, kind)
        return rule

    @property
    def limited(self) -> bool:
        return any(
            self.rule(kind).limited for kind in ("episodic", "semantic", "temporal", "procedural")
        )
