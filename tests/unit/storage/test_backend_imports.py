"""The Redis client is loaded only when the Redis backend is opened: importing the app,
the pipeline or the storage package must not pull it in (nor litellm, spaCy, redisvl)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.settings import StorageSettings
from gateway.storage import open_storage

_ROOT = Path(__file__).resolve().parents[3]
_HEAVY = ("litellm", "spacy", "redis", "redisvl")


def _loaded_after(statement: str) -> list[str]:
    probe = (
        f"{statement}\nimport json, sys\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({_HEAVY!r}))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=_ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "statement",
    [
        "import gateway.app",
        "import gateway.pipeline.runner, gateway.pipeline.single_flight",
        "import gateway.storage, gateway.storage.protocols",
        "import gateway.api.memories, gateway.api.admin",
    ],
)
def test_importing_the_serving_path_loads_no_backend_or_provider_library(statement: str) -> None:
    assert _loaded_after(statement) == []


async def test_opening_the_embedded_backend_leaves_the_redis_modules_unloaded(
    tmp_path: Path,
) -> None:
    probe = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from gateway.settings import StorageSettings\n"
        "from gateway.storage import open_storage\n"
        "async def main():\n"
        f"    storage = await open_storage(StorageSettings(path=Path({str(tmp_path)!r})),"
        " 'e', 8)\n"
        "    await storage.close()\n"
        "asyncio.run(main())"
    )
    assert _loaded_after(probe) == []
    # And the same call in this process gives a working embedded storage.
    storage = await open_storage(StorageSettings(path=tmp_path), "e", 8)
    try:
        assert storage.backend == "embedded"
        assert (await storage.describe())["available"] is True
    finally:
        await storage.close()
