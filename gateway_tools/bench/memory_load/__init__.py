"""`benchmarks/memory_load.py`: memory work per request at scale (10,000 knowledge
items, 1,000 memories), both backends, and what it adds to cache hits. `scenario` (who
sends what), `corpus` (the generated texts), `fill` (the stores filled through the
APIs), `phases` (interleaved requests, stage timings from the decision records),
`report` (summaries, the markdown tables) and `run` (the driver)."""
