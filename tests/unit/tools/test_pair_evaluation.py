"""`gateway eval pairs`: the pair and pool protocols count hits the way the docs say, and
the ablation switches each check off in turn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.embed.protocol import Vectors
from gateway.entities.entities import EntityComparator
from gateway.nlp import TextAnalyzer
from gateway.policy.models import SemanticCachePolicy
from gateway.review.protocol import ReviewVerdict
from gateway_tools.evaluation.pairs import (
    LabeledPair,
    ablation_variants,
    evaluate_pair_protocol,
    evaluate_pool_protocol,
    in_half,
    load_pairs,
    same_text,
    scaled,
)

# Texts that mean the same share a topic vector; the calibration is the identity, so
# cosine 1.0 is served and orthogonal topics are below every threshold.
TOPICS = {
    "capital": ["what is the capital of france?", "which city is the capital of france?"],
    "python": ["how do i learn python?", "how can i learn python?"],
    "tea": ["how do i brew green tea?", "how should green tea be brewed?"],
    "ticket": ["how much is a ticket to paris?", "how much is a ticket to rome?"],
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

    def calibrate(self, cosine: float, language: str | None = None) -> float:
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


async def test_pairs_are_split_like_turns_and_other_material_is_no_candidate(
    comparator: EntityComparator,
) -> None:
    # The asks match (one topic); the material (a fenced block) does or does not.
    notes = "what is the capital of france?\n```\nnotes: {city} is in the north\n```"
    asked = "which city is the capital of france?\n```\nnotes: {city} is in the north\n```"
    pairs = [
        LabeledPair(notes.format(city="Paris"), asked.format(city="Lyon"), duplicate=False),
        LabeledPair(notes.format(city="Paris"), asked.format(city="Paris"), duplicate=True),
    ]
    embedder = TopicEmbedder()
    result = await evaluate_pair_protocol(pairs, embedder, comparator, None, SemanticCachePolicy())
    pipeline = result["pipeline"]
    assert isinstance(pipeline, dict)
    assert (pipeline["hits"], pipeline["false_hits"]) == (1, 0)
    assert pipeline["rejected_by"] == {"no_candidate": 1}


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


class EnglishDiscountEmbedder(TopicEmbedder):
    """English cosines read 10 % lower on the calibrated scale than Chinese ones."""

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return cosine * 0.9 if language == "en" else cosine


class RejectWordOrderGuard:
    """A structure guard that refuses any pair mentioning "brewed"."""

    def decide(self, query: str, candidate: str, similarity: float) -> ReviewVerdict:
        same = "brewed" not in query + candidate
        return ReviewVerdict(same_meaning=same, score=float(same), reviewer="stub")


async def test_ablation_switches_each_check_off_in_turn(comparator: EntityComparator) -> None:
    pairs = [
        LabeledPair(*TOPICS["capital"], duplicate=True),
        LabeledPair(*TOPICS["tea"], duplicate=True),  # the guard refuses it
        LabeledPair(*TOPICS["ticket"], duplicate=False),  # the entities differ
    ]
    policy = SemanticCachePolicy()
    result = await evaluate_pair_protocol(
        pairs,
        TopicEmbedder(),
        comparator,
        None,
        policy,
        RejectWordOrderGuard(),
        ablation_variants(policy),
    )
    rows = {row["rule"]: row for row in result["ablation"]}  # type: ignore[attr-defined]
    assert next(iter(rows)) == "full rule"
    assert (rows["full rule"]["hits"], rows["full rule"]["false_hits"]) == (1, 0)
    no_entities = rows["- entity comparison"]
    assert (no_entities["hits"], no_entities["false_hits"]) == (2, 1)
    assert rows["- structure guard"]["hits"] == 2
    assert rows["- structure guard"]["false_hits"] == 0
    assert "- strict terms" in rows
    band = [label for label in rows if label.startswith("+ review band")]
    assert len(band) == 1
    for row in rows.values():
        assert set(row["best_baseline"]) == {"precision_target", "recall", "raw_cosine_threshold"}


async def test_ablation_reads_the_scale_of_the_asks_language(comparator: EntityComparator) -> None:
    pairs = [LabeledPair(*TOPICS["capital"], duplicate=True)]
    policy = SemanticCachePolicy()
    result = await evaluate_pair_protocol(
        pairs, EnglishDiscountEmbedder(), comparator, None, policy, None, ablation_variants(policy)
    )
    rows = {row["rule"]: row for row in result["ablation"]}  # type: ignore[attr-defined]
    # English reads 0.9 on its own curve, below the 0.97 target; 1.0 pooled or raw.
    assert rows["full rule"]["hits"] == 0
    assert rows["- calibration by language (one curve)"]["hits"] == 1
    assert rows["- calibration (raw cosine)"]["hits"] == 1


def test_scaled_similarity() -> None:
    embedder = EnglishDiscountEmbedder()
    assert scaled(embedder, 0.5, "en") == pytest.approx(0.45)
    assert scaled(embedder, 0.5, "en", "pooled") == pytest.approx(0.5)
    assert scaled(embedder, -0.2, "zh", "raw") == 0.0
