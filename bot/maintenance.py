"""The background loop of every process that runs workers (``serve`` and ``worker``).

Every ``maintenance_interval``: re-queue jobs whose worker died (lease expired) and queued jobs whose queue
message may be missing. At every start-up and then every ``redeliver_interval``: the redelivery sweep.

The sweep's lock is held only while a sweep runs (released after it; its TTL bounds a sweep that died), and a
lock whose holder is dead (same host, its process gone, or this process's previous life under the same PID)
is taken over: an App restarted after an outage always sweeps, so a PR opened while it was down is recovered
through GitHub's delivery log. A start-up sweep that finds a live sweep running is tried again at the next
maintenance tick. Periodic sweeps are spaced across processes by a second, time-only record. Hourly: prune.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
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


SWEEP_LOCK = "redeliver-sweep"
PERIOD_LOCK = "redeliver-period"
SWEEP_TTL = 300.0  # a sweep that takes longer (its process died) stops holding the lock


def _holder_is_dead(owner: str) -> bool:
    """A lock owner ``host:pid:nonce`` of this host whose process is gone, or that is this process's previous life."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True  # our PID, another nonce: the process that held it before a restart
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _take_sweep_lock(rt: Runtime) -> bool:
    if rt.store.try_lock(SWEEP_LOCK, rt.worker_id, SWEEP_TTL):
        return True
    holder = rt.store.lock_owner(SWEEP_LOCK)
    if holder and holder != rt.worker_id and _holder_is_dead(holder):
        log.info("redelivery sweep lock held by a dead process (%s): taking it over", holder)
        rt.store.unlock(SWEEP_LOCK, holder)
        return rt.store.try_lock(SWEEP_LOCK, rt.worker_id, SWEEP_TTL)
    return False


def redeliver_once(rt: Runtime, startup: bool = False) -> list[str] | None:
    """One sweep; None when it did not run (another live process is sweeping, or swept less than an interval ago)."""
    if not startup and not rt.store.try_lock(PERIOD_LOCK, rt.worker_id, max(rt.tuning.redeliver_interval - 5, 1)):
        return None
    if not _take_sweep_lock(rt):
        return None
    try:
        asked = asyncio.run(
            redeliver_failed(rt.github.app_client(), rt.store, window_hours=rt.tuning.redeliver_window_hours,
                             max_attempts=rt.tuning.max_redeliveries)
        )
    finally:
        rt.store.unlock(SWEEP_LOCK, rt.worker_id)
    if startup:
        rt.store.try_lock(PERIOD_LOCK, rt.worker_id, max(rt.tuning.redeliver_interval - 5, 1))
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
        startup_done = False
        while True:
            now = time.monotonic()
            for name, step in (("recovery", recover_once),):
                try:
                    step(self.rt)
                except Exception as exc:
                    log.warning("%s failed: %s", name, type(exc).__name__)
            if not startup_done or now >= next_redeliver:
                try:
                    done = redeliver_once(self.rt, startup=not startup_done)
                except Exception as exc:  # GitHub down: the start-up sweep is tried again at the next tick
                    log.warning("redelivery sweep failed: %s", type(exc).__name__)
                    done = None
                if startup_done or done is not None:
                    startup_done = True
                    next_redeliver = now + self.rt.tuning.redeliver_interval
            if now >= next_prune:
                next_prune = now + 3600
                try:
                    self.rt.store.prune()
                except Exception as exc:
                    log.warning("prune failed: %s", type(exc).__name__)
            if self._stop_event.wait(self.rt.tuning.maintenance_interval):
                return
