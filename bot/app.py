"""The HTTP side: ``POST /api/github/webhooks``, ``GET /healthz``, and ``GET /metrics`` behind a bearer token.

The webhook answer never waits for GitHub or an audit: read the body up to 25 MB while it streams (413 past
it, chunked or not), verify the signature on the raw body (401), parse (400, also for JSON nested too deep
to parse), route, record the delivery and its jobs in the journal in one atomic step, send the job IDs to
the queue, answer 202. A delivery already recorded answers 200 and does nothing.

``/metrics`` is not served on this port unless ``ACCEL_METRICS_TOKEN`` is set and the request carries it as
``Authorization: Bearer``; ``serve --metrics-port`` serves it on a port of its own (localhost by default).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from .events import route
from .metrics import CONTENT_TYPE_LATEST
from .signature import verify

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)

MAX_BODY = 25 * 1024 * 1024 + 64 * 1024  # GitHub caps payloads at 25 MB


def _parse(body: bytes, content_type: str) -> dict[str, Any]:
    if content_type.startswith("application/x-www-form-urlencoded"):
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        body = fields["payload"][0].encode("utf-8")
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("the payload is not a JSON object")
    return data


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The body as it streams in; None as soon as it passes ``limit`` (nothing more is read or kept)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def create_app(rt: Runtime) -> FastAPI:
    app = FastAPI(title="accel-audit", docs_url=None, redoc_url=None, openapi_url=None)
    metrics = rt.metrics

    def answer(event: str, outcome: str, status: int, started: float, **extra: Any) -> JSONResponse:
        metrics.deliveries.labels(event or "unknown", outcome).inc()
        metrics.ack_seconds.observe(time.perf_counter() - started)
        return JSONResponse({"status": outcome, **extra}, status_code=status)

    async def webhook(request: Request) -> JSONResponse:
        started = time.perf_counter()
        event = request.headers.get("x-github-event", "")
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY:
            return answer(event, "too_large", 413, started)
        body = await _read_body(request, MAX_BODY)
        if body is None:  # a chunked body (no Content-Length) that went past the limit
            return answer(event, "too_large", 413, started)
        if not verify(rt.settings.webhook_secret, body, request.headers.get("x-hub-signature-256")):
            return answer(event, "bad_signature", 401, started, error="missing or invalid X-Hub-Signature-256")
        delivery = request.headers.get("x-github-delivery", "").strip()
        if not event or not delivery or len(delivery) > 100:
            return answer(event, "malformed", 400, started, error="missing X-GitHub-Event or X-GitHub-Delivery")
        try:
            payload = _parse(body, request.headers.get("content-type", "application/json"))
            routed = route(event, payload, rt.settings.app_id)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
            log.info("delivery %s (%s): malformed payload: %s", delivery, event, type(exc).__name__)
            return answer(event, "malformed", 400, started, error="malformed payload")
        if not routed.specs and routed.head is None:
            # nothing to run: no journal write (a redelivery of it would be acknowledged and ignored again)
            return answer(event, routed.outcome, 202, started, note=routed.note)
        accept_future = getattr(rt.store, "accept_future", None)
        if accept_future is not None:  # SQLite: group commit, one fsync for the deliveries that arrive together
            ids = await asyncio.wrap_future(accept_future(delivery, event, routed.specs, routed.head))
        else:
            ids = await run_in_threadpool(rt.store.accept, delivery, event, routed.specs, routed.head)
        if ids is None:
            return answer(event, "duplicate", 200, started, delivery=delivery)
        rt.dispatch(ids)
        return answer(event, "queued", 202, started, jobs=len(ids))

    # a plain Starlette route: the hot path skips FastAPI's parameter machinery
    app.add_route("/api/github/webhooks", webhook, methods=["POST"])

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        store_ok = await run_in_threadpool(rt.store.ping)
        queue_ok = await run_in_threadpool(rt.queue_ok)
        ok = store_ok and queue_ok
        return JSONResponse({"status": "ok" if ok else "unavailable", "journal": store_ok, "queue": queue_ok}, status_code=200 if ok else 503)

    token = rt.settings.metrics_token

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        given = request.headers.get("authorization", "")
        if not token or not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return JSONResponse({"error": "not found"}, status_code=404)
        data = await run_in_threadpool(metrics.render)
        return Response(data, media_type=CONTENT_TYPE_LATEST)

    return app
