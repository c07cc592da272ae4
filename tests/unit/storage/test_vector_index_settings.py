"""`storage.vector_index` in the gateway config: defaults and validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.settings import StorageSettings


def test_defaults_are_the_measured_ones() -> None:
    settings = StorageSettings().vector_index
    assert settings == VectorIndexSettings(hnsw_m=16, hnsw_ef_construction=200, hnsw_ef_runtime=200)
    # Unset: a budget of vector values, 15,000 entries of 512 dimensions.
    assert settings.exact_scan_max_entries is None
    assert settings.exact_scan_limit(512) == 15_000
    assert settings.exact_scan_limit(1536) == 5_000
    assert settings.partition_count_refresh_seconds == 30.0


def test_values_from_the_config_are_kept() -> None:
    storage = StorageSettings.model_validate(
        {
            "vector_index": {
                "hnsw_m": 32,
                "hnsw_ef_construction": 400,
                "hnsw_ef_runtime": 100,
                "exact_scan_max_entries": 0,
                "partition_count_refresh_seconds": 5,
            }
        }
    )
    assert storage.vector_index.exact_scan_limit(512) == 0
    assert storage.vector_index.partition_count_refresh_seconds == 5.0
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
        {"exact_scan_max_entries": -1},
        {"partition_count_refresh_seconds": 0},
    ],
)
def test_bad_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        StorageSettings.model_validate({"vector_index": bad})
