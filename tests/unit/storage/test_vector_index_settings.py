"""`storage.vector_index` in the gateway config: defaults and validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.settings import StorageSettings


def test_defaults_are_the_measured_ones() -> None:
    settings = StorageSettings().vector_index
    assert settings == VectorIndexSettings(hnsw_m=16, hnsw_ef_construction=200, hnsw_ef_runtime=200)


def test_values_from_the_config_are_kept() -> None:
    storage = StorageSettings.model_validate(
        {"vector_index": {"hnsw_m": 32, "hnsw_ef_construction": 400, "hnsw_ef_runtime": 100}}
    )
    assert storage.vector_index.hnsw_m == 32
    assert storage.vector_index.hnsw_ef_construction == 400
    assert storage.vector_index.hnsw_ef_runtime == 100


@pytest.mark.parametrize(
    "bad",
    [
        {"hnsw_m": 2},
        {"hnsw_m": 1000},
        {"hnsw_ef_construction": 5},
        {"hnsw_ef_runtime": 0},
        {"hnsw_ef_runtime": "many"},
        {"ef_runtime": 100},  # a misspelt option is an error, not ignored
    ],
)
def test_bad_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        StorageSettings.model_validate({"vector_index": bad})
