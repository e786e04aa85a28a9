"""The huey side: the one task (``run_job``) and the consumers that run it.

``serve`` runs a consumer in-process (threads beside uvicorn); ``accel-audit worker`` runs one on its own.
Either way huey only carries job IDs: the job itself is in the journal (:mod:`bot.store`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from huey.consumer import Consumer

from .runner import execute

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)


def register_tasks(rt: Runtime) -> None:
    @rt.huey.task(name="run_job")
    def run_job(job_id: str) -> None:
        execute(rt, job_id)

    rt.tasks["run_job"] = run_job


def make_consumer(rt: Runtime, workers: int) -> Consumer:
    return rt.huey.create_consumer(
        workers=workers,
        worker_type="thread",
        periodic=False,
        initial_delay=0.05,
        backoff=1.15,
        max_delay=1.0,
        check_worker_health=True,
    )


def start_in_process(consumer: Consumer) -> None:
    """Start the consumer's threads without its signal handlers (uvicorn owns the signals in ``serve``)."""
    consumer.scheduler.start()
    for _, thread in consumer.worker_threads:
        thread.start()


def stop_in_process(consumer: Consumer, timeout: float = 30.0) -> None:
    consumer.stop_flag.set()
    for _, thread in consumer.worker_threads:
        thread.join(timeout)
    consumer.scheduler.join(timeout)
