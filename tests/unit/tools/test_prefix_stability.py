"""`gateway eval prefix` on a small LoCoMo-shaped fixture: placing the block before the
last user turn keeps more of each prompt a stable prefix than after the system prompt."""

from __future__ import annotations

import json
from pathlib import Path

from gateway_tools.evaluation.prefix_stability import measure

_TOPICS = ("hiking", "camping", "painting", "cooking", "sailing", "reading", "running", "gardening")


def _fixture(tmp_path: Path) -> Path:
    def session(number: int) -> list[dict[str, str]]:
        return [
            {
                "speaker": "Ann" if turn % 2 == 0 else "Bob",
                "dia_id": f"D{number}:{turn + 1}",
                # Each turn shares its words with one turn of the other session only:
                # the retrieved block changes from turn to turn, as it does in LoCoMo.
                # (Two-letter filler is no word to match: turns as long as real ones.)
                "text": f"{_TOPICS[turn]} {_TOPICS[turn]}s " + "it is so " * 40,
            }
            for turn in range(8)
        ]

    conversation = {
        "session_1": session(1),
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_2": session(2),
        "session_2_date_time": "2:00 pm on 9 May, 2023",
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "x", "conversation": conversation, "qa": []}]))
    return path


def test_before_last_user_keeps_a_longer_stable_prefix(tmp_path: Path) -> None:
    results = measure(_fixture(tmp_path), None)["placements"]
    early, late = results["after_system"], results["before_last_user"]
    assert early["requests"] == late["requests"] == 6  # 4 user turns per session, minus the first
    assert early["prompt_tokens"] == late["prompt_tokens"]
    assert late["stable_prefix_share"] > early["stable_prefix_share"]
    assert late["stable_prefix_share"] <= results["no_block"]["stable_prefix_share"]
