"""Policies: a default plus per-tenant and per-model overrides, hot-reloaded.

Files in the policies folder (`policies_dir`, default `policies/`):

    default.yaml                          every request
    model.<model>.yaml                    requests for that model (`model_name`)
    tenant.<tenant>.yaml                  that tenant's requests
    tenant.<tenant>.model.<model>.yaml    that tenant's requests for that model

The file name alone says what a file applies to: `ls` shows every override, two files
can never claim the same scope, and a file holds nothing but policy fields. A name is
split at the first `.model.`, so model names may contain dots (`gpt-4.1`); names with
`/` cannot be written as a file name (give the deployment a plain `model_name`). Any
other `*.yaml`/`*.yml` file is an error, not ignored; hidden files and other
extensions are ignored.

Overrides are partial: each is merged over the layers below it, mappings key by key,
lists and scalars (and null) replacing. Precedence, most specific last and winning:
default < model < tenant < tenant + model. The merge of every combination is validated
with `Policy` (unknown keys are errors, in every file on its own too), and errors name
the file and line that set the value: `policies/tenant.acme.yaml:7:
semantic_cache.accept_threshold: Input should be less than or equal to 1`; a check across
fields of a merged section also names the merge, `(merged: default.yaml <
tenant.acme.yaml)`. A key written twice in one mapping is an error (`yaml.safe_load`
would silently keep the last). No file, or no folder at start-up: the built-in defaults.
Every (tenant, model) combination is merged and validated when loading (about 70 us
each), so `resolve()` is two set lookups and a dict lookup.

`PolicyStore.reload()` loads the whole folder again and swaps it in only if every file
is valid; otherwise the previous policies stay active and the errors are kept in
`status()`. `watch()` polls the folder (names, mtime_ns, sizes: works on every
filesystem and on volumes mounted into containers) and reloads once a change has
settled for one interval. A folder that disappears after start-up is a failed reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.policy.compile import (
    EMPTY_POLICY_SET,
    PolicySet,
    SourceFile,
    compile_policy_files,
    validate_standalone,
)
from gateway.policy.errors import PolicyError, PolicyIssue
from gateway.policy.files import (
    DEFAULT_POLICY_FILE,
    Signature,
    directory_signature,
    list_policy_files,
)
from gateway.policy.models import Policy
from gateway.yamlfile import YamlFileError, read_yaml_document

__all__ = [
    "DEFAULT_POLICY_FILE",
    "PolicyError",
    "PolicyStore",
    "ReloadResult",
    "load_policy_directory",
    "load_policy_file",
    "stop_watching",
]

logger = logging.getLogger(__name__)

BUILT_IN = "built-in defaults"


def load_policy_file(path: Path) -> Policy:
    """One complete policy file of any name, over the built-in defaults (no overrides)."""
    try:
        document = read_yaml_document(path, "policy")
    except YamlFileError as exc:
        raise PolicyError([PolicyIssue(str(path), exc.line, None, exc.reason)]) from None
    return validate_standalone(str(path), document)


def _read_sources(directory: Path, names: list[str]) -> tuple[list[SourceFile], list[PolicyIssue]]:
    sources: list[SourceFile] = []
    issues: list[PolicyIssue] = []
    for name in names:
        path = directory / name
        try:
            sources.append(SourceFile(name, str(path), path.read_bytes()))
        except OSError as exc:
            issues.append(PolicyIssue(str(path), None, None, f"cannot read ({exc.strerror})"))
    return sources, issues


def load_policy_directory(directory: Path, *, missing_ok: bool = True) -> PolicySet:
    """Every policy file in `directory`, merged and validated. A missing folder is the
    built-in defaults when `missing_ok`; `PolicyError` lists every problem."""
    if not directory.exists():
        if missing_ok:
            return EMPTY_POLICY_SET
        raise PolicyError([PolicyIssue(str(directory), None, None, "folder not found")])
    if not directory.is_dir():
        raise PolicyError([PolicyIssue(str(directory), None, None, "not a folder")])
    try:
        names = list_policy_files(directory)
    except OSError as exc:
        raise PolicyError(
            [PolicyIssue(str(directory), None, None, f"cannot list the folder ({exc.strerror})")]
        ) from None
    sources, issues = _read_sources(directory, names)
    if issues:
        raise PolicyError(issues)
    return compile_policy_files(sources)


@dataclass(frozen=True)
class ReloadResult:
    """What one `reload()` did. On failure nothing changed and `errors` says why."""

    ok: bool
    at: float
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.modified)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "at": _iso(self.at),
            "added": list(self.added),
            "removed": list(self.removed),
            "modified": list(self.modified),
            "errors": list(self.errors),
        }


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat().replace("+00:00", "Z")


Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class _Active:
    """What is in force, swapped in whole: the policies and when each file came in."""

    policies: PolicySet
    loaded_at: float
    file_loaded_at: Mapping[str, float]


class PolicyStore:
    """The active policies, resolved per (tenant, model), reloadable while serving.

    `resolve()` reads one immutable snapshot (replaced by a single assignment on a
    successful `reload()`), so it needs no lock. `reload()` is serialised by a lock and
    may run in a worker thread, as `watch()` runs it.
    """

    def __init__(
        self,
        directory: Path,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.directory = Path(directory)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        signature = directory_signature(self.directory)
        # Start-up fails loudly: PolicyError propagates.
        policies = load_policy_directory(self.directory)
        now = clock()
        self._active = _Active(policies, now, {f.name: now for f in policies.files})
        self._attempted: Signature = signature
        self._last_reload_at: float | None = None
        self._last_errors: tuple[str, ...] | None = None
        self.reloads_total = 0  # reload() calls, failed ones included (not the first load)
        self.reload_errors_total = 0

    @classmethod
    def from_directory(
        cls,
        directory: Path,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> PolicyStore:
        """Load `directory` (missing: built-in defaults); `PolicyError` if invalid."""
        return cls(directory, clock=clock, sleep=sleep)

    @property
    def source(self) -> str:
        """Where the active policies come from, for logs and `/readyz`."""
        return str(self.directory) if self._active.policies.files else BUILT_IN

    @property
    def policies(self) -> PolicySet:
        """The active set (immutable)."""
        return self._active.policies

    def resolve(self, tenant: str, model: str) -> Policy:
        """The policy for one request: most specific override wins (see module doc)."""
        return self._active.policies.resolve(tenant, model)

    def reload(self) -> ReloadResult:
        """Load the folder again; swap it in only if every file is valid."""
        with self._lock:
            now = self._clock()
            signature = directory_signature(self.directory)
            self._attempted = signature
            self._last_reload_at = now
            self.reloads_total += 1
            previous = self._active
            try:
                if signature is None and previous.policies.files:
                    # A volume that went away must not silently drop every override.
                    raise PolicyError(
                        [PolicyIssue(str(self.directory), None, None, "folder not found")]
                    )
                policies = load_policy_directory(self.directory)
            except PolicyError as exc:
                return self._failed(now, tuple(exc.messages))
            except Exception as exc:  # never let a reload take the watcher down
                logger.exception("policy reload failed unexpectedly")
                return self._failed(
                    now, (f"{self.directory}: unexpected error ({type(exc).__name__})",)
                )
            old = {f.name: f.sha256 for f in previous.policies.files}
            fresh = {f.name: f.sha256 for f in policies.files}
            result = ReloadResult(
                ok=True,
                at=now,
                added=tuple(sorted(fresh.keys() - old.keys())),
                removed=tuple(sorted(old.keys() - fresh.keys())),
                modified=tuple(sorted(n for n in fresh.keys() & old.keys() if fresh[n] != old[n])),
            )
            self._active = _Active(  # the swap: one reference assignment
                policies,
                now if result.changed else previous.loaded_at,
                {
                    name: previous.file_loaded_at[name] if old.get(name) == digest else now
                    for name, digest in fresh.items()
                },
            )
            self._last_errors = None
        if result.changed:
            logger.info(
                "policies reloaded from %s: added %s, modified %s, removed %s",
                self.directory,
                list(result.added),
                list(result.modified),
                list(result.removed),
            )
        return result

    def _failed(self, now: float, errors: tuple[str, ...]) -> ReloadResult:
        self.reload_errors_total += 1
        self._last_errors = errors
        logger.error(
            "policy reload failed; the previous policies stay active:\n  %s",
            "\n  ".join(errors),
        )
        return ReloadResult(ok=False, at=now, errors=errors)

    def status(self) -> dict[str, Any]:
        """JSON-ready: what is active, and how the reloads went."""
        active = self._active
        errors = self._last_errors
        return {
            "source": str(self.directory),
            "built_in_defaults": not active.policies.files,
            "loaded_at": _iso(active.loaded_at),
            "files": [
                {
                    "file": f.name,
                    "tenant": f.scope.tenant,
                    "model": f.scope.model,
                    # The version in force for this file's scope (it enters cache keys).
                    "version": active.policies.policy_for(f.scope).version,
                    "sha256": f.sha256,
                    "loaded_at": _iso(active.file_loaded_at[f.name]),
                }
                for f in active.policies.files
            ],
            "last_reload_at": _iso(self._last_reload_at),
            "last_error": list(errors) if errors is not None else None,
            "reloads": {
                "ok": self.reloads_total - self.reload_errors_total,
                "failed": self.reload_errors_total,
            },
        }

    async def watch(self, interval_seconds: float = 1.0) -> None:
        """Poll the folder every `interval_seconds` (names, mtime_ns, sizes); reload when
        it changed and then stayed the same for one more poll, so a file being written
        is not read half way. A change is picked up within two intervals. Runs until
        cancelled; file access happens in a worker thread."""
        if interval_seconds <= 0:
            raise ValueError("interval_seconds must be positive")
        previous = self._attempted
        while True:
            await self._sleep(interval_seconds)
            try:
                current = await asyncio.to_thread(directory_signature, self.directory)
                if current != self._attempted and current == previous:
                    await asyncio.to_thread(self.reload)
            except Exception:  # keep watching: the next poll may succeed
                logger.exception("policy watcher: poll failed")
                continue
            previous = current


async def stop_watching(task: asyncio.Task[None]) -> None:
    """Cancel a `watch()` task and wait for it to end."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
