"""What is forwarded: the client's messages with the task-state and memory blocks
placed (policy `memory.placement`), and, when the policy turns the working-memory
budget on, the conversation fitted to the model's context window section by section
(`gateway/memory/working_set.py`). With the budget off, the client's messages are
forwarded as sent, only the blocks added, within the room the window leaves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.memory.inject import build_block, place_blocks
from gateway.memory.session import MemoryCandidate
from gateway.memory.tokens import TokenCounter
from gateway.memory.working_set import (
    Conversation,
    SectionBudgets,
    Shrink,
    drop_oldest_unit,
    messages_tokens,
    section_budgets,
    shrink_tool_results,
    split_conversation,
    tools_tokens,
    window_earlier,
)
from gateway.pipeline.request import ChatRequest
from gateway.tasks.block import build_task_block
from gateway.tasks.records import TaskRecord


@dataclass(slots=True)
class Assembled:
    messages: list[dict[str, Any]]
    changed: bool = False
    task_tokens: int = 0
    memory_tokens: int = 0
    included: list[MemoryCandidate] = field(default_factory=list)
    note: str | None = None
    dropped_messages: int = 0
    truncated_tool_results: int = 0


@dataclass(frozen=True, slots=True)
class Inputs:
    request: ChatRequest
    counter: TokenCounter
    window_tokens: int
    requested_output_tokens: int | None
    candidates: Sequence[MemoryCandidate]
    task: TaskRecord | None
    # Procedural memories: never ranked, first in the memory block within their own
    # budget (`memory.procedural_budget_tokens`).
    pinned: Sequence[MemoryCandidate] = ()


def _blocks(
    inputs: Inputs, out: Assembled, task_cap: int, memory_cap: int, room: int
) -> list[dict[str, Any]]:
    """The task block then the memory block, together within `room`: the task first
    (the client named it) within `task_cap`, memory within `memory_cap` and what the
    task left."""
    blocks: list[dict[str, Any]] = []
    policy = inputs.request.policy
    if inputs.task is not None and room > 0:
        budget = min(policy.tasks.max_block_tokens, task_cap, room)
        task = build_task_block(inputs.task, inputs.counter, budget)
        if task.message is not None:
            blocks.append(task.message)
            out.task_tokens = task.tokens
    if inputs.candidates or inputs.pinned:
        pinned_budget = policy.memory.procedural_budget_tokens if inputs.pinned else 0
        budget = min(
            policy.memory.max_memory_tokens + pinned_budget, memory_cap, room - out.task_tokens
        )
        if budget <= 0:
            out.note = out.note or "no_room_in_context"
            return blocks
        block = build_block(inputs.candidates, inputs.counter, budget, inputs.pinned, pinned_budget)
        if block.message is None:
            out.note = out.note or "nothing_fits_budget"
        else:
            blocks.append(block.message)
            out.memory_tokens = block.tokens
            out.included = list(block.included)
    return blocks


def assemble_plain(inputs: Inputs) -> Assembled:
    """Budget off: the blocks fit in what the window leaves after the client's prompt
    and the output reserve; the client's messages are not touched."""
    request = inputs.request
    messages = list(request.messages)
    reserve = inputs.requested_output_tokens or request.policy.memory.reserve_output_tokens
    room = inputs.window_tokens - inputs.counter.count_messages(messages) - reserve
    out = Assembled(messages)
    blocks = _blocks(inputs, out, room, room, room)
    if blocks:
        out.messages = place_blocks(messages, blocks, request.policy.memory.placement)
        out.changed = True
    return out


async def assemble_budgeted(inputs: Inputs, shrink: Shrink) -> Assembled:
    """Budget on (see `working_set.py` for the sections)."""
    request, counter = inputs.request, inputs.counter
    budgets = section_budgets(
        inputs.window_tokens,
        request.policy.working_memory.shares,
        inputs.requested_output_tokens,
    )
    whole = split_conversation(request.messages)
    rest, truncated = await shrink_tool_results(
        counter, [*whole.earlier, *whole.current], budgets.tool_results_tokens, shrink
    )
    current = rest[len(whole.earlier) :]
    fitted = Conversation(whole.prefix, rest[: len(whole.earlier)], current)
    extra_prefix = tools_tokens(counter, request.body)
    turns_budget = (
        budgets.recent_turns_tokens
        - max(
            0, messages_tokens(counter, whole.prefix) + extra_prefix - budgets.static_prefix_tokens
        )
        - messages_tokens(counter, current)
    )
    earlier, _ = window_earlier(counter, fitted.earlier, turns_budget)
    out = Assembled([])
    earlier, room = _within_window(
        counter, Conversation(whole.prefix, earlier, current), budgets, extra_prefix
    )
    if room < 0:
        out.note = "over_context_window"
    blocks = _blocks(inputs, out, budgets.task_state_tokens, budgets.retrieved_memory_tokens, room)
    out.messages = place_blocks(
        [*whole.prefix, *earlier, *current], blocks, request.policy.memory.placement
    )
    out.dropped_messages = len(whole.earlier) - len(earlier)
    out.truncated_tool_results = truncated
    out.changed = bool(blocks) or out.dropped_messages > 0 or truncated > 0
    return out


def _within_window(
    counter: TokenCounter, conversation: Conversation, budgets: SectionBudgets, extra: int
) -> tuple[list[dict[str, Any]], int]:
    """Earlier turns, oldest first out, until prompt + output reserve fit the window;
    the kept turns and the room left for the blocks (negative: over even without
    any earlier turn)."""
    limit = budgets.window_tokens - budgets.output_reserve_tokens
    earlier = conversation.earlier

    def prompt_tokens() -> int:
        messages = [*conversation.prefix, *earlier, *conversation.current]
        return counter.count_messages(messages) + extra

    while earlier and prompt_tokens() > limit:
        earlier = drop_oldest_unit(earlier)
    return earlier, limit - prompt_tokens()


def requested_output_tokens(body: dict[str, Any]) -> int | None:
    """What the client asked the answer to be held to (`max_completion_tokens`, else
    `max_tokens`), when it asked."""
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
