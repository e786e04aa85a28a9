"""The audit: read the sources once, parse each file once into facts, run every check."""

from __future__ import annotations

import fnmatch
import gc
import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from .base import Check, Context, all_checks
from .cache import CacheDirError, DirFactsCache
from .facts import Facts, FileFacts, extract_file
from .model import CheckResult, Outcome, Project, Status
from .project import detect_project
from .source import Limits, ReadStats, SourceError, iter_directory, iter_tarball

__all__ = ["Audit", "AuditOptions", "CacheDirError", "DirFactsCache", "FactsCache", "SourceError", "audit_files", "audit_path", "audit_tarball"]

#: Bump when an extractor changes what it records: cached facts of older versions are ignored.
FACTS_VERSION = 9


class FactsCache(Protocol):
    def get(self, key: str) -> FileFacts | None: ...
    def put(self, key: str, value: FileFacts) -> None: ...


def cache_key(path: str, data: bytes) -> str:
    h = hashlib.sha256()
    h.update(f"v{FACTS_VERSION}\0{path}\0".encode())
    h.update(data)
    return h.hexdigest()


@dataclass(slots=True)
class AuditOptions:
    limits: Limits = field(default_factory=Limits)
    ignore: tuple[str, ...] = ()  # check IDs or patterns ("H*")
    exclude: tuple[str, ...] = ()  # path globs ("examples/**")
    hardware: str | None = None  # "h100", "a100", "v100", ...
    cache: FactsCache | None = None
    jobs: int = 1  # worker processes that parse files (1: in this process)


@dataclass(slots=True)
class Audit:
    root: str
    project: Project
    results: list[CheckResult]
    stats: ReadStats
    facts: Facts
    ignored: list[str] = field(default_factory=list)

    def result(self, check_id: str) -> CheckResult:
        for r in self.results:
            if r.id == check_id:
                return r
        raise KeyError(check_id)

    @property
    def parse_errors(self) -> list[tuple[str, str]]:
        return self.facts.errors()


def _excluded(path: str, globs: tuple[str, ...]) -> bool:
    for g in globs:
        g = g.strip("/")
        if fnmatch.fnmatchcase(path, g):
            return True
        if g.endswith("/**") and (path + "/").startswith(g[:-2]):
            return True
        if "/" not in g and not any(ch in g for ch in "*?[") and path.split("/", 1)[0] == g:
            return True
    return False


def _ignored(check_id: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(check_id, p.upper()) for p in patterns)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while facts are built.

    Parsing makes no reference cycles, but every collection re-scans the growing set of fact
    records: about a third of the extraction time on a large repository. Reference counting
    still frees every AST as soon as its file is done; the previous state is restored after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _gc_ignores_existing() -> Iterator[None]:
    """Let the cyclic collector skip every object that exists now (the facts) while the checks run.

    The facts are over a million immutable objects without cycles; left in the collector's
    generations, every full collection the checks trigger walks them again (0.8 s each on the
    benchmark). ``gc.freeze`` parks them; new objects are still collected, reference counting
    still frees everything, and ``gc.unfreeze`` hands them back afterwards.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def build_facts(
    files: Iterable[tuple[str, bytes]], cache: FactsCache | None = None, exclude: tuple[str, ...] = (), jobs: int = 1,
) -> Facts:
    """Parse every file once into facts (``jobs`` > 1: in that many worker processes, same facts)."""
    parsed: list[FileFacts] = []
    strings: dict[str, str] = {}  # equal source lines and keys across files share one string for the scan

    def slots() -> Iterator[tuple[str, bytes, FileFacts | None, str | None]]:
        """Each file with its cached facts (None where it must be parsed) and its cache key (hashed once)."""
        for path, data in files:
            if exclude and _excluded(path, exclude):
                continue
            key = cache_key(path, data) if cache is not None else None
            yield path, data, (cache.get(key) if cache is not None and key is not None else None), key

    def local(path: str, data: bytes) -> FileFacts:
        return extract_file(path, data, strings=strings)

    with _gc_paused():
        results: Iterable[tuple[str, bytes, FileFacts, bool, str | None]]  # (path, data, facts, parsed now, cache key)
        if jobs > 1:
            from .parallel import extract_parallel

            results = extract_parallel(slots(), jobs, local)
        else:
            results = ((p, d, ff, False, k) if ff is not None else (p, d, local(p, d), True, k) for p, d, ff, k in slots())
        for _path, _data, ff, fresh, key in results:
            if jobs > 1 or not fresh:
                ff.share(strings)  # cached facts and a worker's facts arrive with copies of their own
            if fresh and cache is not None and key is not None:
                cache.put(key, ff)
            parsed.append(ff)
        return Facts(parsed)


def run_checks(facts: Facts, project: Project, options: AuditOptions, checks: list[Check] | None = None) -> tuple[list[CheckResult], list[str]]:
    results: list[CheckResult] = []
    ignored: list[str] = []
    for check in checks if checks is not None else all_checks():
        ctx = Context(facts.for_check(check.id), project)
        if _ignored(check.id, options.ignore):
            ignored.append(check.id)
            outcome = Outcome(Status.NA, detail="ignored by the repository's accel-audit configuration")
        else:
            reason = check.not_applicable(ctx)
            outcome = Outcome(Status.NA, detail=reason) if reason else check.detect(ctx)
        prio = check.recommendation_priority(ctx, outcome) if outcome.status != Status.NA else None
        results.append(
            CheckResult(
                id=check.id,
                category=check.category,
                title=check.title,
                status=outcome.status,
                evidence=_sorted_evidence(outcome),
                detail=outcome.detail,
                values=outcome.values,
                findings=outcome.findings,
                priority=prio,
                recommendation=check.fix if prio is not None else None,
            )
        )
    return results, ignored


def _sorted_evidence(outcome: Outcome) -> list:
    seen = set()
    out = []
    for e in outcome.evidence:
        k = (e.path, e.line)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out[:20]


def audit_files(files: Iterable[tuple[str, bytes]], root: str = ".", options: AuditOptions | None = None, stats: ReadStats | None = None) -> Audit:
    """Audit an in-memory or streamed set of ``(path, bytes)``."""
    options = options or AuditOptions()
    stats = stats if stats is not None else ReadStats()
    facts = build_facts(files, options.cache, options.exclude, options.jobs)
    from .bottleneck import classify_bottleneck  # step zero: needs the check results

    with _gc_ignores_existing():
        project = detect_project(facts, hardware=options.hardware)
        results, ignored = run_checks(facts, project, options)
        classify_bottleneck(facts, project, results)
    return Audit(root, project, results, stats, facts, ignored)


def audit_path(path: str | os.PathLike[str], options: AuditOptions | None = None) -> Audit:
    """Audit a local directory or a ``.tar.gz`` archive file."""
    options = options or AuditOptions()
    p = Path(path)
    stats = ReadStats()
    if p.is_dir():
        return audit_files(iter_directory(p, options.limits, stats), str(path), options, stats)
    if p.is_file():
        with open(p, "rb") as fh:
            return audit_tarball(fh, str(path), options, stats)
    raise SourceError(f"path does not exist: {path}")


def audit_tarball(stream: BinaryIO, root: str, options: AuditOptions | None = None, stats: ReadStats | None = None) -> Audit:
    """Audit a tar(.gz) stream as GitHub's tarball endpoint returns it (one top-level folder)."""
    options = options or AuditOptions()
    stats = stats if stats is not None else ReadStats()
    # a broken archive raises SourceError while facts are built, before any check runs
    return audit_files(iter_tarball(stream, options.limits, stats), root, options, stats)
