"""`gateway eval freshness` on the embedded backend (real SQLite stores, the memory
stage, tiktoken; a table embedder, so retrieval goes by keyword): every change is
preceded by an injection of the old content, and none follows it."""

from __future__ import annotations

from gateway_tools.evaluation.freshness import evaluate_backend
from tests.unit.memory.fakes import TableEmbedder


async def test_no_old_content_is_injected_after_a_change() -> None:
    result = await evaluate_backend("embedded", TableEmbedder({}, [1.0, 0.0, 0.0]), 24, seed=3)
    assert sum(result["changes"].values()) == 24
    assert set(result["changes"]) == {
        "knowledge_update",
        "knowledge_delete",
        "document_delete",
        "memory_delete",
        "memory_update",
    }
    # The check has power: the old content was injected before each change...
    assert result["asked_before_change_and_injected"] == 24
    # ...and never after, while an update's new text is.
    assert result["stale_injections"] == 0
    updates = result["changes"]["knowledge_update"] + result["changes"]["memory_update"]
    assert result["updates_injecting_the_new_text"] == updates
