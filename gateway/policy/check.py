"""`gateway policy check [PATH]`: validate policy files offline, as the gateway would
load them, without starting it. Exit 0 if valid, 1 otherwise."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from gateway.policy.compile import SourceFile, compile_policy_files
from gateway.policy.errors import PolicyError, PolicyIssue
from gateway.policy.files import (
    DEFAULT_POLICY_FILE,
    DEFAULT_SCOPE,
    PolicyNameError,
    parse_policy_filename,
)
from gateway.policy.loader import load_policy_directory


def _read(path: Path) -> SourceFile:
    try:
        return SourceFile(path.name, str(path), path.read_bytes())
    except OSError as exc:
        issue = PolicyIssue(str(path), None, None, f"cannot read ({exc.strerror})")
        raise PolicyError([issue]) from None


def check_policies(path: Path) -> tuple[int, list[str]]:
    """(files checked, notes) for a policies folder or one file; `PolicyError` if
    invalid. One override file is merged over the `default.yaml` next to it, if any;
    check the folder to validate every combination of overrides."""
    if path.is_dir():
        policies = load_policy_directory(path, missing_ok=False)
        return len(policies.files), [] if policies.files else ["built-in defaults"]
    if not path.exists():
        raise PolicyError([PolicyIssue(str(path), None, None, "no such file or folder")])
    sources = [_read(path)]
    notes: list[str] = []
    try:
        scope = parse_policy_filename(path.name)
    except PolicyNameError:
        scope = DEFAULT_SCOPE  # compile_policy_files reports the name
    default = path.parent / DEFAULT_POLICY_FILE
    if scope != DEFAULT_SCOPE and default.is_file():
        sources.insert(0, _read(default))
        notes.append(f"merged over {default}")
    compile_policy_files(sources)
    return 1, notes


def run_check(path: Path, out: TextIO | None = None) -> int:
    """Print `ok: N files` or every problem (`file:line: field: message`); 0 or 1."""
    out = out if out is not None else sys.stdout
    try:
        count, notes = check_policies(path)
    except PolicyError as exc:
        for line in exc.messages:
            print(line, file=out)
        files = len({issue.file for issue in exc.issues})
        problems = len(exc.issues)
        print(
            f"failed: {problems} problem{'s' if problems != 1 else ''} "
            f"in {files} file{'s' if files != 1 else ''}",
            file=out,
        )
        return 1
    suffix = f" ({'; '.join(notes)})" if notes else ""
    print(f"ok: {count} file{'s' if count != 1 else ''}{suffix}", file=out)
    return 0
