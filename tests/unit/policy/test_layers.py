"""Override files: naming, precedence (default < model < tenant < tenant+model), deep merge."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.policy.compile import deep_merge
from gateway.policy.files import PolicyNameError, PolicyScope, parse_policy_filename
from gateway.policy.loader import PolicyStore
from gateway.policy.models import Policy

from .conftest import WriteFile


def test_missing_folder_means_built_in_defaults(tmp_path: Path) -> None:
    store = PolicyStore.from_directory(tmp_path / "nowhere")
    assert store.resolve("acme", "gpt-4o-mini") == Policy()
    assert store.source == "built-in defaults"


def test_default_only_applies_to_everyone(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '7'\n")
    store = PolicyStore.from_directory(policies)
    assert store.resolve("acme", "gpt-4o").version == "7"
    assert store.resolve("", "").version == "7"
    assert store.source == str(policies)


def test_precedence_of_all_four_layers(policies: Path, write: WriteFile) -> None:
    # Each layer sets ttl_seconds (the most specific wins) and one field of its own.
    write("default.yaml", "exact_cache: {ttl_seconds: 10}\nversion: d\n")
    write("model.gpt-4o.yaml", "exact_cache: {ttl_seconds: 20}\nsystem_prompt_version: m\n")
    write("tenant.acme.yaml", "exact_cache: {ttl_seconds: 30}\ntool_schema_version: t\n")
    write("tenant.acme.model.gpt-4o.yaml", "exact_cache: {ttl_seconds: 40}\n")
    store = PolicyStore.from_directory(policies)

    def view(tenant: str, model: str) -> tuple[int, str, str, str]:
        policy = store.resolve(tenant, model)
        return (
            policy.exact_cache.ttl_seconds,
            policy.version,
            policy.system_prompt_version,
            policy.tool_schema_version,
        )

    assert view("globex", "gpt-4o-mini") == (10, "d", "", "")  # default
    assert view("globex", "gpt-4o") == (20, "d", "m", "")  # default < model
    assert view("acme", "gpt-4o-mini") == (30, "d", "", "t")  # default < tenant
    assert view("acme", "gpt-4o") == (40, "d", "m", "t")  # < tenant+model, all merged
    assert view("acme", "") == (30, "d", "", "t")  # the memory API resolves without a model


def test_tenant_beats_model(policies: Path, write: WriteFile) -> None:
    write("model.gpt-4o.yaml", "semantic_cache: {enabled: true, top_k: 9}\n")
    write("tenant.acme.yaml", "semantic_cache: {enabled: false}\n")
    policy = PolicyStore.from_directory(policies).resolve("acme", "gpt-4o")
    assert policy.semantic_cache.enabled is False
    assert policy.semantic_cache.top_k == 9  # merged, not replaced


def test_deep_merge_merges_mappings_and_replaces_lists_and_scalars(
    policies: Path, write: WriteFile
) -> None:
    write(
        "default.yaml",
        """
        semantic_cache:
          top_k: 7
          review: {enabled: true, timeout_seconds: 3.0}
        classifier:
          enabled_classes: [write_intent, time_sensitive, entity_id]
          extra_patterns:
            time_sensitive: ['\\bquarterly\\b', '\\bweekly\\b']
            personalized: ['\\bmine\\b']
        cacheable_finish_reasons: [stop, tool_calls]
        """,
    )
    write(
        "tenant.acme.yaml",
        """
        semantic_cache:
          review: {timeout_seconds: 0.5}
        classifier:
          enabled_classes: [write_intent]
          extra_patterns:
            time_sensitive: ['\\bdaily\\b']
          temperature_cap: null
        cacheable_finish_reasons: [stop]
        """,
    )
    policy = PolicyStore.from_directory(policies).resolve("acme", "m")
    assert policy.semantic_cache.top_k == 7
    assert policy.semantic_cache.review.enabled is True
    assert policy.semantic_cache.review.timeout_seconds == 0.5
    assert policy.classifier.enabled_classes == frozenset({"write_intent"})
    assert policy.classifier.extra_patterns == {
        "time_sensitive": ("\\bdaily\\b",),
        "personalized": ("\\bmine\\b",),
    }
    assert policy.cacheable_finish_reasons == frozenset({"stop"})


def test_deep_merge_function() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    over = {"a": {"c": [3]}, "d": {"x": 1}}
    assert deep_merge(base, over) == {"a": {"b": 1, "c": [3]}, "d": {"x": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}  # inputs untouched


def test_tool_schema_version_in_a_tenant_override_changes_only_that_tenants_namespace(
    policies: Path, write: WriteFile
) -> None:
    write("default.yaml", "tool_schema_version: tools-1\n")
    store = PolicyStore.from_directory(policies)
    before = {t: store.resolve(t, "gpt-4o").cache_namespace() for t in ("acme", "globex")}

    write("tenant.acme.yaml", "tool_schema_version: tools-2\n")
    assert store.reload().added == ("tenant.acme.yaml",)
    after = {t: store.resolve(t, "gpt-4o").cache_namespace() for t in ("acme", "globex")}

    assert after["acme"] != before["acme"]
    assert after["acme"]["tool_schema_version"] == "tools-2"
    assert after["globex"] == before["globex"]


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("default.yaml", PolicyScope()),
        ("tenant.acme.yaml", PolicyScope(tenant="acme")),
        ("tenant.acme.corp.yaml", PolicyScope(tenant="acme.corp")),
        ("model.gpt-4o-mini.yaml", PolicyScope(model="gpt-4o-mini")),
        ("model.gpt-4.1.yaml", PolicyScope(model="gpt-4.1")),
        ("tenant.acme.model.gpt-4.1.yaml", PolicyScope("acme", "gpt-4.1")),
        ("tenant.model.yaml", PolicyScope(tenant="model")),
    ],
)
def test_file_names(name: str, scope: PolicyScope) -> None:
    assert parse_policy_filename(name) == scope


@pytest.mark.parametrize(
    "name",
    [
        "acme.yaml",
        "Default.yaml",
        "default.yml",
        "tenant..yaml",
        "tenant.yaml",
        "model..yaml",
        "tenant.acme.model..yaml",
        "tenant.acme.model.yaml",
        "tenant.ac me.yaml",
        "tenant.acme.model.a b.yaml",
    ],
)
def test_file_names_that_cannot_be_parsed(name: str) -> None:
    with pytest.raises(PolicyNameError):
        parse_policy_filename(name)


def test_other_files_are_ignored(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '3'\n")
    write("README.md", "not a policy")
    write(".default.yaml.swp", "binary junk: [")
    write("default.yaml~", "junk: [")
    (policies / "sub.yaml").mkdir()
    store = PolicyStore.from_directory(policies)
    assert [f["file"] for f in store.status()["files"]] == ["default.yaml"]
