"""Run a CPU-heavy function in a child process with a wall-time budget and an address-space limit.

Audits do not run in the web process's threads: a hostile repository (a million tiny statements, a deeply
nested file) would stall webhook acknowledgements and grow the process without bound. The child is forked
from a ``forkserver`` (a clean single-threaded process with the engine already imported, so a child starts
in milliseconds and never inherits the web process's threads and locks), sets ``RLIMIT_AS`` to the memory
limit, and runs ``target(send, *args)``. ``send(kind, value)`` hands a result back as soon as it is known
(a partial result first, the final one last), so when the child goes over a limit the parent still has what
was found before.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

PRELOAD = ["checks.engine", "reports.scoring", "review.pipeline", "bot.audit_compute"]
_ctx: Any = None


def _context() -> Any:
    global _ctx
    if _ctx is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        _ctx = ctx
    return _ctx


@dataclass(slots=True)
class Outcome:
    """What the child sent (``kind -> value``, in order) and why it stopped early, if it did."""

    results: dict[str, Any] = field(default_factory=dict)
    limit: str | None = None  # "time" | "memory" | "killed" | None
    reason: str = ""  # one line for the check run when it stopped early
    error: str | None = None  # an exception of the target (not a limit)
    seconds: float = 0.0
    max_rss_mb: float | None = None


def _child_main(conn: multiprocessing.connection.Connection, memory_bytes: int, target: Callable[..., None], args: tuple) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    def send(kind: str, value: Any) -> None:
        conn.send((kind, value))

    try:
        target(send, *args)
        conn.send(("__rss__", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))  # Linux: KiB
        conn.send(("__done__", None))
    except MemoryError:
        conn.send(("__memory__", None))
    except RecursionError:
        conn.send(("__error__", "RecursionError"))
    except Exception as exc:
        conn.send(("__error__", f"{type(exc).__name__}: {str(exc)[:300]}"))
    finally:
        conn.close()


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.0f} MB"


def _ended(proc: Any, out: Outcome) -> None:
    code = proc.exitcode
    if code is not None and code < 0:  # a signal: SIGKILL from the kernel's OOM killer, SIGSEGV in a C parser
        out.limit = "killed"
        out.reason = f"the audit process was killed by {signal.Signals(-code).name}"
    else:
        out.error = f"the audit process exited with code {code}"


def run_limited(target: Callable[..., None], args: tuple, *, timeout: float, memory_bytes: int) -> Outcome:
    """Run ``target(send, *args)`` in a child; blocks (call it from a worker thread)."""
    ctx = _context()
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(sender, memory_bytes, target, args), daemon=True)
    started = time.monotonic()
    proc.start()
    sender.close()
    out = Outcome()
    deadline = started + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                out.limit, out.reason = "time", f"the audit went over its time budget of {timeout:g} s"
                break
            if not receiver.poll(min(left, 0.5)):
                if not proc.is_alive() and not receiver.poll(0):
                    _ended(proc, out)
                    break
                continue
            try:
                kind, value = receiver.recv()
            except (EOFError, OSError):  # the child is gone without a word
                proc.join(5)
                _ended(proc, out)
                break
            if kind == "__done__":
                break
            if kind == "__rss__":
                out.max_rss_mb = float(value)
                continue
            if kind == "__memory__":
                out.limit, out.reason = "memory", f"the audit went over its memory limit of {_mb(memory_bytes)}"
                break
            if kind == "__error__":
                out.error = str(value)
                break
            out.results[kind] = value
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        receiver.close()
        out.seconds = time.monotonic() - started
    return out


__all__ = ["Outcome", "run_limited"]

