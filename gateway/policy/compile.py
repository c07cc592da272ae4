"""Turn the policy files of one folder into a resolved policy per (tenant, model).

Every file is parsed with line numbers, checked for unknown keys on its own, and merged
in precedence order (see `gateway/policy/loader.py`); every combination a request can
hit is validated with the `Policy` model up front, so a set that loads can always
resolve. Errors are mapped back to the file and line that set the offending value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from gateway.policy.errors import PolicyError, PolicyIssue
from gateway.policy.files import (
    DEFAULT_SCOPE,
    PolicyNameError,
    PolicyScope,
    parse_policy_filename,
)
from gateway.policy.models import Policy
from gateway.yamlfile import YamlDocument, YamlFileError, decode_utf8, parse_yaml_document

PolicyKey = tuple[str | None, str | None]
"""(tenant, model); None where no override file names one."""


class _Origin(NamedTuple):
    file: PolicyFile
    line: int | None


class _Branch(NamedTuple):
    """Who set one value of a merged document, and who set each value inside it."""

    origin: _Origin
    children: dict[object, _Branch] | None


_Tree = dict[object, _Branch]


@dataclass(frozen=True, eq=False)
class PolicyFile:
    """One parsed policy file."""

    name: str
    display: str  # the path as errors show it, e.g. policies/tenant.acme.yaml
    scope: PolicyScope
    sha256: str
    document: YamlDocument
    tree: _Tree = field(repr=False)


@dataclass(frozen=True)
class SourceFile:
    """A policy file's name, how errors show its path, and its bytes."""

    name: str
    display: str
    content: bytes


@dataclass(frozen=True)
class PolicySet:
    """Validated policies for every (tenant, model) combination the files describe."""

    files: tuple[PolicyFile, ...]
    tenants: frozenset[str]
    models: frozenset[str]
    policies: Mapping[PolicyKey, Policy]

    def resolve(self, tenant: str, model: str) -> Policy:
        """Two set lookups and a dict lookup: called on every request."""
        return self.policies[
            (
                tenant if tenant in self.tenants else None,
                model if model in self.models else None,
            )
        ]

    def policy_for(self, scope: PolicyScope) -> Policy:
        return self.policies[(scope.tenant, scope.model)]


EMPTY_POLICY_SET = PolicySet((), frozenset(), frozenset(), {(None, None): Policy()})


def _file_tree(value: object, path: tuple[object, ...], file: PolicyFile) -> _Tree | None:
    items: Iterable[tuple[object, object]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    tree: _Tree = {}
    for key, item in items:
        child = (*path, key)
        tree[key] = _Branch(
            _Origin(file, file.document.lines.get(child)), _file_tree(item, child, file)
        )
    return tree


def _overlay(
    base: dict[Any, Any], base_tree: _Tree, over: dict[Any, Any], over_tree: _Tree
) -> tuple[dict[Any, Any], _Tree]:
    """Deep merge: mappings merge key by key, anything else (lists, scalars, null)
    replaces. The tree follows, so every value still knows the file that set it."""
    data = dict(base)
    tree = dict(base_tree)
    for key, value in over.items():
        branch = over_tree[key]
        old = data.get(key)
        old_branch = tree.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            old_children = old_branch.children if old_branch and old_branch.children else {}
            data[key], children = _overlay(old, old_children, value, branch.children or {})
            tree[key] = _Branch(branch.origin, children)
        else:
            data[key] = value
            tree[key] = branch
    return data, tree


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` over `base`: mappings merge recursively, lists and scalars replace."""
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            merged[key] = deep_merge(old, value)
        else:
            merged[key] = value
    return merged


def _model_class(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _unknown_keys(
    data: Mapping[Any, Any], model: type[BaseModel], path: tuple[object, ...], file: PolicyFile
) -> list[PolicyIssue]:
    """A file on its own: every key must be a field of the policy schema."""
    issues: list[PolicyIssue] = []
    for key, value in data.items():
        child = (*path, key)
        if not isinstance(key, str):
            continue  # the model reports it ("Keys should be strings")
        info = model.model_fields.get(key)
        if info is None:
            issues.append(
                PolicyIssue(
                    file.display,
                    file.document.line_of(child),
                    _dotted(child),
                    # pydantic's own wording, so the merged check's report is the same line.
                    "Extra inputs are not permitted",
                )
            )
            continue
        submodel = _model_class(info.annotation)
        if submodel is not None and isinstance(value, dict):
            issues.extend(_unknown_keys(value, submodel, child, file))
    return issues


def _dotted(path: Sequence[object]) -> str:
    return ".".join(str(part) for part in path)


def _issue(error: ErrorDetails, tree: _Tree, layers: Sequence[PolicyFile]) -> PolicyIssue:
    loc = error["loc"]
    origin: _Origin | None = None
    current: _Tree | None = tree
    container = False
    for part in loc:
        branch = current.get(part) if current is not None else None
        if branch is None:
            container = False
            break
        origin = branch.origin
        current = branch.children
        container = current is not None
    message = error["msg"]
    if container and error["type"] == "value_error" and len(layers) > 1:
        # A check across fields of a merged section: name the merge it failed in.
        message += " (merged: " + " < ".join(layer.name for layer in layers) + ")"
    if origin is None:
        top = layers[-1]
        return PolicyIssue(top.display, None, _dotted(loc) or None, message)
    return PolicyIssue(origin.file.display, origin.line, _dotted(loc), message)


def _parse(source: SourceFile) -> tuple[PolicyFile | None, list[PolicyIssue]]:
    try:
        scope = parse_policy_filename(source.name)
    except PolicyNameError as exc:
        return None, [PolicyIssue(source.display, None, None, str(exc))]
    try:
        document = parse_yaml_document(decode_utf8(source.content, source.display), source.display)
    except YamlFileError as exc:
        return None, [PolicyIssue(source.display, exc.line, None, exc.reason)]
    file = _policy_file(
        source.name, source.display, scope, hashlib.sha256(source.content).hexdigest(), document
    )
    return file, _unknown_keys(document.data, Policy, (), file)


def _policy_file(
    name: str, display: str, scope: PolicyScope, sha256: str, document: YamlDocument
) -> PolicyFile:
    file = PolicyFile(name, display, scope, sha256, document, tree={})
    file.tree.update(_file_tree(document.data, (), file) or {})
    return file


def validate_standalone(display: str, document: YamlDocument) -> Policy:
    """One complete policy document over the built-in defaults, whatever its file name."""
    file = _policy_file(display, display, DEFAULT_SCOPE, "", document)
    issues: list[PolicyIssue] = []
    policy = _validate([file], issues)
    if policy is None:
        raise PolicyError(_unique_sorted(issues))
    return policy


def _validate(layers: Sequence[PolicyFile], issues: list[PolicyIssue]) -> Policy | None:
    data: dict[Any, Any] = {}
    tree: _Tree = {}
    for layer in layers:
        data, tree = _overlay(data, tree, layer.document.data, layer.tree)
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        issues.extend(_issue(error, tree, layers) for error in exc.errors())
        return None


def compile_policy_files(sources: Iterable[SourceFile]) -> PolicySet:
    """Parse, merge and validate; `PolicyError` lists every problem in every file."""
    issues: list[PolicyIssue] = []
    files: list[PolicyFile] = []
    unusable = False
    for source in sources:
        file, problems = _parse(source)
        issues.extend(problems)
        if file is None:
            unusable = True
        else:
            files.append(file)
    if unusable:
        # Merging what is left would blame the remaining files for the missing ones.
        raise PolicyError(_unique_sorted(issues))

    by_scope = {file.scope: file for file in files}
    tenants = frozenset(s.tenant for s in by_scope if s.tenant is not None)
    models = frozenset(s.model for s in by_scope if s.model is not None)
    policies: dict[PolicyKey, Policy] = {}
    for tenant in [None, *sorted(tenants)]:
        for model in [None, *sorted(models)]:
            scopes = (
                DEFAULT_SCOPE,
                PolicyScope(model=model) if model is not None else None,
                PolicyScope(tenant=tenant) if tenant is not None else None,
                PolicyScope(tenant, model) if tenant is not None and model is not None else None,
            )
            layers = [by_scope[s] for s in scopes if s is not None and s in by_scope]
            if not layers:
                policies[(tenant, model)] = Policy()
                continue
            policy = _validate(layers, issues)
            if policy is not None:
                policies[(tenant, model)] = policy
    if issues:
        raise PolicyError(_unique_sorted(issues))
    ordered = tuple(sorted(files, key=lambda f: (f.scope.rank, f.name)))
    return PolicySet(ordered, tenants, models, policies)


def _unique_sorted(issues: Iterable[PolicyIssue]) -> list[PolicyIssue]:
    return sorted(set(issues), key=PolicyIssue.sort_key)
