"""Cutting documents into knowledge items, counted with the real tiktoken encoding."""

from __future__ import annotations

import itertools

import pytest

from gateway.knowledge.chunking import chunk_document
from gateway.memory.tokens import TokenCounter, Tokenizers


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return Tokenizers().for_model("gpt-4")


def test_short_paragraphs_stay_whole_and_pack_together(counter: TokenCounter) -> None:
    text = "Refunds take five days.\n\nShipping is free above 50 euros.\n\n\nReturns: 30 days."
    assert chunk_document(text, counter, 200) == [
        "Refunds take five days. Shipping is free above 50 euros. Returns: 30 days."
    ]


def test_every_chunk_fits_and_nothing_is_lost(counter: TokenCounter) -> None:
    sentences = [f"Rule {n} says that order class {n} ships from warehouse {n}." for n in range(60)]
    text = "\n\n".join(" ".join(sentences[i : i + 6]) for i in range(0, 60, 6))
    chunks = chunk_document(text, counter, 50, overlap_tokens=0)
    assert len(chunks) > 5
    assert all(counter.count(chunk) <= 50 for chunk in chunks)
    assert " ".join(chunks) == " ".join(sentences)


def test_chunks_overlap_by_whole_sentences(counter: TokenCounter) -> None:
    sentences = [f"Fact number {n} is about the {n}th shelf." for n in range(30)]
    chunks = chunk_document(" ".join(sentences), counter, 60, overlap_tokens=15)
    assert all(counter.count(chunk) <= 60 for chunk in chunks)
    for before, after in itertools.pairwise(chunks):
        last_sentence = before.rsplit(". ", 1)[-1]
        # The next chunk starts with the end of the one before.
        assert after.startswith(last_sentence.rstrip(".")), (before, after)
    assert all(any(s in chunk for chunk in chunks) for s in sentences)


def test_text_without_spaces_or_sentence_ends_is_cut_by_tokens(counter: TokenCounter) -> None:
    text = "企业版客户的退款在五个工作日内处理" * 40
    chunks = chunk_document(text, counter, 40, overlap_tokens=0)
    assert len(chunks) > 1
    assert all(counter.count(chunk) <= 40 for chunk in chunks)
    assert "".join(chunks) == text


def test_chinese_sentences_are_split_at_full_stops(counter: TokenCounter) -> None:
    text = "。".join(f"第{n}条规则适用于企业版客户" for n in range(40)) + "。"
    chunks = chunk_document(text, counter, 40, overlap_tokens=0)
    assert all(chunk.endswith("。") for chunk in chunks)
    assert all(counter.count(chunk) <= 40 for chunk in chunks)
    assert "".join(c.replace(" ", "") for c in chunks) == text


def test_overlap_must_be_below_the_size(counter: TokenCounter) -> None:
    with pytest.raises(ValueError):
        chunk_document("a", counter, 20, overlap_tokens=20)
