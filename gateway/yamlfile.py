"""Read a YAML file that must hold a mapping, with errors that name file and line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gateway.errors import GatewayInternalError


class YamlFileError(GatewayInternalError):
    """The file is missing, unreadable, not YAML, or not a mapping.

    `line` (1-based) is set where the problem has one; `reason` is the message without
    the file and line prefix."""

    def __init__(self, message: str, *, line: int | None = None, reason: str | None = None):
        super().__init__(message)
        self.line = line
        self.reason = reason if reason is not None else message


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


# --- Node-aware loading: the data `yaml.safe_load` returns, plus each key's line. ---

YamlPath = tuple[object, ...]
"""Where a value sits in a document: mapping keys and sequence indices, from the top."""

MAX_DOCUMENT_NODES = 100_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TOO_DEEP = "the document is nested too deeply"


@dataclass(frozen=True)
class YamlDocument:
    """A YAML mapping and, for every mapping key and sequence item in it, its line.

    `lines[("semantic_cache", "accept_threshold")]` is the 1-based line of the
    `accept_threshold:` key; `lines[("cacheable_finish_reasons", 0)]` that of the first
    item. Keys are the constructed values, as in `data`.
    """

    data: dict[str, Any]
    lines: Mapping[YamlPath, int]

    def line_of(self, path: YamlPath) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


class _LineLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` (same tags, same values) that also records where each mapping key
    and sequence item starts, and refuses a key written twice in one mapping."""

    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self.source = source
        self.map_lines: dict[int, dict[object, int]] = {}
        self.seq_lines: dict[int, list[int]] = {}
        # Keeps every recorded container alive, so no `id()` is reused during a load.
        self.containers: list[object] = []

    def check_duplicate_keys(self, node: yaml.MappingNode) -> None:
        seen: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue
            ident = (key_node.tag, str(key_node.value))
            line = key_node.start_mark.line + 1
            if ident in seen:
                # yaml.safe_load keeps the last silently; a policy must not lose half a
                # section that way. The key itself is not echoed: the line finds it.
                reason = f"duplicate key (first at line {seen[ident]})"
                raise YamlFileError(f"{self.source}:{line}: {reason}", line=line, reason=reason)
            seen[ident] = line

    def construct_line_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        data: dict[Any, Any] = {}
        self.containers.append(data)
        yield data
        self.check_duplicate_keys(node)
        data.update(self.construct_mapping(node))
        # construct_mapping flattened `<<` merges into node.value; later pairs win.
        self.map_lines[id(data)] = {
            self.construct_object(key_node): key_node.start_mark.line + 1
            for key_node, _ in node.value
        }

    def construct_line_seq(self, node: yaml.SequenceNode) -> Iterator[list[Any]]:
        data: list[Any] = []
        self.containers.append(data)
        self.seq_lines[id(data)] = [item.start_mark.line + 1 for item in node.value]
        yield data
        data.extend(self.construct_sequence(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_line_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_line_seq)


def _yaml_error(source: str, exc: yaml.YAMLError) -> YamlFileError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or "syntax error"
    if mark is None:
        return YamlFileError(f"{source}: not valid YAML: {problem}", reason=problem)
    line = mark.line + 1
    reason = f"not valid YAML (column {mark.column + 1}): {problem}"
    return YamlFileError(f"{source}:{line}: {reason}", line=line, reason=reason)


def parse_yaml_document(text: str, source: str) -> YamlDocument:
    """Parse `text` (named `source` in errors) as `yaml.safe_load` would; the top level
    must be a mapping (an empty document is `{}`). Errors carry the line, never values."""
    loader = _LineLoader(text, source)
    try:
        raw = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise _yaml_error(source, exc) from None
    except RecursionError:
        raise YamlFileError(f"{source}: {_TOO_DEEP}", reason=_TOO_DEEP) from None
    finally:
        loader.dispose()
    if raw is None:
        return YamlDocument({}, {})
    if not isinstance(raw, dict):
        reason = "the top level must be a mapping"
        raise YamlFileError(f"{source}:1: {reason}", line=1, reason=reason)
    lines: dict[YamlPath, int] = {}
    budget = [MAX_DOCUMENT_NODES]

    def walk(value: object, path: YamlPath, parents: frozenset[int]) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            reason = "the document expands to too many values (aliases)"
            raise YamlFileError(f"{source}: {reason}", reason=reason)
        if not isinstance(value, dict | list):
            return
        if id(value) in parents:
            line = YamlDocument(raw, lines).line_of(path)
            reason = "recursive alias"
            where = f"{source}:{line}" if line else source
            raise YamlFileError(f"{where}: {reason}", line=line, reason=reason)
        inner = parents | {id(value)}
        if isinstance(value, dict):
            key_lines = loader.map_lines.get(id(value), {})
            for key, item in value.items():
                child = (*path, key)
                if key in key_lines:
                    lines[child] = key_lines[key]
                walk(item, child, inner)
        else:
            item_lines = loader.seq_lines.get(id(value), [])
            for index, item in enumerate(value):
                child = (*path, index)
                if index < len(item_lines):
                    lines[child] = item_lines[index]
                walk(item, child, inner)

    try:
        walk(raw, (), frozenset())
    except RecursionError:
        raise YamlFileError(f"{source}: {_TOO_DEEP}", reason=_TOO_DEEP) from None
    return YamlDocument(raw, lines)


def read_yaml_document(path: Path, what: str) -> YamlDocument:
    """`parse_yaml_document` of the file at `path` (UTF-8)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise YamlFileError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read {what} file ({exc.strerror})") from None
    return parse_yaml_document(decode_utf8(data, str(path)), str(path))


def decode_utf8(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        reason = "not valid UTF-8"
        raise YamlFileError(f"{source}:{line}: {reason}", line=line, reason=reason) from None
