"""Writes to GitHub paced the way GitHub asks: content-creating requests one at a time, about 1 s apart.

GitHub's REST best practices: "If you're making a large number of POST, PATCH, PUT, or DELETE requests
for a single user or client ID, wait at least one second between each request", and avoid concurrent
requests. :class:`PacedThrottler` plugs into githubkit's ``throttler`` hook (it wraps every attempt,
retries included): reads go through a concurrency cap, writes are serialised per installation and
spaced by the pacer. :class:`LocalPacer` spaces writes within a process; :class:`RedisPacer` spaces
them across every worker sharing the Redis.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx
from githubkit.throttling import BaseThrottler

WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
DEFAULT_INTERVAL = 1.0


def is_content_write(request: httpx.Request) -> bool:
    """POST/PATCH/PUT/DELETE, except GraphQL queries (a POST that only reads)."""
    if request.method not in WRITE_METHODS:
        return False
    if request.url.path.endswith("/graphql"):
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            return True
        return "mutation" in str(body.get("query", ""))
    return True


class Pacer(Protocol):
    interval: float

    def reserve(self, key: str) -> float:
        """Reserve the next write slot for ``key``; return how long to wait before using it."""
        ...


class LocalPacer:
    def __init__(self, interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, key: str) -> float:
        with self._lock:
            now = self.clock()
            slot = max(now, self._next.get(key, 0.0))
            self._next[key] = slot + self.interval
            return slot - now


_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, nxt)
redis.call('SET', KEYS[1], tostring(slot + tonumber(ARGV[1])), 'PX', math.ceil((slot - now + tonumber(ARGV[1])) * 1000) + 1000)
return tostring(slot - now)
"""


class RedisPacer:
    """Slots reserved atomically on the Redis server's clock, shared by every worker process."""

    def __init__(self, redis_client: Any, interval: float = DEFAULT_INTERVAL, prefix: str = "accel:pace:") -> None:
        self.interval = interval
        self.prefix = prefix
        self._script = redis_client.register_script(_RESERVE)

    def reserve(self, key: str) -> float:
        return max(0.0, float(self._script(keys=[self.prefix + key], args=[repr(self.interval)])))


class PacedThrottler(BaseThrottler):
    """githubkit throttler: a concurrency cap for every request, serial paced writes per ``key``."""

    _locks: dict[str, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(
        self,
        key: str,
        pacer: Pacer,
        max_concurrency: int = 20,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Any] = anyio.sleep,
    ) -> None:
        self.key = key
        self.pacer = pacer
        self._sem = threading.BoundedSemaphore(max_concurrency)
        self._sleep = sleep
        self._async_sleep = async_sleep
        with self._locks_guard:  # one write lock per key in the process, whichever client asks
            self._write_lock = self._locks.setdefault(key, threading.Lock())

    @contextmanager
    def acquire(self, request: httpx.Request) -> Generator[None, Any, Any]:
        with self._sem:
            if not is_content_write(request):
                yield
                return
            with self._write_lock:
                wait = self.pacer.reserve(self.key)
                if wait > 0:
                    self._sleep(wait)
                yield

    @asynccontextmanager
    async def async_acquire(self, request: httpx.Request) -> AsyncGenerator[None, Any]:
        await anyio.to_thread.run_sync(self._sem.acquire)
        try:
            if not is_content_write(request):
                yield
                return
            await anyio.to_thread.run_sync(self._write_lock.acquire)
            try:
                wait = self.pacer.reserve(self.key)
                if wait > 0:
                    await self._async_sleep(wait)
                yield
            finally:
                self._write_lock.release()
        finally:
            self._sem.release()
