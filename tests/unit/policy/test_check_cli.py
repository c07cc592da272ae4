"""`gateway policy check [PATH]`: offline validation, exit 0 or 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gateway.cli import main

from .conftest import WriteFile


def test_valid_folder(policies: Path, write: WriteFile, capsys: pytest.CaptureFixture[str]) -> None:
    write("default.yaml", "version: '1'\n")
    write("tenant.acme.yaml", "semantic_cache: {enabled: false}\n")
    write("model.gpt-4o.yaml", "exact_cache: {ttl_seconds: 60}\n")
    assert main(["policy", "check", str(policies)]) == 0
    assert capsys.readouterr().out == "ok: 3 files\n"


def test_invalid_folder_prints_every_error(
    policies: Path, write: WriteFile, capsys: pytest.CaptureFixture[str]
) -> None:
    write("default.yaml", "version: '1'\nexact_cache:\n  ttl_seconds: 0\n")
    write("tenant.acme.yaml", "semantic_cache:\n  nope: 1\n")
    write("whatever.yaml", "version: '1'\n")
    assert main(["policy", "check", str(policies)]) == 1
    # An unusable file stops the merge (it would blame the others); each file is still
    # checked on its own.
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{policies}/tenant.acme.yaml:2: semantic_cache.nope: Extra inputs are not permitted"
    )
    assert out[1].startswith(f"{policies}/whatever.yaml: cannot tell what this file applies to")
    assert out[2] == "failed: 2 problems in 2 files"

    (policies / "whatever.yaml").unlink()
    assert main(["policy", "check", str(policies)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{policies}/default.yaml:3: exact_cache.ttl_seconds: "
        "Input should be greater than or equal to 1",
        f"{policies}/tenant.acme.yaml:2: semantic_cache.nope: Extra inputs are not permitted",
        "failed: 2 problems in 2 files",
    ]


def test_single_file_is_merged_over_the_default_next_to_it(
    policies: Path, write: WriteFile, capsys: pytest.CaptureFixture[str]
) -> None:
    write("default.yaml", "semantic_cache: {accept_threshold: 0.8, review_min_similarity: 0.7}\n")
    override = write("tenant.acme.yaml", "semantic_cache: {accept_threshold: 0.75}\n")
    assert main(["policy", "check", str(override)]) == 0
    assert capsys.readouterr().out == f"ok: 1 file (merged over {policies}/default.yaml)\n"

    override.write_text("semantic_cache: {accept_threshold: 2}\n")
    assert main(["policy", "check", str(override)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{override}:1: semantic_cache.accept_threshold: Input should be less than or equal to 1"
    )


def test_missing_path_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "check", str(tmp_path / "nope")]) == 1
    assert "no such file or folder" in capsys.readouterr().out


def test_empty_folder_is_the_built_in_defaults(
    policies: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["policy", "check", str(policies)]) == 0
    assert capsys.readouterr().out == "ok: 0 files (built-in defaults)\n"


def test_shipped_policies_pass_as_a_command(policies: Path, write: WriteFile) -> None:
    root = Path(__file__).resolve().parents[3]
    ok = subprocess.run(
        [sys.executable, "-m", "gateway", "policy", "check"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ok.returncode, ok.stdout.startswith("ok: ")) == (0, True), ok.stdout + ok.stderr

    write("default.yaml", "version: [\n")
    bad = subprocess.run(
        [sys.executable, "-m", "gateway", "policy", "check", str(policies)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1
    assert bad.stdout.startswith(f"{policies}/default.yaml:2: not valid YAML")
