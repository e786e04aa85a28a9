"""Parsed facts cached in Redis by file content hash (the engine's ``FactsCache`` protocol), shared by workers.

Entries are authenticated (:mod:`checks.cache`): sealed with a key derived from the App's private
key, which a Redis client does not have, and never unpickled unless the HMAC matches. A value
planted in Redis is a miss, not code run in the worker.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from checks.cache import open_entry, seal_entry
from checks.facts import FileFacts

DEFAULT_TTL = 14 * 86400


def facts_cache_key(private_key: str) -> bytes:
    """The cache's HMAC key: derived from the App's private key (PEM), so only the App can write entries it loads."""
    return hmac.new(private_key.encode(), b"accel-audit facts cache v1", hashlib.sha256).digest()


class RedisFactsCache:
    def __init__(self, redis_client: Any, key: bytes, prefix: str = "accel:facts:", ttl: int = DEFAULT_TTL) -> None:
        if len(key) < 16:
            raise ValueError("the facts cache key must be at least 16 bytes")
        self.redis = redis_client
        self.key = key
        self.prefix = prefix
        self.ttl = ttl

    def get(self, key: str) -> FileFacts | None:
        try:
            raw = self.redis.get(self.prefix + key)
        except Exception:  # the cache is an optimisation: a Redis hiccup re-parses the file
            return None
        return open_entry(raw, self.key)

    def put(self, key: str, value: FileFacts) -> None:
        try:
            self.redis.set(self.prefix + key, seal_entry(value, self.key), ex=self.ttl)
        except Exception:
            pass
