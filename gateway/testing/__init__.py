"""Tools for tests and benchmarks: a fake OpenAI-compatible upstream, an in-process fake
provider (`fake_provider`), the Redis runner, a threaded server."""
