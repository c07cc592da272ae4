"""`gateway eval pairs --reviewer-errors`: a simulated chat-model reviewer with known
accept rates, judged next to the offline default."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gateway.cli import _reviewer_errors, main
from gateway.embed.protocol import Vectors
from gateway.entities.entities import EntityComparator
from gateway.nlp import TextAnalyzer
from gateway.policy.models import SemanticCachePolicy
from gateway.review.protocol import MODEL, Reviewer
from gateway_tools.evaluation.pairs import (
    LabeledPair,
    evaluate_pair_protocol,
    evaluate_pool_protocol,
    with_review_band,
)
from gateway_tools.evaluation.simulated_reviewer import SimulatedReviewer, draw, pair_labels

# Both pass the entity comparison; one content word separates each.
PAIRS = [
    LabeledPair("What is the capital city of France?", "What is the main city of France?", True),
    LabeledPair("How do I learn French quickly?", "How do I learn French well?", False),
]
COSINE = 0.9


class PairEmbedder:
    """Pair i's first text on axis 2i, its second at cosine 0.9 from it (axis 2i+1)."""

    name = "pairs"
    dimensions = 2 * len(PAIRS)

    async def embed(self, texts: list[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for i, pair in enumerate(PAIRS):
                if text == pair.first:
                    rows[row, 2 * i] = 1.0
                elif text == pair.second:
                    rows[row, 2 * i] = COSINE
                    rows[row, 2 * i + 1] = math.sqrt(1 - COSINE**2)
        return rows

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


@pytest.fixture(scope="module")
def comparator() -> EntityComparator:
    return EntityComparator(TextAnalyzer.load())


def band_policy() -> SemanticCachePolicy:
    """The band [0.5, 0.99) holds both pairs (0.9); only the entity comparison among
    the local checks."""
    policy = SemanticCachePolicy.model_validate(
        {
            "accept_threshold": 0.99,
            "review_min_similarity": 0.5,
            "strict_band_terms": False,
            "difference_check": False,
            "review": {"band_floor": 0.5, "enabled": False},
        }
    )
    return with_review_band(policy)


def test_it_is_a_model_reviewer_and_deterministic() -> None:
    reviewer = SimulatedReviewer(pair_labels(PAIRS), 0.9, 0.05)
    as_protocol: Reviewer = reviewer
    assert as_protocol.kind == MODEL
    assert draw("a", "b") == draw("b", "a")
    assert 0.0 <= draw("a", "b") < 1.0
    assert draw("a", "b") != draw("a", "c")


async def test_it_says_same_at_the_given_rates() -> None:
    pairs = [LabeledPair(f"question {i}", f"asked {i}", i % 2 == 0) for i in range(4000)]
    reviewer = SimulatedReviewer(pair_labels(pairs), 0.9, 0.05)
    same = {True: 0, False: 0}
    for pair in pairs:
        verdict = await reviewer.review(pair.second, pair.first, 0.9, tenant="eval")
        again = await reviewer.review(pair.first, pair.second, 0.9)
        assert verdict.same_meaning == again.same_meaning  # either order, every time
        same[pair.duplicate] += verdict.same_meaning
    assert same[True] / 2000 == pytest.approx(0.9, abs=0.03)
    assert same[False] / 2000 == pytest.approx(0.05, abs=0.02)
    assert reviewer.summary()["asked"] == 8000


async def test_an_unknown_pair_is_not_a_duplicate() -> None:
    reviewer = SimulatedReviewer(pair_labels(PAIRS), 1.0, 0.0)
    assert (await reviewer.review(PAIRS[0].second, PAIRS[0].first, 0.9)).same_meaning
    assert not (await reviewer.review(PAIRS[0].second, PAIRS[1].first, 0.9)).same_meaning


def test_rates_must_be_probabilities() -> None:
    with pytest.raises(ValueError):
        SimulatedReviewer({}, 1.5, 0.0)


def test_the_evaluation_policy_has_its_review_on() -> None:
    policy = band_policy()
    assert policy.review.enabled and policy.review.band_floor < policy.accept_threshold


@pytest.mark.parametrize(("errors", "hits", "false_hits"), [((1.0, 0.0), 1, 0), ((1.0, 1.0), 2, 1)])
async def test_pair_protocol_reports_the_model_reviewer_next_to_the_default(
    comparator: EntityComparator, errors: tuple[float, float], hits: int, false_hits: int
) -> None:
    result = await evaluate_pair_protocol(
        PAIRS, PairEmbedder(), comparator, None, band_policy(), reviewer_errors=errors
    )
    pipeline, modelled = result["pipeline"], result["model_reviewer"]
    assert isinstance(pipeline, dict) and isinstance(modelled, dict)
    # No offline reviewer: the band is review_unavailable.
    assert pipeline["hits"] == 0
    assert (modelled["hits"], modelled["false_hits"]) == (hits, false_hits)
    assert modelled["reviewer"]["asked"] == 2
    assert modelled["review_band"] == [0.5, 0.99] and modelled["band_active"]
    assert set(modelled["best_baseline"]) == {"precision_target", "recall", "raw_cosine_threshold"}


async def test_without_reviewer_errors_there_is_no_model_row(comparator: EntityComparator) -> None:
    result = await evaluate_pair_protocol(PAIRS, PairEmbedder(), comparator, None, band_policy())
    assert "model_reviewer" not in result


async def test_pool_protocol_reports_the_model_reviewer_too(comparator: EntityComparator) -> None:
    result = await evaluate_pool_protocol(
        PAIRS, PairEmbedder(), comparator, None, band_policy(), reviewer_errors=(1.0, 0.0)
    )
    pipeline, modelled = result["pipeline"], result["model_reviewer"]
    assert isinstance(pipeline, dict) and isinstance(modelled, dict)
    assert pipeline["hits"] == 0
    assert (modelled["hits"], modelled["false_hits"]) == (1, 0)
    assert modelled["pairs"] == pipeline["pairs"] == 2


def test_the_command_line_reads_two_rates() -> None:
    assert _reviewer_errors("0.90,0.05") == (0.9, 0.05)
    assert _reviewer_errors(None) is None
    for bad in ("0.9", "0.9,0.05,0.1", "high,low", "1.2,0.0", "nan,0"):
        with pytest.raises(ValueError):
            _reviewer_errors(bad)


def test_gateway_eval_pairs_passes_the_rates_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway_tools.evaluation.run as run

    seen: dict[str, object] = {}

    def run_eval(command: str, *args: object, **kwargs: object) -> int:
        seen.update(kwargs, command=command)
        return 0

    monkeypatch.setattr(run, "run_eval", run_eval)
    assert main(["eval", "pairs", "--data", ".", "--reviewer-errors", "0.9,0.05"]) == 0
    assert seen["command"] == "pairs" and seen["reviewer_errors"] == (0.9, 0.05)
    assert main(["eval", "pairs", "--data", ".", "--reviewer-errors", "0.9"]) == 2
