"""Tools for tests and benchmarks: a fake OpenAI-compatible upstream, a threaded server."""
