"""OpenAI-compatible LLM gateway with safe caching, memory and per-tenant policies."""
