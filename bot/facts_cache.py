"""Parsed facts cached in Redis by file content hash (the engine's ``FactsCache`` protocol), shared by workers."""

from __future__ import annotations

import pickle
from typing import Any

from checks.facts import FileFacts

DEFAULT_TTL = 14 * 86400


class RedisFactsCache:
    def __init__(self, redis_client: Any, prefix: str = "accel:facts:", ttl: int = DEFAULT_TTL) -> None:
        self.redis = redis_client
        self.prefix = prefix
        self.ttl = ttl

    def get(self, key: str) -> FileFacts | None:
        try:
            raw = self.redis.get(self.prefix + key)
        except Exception:  # the cache is an optimisation: a Redis hiccup re-parses the file
            return None
        if raw is None:
            return None
        try:
            value = pickle.loads(raw)  # our own keys, written only by put()
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            return None
        return value if isinstance(value, FileFacts) else None

    def put(self, key: str, value: FileFacts) -> None:
        try:
            self.redis.set(self.prefix + key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), ex=self.ttl)
        except Exception:
            pass
