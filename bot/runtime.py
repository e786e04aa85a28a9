"""Everything one process of the service needs, wired from the settings: journal, queue, GitHub clients,
facts cache, metrics. ``serve`` and ``worker`` build one each; tests build several."""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from huey import Huey, RedisHuey, SqliteHuey

from checks.engine import DirFactsCache, FactsCache
from checks.source import Limits

from . import logsafe
from .facts_cache import RedisFactsCache, facts_cache_key
from .github import GitHubApp
from .metrics import Metrics
from .pacing import DEFAULT_INTERVAL, LocalPacer, Pacer, RedisPacer
from .retry import RetryPolicy
from .settings import Settings
from .store import JobStore, RedisStore, SqliteStore
from .tarball import DEFAULT_MAX_DOWNLOAD

log = logging.getLogger(__name__)

QUEUE_NAME = "accel-audit"


@dataclass(slots=True)
class Tuning:
    """Internal knobs (not settings): tests and the benchmark shorten the waits."""

    write_interval: float = DEFAULT_INTERVAL  # seconds between content-creating requests per installation
    lease: float = 60.0  # a running job's lease; renewed every lease/3 by its heartbeat
    busy_retry: float = 5.0  # a job whose PR is being audited by another worker waits this long
    stale_queued: float = 300.0  # a queued job with no run for this long is sent to the queue again
    maintenance_interval: float = 15.0
    redeliver_interval: float = 600.0
    redeliver_window_hours: float = 6.0
    max_redeliveries: int = 3
    max_download: int = DEFAULT_MAX_DOWNLOAD
    limits: Limits = field(default_factory=Limits)
    retry_base_delay: float = 1.0  # first backoff step for GitHub 5xx and timeouts
    max_job_attempts: int = 5
    job_retry_delay: float = 30.0  # first backoff step when a whole job fails transiently
    command_debounce: float = 60.0  # one /accel rescan (or fix) per pull request in this window
    redis_blocking: bool = True  # workers wait on BRPOP (tests drain the queue themselves)


@dataclass(slots=True)
class Runtime:
    settings: Settings
    tuning: Tuning
    store: JobStore
    huey: Huey
    github: GitHubApp
    facts_cache: FactsCache
    metrics: Metrics
    worker_id: str
    redis: Any = None
    tasks: dict[str, Any] = field(default_factory=dict)

    dispatcher: Dispatcher | None = None

    def dispatch(self, job_ids: list[str]) -> None:
        """Send journaled jobs to the queue in the background (the webhook answer does not wait for it)."""
        if self.dispatcher is None:
            self.dispatcher = Dispatcher(self)
        for job_id in job_ids:
            self.dispatcher.put(job_id)

    def enqueue(self, job_id: str, delay: float = 0.0) -> None:
        task = self.tasks["run_job"]
        if delay > 0:
            task.schedule(args=(job_id,), delay=delay)
        else:
            task(job_id)

    def queue_ok(self) -> bool:
        try:
            if self.redis is not None:
                return bool(self.huey.storage.conn.ping())
            self.huey.pending_count()
            return True
        except Exception:
            return False

    def close(self) -> None:
        if self.dispatcher is not None:
            self.dispatcher.close()
        self.store.close()
        try:
            self.huey.storage.close()
        except Exception:
            pass


class Dispatcher:
    """A thread that moves job IDs from the journal to huey. A job whose message is never sent (the process died
    first, or the queue was down) stays ``queued`` in the journal and the recovery sweep sends it."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._q: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="dispatcher", daemon=True)
        self._thread.start()

    def put(self, job_id: str) -> None:
        self._q.put(job_id)

    def join(self) -> None:
        """Wait until every job handed over so far has been sent (tests, shutdown)."""
        self._q.join()

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(10)

    def _acknowledge(self, job_id: str) -> None:
        from .fix_job import acknowledge

        job = self.rt.store.get(job_id)
        if job is not None:
            acknowledge(self.rt, job)

    def _run(self) -> None:
        while True:
            job_id = self._q.get()
            try:
                if job_id is None:
                    return
                self._acknowledge(job_id)
                self.rt.enqueue(job_id)
            except Exception as exc:
                log.warning("queue unavailable (%s): job %s left for the recovery sweep", type(exc).__name__, job_id)
            finally:
                self._q.task_done()


def build_runtime(
    settings: Settings,
    tuning: Tuning | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Runtime:
    """Wire a runtime; registers the huey task (see :mod:`bot.queue`)."""
    from .queue import register_tasks

    logsafe.install(settings.secrets)
    tuning = tuning or Tuning()
    metrics = Metrics()
    redis_client = None
    pacer: Pacer
    if settings.redis_url:
        import redis

        redis_client = redis.Redis.from_url(settings.redis_url)
        store: JobStore = RedisStore(settings.redis_url)
        huey: Huey = RedisHuey(QUEUE_NAME, url=settings.redis_url, results=False, blocking=tuning.redis_blocking, read_timeout=1)
        pacer = RedisPacer(redis_client, tuning.write_interval)
        cache: FactsCache = RedisFactsCache(redis_client, facts_cache_key(settings.private_key))
    else:
        data = Path(settings.data_dir)
        store = SqliteStore(data / "state.sqlite3")
        huey = SqliteHuey(QUEUE_NAME, filename=str(data / "queue.sqlite3"), results=False, fsync=False)  # the journal is the durable record
        pacer = LocalPacer(tuning.write_interval)
        cache = DirFactsCache(data / "facts", key=facts_cache_key(settings.private_key))
    retry = RetryPolicy(base_delay=tuning.retry_base_delay, on_error=metrics.github_error)
    gh = GitHubApp(settings, pacer, retry, transport=transport)
    worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    rt = Runtime(settings, tuning, store, huey, gh, cache, metrics, worker_id, redis_client)
    metrics.bind_queue(store.active_count, huey.pending_count)
    register_tasks(rt)
    return rt
