"""The Redis backend, shared by replicas: redis-py (asyncio) for keys, TTLs, counters and
leases, RediSearch vector indexes through redisvl. Opened by `storage.redis.open`; nothing
outside `storage/redis/` imports these modules, so the Redis client loads only then."""
