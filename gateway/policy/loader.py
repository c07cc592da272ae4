"""Load and validate policy files (`yaml.safe_load`, errors name file and field)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from gateway.policy.models import Policy
from gateway.yamlfile import YamlFileError, describe_validation_error, read_yaml_mapping

DEFAULT_POLICY_FILE = "default.yaml"


class PolicyError(Exception):
    """A policy file is invalid; the message names the file, line and field."""


def load_policy_file(path: Path) -> Policy:
    try:
        raw = read_yaml_mapping(path, "policy")
    except YamlFileError as exc:
        raise PolicyError(str(exc)) from None
    try:
        return Policy.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(describe_validation_error(exc))
        raise PolicyError(f"{path}: invalid policy: {details}") from None


class PolicyStore:
    """Holds the active policies. This issue: one default policy for every request."""

    def __init__(self, default: Policy, source: str) -> None:
        self._default = default
        self.source = source

    @classmethod
    def from_directory(cls, directory: Path) -> PolicyStore:
        path = directory / DEFAULT_POLICY_FILE
        if not path.exists():
            return cls(Policy(), source="built-in defaults")
        return cls(load_policy_file(path), source=str(path))

    def resolve(self, tenant: str, model: str) -> Policy:
        return self._default
