"""`gateway eval memory` on a tiny LoCoMo-shaped conversation whose recall is known by
construction: a fake embedder that only knows a few topics (synonyms share an axis) makes
dense retrieval find paraphrases and miss rare names; BM25 does the opposite."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.embed.protocol import Vectors
from gateway.memory.inject import frame_tokens
from gateway.memory.tokens import Tokenizers
from gateway_tools.evaluation.memory_recall import (
    LOCOMO_FILE,
    BudgetExceeded,
    check_budget,
    evidence_ids,
    parse_conversation,
    parse_selection,
    run_memory_eval,
)
from tests.unit.memory.fakes import WeightedRelevance

TOPICS = {
    "ceramics": 0,
    "pottery": 0,
    "clay": 0,
    "dog": 1,
    "puppy": 1,
    "pets": 1,
    "climbed": 2,
    "hiking": 2,
    "trail": 2,
    "job": 3,
    "office": 3,
}
SMALL_TALK = 4  # the axis of a text that names no topic


class TopicEmbedder:
    """Deterministic: a text's vector counts its topic words, one axis per topic."""

    name = "topic-embedder"
    dimensions = 5

    async def embed(self, texts: list[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                if word in TOPICS:
                    rows[row, TOPICS[word]] += 1.0
            if not rows[row].any():
                rows[row, SMALL_TALK] = 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def calibrate(self, cosine: float) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


def turn(dia_id: str, speaker: str, text: str, **extra: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


CONVERSATION: dict[str, Any] = {
    "sample_id": "synthetic-0",
    "conversation": {
        "speaker_a": "Alice",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            turn("D1:1", "Alice", "Hi Bob, long time no see!"),
            turn("D1:2", "Bob", "I climbed Kilimanjaro with my cousin Zuberi."),
            turn("D1:3", "Alice", "I started a ceramics class on Tuesdays."),
            turn("D1:4", "Bob", "My new job at the office is going well."),
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [
            turn("D2:1", "Bob", "Our dog learned to fetch the newspaper."),
            turn(
                "D2:2",
                "Alice",
                "I adopted a rescue puppy last week.",
                blip_caption="a small brown puppy on a rug",
            ),
            turn("D2:3", "Bob", "Want to go hiking on the ridge trail next month?"),
            turn("D2:4", "Alice", "Sure, see you then!"),
        ],
    },
    "qa": [
        # Rare name: only BM25 knows it; the small-talk turns outrank it in fused.
        {
            "question": "Who is Zuberi?",
            "answer": "Bob's cousin",
            "evidence": ["D1:2"],
            "category": 4,
        },
        # Paraphrase ("pets" is no word of either turn): only the embedder finds them.
        {
            "question": "What pets do they have?",
            "answer": "a dog and a puppy",
            "evidence": ["D2:1; D2:2"],  # LoCoMo's own slip: two ids in one string
            "category": 1,
        },
        # Both agree: the topic and the word "class".
        {
            "question": "When did Alice start the pottery class?",
            "answer": "May 2023",
            "evidence": ["D1:3"],
            "category": 2,
        },
        # Evidence that is not in the conversation: skipped.
        {"question": "Who won?", "adversarial_answer": "Bob", "evidence": ["D9:9"], "category": 5},
    ],
}

# Ranking made explicit (defaults may be tuned): no recency/use weighting, relevance
# 0.6 x raw cosine + 0.4 x keyword (`WeightedRelevance`: the shipped model is fitted on
# another embedder's cosines), and a floor low enough for a keyword-only match.
RELEVANCE = WeightedRelevance(dense_weight=0.6, keyword_weight=0.4)
POLICY_YAML = """\
memory:
  ranking:
    dense_floor: 0.0
    dense_ceiling: 1.0
    recency_weight: 0.0
    access_weight: 0.0
    min_score: 0.1
"""


def one_line_budget() -> int:
    """Room for the longest single line, never for two lines."""
    counter = Tokenizers().for_model("gpt-4o-mini")
    header = frame_tokens(counter)
    line = "- [memory, 2023-05-20] " + (
        "Alice: I adopted a rescue puppy last week. [shared a photo: a small brown puppy on a rug]"
    )
    shortest = "- [memory, 2023-05-20] Alice: Sure, see you then!"
    budget = header + counter.count(line) + 1
    assert header + 2 * (counter.count(shortest) + 1) > budget
    return budget


def test_parse_conversation_orders_turns_and_skips_questions_without_evidence() -> None:
    parsed = parse_conversation(CONVERSATION, 0)
    assert [t.dia_id for t in parsed.turns][:2] == ["D1:1", "D1:2"]
    times = [t.created_at for t in parsed.turns]
    assert times == sorted(times) and times[1] - times[0] == 1.0
    assert parsed.turns[5].content.endswith("[shared a photo: a small brown puppy on a rug]")
    assert parsed.now - parsed.turns[4].created_at == 86400.0  # session 2 + 1 day
    assert [q.evidence for q in parsed.questions] == [("D1:2",), ("D2:1", "D2:2"), ("D1:3",)]
    assert parsed.skipped_questions == 1


def test_evidence_ids_and_selection_parsing() -> None:
    assert evidence_ids(["D8:6; D9:17", "D:11:26", "D", "D8:6"]) == ["D8:6", "D9:17", "D11:26"]
    assert parse_selection("0-2,4") == [0, 1, 2, 4]
    with pytest.raises(ValueError):
        parse_selection("a-b")


def test_budget_overrun_fails_loudly() -> None:
    check_budget(512, 512)
    with pytest.raises(BudgetExceeded):
        check_budget(513, 512)


def test_recall_matches_the_construction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    (data / LOCOMO_FILE).parent.mkdir(parents=True)
    (data / LOCOMO_FILE).write_text(json.dumps([CONVERSATION]))
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY_YAML)
    output = tmp_path / "out.json"
    small = one_line_budget()

    code = run_memory_eval(
        data,
        conversations="0",
        budgets=f"{small},1024",
        policy_path=str(policy),
        output=str(output),
        command_line="gateway eval memory --test",
        embedder=TopicEmbedder(),
        relevance_model=RELEVANCE,
    )

    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("$ gateway eval memory --test\n")
    assert "| 4 single-hop | 1 |" in printed and "| all | 3 |" in printed
    result = json.loads(output.read_text())
    assert result["data"]["questions"] == 3 and result["data"]["skipped_questions"] == 1
    by = result["by_category"]
    assert {key: group["name"] for key, group in by.items()} == {
        "1": "multi-hop",
        "2": "temporal",
        "4": "single-hop",
    }
    big, one = "1024", str(small)

    def recall(category: str, method: str, budget: str) -> float:
        return float(by[category]["recall_pct"][method][budget])

    # Rare name: keyword and fused find it with room; dense never does.
    assert recall("4", "keyword", big) == recall("4", "fused", big) == 100.0
    assert recall("4", "dense", big) == 0.0
    # With room for one line, fused injects a small-talk turn (dense 1.0 beats BM25's share).
    assert recall("4", "fused", one) == 0.0
    assert recall("4", "keyword", one) == 100.0
    # Paraphrase: dense and fused find both turns; keyword finds nothing at all.
    assert recall("1", "dense", big) == recall("1", "fused", big) == 100.0
    assert recall("1", "keyword", big) == 0.0
    assert recall("1", "fused", one) == recall("1", "dense", one) == 50.0
    assert by["1"]["complete_pct"]["fused"][one] == 0.0
    assert by["1"]["complete_pct"]["fused"][big] == 100.0
    # Both signals agree: every method, every budget.
    for method in ("fused", "dense", "keyword"):
        assert recall("2", method, one) == recall("2", method, big) == 100.0

    assert result["all"]["recall_pct"]["fused"][big] == 100.0
    assert result["all"]["recall_pct"]["dense"][big] == pytest.approx(66.67)
    assert result["nothing_retrieved"] == {"fused": 0, "dense": 0, "keyword": 1}
    assert result["empty_blocks"]["keyword"] == {one: 1, big: 1}
    for method in ("fused", "dense", "keyword"):
        assert result["max_tokens"][method][one] <= small
        assert result["max_tokens"][method][big] <= 1024
        assert result["mean_tokens"][method][one] <= small
    assert result["config"]["ranking"]["min_score"] == 0.1
