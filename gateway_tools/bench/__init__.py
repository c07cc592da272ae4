"""The benchmark harness: `gateway bench` and the scripts in `benchmarks/`.

One of each part, shared by every benchmark: `prompts` (the prompt generator: miss
prompts, the primed questions and paraphrases of the load workloads), `http_client` (a
raw keep-alive HTTP/1.1 client), `processes` (the fake upstream, Redis and the gateway as
child processes, and their readiness), `measure` / `phases` / `openloop` (latency series,
closed-loop and open-loop phases), `procstats` (CPU and memory from /proc), `targets`
(the servers a load run compares) and `report` (the report writer).

`gateway bench`: cache-hit latency and miss overhead against a local fake upstream.

The fake upstream and the gateway each run in their own process, as in production, so
the load generator, the gateway and the upstream never share an event loop or a GIL.
Everything listens on 127.0.0.1 only; nothing leaves the machine.

Measured, in this order:

1. direct upstream vs gateway miss latency, interleaved request by request (direct,
   gateway, direct, ...) so both series see the same machine noise; every gateway miss
   takes the whole path (classifier, exact lookup, embedding, vector search, candidate
   check, upstream, store), see `MissPrompts`;
2. exact-hit latency: one primed prompt, then the identical request N times;
3. semantic-hit latency: one primed question, then a paraphrase of it N times, each
   served by the L2 semantic cache (`x-gateway-cache: semantic`);
4. throughput at concurrency 1 and 16, for exact hits, semantic hits and misses, each
   for a few seconds (or 25 x N requests, whichever comes first): at N requests a hit
   run would last a tenth of a second, too short for a stable rate;
5. per API (`--apis`, default all four: chat, completions, responses, messages; see
   `apis` and `api_compare`): misses, exact hits and exact-hit throughput at
   concurrency 16 through each API, the APIs taking turns within every round, each
   row with its difference to chat completions.

Storage backends (`--backend`): `embedded` (SQLite and in-process vectors, the default),
`redis` (a Redis 8 with RediSearch that the bench starts on loopback from the PyPI test
dependencies, see `gateway.testing.redis_server`, and stops at the end) or `both`: the
whole run above once per backend, one after the other (never at the same time, so they
do not share the CPUs), each with its own fresh upstream, gateway and store, and the same
miss prompts (the same seed); the results are then shown side by side. The Redis-backed
gateway keeps the production defaults (0.25 s per Redis operation); a Redis operation
that fails (a timeout opens the fail-open circuit) fails the run, since the numbers would
then describe the no-cache fallback, not Redis.

Every answer's `x-gateway-cache` is checked against the layer its phase measures; any
other layer (a miss prompt answered as `bypass` by the classifier, say) fails the run,
since the numbers would then describe another path than their label.

The load generator is a minimal HTTP/1.1 keep-alive client on raw asyncio streams.
Measured against the fake upstream, httpx.AsyncClient spends ~0.45 ms of client CPU per
request and adds ~0.35 ms to every latency, as much as the whole cache-hit path; on a
small machine that CPU is also taken from the servers. This client costs ~0.04 ms.
"""

from __future__ import annotations

from gateway_tools.bench.constants import (
    BACKEND_CHOICES,
    BACKENDS,
    BOTH,
    EMBEDDED,
    REDIS,
    BenchError,
)
from gateway_tools.bench.runner import run_benchmark

__all__ = [
    "BACKENDS",
    "BACKEND_CHOICES",
    "BOTH",
    "EMBEDDED",
    "REDIS",
    "BenchError",
    "run_benchmark",
]
