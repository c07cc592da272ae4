"""How long a policy edit takes to reach requests: edit a tenant override, poll
`PolicyStore.resolve` until it returns the new value, as the app's watcher runs it.

    python benchmarks/policy_reload.py --edits 5 --interval 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from gateway.policy.loader import PolicyStore, stop_watching


async def measure(edits: int, interval_seconds: float) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        (directory / "default.yaml").write_text('version: "1"\n')
        store = PolicyStore.from_directory(directory)
        watcher = asyncio.create_task(store.watch(interval_seconds=interval_seconds))
        await asyncio.sleep(interval_seconds * 1.5)
        samples = []
        try:
            for edit in range(edits):
                version = str(edit + 2)
                (directory / "tenant.acme.yaml").write_text(f'tool_schema_version: "{version}"\n')
                started = time.monotonic()
                # Polling is what is measured: how soon a request would see the edit.
                while store.resolve("acme", "any-model").tool_schema_version != version:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
                samples.append(time.monotonic() - started)
                await asyncio.sleep(interval_seconds * 0.3)
        finally:
            await stop_watching(watcher)
        return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--interval", type=float, default=1.0, help="policy_reload_seconds")
    args = parser.parse_args()
    samples = asyncio.run(measure(args.edits, args.interval))
    print("edit-to-effect seconds:", " ".join(f"{s:.2f}" for s in samples))
    print(f"median {statistics.median(samples):.2f} s, max {max(samples):.2f} s")


if __name__ == "__main__":
    main()
