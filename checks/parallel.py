"""Extract facts in worker processes, in input order, with a bounded window of work in flight.

One job: turn a stream of ``(path, bytes)`` into a stream of :class:`FileFacts` on several
cores. The facts are the same as :func:`checks.facts.extract_file` makes in-process (the
workers run that very function); only the wall time changes. Files travel in batches of about
a megabyte so that inter-process traffic is a small share of the work, and at most two batches
per worker are in flight, so a streamed archive is never held whole in memory.

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
from typing import Any

from .cache import dumps_batch, loads_batch
from .facts import FileFacts, extract_file

__all__ = ["BATCH_BYTES", "extract_parallel"]

#: source bytes per batch sent to a worker
BATCH_BYTES = 1 << 20
_BATCH_FILES = 256
#: source bytes extracted in this process before any worker is started: a small repository never pays for
#: spawning workers (each imports the extractors, ~0.3 s of CPU), a large one uses every core after its first files
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
    strings: dict[Any, Any] | None = None,
) -> Iterator[tuple[str, bytes, FileFacts, bool, Any]]:
    """``(path, data, facts, fresh, tag)`` for every slot, in input order; ``fresh`` when extracted now.

    ``local(path, data)`` extracts in this process: the first :data:`LOCAL_FIRST_BYTES` of source (the
    pool starts only when the repository is larger), and the batches of a pool that broke.
    ``executor``: the pool to use (default: ``jobs`` spawned processes); it is shut down at the end.
    ``strings``: the scan's table; a worker's facts arrive with their strings shared in it (see :func:`checks.cache.loads_batch`).
    """
    pool: Executor | None = None
    window: deque[tuple[list[Slot], Future[bytes] | None]] = deque()
    broken = False

    def submit(batch: list[Slot]) -> None:
        nonlocal broken, pool
        todo = [(p, d) for p, d, ff, _ in batch if ff is None]
        fut: Future[bytes] | None = None
        if todo and not broken:
            try:
                if pool is None:
                    pool = executor or ProcessPoolExecutor(max_workers=jobs, mp_context=_context())
                fut = pool.submit(_extract_batch, todo)
            except (BrokenProcessPool, RuntimeError, OSError, ImportError, NotImplementedError):  # no pool here (no sem_open, no fork or spawn): this process
                broken = True
        window.append((batch, fut))

    def drain_one() -> Iterator[tuple[str, bytes, FileFacts, bool, Any]]:
        nonlocal broken
        batch, fut = window.popleft()
        done: list[FileFacts] | None = None
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
        batch: list[Slot] = []
        size = 0
        local_left = LOCAL_FIRST_BYTES
        for slot in slots:
            if local_left > 0 and not window:  # still small: extract here, in order
                path, data, ff, tag = slot
                if ff is not None:
                    yield path, data, ff, False, tag
                else:
                    local_left -= len(data)
                    yield path, data, local(path, data), True, tag
                continue
            batch.append(slot)
            size += len(slot[1]) if slot[2] is None else 0
            if size >= BATCH_BYTES or len(batch) >= _BATCH_FILES:
                submit(batch)
                batch, size = [], 0
                while len(window) > 2 * jobs:
                    yield from drain_one()
        if batch:
            submit(batch)
        while window:
            yield from drain_one()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        elif executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
