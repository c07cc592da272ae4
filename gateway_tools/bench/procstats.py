"""CPU seconds and resident memory of server processes, read from /proc (Linux).

psutil is not a dependency of the project (and not installed on the bench machine), and
it does not expose the kernel's peak-RSS counter (VmHWM) anyway, so everything here comes
from /proc directly:

- CPU: utime + stime of /proc/<pid>/stat (every thread of the process), in clock ticks;
- RSS: VmRSS of /proc/<pid>/status; peak: VmHWM, which the kernel resets to the current
  RSS when "5" is written to /proc/<pid>/clear_refs (Linux >= 4.0, owner or root). That
  reset gives a peak per benchmark phase instead of one since start-up, where loading
  the models dominates.

A server is measured with its descendants (a server that forks workers is counted whole);
a process that exits between two readings is skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024


def _stat_fields(pid: int) -> list[str]:
    """The fields after the command name; the name is in parentheses and may hold spaces."""
    raw = (PROC / str(pid) / "stat").read_text()
    return raw[raw.rindex(")") + 2 :].split()


def _parent_of(pid: int) -> int | None:
    try:
        return int(_stat_fields(pid)[1])
    except (OSError, ValueError, IndexError):
        return None


def _all_pids() -> list[int]:
    return [int(entry.name) for entry in PROC.iterdir() if entry.name.isdigit()]


def process_tree(pid: int) -> list[int]:
    """`pid` and every descendant alive now."""
    children: dict[int, list[int]] = {}
    for candidate in _all_pids():
        parent = _parent_of(candidate)
        if parent is not None:
            children.setdefault(parent, []).append(candidate)
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending.extend(children.get(current, []))
    return tree


def cpu_seconds(pid: int) -> float:
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def status_kib(pid: int, key: str) -> int:
    """A `kB` line of /proc/<pid>/status (VmRSS, VmHWM); 0 when absent (a zombie)."""
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def reset_peak_rss(pid: int) -> bool:
    try:
        (PROC / str(pid) / "clear_refs").write_text("5")
    except OSError:
        return False
    return True


def machine_busy_seconds() -> float:
    """CPU seconds every process of the machine has used since boot (all cores): minus
    what the benchmark's own processes used, it shows other work competing for the CPUs
    during a phase (another test run, say), which the numbers alone would not."""
    fields = (PROC / "stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def child_pid_with(*tokens: str) -> int | None:
    """A child of this process whose command line holds every token (the Redis server,
    whose handle `gateway.testing.redis_server` keeps private)."""
    me = os.getpid()
    for pid in _all_pids():
        if _parent_of(pid) != me:
            continue
        try:
            argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [part.decode(errors="replace") for part in argv]
        if all(any(token in word for word in words) for token in tokens):
            return pid
    return None


@dataclass(frozen=True, slots=True)
class ProcessProbe:
    """One server process (and its descendants)."""

    name: str
    pid: int

    def _each(self) -> list[int]:
        return process_tree(self.pid)

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in self._each():
            try:
                total += cpu_seconds(pid)
            except (OSError, ValueError, IndexError):
                continue  # exited meanwhile
        return total

    def _sum_kib(self, key: str) -> int:
        total = 0
        for pid in self._each():
            try:
                total += status_kib(pid, key)
            except (OSError, ValueError):
                continue
        return total

    def rss_bytes(self) -> int:
        return self._sum_kib("VmRSS") * 1024

    def peak_rss_bytes(self) -> int:
        """Peak RSS since the last `reset_peak` (or since start): per process, summed."""
        return self._sum_kib("VmHWM") * 1024

    def reset_peak(self) -> bool:
        """True if every process's peak could be reset (else the peak is since start)."""
        return all([reset_peak_rss(pid) for pid in self._each()])
