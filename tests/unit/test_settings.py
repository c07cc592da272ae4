from __future__ import annotations

from pathlib import Path

import pytest

from gateway.cli import main
from gateway.settings import ConfigError, config_path_from, load_config, parse_config

MODEL = {
    "model_name": "m",
    "litellm_params": {"model": "openai/m", "api_key": "os.environ/TEST_GW_KEY"},
}


def test_env_references_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_GW_KEY", "sk-from-env")
    config, warnings = parse_config({"model_list": [MODEL]})
    assert config.model_list[0].litellm_params.api_key == "sk-from-env"
    assert warnings == []


def test_missing_env_reference_is_a_warning_naming_field_and_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TEST_GW_KEY", raising=False)
    config, warnings = parse_config({"model_list": [MODEL]})
    assert config.model_list[0].litellm_params.api_key is None
    assert warnings == [
        "model_list.0.litellm_params.api_key (environment variable TEST_GW_KEY is not set)"
    ]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"storage": {"backend": "floppy"}}, "storage.backend"),
        ({"auth": {"tenants": [{"name": "acme"}]}}, "auth.tenants.0.api_keys"),
        ({"server": {"port": 70000}}, "server.port"),
        ({"model_list": [{"model_name": "m"}]}, "model_list.0.litellm_params"),
        ({"unknown_section": {}}, "unknown_section"),
        ({"router_settings": {"fallbacks": [{"a": ["b"]}]}}, "fallbacks"),
    ],
)
def test_invalid_config_names_the_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, "gateway.yaml")
    assert field in str(caught.value)
    assert str(caught.value).startswith("gateway.yaml")


@pytest.mark.parametrize("name", ["admin", "Admin", "default"])
def test_reserved_tenant_names_are_refused(name: str) -> None:
    # Admin-key traffic runs as tenant `admin`: a tenant of that name would share its
    # cache entries and memories.
    raw = {"auth": {"tenants": [{"name": name, "api_keys": ["sk-tenant-123"]}]}}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, "gateway.yaml")
    assert "auth.tenants.0.name" in str(caught.value)
    assert "reserved" in str(caught.value)


def test_duplicate_keys_are_rejected_without_echoing_them() -> None:
    raw = {
        "auth": {
            "tenants": [
                {"name": "a", "api_keys": ["sk-dup-123"]},
                {"name": "b", "api_keys": ["sk-dup-123"]},
            ]
        }
    }
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    assert "sk-dup-123" not in str(caught.value)


def test_bad_yaml_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("server:\n  port: 8080\n bad: [\n")
    with pytest.raises(ConfigError, match="line 3"):
        load_config(path)


def test_shipped_config_is_valid() -> None:
    config, _ = load_config(Path(__file__).parents[2] / "config" / "gateway.yaml")
    assert config.storage.backend == "embedded"
    assert "gpt-4o-mini" in config.model_names()


def test_config_path_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    assert config_path_from(None) == Path("config/gateway.yaml")
    monkeypatch.setenv("GATEWAY_CONFIG", "/etc/gw.yaml")
    assert config_path_from(None) == Path("/etc/gw.yaml")
    assert config_path_from("cli.yaml") == Path("cli.yaml")


def test_serve_refuses_a_broken_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("storage: {backend: embedded, path: 5, extra: 1}\n")
    assert main(["serve", "--config", str(path)]) == 2
    assert "storage.extra" in capsys.readouterr().err
