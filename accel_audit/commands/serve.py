"""``accel-audit serve`` (the GitHub App: webhooks + in-process workers) and ``accel-audit worker``."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the GitHub App service (webhooks, health, metrics, in-process workers)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument(
        "--workers", type=int, default=None,
        help="in-process audit workers (default 2 with the embedded queue, 0 when ACCEL_REDIS_URL is set)",
    )
    p.set_defaults(func=run)

    w = sub.add_parser("worker", help="run audit workers alone (the Redis setup: ACCEL_REDIS_URL)")
    w.add_argument("--workers", type=int, default=2, help="worker threads in this process (default 2)")
    w.add_argument("--metrics-port", type=int, default=9100, help="port of this worker's /metrics (0: none; default 9100)")
    w.set_defaults(func=run_worker)


def _settings():  # -> Settings | None
    from bot.registered import with_registered
    from bot.settings import SettingsError, load_settings

    try:
        return load_settings(with_registered(os.environ))  # what `accel-audit register` stored, unless the environment says otherwise
    except SettingsError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings is None:
        return 2
    import uvicorn

    from bot.app import create_app
    from bot.maintenance import Maintenance
    from bot.queue import make_consumer, start_in_process, stop_in_process
    from bot.runtime import build_runtime

    rt = build_runtime(settings)
    log = logging.getLogger("accel_audit.serve")
    workers = args.workers if args.workers is not None else (0 if settings.redis_url else 2)
    consumer = None
    maintenance = Maintenance(rt)
    if workers > 0:
        consumer = make_consumer(rt, workers)
        start_in_process(consumer)
    maintenance.start()
    log.info(
        "accel-audit serving on %s:%d (App %d, %s queue, %d in-process worker(s), data in %s)",
        args.host, args.port, settings.app_id, "Redis" if settings.redis_url else "SQLite", workers, settings.data_dir,
    )
    try:
        uvicorn.run(create_app(rt), host=args.host, port=args.port, log_config=None, access_log=False)
    finally:
        maintenance.stop()
        if consumer is not None:
            stop_in_process(consumer)
        rt.close()
    return 0


def run_worker(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings is None:
        return 2
    from prometheus_client import start_http_server

    from bot.maintenance import Maintenance
    from bot.queue import make_consumer
    from bot.runtime import build_runtime

    rt = build_runtime(settings)
    log = logging.getLogger("accel_audit.worker")
    if not settings.redis_url:
        log.warning("ACCEL_REDIS_URL is not set: this worker shares the SQLite queue in %s (same machine only)", settings.data_dir)
    if args.metrics_port:
        start_http_server(args.metrics_port, registry=rt.metrics.registry)
    maintenance = Maintenance(rt)
    maintenance.start()
    consumer = make_consumer(rt, max(1, args.workers))
    log.info("accel-audit worker: %d thread(s), App %d", max(1, args.workers), settings.app_id)
    try:
        consumer.run()  # handles SIGINT/SIGTERM (graceful) itself
    finally:
        maintenance.stop()
        rt.close()
    return 0
