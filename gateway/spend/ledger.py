"""This process's view of spend: what it recorded and has not written yet, and the
stored per-day totals of the tenants whose budgets it checks.

Recording is an in-memory add (`add`); a background task writes the rows to the store
every `flush_seconds`, one batch per interval, and a failed write stays pending and is
retried (the rest is written on shutdown). Budget reads (`tenant_spent`) are the stored
totals plus everything pending, so the next request sees a spend at once. On the
embedded backend (one process) the stored totals are read once per tenant and day and
then kept up to date by this process's own writes: exact. On Redis they are read again
once older than `refresh_seconds`, which is when other replicas' spend shows up.

Reads and writes of the store never overlap (one lock), so a row is counted either as
pending or as stored, never both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence

from gateway.spend.records import SpendRow
from gateway.storage.admin_protocols import SpendStore
from gateway.storage.protocols import StoreUnavailable

logger = logging.getLogger(__name__)

FailureHook = Callable[[str, str], None]  # (store, operation), e.g. metrics.store_failure


def _ignore(store: str, operation: str) -> None:
    return None


class SpendLedger:
    def __init__(
        self,
        store: SpendStore,
        *,
        shared: bool,
        refresh_seconds: float = 1.0,
        flush_seconds: float = 1.0,
        on_failure: FailureHook = _ignore,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._shared = shared
        self._refresh_seconds = refresh_seconds
        self._flush_seconds = flush_seconds
        self._on_failure = on_failure
        self._monotonic = monotonic
        self._lock = asyncio.Lock()
        self._pending: dict[tuple[str, str, str, str], SpendRow] = {}
        # (tenant, key, day) -> spent_usd: not in the store yet / being written / stored;
        # key "" is the whole tenant
        self._unwritten: dict[tuple[str, str, str], float] = {}
        self._writing: dict[tuple[str, str, str], float] = {}
        self._stored: dict[tuple[str, str, str], float] = {}
        # (tenant, key) -> when its stored totals were last read
        self._read_at: dict[tuple[str, str], float] = {}
        self._task: asyncio.Task[None] | None = None
        self._read_failing = False
        self._write_failing = False

    def add(self, row: SpendRow) -> None:
        """Notes a row; written to the store by the next flush."""
        known = self._pending.get(row.identity)
        self._pending[row.identity] = row if known is None else known.plus(row)
        if row.spent_usd:
            for key in ("", row.key):  # the tenant's total and the key's own
                scope = (row.tenant, key, row.day)
                self._unwritten[scope] = self._unwritten.get(scope, 0.0) + row.spent_usd

    async def tenant_spent(self, tenant: str, days: Sequence[str], key: str | None = None) -> float:
        """What `tenant` (or one `key` of it) spent on `days`: stored, plus recorded and
        not yet written."""
        who = (tenant, key or "")
        if self._must_read(who, days):
            async with self._lock:
                if self._must_read(who, days):
                    await self._read(who, days)
        return sum(
            self._stored.get((*who, day), 0.0)
            + self._writing.get((*who, day), 0.0)
            + self._unwritten.get((*who, day), 0.0)
            for day in days
        )

    def _must_read(self, who: tuple[str, str], days: Sequence[str]) -> bool:
        if any((*who, day) not in self._stored for day in days):
            return True
        read_at = self._read_at.get(who)
        return self._shared and (
            read_at is None or self._monotonic() - read_at >= self._refresh_seconds
        )

    async def _read(self, who: tuple[str, str], days: Sequence[str]) -> None:
        self._read_at[who] = self._monotonic()
        tenant, key = who
        try:
            found = await self.store.tenant_spent(tenant, days, key or None)
        except Exception:  # StoreUnavailable, or a reply this version cannot read
            # Fail open: the totals known so far (0 for days never read) plus what is
            # pending. Days never read are tried again on the next check (Redis's
            # circuit answers at once while it is open); known ones after the interval.
            self._on_failure("spend", "read")
            if not self._read_failing:  # one line per outage, not one per request
                logger.warning("spend store unavailable: budgets checked on known totals")
            self._read_failing = True
            return
        self._read_failing = False
        for day, spent in found.items():
            self._stored[(tenant, key, day)] = spent

    async def flush(self) -> None:
        """Writes every pending row now (what `/admin/spend` calls before it reads)."""
        async with self._lock:
            if not self._pending:
                return
            rows = list(self._pending.values())
            # Counted as being written until the store has them (budget reads go on).
            self._writing = self._unwritten
            self._pending, self._unwritten = {}, {}
            try:
                await self.store.add(rows)
            except StoreUnavailable:
                self._on_failure("spend", "add")
                if not self._write_failing:  # one line per outage
                    logger.warning("spend store unavailable: rows kept for the next flush")
                self._write_failing = True
                # Merged by (day, tenant, key, model): an outage grows no list.
                self._keep(rows)
                return
            except BaseException:  # cancelled at shutdown: the rows stay pending
                self._keep(rows)
                raise
            self._write_failing = False
            for scope, spent in self._writing.items():
                if scope in self._stored:
                    self._stored[scope] += spent
            self._writing = {}

    def _keep(self, rows: list[SpendRow]) -> None:
        self._writing = {}
        for row in rows:
            self.add(row)

    def start(self) -> None:
        self._task = asyncio.create_task(self._flush_loop(), name="spend-flush")

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self._flush_seconds)
            try:
                await self.flush()
            except Exception:  # never let the loop die; the rows stay pending
                logger.exception("spend flush failed")

    async def close(self) -> None:
        """Stops the loop and writes what is left."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()
