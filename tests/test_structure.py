"""The runtime package's size and import targets (issue 17, "Done when"), checked on the
source with `ast` (nothing is imported):

- no module over MAX_MODULE_LINES lines and no function over MAX_FUNCTION_LINES lines in
  `gateway/`, except those the README's "Layout" section lists with a reason (that list
  IS the allow-list: this test reads it, and fails on an entry that is no longer needed);
- no import cycle between `gateway`'s modules (module-level imports only: those under
  `if TYPE_CHECKING:` and inside functions run later or never, so they cannot cycle).

That importing `gateway.app` loads none of litellm, spaCy, redis and redisvl is checked
in tests/unit/storage/test_backend_imports.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gateway"
README = ROOT / "README.md"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

_LIST_START = "<!-- structure-exceptions"
_LIST_END = "<!-- /structure-exceptions -->"
# - `gateway/cli.py` (module): why      - `gateway/cli.py:build_parser` (function): why
_ENTRY = re.compile(r"^- `(?P<where>gateway/[^`]+)` \((?:module|function)\): (?P<why>\S.*)$")


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qualname = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield qualname, node
            yield from _functions(node, f"{qualname}.")
        else:
            yield from _functions(node, prefix)


def _oversized() -> set[str]:
    found: set[str] = set()
    for _, path in _modules():
        where = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > MAX_MODULE_LINES:
            found.add(where)
        for qualname, node in _functions(ast.parse(source)):
            assert node.end_lineno is not None
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                found.add(f"{where}:{qualname}")
    return found


def _readme_exceptions() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(_LIST_START)
    block = text[start : text.index(_LIST_END, start)].splitlines()[1:]
    entries: dict[str, str] = {}
    for line in block:
        if line.strip():
            match = _ENTRY.match(line)
            assert match, f"README structure exception not in the expected form: {line!r}"
            entries[match["where"]] = match["why"]
    return entries


def test_no_oversized_module_or_function_without_a_reason_in_the_readme() -> None:
    oversized = _oversized()
    listed = _readme_exceptions()
    unexplained = sorted(oversized - listed.keys())
    assert not unexplained, (
        f"over {MAX_MODULE_LINES} lines (module) or {MAX_FUNCTION_LINES} (function), "
        f"and not in README.md's Layout list of exceptions: {unexplained}"
    )
    stale = sorted(listed.keys() - oversized)
    assert not stale, f"README.md lists exceptions that are within the limits now: {stale}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                pending.extend(node.body)
            pending.extend(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                pending.extend(block)
            for handler in node.handlers:
                pending.extend(handler.body)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            pending.extend(node.body)


def _import_graph() -> dict[str, set[str]]:
    modules = dict(_modules())
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from package import module` imports the module; else the names live
                # in `base` itself.
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_gateway_modules() -> None:
    graph = _import_graph()
    assert "gateway.wiring" in graph["gateway.app"]  # the graph sees real imports
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
