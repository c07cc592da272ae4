"""Repository-level checks: lint, types, and files users rely on stay consistent."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    assert shutil.which("ruff"), "ruff is a test dependency"
    check = _run("ruff", "check", "gateway", "gateway_tools", "tests", "benchmarks")
    assert check.returncode == 0, check.stdout + check.stderr
    formatted = _run("ruff", "format", "--check", "gateway", "gateway_tools", "tests", "benchmarks")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.strip().splitlines()[-1]
    assert command in readme


def test_docker_compose_matches_the_repository() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    gateway = compose["services"]["gateway"]
    assert (ROOT / gateway["build"] / "Dockerfile").exists()
    for volume in gateway["volumes"]:
        source = volume.split(":")[0]
        if source.startswith("./"):
            assert (ROOT / source).is_dir(), source
    config_path = gateway["environment"]["GATEWAY_CONFIG"].removeprefix("/app/")
    assert (ROOT / config_path).exists(), config_path
    assert "redis" in compose["services"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    port = re.search(r'"--port", "(\d+)"', dockerfile)
    assert port and gateway["ports"][0].endswith(f":{port.group(1)}")


def test_shipped_configs_are_valid() -> None:
    from gateway.settings import load_config

    for name in ("gateway.yaml", "gateway.redis.yaml"):
        config, _ = load_config(ROOT / "config" / name)
        assert config.model_names()
