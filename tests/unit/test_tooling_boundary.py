"""The runtime package never imports the tooling (`gateway_tools`) while it loads.

`gateway eval` and `gateway bench` import the harness inside their command functions,
so serving never loads benchmark, evaluation or training code.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "gateway"
TOOLING = "gateway_tools"


def _load_time_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: everywhere but inside functions
    (module level, `if`/`try` blocks, class bodies)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            pending.append(child)


def _imported_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or ""] if node.level == 0 else []


def tooling_imports(source: str) -> list[str]:
    tree = ast.parse(source)
    return [
        f"line {node.lineno}: {name}"
        for node in sorted(_load_time_imports(tree), key=lambda node: node.lineno)
        for name in _imported_names(node)
        if name == TOOLING or name.startswith(f"{TOOLING}.")
    ]


def test_the_check_sees_load_time_imports_and_ignores_lazy_ones() -> None:
    source = (
        "import gateway_tools.bench\n"
        "if True:\n    from gateway_tools.evaluation import run\n"
        "class A:\n    from gateway_tools import training\n"
        "def lazy():\n    from gateway_tools.bench import run_benchmark\n"
        "import gateway_toolsmith\n"
    )
    assert tooling_imports(source) == [
        "line 1: gateway_tools.bench",
        "line 3: gateway_tools.evaluation",
        "line 5: gateway_tools",
    ]


def test_no_runtime_module_imports_the_tooling_at_load_time() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in sorted(RUNTIME.rglob("*.py"))
        if (found := tooling_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_importing_the_app_loads_no_tooling_module() -> None:
    probe = (
        "import sys, gateway.app, gateway.cli; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] == {TOOLING!r}))"
    )
    result = subprocess.run(  # this interpreter, a fixed program
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.strip() == "[]"
