"""One classifier for the whole package: loading the spaCy pipelines takes about a second."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import (
    Classification,
    ClassifierSettings,
    NonCacheableClass,
    RequestClassifier,
)
from gateway.nlp import TextAnalyzer


@pytest.fixture(scope="session")
def classifier() -> RequestClassifier:
    return RequestClassifier(TextAnalyzer.load())


def only(cls: NonCacheableClass) -> ClassifierSettings:
    """Settings with one class enabled, so a higher-precedence class cannot mask it."""
    return ClassifierSettings(enabled=frozenset({cls}))


def judge(
    classifier: RequestClassifier,
    text: str,
    settings: ClassifierSettings | None = None,
    *,
    earlier: bool = False,
) -> Classification:
    return classifier.classify_text(
        text, has_earlier_turns=earlier, settings=settings or ClassifierSettings()
    )
