"""Extract facts in worker processes, in input order, with a bounded window of work in flight.

One job: turn a stream of ``(path, bytes)`` into a stream of :class:`FileFacts` on several
cores. The facts are the same as :func:`checks.facts.extract_file` makes in-process (the
workers run that very function); only the wall time changes. Files travel in batches of about
a megabyte so that inter-process traffic is a small share of the work, and at most two batches
per worker are in flight, so a streamed archive is never held whole in memory.

``jobs`` counts this process: ``jobs - 1`` workers, and a batch that finds every worker with one
batch running and one queued is extracted here instead of waiting. A batch made here is neither
pickled nor unpickled and its values join the scan's table directly, so the scan costs less CPU
and memory than with ``jobs`` workers and this process only unpickling (Megatron-LM, 2 cores:
one worker process fewer, 47 MB less peak RSS over the processes, the same facts).

Workers are forked from a single-threaded process (the CLI: they start with the extractors already
imported) and started with ``spawn`` from a threaded one (the GitHub App's worker: safe there), where
they import only the extractors. A worker that dies (killed, out of memory) does not lose the
scan: its batch, and any later one, is extracted in this process instead.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import chain
from typing import Any

from .cache import dumps_batch, loads_batch
from .deferred import BATCH_BYTES, BATCH_FILES, Deferred
from .facts import FileFacts, extract_file

__all__ = ["BATCH_BYTES", "extract_parallel"]

#: source bytes read ahead before any worker is started: a repository of at most this much is extracted in this
#: process and never pays for spawning workers (each imports the extractors, ~0.3 s of CPU); a larger one uses every
#: core from its first file
LOCAL_FIRST_BYTES = 2 << 20


def _context() -> multiprocessing.context.BaseContext:
    """``fork`` in a single-threaded process where the platform has it (the CLI: workers start with the extractors
    already imported, 0.3 s of CPU each saved); ``spawn`` anywhere else (a threaded process, as the App's worker)."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _extract_batch(items: list[tuple[str, bytes]]) -> bytes:
    """Worker side: one string table per batch, so that the pickled answer holds each repeated text once; pickled
    by :func:`checks.cache.dumps_facts` (records rebuilt by their constructors: half the load time in this process)."""
    strings: dict[str, str] = {}
    facts = [extract_file(path, data, strings=strings) for path, data in items]
    return dumps_batch(facts, [s for s in strings.values() if s.__class__ is str])


#: a slot of the output, in input order: path, bytes, the facts when already known (a cache hit) or None to
#: extract, and a tag of the caller's (its cache key) handed back untouched
Slot = tuple[str, bytes, FileFacts | None, Any]


def extract_parallel(
    slots: Iterable[Slot], jobs: int, local: Callable[[str, bytes], FileFacts], executor: Executor | None = None,
    strings: dict[Any, Any] | None = None, deferred: Deferred | None = None,
) -> Iterator[tuple[str, bytes, FileFacts, bool, Any]]:
    """``(path, data, facts, fresh, tag)`` for every slot, in input order; ``fresh`` when extracted now.

    ``jobs``: extracting processes, this one included (``jobs - 1`` workers, at least one).
    ``local(path, data)`` extracts in this process: every file of a repository of at most
    :data:`LOCAL_FIRST_BYTES` of source (read ahead: no worker is started for it), a batch that finds every
    worker busy, and the batches of a pool that broke.
    ``executor``: the pool to use (default: ``jobs`` spawned processes); it is shut down at the end.
    ``strings``: the scan's table; a worker's facts arrive with their strings shared in it (see :func:`checks.cache.loads_batch`).
    ``deferred``: in a repository large enough for workers, the files it accepts are not extracted in order: each is
    yielded at once as a :class:`~checks.deferred.Pending` stand-in (``fresh`` False) and queued for the workers behind the rest, and
    ``deferred`` takes the pool over (see :class:`checks.deferred.Deferred`).
    """
    pool: Executor | None = None
    window: deque[tuple[list[Slot], Future[bytes] | None, list[FileFacts] | None]] = deque()
    broken = False
    workers = max(1, jobs - 1)

    def submit(batch: list[Slot]) -> None:
        nonlocal broken, pool
        todo = [(p, d) for p, d, ff, _ in batch if ff is None]
        fut: Future[bytes] | None = None
        here: list[FileFacts] | None = None
        if todo and not broken:
            if pool is not None and sum(1 for _b, f, _h in window if f is not None and not f.done()) >= 2 * workers:
                here = [local(p, d) for p, d in todo]  # every worker has a batch running and one queued: this process takes it
            else:
                try:
                    if pool is None:
                        pool = executor or ProcessPoolExecutor(max_workers=workers, mp_context=_context())
                    fut = pool.submit(_extract_batch, todo)
                except (BrokenProcessPool, RuntimeError, OSError, ImportError, NotImplementedError):  # no pool here (no sem_open, no fork or spawn): this process
                    broken = True
        window.append((batch, fut, here))

    def drain_one() -> Iterator[tuple[str, bytes, FileFacts, bool, Any]]:
        nonlocal broken
        batch, fut, done = window.popleft()
        while fut is not None and not fut.done() and deferred is not None and deferred.steal():
            pass  # a deferred batch no worker has started, made here while this one is being made
        if fut is not None:
            try:
                done = loads_batch(fut.result(), strings)  # our own worker's answer
            except (BrokenProcessPool, OSError):
                broken = True
        fresh = iter(done) if done is not None else None
        for path, data, ff, tag in batch:
            if ff is not None:
                yield path, data, ff, False, tag
            else:
                yield path, data, next(fresh) if fresh is not None else local(path, data), True, tag

    try:
        stream = iter(slots)
        held: list[Slot] = []  # read ahead until the repository passes LOCAL_FIRST_BYTES of source to extract
        held_bytes = 0
        for slot in stream:
            held.append(slot)
            held_bytes += len(slot[1]) if slot[2] is None else 0
            if held_bytes > LOCAL_FIRST_BYTES:
                break
        else:  # a small repository: all here, in order, and no worker is started
            for path, data, ff, tag in held:
                yield (path, data, ff, False, tag) if ff is not None else (path, data, local(path, data), True, tag)
            return
        batch: list[Slot] = []
        size = 0
        for slot in chain(held, stream):  # a large one: in batches from its first file, so the workers start at once
            kind = deferred.defer(slot[0], len(slot[1])) if deferred is not None and slot[2] is None else None
            if kind is not None:
                slot = (slot[0], b"", deferred.add(slot[0], slot[1], kind), slot[3])  # type: ignore[union-attr]
            batch.append(slot)
            size += len(slot[1]) if slot[2] is None else 0
            if size >= BATCH_BYTES or len(batch) >= BATCH_FILES:
                submit(batch)
                batch, size = [], 0
                while window and (len(window) > 2 * jobs or window[0][1] is None or window[0][1].done()):
                    yield from drain_one()
        if batch:
            submit(batch)
        if deferred is not None and len(deferred):
            if pool is None and not broken:
                try:
                    pool = executor or ProcessPoolExecutor(max_workers=workers, mp_context=_context())
                except (RuntimeError, OSError, ImportError, NotImplementedError):
                    broken = True
            deferred.start(None if broken else pool, _extract_batch)  # queued behind every batch in the window
            pool, executor = None, None  # the deferred files' now: shut down when they are in (Deferred.close)
        while window:
            yield from drain_one()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        elif executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
