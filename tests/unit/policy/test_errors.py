"""Errors name the file, the line and the field, and never echo a value."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.policy.errors import PolicyError
from gateway.policy.loader import PolicyStore, load_policy_file

from .conftest import WriteFile


def _errors(policies: Path) -> list[str]:
    with pytest.raises(PolicyError) as caught:
        PolicyStore.from_directory(policies)
    return caught.value.messages


def test_bad_value_in_an_override_names_its_file_and_line(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    write(
        "tenant.acme.yaml",
        """
        # acme: stricter cache
        version: acme-2
        exact_cache:
          enabled: true

        semantic_cache:
          accept_threshold: 1.7
        """,
    )
    assert _errors(policies) == [
        f"{policies}/tenant.acme.yaml:7: semantic_cache.accept_threshold: "
        "Input should be less than or equal to 1"
    ]


def test_bad_value_in_default_names_default_even_under_overrides(
    policies: Path, write: WriteFile
) -> None:
    write("default.yaml", "version: '1'\nsemantic_cache:\n  top_k: 0\n")
    write("tenant.acme.yaml", "semantic_cache:\n  enabled: false\n")
    write("model.m.yaml", "exact_cache:\n  ttl_seconds: 5\n")
    # Reported once, though every combination inherits it.
    assert _errors(policies) == [
        f"{policies}/default.yaml:3: semantic_cache.top_k: "
        "Input should be greater than or equal to 1"
    ]


def test_value_overridden_by_a_more_specific_file_is_blamed_on_that_file(
    policies: Path, write: WriteFile
) -> None:
    write("model.m.yaml", "exact_cache:\n  ttl_seconds: 5\n")
    write("tenant.acme.model.m.yaml", "# acme on m\nexact_cache:\n  ttl_seconds: -1\n")
    assert _errors(policies) == [
        f"{policies}/tenant.acme.model.m.yaml:3: exact_cache.ttl_seconds: "
        "Input should be greater than or equal to 1"
    ]


def test_list_item_errors_point_at_the_item(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "cacheable_finish_reasons:\n  - stop\n  - [nested]\n")
    assert _errors(policies) == [
        f"{policies}/default.yaml:3: cacheable_finish_reasons.1: Input should be a valid string"
    ]


def test_yaml_syntax_error_names_the_line(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    write("model.m.yaml", "exact_cache:\n  enabled: true\n ttl_seconds: [\n")
    (message,) = _errors(policies)
    assert message.startswith(f"{policies}/model.m.yaml:3: not valid YAML")


def test_unknown_field_is_an_error(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    write("tenant.acme.yaml", "semantic_cache:\n  top_k: 3\n  acept_threshold: 0.9\nbogus: 1\n")
    assert _errors(policies) == [
        f"{policies}/tenant.acme.yaml:3: semantic_cache.acept_threshold: "
        "Extra inputs are not permitted",
        f"{policies}/tenant.acme.yaml:4: bogus: Extra inputs are not permitted",
    ]


def test_a_check_across_merged_fields_names_the_merge(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "semantic_cache:\n  review_min_similarity: 0.85\n")
    write("tenant.acme.yaml", "semantic_cache:\n  accept_threshold: 0.8\n")
    (message,) = _errors(policies)
    assert message.startswith(f"{policies}/tenant.acme.yaml:1: semantic_cache: ")
    assert "review_min_similarity must not exceed accept_threshold" in message
    assert "(merged: default.yaml < tenant.acme.yaml)" in message


def test_file_name_that_cannot_be_parsed(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    write("acme.yaml", "version: '2'\n")
    write("tenant.acme.yml", "version: '2'\n")
    errors = _errors(policies)
    assert len(errors) == 2
    assert errors[0].startswith(f"{policies}/acme.yaml: cannot tell what this file applies to")
    assert "tenant.<tenant>.yaml" in errors[0]
    assert errors[1].startswith(f"{policies}/tenant.acme.yml: policy files must end in .yaml")


def test_duplicate_key_is_an_error(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "semantic_cache:\n  top_k: 3\nsemantic_cache:\n  enabled: false\n")
    assert _errors(policies) == [f"{policies}/default.yaml:3: duplicate key (first at line 1)"]


def test_top_level_must_be_a_mapping(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "- version\n")
    assert _errors(policies) == [f"{policies}/default.yaml:1: the top level must be a mapping"]


def test_only_the_safe_loader_is_used(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: !!python/object/apply:os.getcwd []\n")
    (message,) = _errors(policies)
    assert message.startswith(f"{policies}/default.yaml:1: not valid YAML")


def test_errors_never_echo_values(policies: Path, write: WriteFile) -> None:
    write(
        "tenant.acme.yaml",
        "version: 12345\nsemantic_cache:\n  top_k: s3cr3t-value\n  review: sk-secret\n",
    )
    text = "\n".join(_errors(policies))
    assert "s3cr3t" not in text and "sk-secret" not in text and "12345" not in text
    assert f"{policies}/tenant.acme.yaml:1: version: Input should be a valid string" in text
    assert f"{policies}/tenant.acme.yaml:3: semantic_cache.top_k:" in text


def test_every_problem_in_every_file_is_reported(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "exact_cache:\n  ttl_seconds: 0\n")
    write("model.m.yaml", "memory:\n  write_guard: maybe\n")
    errors = _errors(policies)
    assert [e.split(": ")[0] for e in errors] == [
        f"{policies}/default.yaml:2",
        f"{policies}/model.m.yaml:2",
    ]


def test_load_policy_file_reports_lines(tmp_path: Path) -> None:
    path = tmp_path / "anything.yaml"
    path.write_text("memory:\n  max_memory_tokens: -5\n")
    with pytest.raises(PolicyError, match=r"anything\.yaml:2: memory\.max_memory_tokens: "):
        load_policy_file(path)
    path.write_text("memory:\n  max_memory_tokens: 300\n")
    assert load_policy_file(path).memory.max_memory_tokens == 300
