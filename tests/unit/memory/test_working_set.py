"""The working-memory budget's pieces: windowing keeps tool pairs and the last user
turn, tool results are cut with the marker, placement keeps the prefix stable."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.memory.inject import place_blocks
from gateway.memory.tokens import Tokenizers
from gateway.memory.tool_results import ToolResultShrinker, truncate_with_marker
from gateway.memory.working_set import (
    section_budgets,
    shrink_tool_results,
    split_conversation,
    window_earlier,
)
from gateway.policy.working_memory import WorkingMemorySharesPolicy

COUNTER = Tokenizers().for_model("gpt-4o-mini")
BLOCK = {"role": "user", "content": "<memory-data>...</memory-data>"}


def _conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first question " * 30},
        {"role": "assistant", "content": "first answer " * 30},
        {"role": "user", "content": "run the tool"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result " * 40},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "and now?"},
    ]


def test_split_keeps_the_last_user_turn_and_what_follows_it() -> None:
    messages = [*_conversation(), {"role": "assistant", "tool_calls": []}]
    split = split_conversation(messages)
    assert split.prefix == messages[:1]
    assert split.current == messages[7:]
    assert split.earlier == messages[1:7]


def test_window_drops_oldest_first_and_never_splits_a_tool_pair() -> None:
    earlier = split_conversation(_conversation()).earlier
    tool_pair_and_after = earlier[2:]
    budget = sum(COUNTER.count_messages([m]) - 3 for m in tool_pair_and_after) + 1
    kept, dropped = window_earlier(COUNTER, earlier, budget)
    assert kept == tool_pair_and_after and dropped == 2
    # One token less: the tool call and its result go together, not the call alone.
    kept, _ = window_earlier(COUNTER, earlier, budget - 10)
    assert all(m.get("role") != "tool" for m in kept)
    assert not any(m.get("tool_calls") for m in kept)


def test_long_tool_result_is_cut_with_the_marker_within_its_budget() -> None:
    text = "log line with details " * 500
    cut = truncate_with_marker(COUNTER, text, 100)
    assert COUNTER.count(cut) <= 100
    assert cut.startswith("log line") and cut.endswith(" tokens ...]")
    dropped = int(cut.rsplit("[... truncated ", 1)[1].split(" ")[0])
    assert dropped == COUNTER.count(text) - COUNTER.count(cut.rsplit("\n", 1)[0])


def test_tool_results_share_their_budget_newest_first() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "a", "content": "old " * 300},
        {"role": "tool", "tool_call_id": "b", "content": "new " * 50},
    ]
    shrinker = ToolResultShrinker(COUNTER)
    out, cut = asyncio.run(shrink_tool_results(COUNTER, messages, 120, shrinker.shrink))
    assert cut == 1
    assert out[1] == messages[1]  # the newest fits whole
    assert "[... truncated " in out[0]["content"]
    assert COUNTER.count(out[0]["content"]) <= 120 - COUNTER.count(messages[1]["content"])


def test_section_budgets_follow_the_window_and_the_requested_output() -> None:
    shares = WorkingMemorySharesPolicy()
    budgets = section_budgets(10_000, shares, None)
    assert (budgets.static_prefix_tokens, budgets.recent_turns_tokens) == (2500, 3500)
    assert (budgets.task_state_tokens, budgets.tool_results_tokens) == (1000, 1500)
    assert (budgets.retrieved_memory_tokens, budgets.output_reserve_tokens) == (1000, 1000)
    assert section_budgets(10_000, shares, 3000).output_reserve_tokens == 3000


def test_placement_before_last_user_keeps_the_earlier_prompt_byte_identical() -> None:
    turn_1 = _conversation()
    turn_2 = [*turn_1, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "next"}]
    late_1 = place_blocks(turn_1, [BLOCK], "before_last_user")
    late_2 = place_blocks(turn_2, [BLOCK], "before_last_user")
    assert late_1[-2] == BLOCK and late_1[-1] == turn_1[-1]
    assert late_2[: len(turn_1) - 1] == turn_1[:-1]  # all of turn 1 before its block
    early = place_blocks(turn_1, [BLOCK], "after_system")
    assert early[1] == BLOCK and early[0] == turn_1[0]
    no_user = [{"role": "system", "content": "s"}]
    assert place_blocks(no_user, [BLOCK], "before_last_user") == [*no_user, BLOCK]
