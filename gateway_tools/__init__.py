"""The harness around the gateway: evaluation, benchmarks and training.

Nothing here is imported while serving: `gateway eval` and `gateway bench` import it
lazily, and the runtime package `gateway` never imports it.
"""
