"""Policy sections for task state (`tasks`) and the working-memory budget
(`working_memory`); part of `Policy` (gateway/policy/models.py)."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class TaskPolicy(StrictModel):
    """Task state (`/v1/tasks`, injected for `x-gateway-task`)."""

    # A task marked done is archived this long after: still readable with
    # `?include_archived=true`, no longer listed by default or injected.
    archive_after_done_seconds: int = Field(default=86_400, ge=0)
    max_tasks_per_user: int = Field(default=1000, ge=1, le=100_000)
    # The injected task block never exceeds this (nor, with `working_memory` on, its
    # share of the context window); a longer task is cut with a marker.
    max_block_tokens: int = Field(default=1024, ge=64, le=100_000)


class WorkingMemorySharesPolicy(StrictModel):
    """Each section's budget as a share of the model's context window. They are caps,
    not a partition (the defaults add up to 105 %): the static prefix is never cut, and
    where it is longer than its share the excess comes out of the recent turns; the
    blocks shrink last, so prompt + output reserve never exceed the window."""

    static_prefix: float = Field(default=0.25, ge=0, le=1)
    recent_turns: float = Field(default=0.35, ge=0, le=1)
    task_state: float = Field(default=0.10, ge=0, le=1)
    tool_results: float = Field(default=0.15, ge=0, le=1)
    retrieved_memory: float = Field(default=0.10, ge=0, le=1)
    # Kept free for the answer when the request sets no max_tokens / max_completion_tokens.
    output_reserve: float = Field(default=0.10, ge=0, lt=1)


class WorkingMemoryPolicy(StrictModel):
    """Fit the forwarded conversation into the model's context window, per section
    (README, "Working-memory budget"). Off by default: the gateway then never rewrites
    the app's conversation."""

    enabled: bool = False
    shares: WorkingMemorySharesPolicy = Field(default_factory=WorkingMemorySharesPolicy)
    # A model_list name that summarises tool results longer than their budget; unset
    # (or failing, or slow): they are cut with `[... truncated N tokens ...]`.
    summarise_model: str | None = Field(default=None, min_length=1)
    summarise_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
