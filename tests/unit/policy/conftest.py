"""Policy folders written in a temporary directory."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

WriteFile = Callable[[str, str], Path]


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    return folder


@pytest.fixture
def write(policies: Path) -> WriteFile:
    """write("tenant.acme.yaml", yaml_text): dedented, into the policies folder."""

    def _write(name: str, text: str) -> Path:
        path = policies / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write
