"""Read a YAML file that must hold a mapping, with errors that name file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError


class YamlFileError(Exception):
    """The file is missing, unreadable, not YAML, or not a mapping."""


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlFileError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read {what} file ({exc.strerror})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise YamlFileError(f"{path}: not valid YAML{where}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise YamlFileError(f"{path}: the top level must be a mapping")
    return raw


def describe_validation_error(error: ValidationError) -> list[str]:
    """One `dotted.field: message` line per problem; never echoes input values."""
    return [
        f"{'.'.join(str(part) for part in item['loc']) or '(top level)'}: {item['msg']}"
        for item in error.errors()
    ]
