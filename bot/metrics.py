"""Prometheus metrics of one process (own registry, so several runtimes can live in one test process)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.deliveries = Counter("accel_webhook_deliveries", "Webhook deliveries by event and outcome", ["event", "outcome"], registry=r)
        self.ack_seconds = Histogram(
            "accel_webhook_ack_seconds", "Time to answer a webhook delivery", registry=r,
            buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
        )
        self.queue_depth = Gauge("accel_queue_depth", "Jobs queued or running (the durable journal)", registry=r)
        self.queue_pending = Gauge("accel_queue_pending_messages", "Messages waiting in the huey queue", registry=r)
        self.audit_seconds = Histogram(
            "accel_audit_duration_seconds", "Duration of a pull request audit job", registry=r,
            buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200),
        )
        self.jobs = Counter("accel_jobs", "Jobs finished by kind and outcome", ["kind", "outcome"], registry=r)
        self.github_errors = Counter("accel_github_api_errors", "GitHub API errors by status or kind", ["kind"], registry=r)
        self.redeliveries = Counter("accel_redeliveries_requested", "Failed deliveries GitHub was asked to redeliver", registry=r)

    def bind_queue(self, depth: Callable[[], int], pending: Callable[[], int]) -> None:
        self.queue_depth.set_function(lambda: float(_safe(depth)))
        self.queue_pending.set_function(lambda: float(_safe(pending)))

    def github_error(self, kind: str) -> None:
        self.github_errors.labels(kind).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _safe(fn: Callable[[], int]) -> int:
    try:
        return fn()
    except Exception:
        return -1
