"""Run one job from the queue: claim it in the journal, keep its lease alive, finish, retry or drop it."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from githubkit.exception import GitHubException

from .jobs import Superseded, report_failure, run_command, run_pr_audit
from .profile_job import run_profile
from .retry import MAX_JOB_DELAY, transient_delay
from .store import DIED_REPEATEDLY, Claim, Job

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)

HANDLERS = {"pr_audit": run_pr_audit, "command": run_command, "profile": run_profile}


class Heartbeat(threading.Thread):
    """Renews the job's lease every lease/3 seconds until stopped."""

    def __init__(self, rt: Runtime, job: Job) -> None:
        super().__init__(name=f"heartbeat-{job.id[:8]}", daemon=True)
        self.rt, self.job = rt, job
        self._stop_event = threading.Event()
        self.lost = False

    def run(self) -> None:
        while not self._stop_event.wait(self.rt.tuning.lease / 3):
            try:
                if not self.rt.store.heartbeat(self.job.id, self.rt.worker_id, self.rt.tuning.lease):
                    self.lost = True
                    log.warning("job %s: lease lost (taken over after a stall)", self.job.id)
                    return
            except Exception as exc:
                log.warning("job %s: heartbeat failed: %s", self.job.id, type(exc).__name__)

    def stop(self) -> None:
        self._stop_event.set()


def execute(rt: Runtime, job_id: str) -> str:
    """Run the job ``job_id`` if this worker can claim it; return what happened (for logs and tests)."""
    status, job = rt.store.claim(job_id, rt.worker_id, rt.tuning.lease)
    if status == Claim.BUSY:
        rt.enqueue(job_id, delay=rt.tuning.busy_retry)
        return "busy"
    if status != Claim.CLAIMED or job is None:
        return status
    if job.error == DIED_REPEATEDLY:  # the recovery sweep stopped retrying it: complete its check runs with the reason
        log.error("job %s (%s): its worker died %d times; giving up", job.id, job.kind, job.deaths)
        return _give_up(rt, job, f"the audit's worker died {job.deaths} times (killed, or out of memory)")
    handler = HANDLERS.get(job.kind)
    if handler is None:
        rt.store.finish(job.id, rt.worker_id, "failed", f"unknown job kind {job.kind!r}")
        return "failed"
    beat = Heartbeat(rt, job)
    beat.start()
    try:
        outcome = asyncio.run(handler(rt, job))
    except Superseded:
        rt.store.finish(job.id, rt.worker_id, "superseded")
        rt.metrics.jobs.labels(job.kind, "superseded").inc()
        return "superseded"
    except Exception as exc:
        delay = transient_delay(exc, job.attempts, rt.tuning.job_retry_delay)
        reason = _describe(exc)
        if delay is not None and within_budget(rt, job.attempts):
            rt.store.release(job.id, rt.worker_id, delay, reason)
            rt.enqueue(job.id, delay=delay)
            rt.metrics.jobs.labels(job.kind, "retry").inc()
            log.warning("job %s (%s) will retry in %.0f s: %s", job.id, job.kind, delay, reason)
            return "retry"
        log.error("job %s (%s) failed: %s", job.id, job.kind, reason, exc_info=not isinstance(exc, GitHubException))
        return _give_up(rt, job, reason)
    finally:
        beat.stop()
    rt.store.finish(job.id, rt.worker_id, "done")
    rt.metrics.jobs.labels(job.kind, outcome).inc()
    log.info("job %s (%s) %s", job.id, job.kind, outcome)
    return outcome


def retry_budget(rt: Runtime) -> float:
    return rt.settings.github_retry_hours * 3600.0


def waited(rt: Runtime, attempts: int) -> float:
    """The seconds a job has waited between its runs after ``attempts`` transient failures (backoff schedule)."""
    return sum(min(rt.tuning.job_retry_delay * (2**i), MAX_JOB_DELAY) for i in range(attempts))


def within_budget(rt: Runtime, attempts: int) -> bool:
    """A transient failure (GitHub 5xx, timeouts, rate limits) is retried for ``github_retry_hours``, not a few tries:
    GitHub does not redeliver an acknowledged delivery, so giving up after an outage loses the audit."""
    return waited(rt, attempts) < retry_budget(rt)


def _give_up(rt: Runtime, job: Job, reason: str) -> str:
    """Complete the job's check runs with the reason; while GitHub cannot be told, keep the job and try again."""
    try:
        told = asyncio.run(report_failure(rt, job, reason))
    except Exception as exc:
        log.warning("job %s: reporting the failure failed: %s", job.id, type(exc).__name__)
        told = False
    if not told and within_budget(rt, job.attempts):
        delay = min(rt.tuning.job_retry_delay * (2**job.attempts), MAX_JOB_DELAY)
        rt.store.release(job.id, rt.worker_id, delay, reason)
        rt.enqueue(job.id, delay=delay)
        rt.metrics.jobs.labels(job.kind, "retry").inc()
        return "retry"
    rt.store.finish(job.id, rt.worker_id, "failed", reason)
    rt.metrics.jobs.labels(job.kind, "failed").inc()
    return "failed"


def _describe(exc: BaseException) -> str:
    """A short reason without secrets: the exception type and, for HTTP errors, the method, path and status."""
    response = getattr(exc, "response", None)
    request = getattr(exc, "request", None)
    if response is not None and request is not None:
        code = getattr(response, "status_code", "?")
        return f"GitHub answered {code} to {request.method} {request.url.path}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"
