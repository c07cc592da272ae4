"""Hot reload: all or nothing, errors kept in status(), counters, and the polling watcher."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.policy.errors import PolicyError
from gateway.policy.loader import PolicyStore, stop_watching

from .conftest import WriteFile


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def test_start_up_with_an_invalid_file_fails_loudly(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "exact_cache:\n  ttl_seconds: 0\n")
    with pytest.raises(PolicyError, match=r"default\.yaml:2: exact_cache\.ttl_seconds"):
        PolicyStore.from_directory(policies)


def test_broken_edit_keeps_the_previous_policies(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    write("tenant.acme.yaml", "version: acme-1\n")
    clock = FakeClock()
    store = PolicyStore.from_directory(policies, clock=clock)

    # One good file and one bad file: nothing of the new set is applied.
    write("default.yaml", "version: '2'\n")
    write("tenant.acme.yaml", "version: acme-2\nsemantic_cache:\n  top_k: 500\n")
    clock.now += 60
    result = store.reload()

    assert not result.ok and not result.changed
    assert result.errors == (
        f"{policies}/tenant.acme.yaml:3: semantic_cache.top_k: "
        "Input should be less than or equal to 50",
    )
    assert store.resolve("acme", "m").version == "acme-1"
    assert store.resolve("globex", "m").version == "1"
    assert (store.reloads_total, store.reload_errors_total) == (1, 1)
    status = store.status()
    assert status["last_error"] == list(result.errors)
    assert status["reloads"] == {"ok": 0, "failed": 1}
    assert status["last_reload_at"] == "2027-01-15T08:01:00Z"
    assert status["loaded_at"] == "2027-01-15T08:00:00Z"  # still the first load

    # Fixed: applied, and the error is cleared.
    write("tenant.acme.yaml", "version: acme-2\nsemantic_cache:\n  top_k: 5\n")
    clock.now += 60
    result = store.reload()
    assert result.ok and result.errors == ()
    assert result.modified == ("default.yaml", "tenant.acme.yaml")
    assert store.resolve("acme", "m").version == "acme-2"
    assert store.resolve("globex", "m").version == "2"
    assert (store.reloads_total, store.reload_errors_total) == (2, 1)
    status = store.status()
    assert status["last_error"] is None
    assert status["reloads"] == {"ok": 1, "failed": 1}
    assert status["loaded_at"] == "2027-01-15T08:02:00Z"


def test_status_is_json_ready_and_describes_the_active_files(
    policies: Path, write: WriteFile
) -> None:
    default = write("default.yaml", "version: '4'\n")
    write("tenant.acme.model.gpt-4o.yaml", "version: acme-gpt\n")
    clock = FakeClock()
    store = PolicyStore.from_directory(policies, clock=clock)
    status = json.loads(json.dumps(store.status()))
    assert status["source"] == str(policies)
    assert status["built_in_defaults"] is False
    assert status["last_error"] is None and status["last_reload_at"] is None
    assert status["files"] == [
        {
            "file": "default.yaml",
            "tenant": None,
            "model": None,
            "version": "4",
            "sha256": hashlib.sha256(default.read_bytes()).hexdigest(),
            "loaded_at": "2027-01-15T08:00:00Z",
        },
        {
            "file": "tenant.acme.model.gpt-4o.yaml",
            "tenant": "acme",
            "model": "gpt-4o",
            "version": "acme-gpt",
            "sha256": status["files"][1]["sha256"],
            "loaded_at": "2027-01-15T08:00:00Z",
        },
    ]
    # An unchanged file keeps the time it came in; an added one gets the reload's time.
    clock.now += 5
    write("model.gpt-4o.yaml", "version: gpt\n")
    assert store.reload().added == ("model.gpt-4o.yaml",)
    loaded = {f["file"]: f["loaded_at"] for f in store.status()["files"]}
    assert loaded == {
        "default.yaml": "2027-01-15T08:00:00Z",
        "model.gpt-4o.yaml": "2027-01-15T08:00:05Z",
        "tenant.acme.model.gpt-4o.yaml": "2027-01-15T08:00:00Z",
    }


def test_reload_without_changes_changes_nothing(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    store = PolicyStore.from_directory(policies)
    result = store.reload()
    assert result.ok and not result.changed
    assert result.to_dict()["errors"] == []


def test_removing_an_override_falls_back(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '1'\n")
    override = write("tenant.acme.yaml", "version: acme\n")
    store = PolicyStore.from_directory(policies)
    override.unlink()
    assert store.reload().removed == ("tenant.acme.yaml",)
    assert store.resolve("acme", "m").version == "1"


def test_a_dangling_link_is_an_error_not_a_silent_removal(policies: Path, write: WriteFile) -> None:
    write("tenant.acme.yaml", "version: acme\n")
    store = PolicyStore.from_directory(policies)
    (policies / "tenant.acme.yaml").unlink()
    (policies / "tenant.acme.yaml").symlink_to(policies / "gone.yaml")
    result = store.reload()
    assert not result.ok
    assert result.errors[0].startswith(f"{policies}/tenant.acme.yaml: cannot read")
    assert store.resolve("acme", "m").version == "acme"


def test_a_vanished_folder_keeps_the_previous_policies(policies: Path, write: WriteFile) -> None:
    write("default.yaml", "version: '9'\n")
    store = PolicyStore.from_directory(policies)
    (policies / "default.yaml").unlink()
    policies.rmdir()
    result = store.reload()
    assert not result.ok and result.errors == (f"{policies}: folder not found",)
    assert store.resolve("acme", "m").version == "9"


async def _wait_for(condition: Callable[[], bool], within: float = 1.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return bool(condition())


async def test_watch_picks_up_an_edit_and_survives_a_broken_one(
    policies: Path, write: WriteFile
) -> None:
    write("default.yaml", "version: '1'\n")
    store = PolicyStore.from_directory(policies)
    task = asyncio.create_task(store.watch(interval_seconds=0.05))
    try:
        write("tenant.acme.yaml", "version: acme-2\n")
        assert await _wait_for(lambda: store.resolve("acme", "m").version == "acme-2")
        assert store.reloads_total == 1

        write("tenant.acme.yaml", "version: [broken\n")
        assert await _wait_for(lambda: store.reload_errors_total == 1)
        assert store.resolve("acme", "m").version == "acme-2"
        assert store.status()["last_error"][0].startswith(f"{policies}/tenant.acme.yaml:")

        # The same broken content is not retried on every poll.
        await asyncio.sleep(0.15)
        assert store.reloads_total == 2
    finally:
        await stop_watching(task)
    assert task.cancelled()


class SteppedSleep:
    """An injected `sleep` that returns only when the test says so."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._tokens: asyncio.Queue[None] = asyncio.Queue()
        self._sleeping = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        self._sleeping.set()
        await self._tokens.get()

    async def step(self) -> None:
        """Let one poll run, and wait until the watcher sleeps again."""
        await asyncio.wait_for(self._sleeping.wait(), 1.0)
        self._sleeping.clear()
        self._tokens.put_nowait(None)
        await asyncio.wait_for(self._sleeping.wait(), 1.0)


async def test_watch_waits_for_a_change_to_settle(policies: Path, write: WriteFile) -> None:
    path = write("default.yaml", "version: '1'\n")
    sleep = SteppedSleep()
    store = PolicyStore.from_directory(policies, sleep=sleep)
    task = asyncio.create_task(store.watch(interval_seconds=7.0))
    try:
        await sleep.step()  # nothing changed
        path.write_text("version: '2'\n")
        os.utime(path, ns=(1, 1))  # same size: the mtime tells
        await sleep.step()  # first sight of the change: it may still be being written
        assert store.resolve("a", "m").version == "1"
        await sleep.step()  # unchanged since: reloaded
        assert store.resolve("a", "m").version == "2"
        await sleep.step()
        assert store.reloads_total == 1
        assert set(sleep.seconds) == {7.0}
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_watch_rejects_a_non_positive_interval(tmp_path: Path) -> None:
    store = PolicyStore.from_directory(tmp_path)
    with pytest.raises(ValueError, match="interval_seconds"):
        await store.watch(interval_seconds=0)
