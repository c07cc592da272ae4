"""Response caches: canonical keys, storage protocols and their implementations."""
