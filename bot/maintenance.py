"""The background loop of every process that runs workers (``serve`` and ``worker``).

Every ``maintenance_interval``: re-queue jobs whose worker died (lease expired) and queued jobs whose queue
message may be missing. At start-up and every ``redeliver_interval``: the redelivery sweep, run by one process
at a time (a lock in the journal). Hourly: prune old journal rows.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING

from .redeliver import redeliver_failed

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)


def recover_once(rt: Runtime) -> list[str]:
    ids = rt.store.recover(rt.tuning.stale_queued)
    for job_id in ids:
        rt.enqueue(job_id)
    if ids:
        log.info("recovery: %d job(s) sent to the queue again", len(ids))
    return ids


def redeliver_once(rt: Runtime) -> list[str]:
    if not rt.store.try_lock("redeliver", rt.worker_id, max(rt.tuning.redeliver_interval - 5, 1)):
        return []
    asked = asyncio.run(
        redeliver_failed(rt.github.app_client(), rt.store, window_hours=rt.tuning.redeliver_window_hours, max_attempts=rt.tuning.max_redeliveries)
    )
    rt.metrics.redeliveries.inc(len(asked))
    return asked


class Maintenance(threading.Thread):
    def __init__(self, rt: Runtime) -> None:
        super().__init__(name="accel-maintenance", daemon=True)
        self.rt = rt
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        next_redeliver = 0.0
        next_prune = 0.0
        while True:
            now = time.monotonic()
            for name, step in (("recovery", recover_once),):
                try:
                    step(self.rt)
                except Exception as exc:
                    log.warning("%s failed: %s", name, type(exc).__name__)
            if now >= next_redeliver:
                next_redeliver = now + self.rt.tuning.redeliver_interval
                try:
                    redeliver_once(self.rt)
                except Exception as exc:
                    log.warning("redelivery sweep failed: %s", type(exc).__name__)
            if now >= next_prune:
                next_prune = now + 3600
                try:
                    self.rt.store.prune()
                except Exception as exc:
                    log.warning("prune failed: %s", type(exc).__name__)
            if self._stop_event.wait(self.rt.tuning.maintenance_interval):
                return
