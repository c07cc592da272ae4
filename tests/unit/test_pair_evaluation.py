"""`gateway eval pairs`: the pair and pool protocols count hits the way the docs say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.embed.protocol import Vectors
from gateway.evaluation.pairs import (
    LabeledPair,
    evaluate_pair_protocol,
    evaluate_pool_protocol,
    in_half,
    load_pairs,
    same_text,
)
from gateway.nlp import TextAnalyzer
from gateway.policy.models import SemanticCachePolicy
from gateway.semantic.entities import EntityComparator

# Texts that mean the same share a topic vector; the calibration is the identity, so
# cosine 1.0 is served and orthogonal topics are below every threshold.
TOPICS = {
    "capital": ["what is the capital of france?", "which city is the capital of france?"],
    "python": ["how do i learn python?", "how can i learn python?"],
    "tea": ["how do i brew green tea?", "how should green tea be brewed?"],
}


class TopicEmbedder:
    name = "topics"
    dimensions = len(TOPICS)

    async def embed(self, texts: list[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for j, members in enumerate(TOPICS.values()):
                if any(same_text(text, member) for member in members):
                    rows[i, j] = 1.0
        return rows

    def calibrate(self, cosine: float) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


@pytest.fixture(scope="module")
def comparator() -> EntityComparator:
    return EntityComparator(TextAnalyzer.load())


def test_same_text_ignores_case_space_and_punctuation() -> None:
    assert same_text("What is the purpose of life ?", "what is the purpose of life?")
    assert not same_text("How do I learn Python?", "How do I learn Rust?")


async def test_pair_protocol_counts_hits_and_false_hits(comparator: EntityComparator) -> None:
    pairs = [
        LabeledPair(*TOPICS["capital"], duplicate=True),
        LabeledPair(*TOPICS["python"], duplicate=False),  # served, but labelled different
        LabeledPair(TOPICS["tea"][0], TOPICS["capital"][0], duplicate=False),  # orthogonal
    ]
    result = await evaluate_pair_protocol(
        pairs, TopicEmbedder(), comparator, None, SemanticCachePolicy()
    )
    pipeline = result["pipeline"]
    assert isinstance(pipeline, dict)
    assert (pipeline["hits"], pipeline["false_hits"]) == (2, 1)
    assert pipeline["precision"] == 0.5
    assert pipeline["rejected_by"] == {"below_threshold": 1}


async def test_pool_protocol_reports_hits_on_a_stored_copy_of_the_query(
    comparator: EntityComparator,
) -> None:
    # The second pair's question is stored as the first pair's first sentence: served
    # from that entry, the protocol counts a false hit although the answer is right.
    pairs = [
        LabeledPair("How can I learn Python?", "how do i brew green tea?", duplicate=False),
        LabeledPair("What is the capital of France?", "How can I learn Python", duplicate=False),
    ]
    result = await evaluate_pool_protocol(
        pairs, TopicEmbedder(), comparator, None, SemanticCachePolicy()
    )
    pipeline = result["pipeline"]
    assert isinstance(pipeline, dict)
    assert pipeline["hits"] == 1
    assert pipeline["precision"] == 0.0
    assert pipeline["same_text_hits"] == 1
    assert pipeline["precision_same_text_correct"] == 1.0


def test_halves_split_a_set_by_first_sentence(tmp_path: Path) -> None:
    rows = ["question1,question2,is_duplicate"]
    rows += [f"Question {i % 40}?,Other {i}?,{i % 2}" for i in range(200)]
    (tmp_path / "pairs_en").mkdir()
    (tmp_path / "pairs_en" / "qqp_val.csv").write_text("\n".join(rows) + "\n")
    every = load_pairs(tmp_path, "qqp")
    first, second = load_pairs(tmp_path, "qqp", half="a"), load_pairs(tmp_path, "qqp", half="b")
    assert len(first) + len(second) == len(every) == 200
    assert first and second
    # Pairs that share a first sentence land in the same half.
    assert not {p.first for p in first} & {p.first for p in second}
    assert all(in_half(p.first, "a") for p in first)
