"""The hand-written probe suite through the real decision rule: real embedder and
calibration, entity comparison, structure guard and local reviewer. Zero false hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.components import load_guard, load_local_embedder, load_text_components
from gateway.policy.models import SemanticCachePolicy
from gateway.review.local import LocalPairReviewer
from gateway_tools.evaluation.probes import evaluate_probes, load_probes
from gateway_tools.evaluation.structural import evaluate_structural_probes, load_structural_probes

PROBES = Path(__file__).resolve().parents[2] / "probes"
STRUCTURAL = PROBES  # every structural*.jsonl


def test_probe_suite_is_big_enough_and_bilingual() -> None:
    probes = load_probes(PROBES)
    assert len(probes) >= 300
    for language in ("en", "zh"):
        assert sum(p.language == language for p in probes) >= 150


async def test_no_near_miss_is_ever_served() -> None:
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    result = await evaluate_probes(
        embedder,
        comparator,
        LocalPairReviewer.load(),
        SemanticCachePolicy(),
        load_guard(),
        directory=PROBES,
    )
    assert result["false_hits"] == 0, result["false_hit_examples"]
    # Paraphrases are served when the embedder is confident enough; the floor guards
    # against a change that makes the pipeline refuse everything.
    assert result["paraphrases_served"] >= 0.05 * result["paraphrases"], result


def test_structural_probes_cover_every_kind_in_both_languages() -> None:
    probes = load_structural_probes(STRUCTURAL)
    assert len(probes) >= 200
    kinds = {p.kind for p in probes}
    for language in ("en", "zh"):
        assert {p.kind for p in probes if p.language == language} == kinds
    assert {"context_question", "document_edit", "code_edit", "table_edit"} <= kinds
    assert {"attachment_edit", "poisoning", "context_paraphrase"} <= kinds


async def test_no_structural_near_miss_is_ever_served() -> None:
    """Different questions about one context, one-clause document edits, one-line code
    edits, one-cell table edits, other attachments, planted instructions: through the
    real semantic stage, none is served another request's answer."""
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    result = await evaluate_structural_probes(
        embedder, comparator, LocalPairReviewer.load(), load_guard(), path=STRUCTURAL
    )
    assert result["false_hits"] == 0, result["false_hit_examples"]
    # The edits are almost never even candidates: their material or attachments
    # differ. The one exception allowed is a list written inline in one short sentence,
    # which is compared whole and refused by the entity comparison.
    for kind in ("document_edit", "code_edit", "table_edit", "attachment_edit"):
        outcomes = {k: n for k, n in result["outcomes"].items() if k.startswith(f"{kind}:")}
        refused = {f"{kind}:entity_mismatch", f"{kind}:meaning_differs"}
        assert set(outcomes) <= {f"{kind}:no_candidate"} | refused, outcomes
        assert sum(outcomes.get(reason, 0) for reason in refused) <= 1, outcomes


async def _through_the_stage(name: str) -> dict[str, Any]:
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    return await evaluate_structural_probes(
        embedder, comparator, LocalPairReviewer.load(), load_guard(), path=PROBES / name
    )


async def test_no_difference_probe_is_ever_served() -> None:
    """Pairs that differ in one small, meaning-bearing place (whitespace in material, a
    function word, a quantifier, an operator, a role swap, the question's focus...):
    through the real semantic stage, none is served; most rewordings are."""
    result = await _through_the_stage("difference.jsonl")
    assert result["near_misses"] >= 200
    assert result["false_hits"] == 0, result["false_hit_examples"]
    assert result["same_answer_served"] >= 0.6 * result["same_answer"], result["outcomes"]


async def test_natural_paraphrases_are_served_without_a_false_hit() -> None:
    result = await _through_the_stage("paraphrases.jsonl")
    assert result["same_answer"] >= 150
    # A floor under today's share (docs/semantic-decision.md), so a change that makes
    # the decision refuse rewordings again fails here.
    assert result["same_answer_served"] >= 0.2 * result["same_answer"], result["outcomes"]
