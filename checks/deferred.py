"""Facts a cold audit reads last, made by the workers while the rest of the audit goes on.

One job: hold the files :func:`checks.parallel.extract_parallel` defers (out of scope by their path), hand out a stand-in
for each at once, and take their facts in on the first read of any of them. See :class:`Deferred`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, wait
from typing import Any

from .cache import loads_batch
from .facts import FileFacts, extract_file
from .facts.types import share_line_numbers

__all__ = ["BATCH_BYTES", "BATCH_FILES", "DEFER_BYTES", "Deferred", "Pending"]

#: source bytes per batch sent to a worker (shared with :mod:`checks.parallel`)
BATCH_BYTES = 1 << 20
BATCH_FILES = 256
#: source bytes deferred at most: enough to keep the workers busy through the serial part of a large audit (on
#: Megatron-LM, 1.5-2 s: about 4-5 MB of Python for one worker) while bounding what waits in memory (the sources until a
#: worker takes them, its answers until the context pass: about twice their size) however large the repository
DEFER_BYTES = 8 << 20


class Pending:
    """A deferred file's stand-in (see :class:`Deferred`): its path and kind at once; any other attribute is read from its
    facts (:meth:`alone`)."""

    __slots__ = ("_at", "_owner", "kind", "path")

    def __init__(self, path: str, kind: str, owner: Deferred, at: tuple[int, int]) -> None:
        self.path, self.kind, self._owner, self._at = path, kind, owner, at

    def load(self) -> FileFacts:
        """Its facts, with every other deferred file's taken in (the context pass reads them all)."""
        return self._owner.facts(self._at)

    def alone(self) -> FileFacts:
        """Its facts, made here if its batch is not in yet (a single read: the roles' look at a file a launch runs)."""
        return self._owner.one(self._at)

    def lacks(self, *words: bytes) -> bool:
        """True when its source (while it is held: until the deferred files are taken in) contains none of ``words``: a
        cheap "this file cannot hold that call" for a reader that looks for one name across every file."""
        return self._owner.lacks(self._at, words)

    def __getattr__(self, name: str) -> Any:  # only names that are not slots reach here
        return getattr(self.alone(), name)


class Deferred:
    """Files the audit reads last, extracted by the workers while the rest of the audit goes on.

    A cold audit reads the files whose path alone puts them out of scope (``tests/``, CI, benchmarks) only in its
    context pass, after the roles, the overview, the checks and step zero, which run in this process alone.
    :func:`checks.parallel.extract_parallel` gives each file whose kind ``defer(path)`` returns (None: not deferred; at
    most :data:`DEFER_BYTES` of them) a :class:`Pending` stand-in at once and queues it for the workers behind every
    other file; they extract it while this process runs that serial part (on two cores the worker was idle for it).
    The first :meth:`Pending.load` takes every deferred file in: the workers' answers as they arrive, and the batches no
    worker has started are extracted here, from the last, so that both ends work. A single read of a stand-in's other
    attributes (the roles look at a test a launch runs) makes that file alone. The facts are the same as
    :func:`~checks.facts.extract_file` makes, whichever process makes them; a pool that broke leaves its batches here.

    :meth:`bind` gives it the scan's extraction and string table; :meth:`close` (always, at the end of the audit) stops
    what is left and shuts the pool down.
    """

    def __init__(self, defer: Callable[[str], str | None], limit: int = DEFER_BYTES) -> None:
        self._defer, self._limit, self._total = defer, limit, 0
        self._local: Callable[[str, bytes], FileFacts] | None = None
        self._strings: dict[Any, Any] | None = None
        self._finish: Callable[[], None] | None = None
        self._batches: list[list[tuple[str, bytes]]] = []
        self._size = 0
        self._futures: list[Future[bytes] | None] = []
        self._done: list[list[FileFacts] | None] = []
        self._pool: Executor | None = None
        self._one: dict[tuple[int, int], FileFacts] = {}  # files read one by one before the rest were taken in

    def bind(self, local: Callable[[str, bytes], FileFacts], strings: dict[Any, Any] | None = None,
             finish: Callable[[], None] | None = None) -> None:
        """The scan's own extraction (``local(path, data)``), its string table, and what to run once every file is in."""
        self._local, self._strings, self._finish = local, strings, finish

    def defer(self, path: str, size: int) -> str | None:
        """The kind of a file to defer, None to extract it in order (not accepted, or :data:`DEFER_BYTES` are held)."""
        return self._defer(path) if self._total + size <= self._limit else None

    def __len__(self) -> int:
        return sum(len(b) for b in self._batches)

    def add(self, path: str, data: bytes, kind: str) -> Pending:
        if not self._batches or self._size >= BATCH_BYTES or len(self._batches[-1]) >= BATCH_FILES:
            self._batches.append([])
            self._size = 0
        batch = self._batches[-1]
        batch.append((path, data))
        self._size += len(data)
        self._total += len(data)
        return Pending(path, kind, self, (len(self._batches) - 1, len(batch) - 1))

    def start(self, pool: Executor | None, work: Callable[[list[tuple[str, bytes]]], bytes] | None = None) -> None:
        """Queue every batch on ``pool`` as ``work(batch)`` (pickled facts, :func:`checks.cache.dumps_batch`; no pool or a
        broken one: they are all extracted here when read); the pool is this object's to shut down from now on."""
        self._pool = pool
        self._done = [None] * len(self._batches)
        for i, batch in enumerate(self._batches):
            fut: Future[bytes] | None = None
            if pool is not None and work is not None:
                try:
                    fut = pool.submit(work, batch)
                except (BrokenExecutor, RuntimeError, OSError):
                    pool = None
                else:
                    fut.add_done_callback(lambda f, i=i: self._answered(i, f))
            self._futures.append(fut)

    def _answered(self, i: int, fut: Future[bytes]) -> None:
        """A worker's answer is in (the pool's thread): the batch's sources are no longer needed (while the answer waits
        to be read, it is the batch's facts; a batch that failed keeps its sources, to be extracted here)."""
        if not fut.cancelled() and fut.exception() is None:
            self._batches[i] = [(p, b"") for p, _d in self._batches[i]]

    def one(self, at: tuple[int, int]) -> FileFacts:
        """One deferred file's facts: from its batch once the batches are in, else made here alone (the roles read a
        file a launch runs, ``python tests/run.py``, before the checks); its batch's copy is then left unused."""
        done = self._done[at[0]] if at[0] < len(self._done) else None
        if done is not None:
            return done[at[1]]
        fut = self._futures[at[0]] if at[0] < len(self._futures) else None
        if at not in self._one and fut is not None and fut.done() and not fut.cancelled():
            self._answer(at[0])  # its batch is in from a worker (and its sources gone): read from there
            done = self._done[at[0]]
            assert done is not None
            return done[at[1]]
        if at not in self._one:
            path, data = self._batches[at[0]][at[1]]
            self._one[at] = self._extract(path, data)
        return self._one[at]

    def lacks(self, at: tuple[int, int], words: tuple[bytes, ...]) -> bool:
        fut = self._futures[at[0]] if at[0] < len(self._futures) else None
        if (at[0] < len(self._done) and self._done[at[0]] is not None) or at in self._one or (fut is not None and fut.done()):
            return False  # its facts are in (or its sources gone): read them
        data = self._batches[at[0]][at[1]][1]
        return not any(w in data for w in words)

    def facts(self, at: tuple[int, int]) -> FileFacts:
        """One deferred file's facts, with every other one's taken in."""
        self.take_in()
        done = self._done[at[0]]
        assert done is not None
        return done[at[1]]

    def steal(self) -> bool:
        """Extract here the last batch no worker has started, if any (this process would otherwise wait for a worker)."""
        if len(self._futures) < len(self._batches):
            return False
        for i in reversed(range(len(self._batches))):
            fut = self._futures[i]
            if self._done[i] is None and fut is not None and fut.cancel():
                was_enabled = gc.isenabled()
                gc.disable()
                try:
                    self._done[i] = [self._one[(i, j)] if (i, j) in self._one else self._extract(p, d)
                                     for j, (p, d) in enumerate(self._batches[i])]
                finally:
                    if was_enabled:
                        gc.enable()
                return True
        return False

    def take_in(self) -> None:
        """Every deferred file's facts, made or awaited now (at once if they are in already)."""
        if len(self._futures) < len(self._batches):  # read before it was started (an abandoned scan): all here
            self.start(None)
        if any(d is None for d in self._done):
            self._take_in()

    def _take_in(self) -> None:
        was_enabled = gc.isenabled()
        gc.disable()  # the facts are made without cycles, as in the scan (see checks.engine._gc_paused)
        try:
            left = [i for i, d in enumerate(self._done) if d is None]
            while left:
                for i in [i for i in left if self._futures[i] is not None and self._futures[i].done()]:  # type: ignore[union-attr]
                    self._answer(i)
                left = [i for i in left if self._done[i] is None]
                # a batch no worker has started: extracted here, from the last (the workers take them from the first)
                steal = next((i for i in reversed(left) if self._futures[i] is None or self._futures[i].cancel()), None)  # type: ignore[union-attr]
                if steal is not None:
                    self._done[steal] = [self._extract(p, d) for p, d in self._batches[steal]]
                elif left:
                    wait([self._futures[i] for i in left], return_when=FIRST_COMPLETED)  # type: ignore[misc]
                left = [i for i in left if self._done[i] is None]
        finally:
            if was_enabled:
                gc.enable()
        for (i, j), ff in self._one.items():  # one object per file, whichever process made it
            self._done[i][j] = ff  # type: ignore[index]
        self._one.clear()
        self._batches = [[(p, b"") for p, _d in batch] for batch in self._batches]  # the sources are no longer needed
        self._shutdown()
        if self._finish is not None:
            self._finish()

    def _answer(self, i: int) -> None:
        fut = self._futures[i]
        try:
            done = loads_batch(fut.result(), self._strings)  # type: ignore[union-attr]
        except (BrokenExecutor, OSError):
            done = [self._extract(p, d) for p, d in self._batches[i]]
        else:
            for ff in done:
                share_line_numbers(ff)
        self._done[i] = done

    def _extract(self, path: str, data: bytes) -> FileFacts:
        return self._local(path, data) if self._local is not None else extract_file(path, data, strings=self._strings)

    def _shutdown(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Stop the work left (an audit that ended early) and shut the pool down; idempotent."""
        for fut in self._futures:
            if fut is not None:
                fut.cancel()
        self._shutdown()
