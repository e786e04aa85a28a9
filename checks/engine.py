"""The audit: read the sources once, parse each file once into facts, run every check."""

from __future__ import annotations

import fnmatch
import gc
import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from .base import Check, Context, all_checks
from .cache import CacheDirError, DirFactsCache
from .deferred import Deferred, Pending
from .facts import Facts, FileFacts, classify, extract_file
from .facts.types import Dependency, drop_tables, share_line_numbers
from .lazyre import lazy_compile
from .learner_library import library_not_judged
from .model import Bottleneck, CheckResult, Evidence, Outcome, Project, Status
from .project import detect_project
from .query_log import Recorder, attributes, code_version, dirty_reads, file_digests, share_hashes, unchanged
from .roles import DOCS, IN_SCOPE, VENDORED, Roles, classify_roles, glob_match, path_role
from .script_paths import Respeller
from .sniff import VERSION as SNIFF_VERSION
from .source import Limits, ReadStats, SourceError, Unread, iter_directory, iter_tarball, looks_like_archive
from .stack import jax_not_applicable, jax_not_judged
from .tree_index import TreeIndex
from .workload import inference_not_applicable

__all__ = ["Audit", "AuditOptions", "CacheDirError", "DirFactsCache", "FactsCache", "SourceError", "audit_files", "audit_path", "audit_tarball"]

#: Bump when an extractor changes what it records: cached facts of older versions are ignored.
FACTS_VERSION = 155


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
    training: tuple[str, ...] = ()  # path globs forced onto the training path (``paths.training``)
    hardware: str | None = None  # "h100", "a100", "v100", ...
    cache: FactsCache | None = None
    jobs: int = 1  # processes that parse files, this one included (1: only this one)


@dataclass(slots=True)
class Audit:
    root: str
    project: Project
    results: list[CheckResult]
    stats: ReadStats
    facts: Facts  # the files in scope: training path, project code, its configs, launch and build files
    ignored: list[str] = field(default_factory=list)
    roles: Roles = field(default_factory=Roles)
    context: Facts | None = None  # tests, CI, docs, benchmarks, archives, vendored code: shown, never judged
    #: what the report derives from the facts, kept when the audit was recorded for reuse (see :mod:`checks.query_log`):
    #: ``parse_errors``, ``style`` (:func:`reports.snippets.repo_style`)
    derived: dict[str, object] = field(default_factory=dict)

    @property
    def training_code_found(self) -> bool:
        """False for an empty directory or one without training or inference code: no report is due."""
        return self.project.does_training or self.project.does_inference

    def result(self, check_id: str) -> CheckResult:
        for r in self.results:
            if r.id == check_id:
                return r
        raise KeyError(check_id)

    @property
    def parse_errors(self) -> list[tuple[str, str]]:
        kept = self.derived.get("parse_errors")
        if kept is not None:
            return list(kept)  # type: ignore[call-overload]
        errs = self.facts.errors() + (self.context.errors() if self.context is not None else [])
        return sorted(errs)


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
    """Parse every file once into facts (``jobs`` > 1: in this process and ``jobs - 1`` workers, same facts)."""
    return Facts(parse_files(files, cache, exclude, jobs))


#: what a directory index of the facts cache is valid for (see :mod:`checks.tree_index`)
TREE_VERSION = f"facts {FACTS_VERSION}, sniff {SNIFF_VERSION}, index 2"


def parse_files(
    files: Iterable[tuple[str, bytes | Unread]], cache: FactsCache | None = None, exclude: tuple[str, ...] = (), jobs: int = 1,
    index: TreeIndex | None = None, limits: Limits | None = None, later: _StandIns | None = None,
    deferred: Deferred | None = None,
) -> list[FileFacts]:
    """Each file's facts, in scan order (see :func:`build_facts`).

    ``index``: the cache's record of the scanned directory (:func:`audit_path` with a cache that keeps one); files
    it vouches for arrive as :class:`~checks.source.Unread` and are read only when their facts are gone. The index
    is saved with the facts of this scan at the end. ``later``: stand-ins for vouched files whose facts are in the
    directory's pack, loaded when read (:class:`_Later`); the index is then saved by ``later.save()``, once the caller
    has loaded those it reads (a part of the pack that fails to load is written again). ``deferred``: with ``jobs`` > 1,
    the files it accepts come as :class:`~checks.deferred.Pending` stand-ins, extracted while the audit goes on (see
    :func:`defer_context`); without a cache only.
    """
    parsed: list[FileFacts] = []
    # equal source lines and keys across files share one string for the scan; a cache that carries its own table
    # (``accel-audit pr``'s in-memory cache shared by base and head) shares it across the audits that use it
    strings: dict[str, str] = getattr(cache, "strings", None) or {}
    packed = getattr(cache, "packed", None) if index is not None else None
    by_key: dict[str, FileFacts] = {}  # with an index: every file's facts by key, for the cache's pack
    fresh_keys: set[str] = set()

    def slots() -> Iterator[tuple[str, bytes, FileFacts | None, str | None]]:
        """Each file with its cached facts (None where it must be parsed) and its cache key (hashed once)."""
        for path, data in files:
            if exclude and _excluded(path, exclude):
                continue
            if isinstance(data, Unread):  # vouched for by the index: its facts, or its bytes after all
                if later is not None and packed is not None and packed(data.key):
                    stand_in = later.stand_in(path, data)
                    if stand_in is not None:
                        yield path, b"", stand_in, data.key
                        continue
                ff = cache.get(data.key) if cache is not None else None
                if ff is not None:
                    yield path, b"", ff, data.key
                    continue
                vouched, data = data.key, data.read(limits or Limits())
                key = cache_key(path, data)
                if index is not None and key != vouched:
                    index.new[path] = (None, "k:" + key)  # changed without its stat showing it: never vouched for again
            else:
                key = cache_key(path, data) if cache is not None else None
                if index is not None and key is not None:
                    index.keyed(path, key)
            yield path, data, (cache.get(key) if cache is not None and key is not None else None), key

    def local(path: str, data: bytes) -> FileFacts:
        return extract_file(path, data, strings=strings)

    if deferred is not None:
        deferred.bind(local, strings, lambda: drop_tables(strings))

    with _gc_paused():
        results: Iterable[tuple[str, bytes, FileFacts, bool, str | None]]  # (path, data, facts, parsed now, cache key)
        if jobs > 1:
            from .parallel import extract_parallel

            results = extract_parallel(slots(), jobs, local, strings=strings, deferred=deferred if cache is None else None)
        else:
            results = ((p, d, ff, False, k) if ff is not None else (p, d, local(p, d), True, k) for p, d, ff, k in slots())
        for _path, _data, ff, fresh, key in results:
            if fresh:
                if jobs > 1:
                    share_line_numbers(ff)  # a worker's strings arrive shared (checks.cache.loads_batch), its line numbers not
            elif isinstance(ff, Pending):
                pass  # made later, shared then (checks.deferred.Deferred)
            elif not (packed is not None and key is not None and packed(key)):
                ff.share(strings)  # cached facts arrive with copies of their own (a pack's share theirs)
            if index is not None and key is not None:
                by_key[key] = ff
                if fresh:
                    fresh_keys.add(key)
            elif fresh and cache is not None and key is not None:
                cache.put(key, ff)
            parsed.append(ff)
        drop_tables(strings)  # the keys it kept to share keyword mappings: every mapping is made
        save = getattr(cache, "save_tree", None)
        if index is not None and save is not None:
            if later is not None:
                later.save = lambda: save(index, _Loaded(by_key), fresh_keys, part=_pack_part)
            else:
                save(index, _Loaded(by_key), fresh_keys, part=_pack_part)
        return parsed


def _pack_part(ff: FileFacts) -> int:
    """The part of a directory's pack a file's facts go to (:data:`checks.cache.PARTS`): 1 for a file whose path alone
    puts it out of scope (tests/, docs/, CI, benchmarks: :func:`checks.roles.path_role`), else 0."""
    role = path_role(ff.path, ff.kind)[0]
    return 1 if role is not None and role not in IN_SCOPE and role != DOCS else 0


class _Later:
    """A context file's facts, unchanged since the last recorded audit, loaded from the directory's pack on the first read
    of anything but its path and its parse error (the last audit's: a function of the same content)."""

    __slots__ = ("_cache", "_ff", "_index", "_limits", "_unread", "error", "path")

    def __init__(self, path: str, unread: Unread, error: str | None, cache: FactsCache, index: TreeIndex, limits: Limits) -> None:
        self.path, self.error, self._unread, self._cache, self._index, self._limits = path, error, unread, cache, index, limits
        self._ff: FileFacts | None = None

    def load(self) -> FileFacts:
        if self._ff is None:
            ff = self._cache.get(self._unread.key)
            if ff is None:  # the pack was lost or spoilt since: its bytes after all, as parse_files does
                data = self._unread.read(self._limits)
                key = cache_key(self.path, data)
                if key != self._unread.key:
                    self._index.new[self.path] = (None, "k:" + key)
                ff = extract_file(self.path, data)
            self._ff = ff
        return self._ff

    def __getattr__(self, name: str) -> Any:
        return getattr(self.load(), name)


class _StandIns:
    """For a full warm audit: a stand-in (:class:`_Later`) for each vouched file whose content is the one the last
    recorded audit saw, with that audit's parse error for it; the audit loads the facts of those it reads, then saves
    the directory's index (:attr:`save`, set by :func:`parse_files`)."""

    def __init__(self, keys: dict[str, str], errors: dict[str, str], cache: FactsCache, index: TreeIndex, limits: Limits) -> None:
        self.keys, self.errors, self.cache, self.index, self.limits = keys, errors, cache, index, limits
        self.save: Callable[[], None] | None = None

    def stand_in(self, path: str, unread: Unread) -> FileFacts | None:
        if self.keys.get(path) != unread.key:
            return None
        return _Later(path, unread, self.errors.get(path), self.cache, self.index, self.limits)  # type: ignore[return-value]


def _stand_ins(prior: dict[str, Any] | None, cache: FactsCache | None, index: TreeIndex | None, limits: Limits) -> _StandIns | None:
    if prior is None or cache is None or index is None:
        return None
    derived = prior["audit"][4]
    if not isinstance(derived, dict) or "parse_errors" not in derived:
        return None
    return _StandIns(prior["keys"], dict(derived["parse_errors"]), cache, index, limits)


def _in_full(parsed: list[FileFacts], reused: tuple[Roles, set[Any]] | None) -> list[FileFacts]:
    """``parsed`` with every stand-in loaded but those of context files when the roles are known (reused): the files in
    scope and the docs are read by the overview and the checks; the context's by the context pass, if it runs. A deferred
    file (out of scope by its path, still being extracted) stays a stand-in: the roles read its facts only if they need
    them, and :func:`split_facts` loads it if they put it in scope."""
    if reused is None:
        return [ff if isinstance(ff, Pending) else _real(ff) for ff in parsed]
    by_path = reused[0].by_path
    return [ff if isinstance(ff, _Later) and by_path.get(ff.path) not in IN_SCOPE and by_path.get(ff.path) != DOCS
            else _real(ff) for ff in parsed]


def _real(ff: Any) -> FileFacts:
    return ff.load() if isinstance(ff, (_Later, Pending)) else ff  # type: ignore[no-any-return]


def defer_context(training: tuple[str, ...] = ()) -> Callable[[str], str | None]:
    """Which files a cold parallel audit extracts last (:class:`~checks.deferred.Deferred`): Python files whose path alone
    puts them out of scope (tests/, CI, benchmarks, archives, evaluation harnesses; not docs, whose hints join the
    training path, nor vendored packages, which the training path may import), unless a ``paths.training`` glob takes
    them in. A launch that runs one of them still puts it on the training path: it is then loaded before the checks."""

    def kind(path: str) -> str | None:
        if not path.endswith(".py") or classify(path) != "python":
            return None
        role = path_role(path, "python")[0]
        if role is None or role in IN_SCOPE or role in (DOCS, VENDORED) or (training and glob_match(path, training)):
            return None
        return "python"

    return kind


class _Loaded(dict):  # type: ignore[type-arg]
    """Facts by key for the cache's pack: a stand-in is loaded when the pack is written again."""

    def __getitem__(self, key: str) -> FileFacts:
        return _real(dict.__getitem__(self, key))


def split_facts(parsed: list[FileFacts], training: tuple[str, ...] = (), recorder: Recorder | None = None,
                context_recorder: Recorder | None = None, reused: tuple[Roles, set[Any]] | None = None) -> tuple[Facts, Facts, Roles]:
    """The facts in scope, the facts of context files, and every file's role (see :mod:`checks.roles`).

    ``recorder``: record what the roles read, and every later read of the two Facts (see :mod:`checks.query_log`);
    ``context_recorder``: record the reads of the context's facts apart (the context pass's, see :func:`_context_pass`);
    ``reused``: the roles of the last recorded audit with what they read then (:func:`_roles_reused`), used as they are."""
    by_path = {ff.path: ff for ff in parsed}  # a repeated path: the last wins, as in Facts
    # a launch's script spelt with other capitals than the tree's (Vary's README) takes the tree's spelling; a stand-in
    # (a context file not loaded yet) is respelt when the context is built
    respell = Respeller(by_path)
    by_path = {p: respell.file(ff) for p, ff in by_path.items()}
    if recorder is not None:
        recorder.begin("roles")
    if reused is not None:
        roles, deps = reused
        if recorder is not None:
            recorder.per["roles"] |= deps  # what they read then: a later edit of it is still seen
    else:
        roles = classify_roles(recorder.files(by_path, {"calls": "calls@roles"}) if recorder is not None else by_path, training)
    # a deferred file the roles put in scope (a launch runs it) is made now, alone (see checks.deferred)
    inside = [ff.alone() if isinstance(ff, Pending) else ff for ff in by_path.values() if roles.by_path[ff.path] in IN_SCOPE]
    outside = [ff for ff in by_path.values() if roles.by_path[ff.path] not in IN_SCOPE]
    facts = Facts(inside)
    facts._s["library_copies"] = tuple(roles.library_copies)
    # submodules the root ``.gitmodules`` declares whose folder holds no file the audit reads (a GitHub tarball and a clone
    # without ``--recursive`` leave it empty: MAP-NEO's pre-training code is its ``Megatron-LM-NEO`` submodule)
    declared = [e for ff in parsed if ff.path == ".gitmodules" for e in ff.configs if e.keys == ("submodule_path",)]
    if declared:
        facts._s["missing_submodules"] = tuple(
            (str(e.value), e.text, e.line) for e in declared
            if not any(p.startswith(f"{e.value}/") for p in by_path))
    if roles.library_versions:
        # a copy of a library in the tree is the release the project runs (anole's transformers 4.42.0.dev0, installed from
        # its folder), whatever another requirements file of the repository pins: it is the one declaration of that library
        copies = {n.replace("_", "-"): v for n, v in roles.library_versions.items()}
        facts._s["deps"] = [d for d in facts._s["deps"] if d.name not in copies] + [
            Dependency(path, line, name, f"=={version}", f'__version__ = "{version}"') for name, (path, line, version) in copies.items()]
    facts._s["entry_points"] = tuple(roles.entry_points)
    # what the project's own docs say it runs (a multi-node launch documented only in docs/*.qmd) decides whether a check
    # applies (E1); never whether a practice is used, so these hints stay in scope
    documented = [h for ff in outside if roles.by_path[ff.path] == DOCS for h in ff.doc_hints]
    if documented:
        facts._s["doc_hints"] = facts._s["doc_hints"] + documented
    # and the training commands they document are the run's when the repository ships no launch (Facts.documented_runs)
    commands = [x for ff in outside if roles.by_path[ff.path] == DOCS for x in ff.doc_launches]
    if commands:
        facts._s["doc_launches"] = facts._s["doc_launches"] + commands
    context = _Deferred(outside, (context_recorder or recorder) if recorder is not None else None, respell)
    if recorder is not None:  # the documented hints came from files whose share of ``doc_hints`` is compared whole
        recorder.watch(facts)
    return facts, context, roles


class _Deferred(Facts):
    """The context's facts, whose indexes are built on first use (0.05 s on Megatron-LM): a full warm audit that reuses
    the last context pass reads no more of them than their files (the report's parse errors). ``recorder``: records
    every read of them, as :meth:`checks.query_log.Recorder.watch` does."""

    def __init__(self, files: list[FileFacts], recorder: Recorder | None, respell: Respeller | None = None) -> None:
        self._files = files
        self._rec = recorder
        self._respell = respell
        self._built: dict[str, Any] | None = None
        self._by_path: Any = None
        self.check_id = None
        self._memo = {}

    @property  # type: ignore[override]
    def _s(self) -> dict[str, Any]:
        if self._built is None:
            respell = self._respell.file if self._respell is not None else (lambda ff: ff)
            f = Facts([respell(_real(ff)) for ff in self._files])
            if self._rec is not None:
                self._rec.watch(f)
            self._built = f._s
        return self._built

    @property
    def files(self) -> dict[str, FileFacts]:
        if self._built is not None:
            return self._built["files"]
        if self._by_path is None:  # the same paths, in the same order, and the same recording as the built facts' files
            by_path = {f.path: f for f in self._files}
            self._by_path = self._rec.files(by_path) if self._rec is not None else by_path
        return self._by_path  # type: ignore[no-any-return]


#: every check's detail when the scanned code trains and serves nothing (no report is due: ``Audit.training_code_found``)
NO_RUN = ("not judged: no training or inference code was recognised (no backward pass, optimizer step, trainer or fit call, "
          "training launch or fine-tuning/pre-training setup): the practices of a run are set by the training script that uses "
          "this code")


_log = logging.getLogger(__name__)

#: set (``1``) to let a check's exception propagate: the test suite sets it, so a rule's bug fails a test instead of becoming
#: a "not judged" line
STRICT_ENV = "ACCEL_AUDIT_STRICT"


def detect_safely(check: Check, ctx: Context) -> Outcome:
    """``check.detect(ctx)``; a check that raises on a repository is "not judged" with the error's type (logged with its
    traceback), and the audit goes on: one rule's bug must not take down the report and the pull request's check run."""
    try:
        return check.detect(ctx)
    except Exception as e:
        if os.environ.get(STRICT_ENV):
            raise
        _log.warning("check %s raised %s on this repository; reported as not judged", check.id, type(e).__name__, exc_info=True)
        return Outcome(Status.NA, [], f"not judged: the check failed on this repository ({type(e).__name__} in accel-audit's "
                       "rule, a bug of ours; please report it)")


def run_checks(facts: Facts, project: Project, options: AuditOptions, checks: list[Check] | None = None,
               recorder: Recorder | None = None, reuse: dict[str, Any] | None = None,
               kept: dict[str, Any] | None = None) -> tuple[list[CheckResult], list[str]]:
    """Every check's result, in order. ``recorder``: record each check's reads as its own; ``reuse``: check ID -> what
    the last recorded audit kept of that check (its reads, the shared memos it touched, its writes to the accumulators,
    its result before the notes), for the checks none of whose reads changed (:func:`_checks_reused`): that result is
    used and the check is not run; ``kept``: filled with the same for every check, for the next audit."""
    results: list[CheckResult] = []
    ignored: list[str] = []
    for check in checks if checks is not None else all_checks():
        if recorder is not None:
            recorder.begin(check.id)
        was = reuse.get(check.id) if reuse else None
        if was is not None and recorder is not None:
            deps, shared, writes, snap = was
            recorder.per[check.id] |= deps
            if shared:
                recorder.shared.setdefault(check.id, set()).update(shared)
            recorder.replay(facts, writes)  # what it wrote to the accumulators, in its turn: later checks may read it
            results.append(_copy_result(snap))
            if _ignored(check.id, options.ignore):
                ignored.append(check.id)
            if kept is not None:
                kept[check.id] = was
            continue
        ctx = Context(facts.for_check(check.id), project)
        if _ignored(check.id, options.ignore):
            ignored.append(check.id)
            outcome = Outcome(Status.NA, detail="ignored by the repository's accel-audit configuration")
        else:
            reason = (jax_not_applicable(check.id, project) or inference_not_applicable(check.id, project)
                      or check.not_applicable(ctx))
            outcome = Outcome(Status.NA, detail=reason) if reason else \
                library_not_judged(check.id, project, jax_not_judged(check.id, project, detect_safely(check, ctx)))
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
        if kept is not None and recorder is not None:
            kept[check.id] = (set(recorder.per[check.id]), set(recorder.shared.get(check.id, ())),
                              list(recorder.writes.get(check.id, ())), _copy_result(results[-1]))
    return results, ignored


def _not_judged(r: CheckResult, sites: list[str]) -> CheckResult:
    """A check's result when the scanned code trains and serves nothing and what looked like training is infrastructure
    around a user's run (``Project.notes["infrastructure_only"]``: an optimizer wrapper's own ``step`` handing the call on,
    a job builder's ``.train(entrypoint)``, a checkpoint plug-in's optional Megatron import): n/a, with nothing claimed or
    recommended (the report says no training code was found and gives no score)."""
    detail = NO_RUN + ("; what looked like training is infrastructure around it: " + "; ".join(sites) if sites else "")
    return CheckResult(id=r.id, category=r.category, title=r.title, status=Status.NA, evidence=[], detail=detail,
                       values={}, findings=[], priority=None, recommendation=None)


def _copy_result(r: CheckResult) -> CheckResult:
    """A copy of a check's result that the notes, the roles' order and the context pass (which replace or fill its lists,
    its detail and its values) leave as it is."""
    return replace(r, evidence=list(r.evidence), findings=list(r.findings), values=dict(r.values), context=[])


def _sorted_evidence(outcome: Outcome) -> list:
    seen = set()
    out = []
    for e in outcome.evidence:
        k = (e.path, e.line)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out[:20]


#: evidence is shown from the training path and its configs and launchers first (nanoGPT's C1 cites train.py's autocast
#: before sample.py's), then other project code, then guides and build files; the checks' own order within each
_ROLE_RANK = {"training": 0, "launch": 0, "config": 0, "code": 1, "guide": 2, "build": 2}


#: a folder of experiments or contributed extras (torchtitan's ``experiments/rl``): its evidence after the main code's
_SIDELINE = lazy_compile(r"(^|/)(experiments?|experimental|contrib|sandbox|playground|prototypes?|legacy|deprecated)/")


def _by_role(items: list[Evidence], copies: Sequence[str] = ()) -> list[Evidence]:
    """... and within a rank, the project's own code before a library copy's that it imports (VILA's ``llava/trl/``)."""
    return sorted(items, key=lambda e: (_ROLE_RANK.get(e.role or "", len(_ROLE_RANK)),
                                        any(e.path.startswith(d + "/") for d in copies), bool(_SIDELINE.search(e.path))))


def _with_role(items: list[Evidence], roles: Roles) -> list[Evidence]:
    return [e if e.role is not None else replace(e, role=roles.role(e.path)) for e in items]


def _fmt_value(v: str) -> str:
    return v.strip("'\"") if v not in ("True", "False", "None") else v.lower().replace("none", "null")


def _tie_order(text: str) -> tuple[int, float, str]:
    """Values held by as many recipes: numbers in ascending order, then the rest by their text."""
    try:
        return 0, float(text), text
    except ValueError:
        return 1, 0.0, text


def _note_distributions(facts: Facts, results: list[CheckResult]) -> None:
    """Where recipes disagree on a setting a check cites, say so in its detail: ``num_workers: 4 in 47 recipes, 0 in 2``."""
    dist = facts.distributions()
    if not dist:
        return
    defaults = facts.distribution_defaults()
    judged_by = facts.distribution_judged()
    for r in results:
        names = []
        keys = [e.key or "" for e in r.evidence + r.findings] + list(r.values)  # values: the settings a detail is judged by
        for key in keys:
            k = key.rsplit(".", 1)[-1].strip("-").replace("-", "_").lower()
            if k in dist and k not in names:
                names.append(k)
        for k in names:
            # ties in the order of their values' text: the order recipes were met in may differ between runs
            counts = sorted(dist[k].items(), key=lambda kv: (-kv[1], *_tie_order(_fmt_value(kv[0]))))
            text = f"{k}: " + ", ".join(f"{_fmt_value(v)} in {n} recipe{'s' if n != 1 else ''}" for v, n in counts)
            how = judged_by.get(k, "none")
            judged = (f"judged per recipe: {r.values['judged_per_recipe']}" if r.values.get("judged_per_recipe") else
                      f"judged by the {how}" if how.startswith("majority") else
                      f"no majority: judged by the default at {how.split(' ', 1)[1]}" if how.startswith("default ") else
                      f"no majority: judged by the recipes documented at {how.split(' ', 1)[1]}" if how.startswith("documented ") else "no majority")
            # recipes that leave the name unset run with a default: say how many, and where that default is
            unset = [f"{n} recipe{' leaves' if n == 1 else 's leave'} it unset and run{'s' if n == 1 else ''} with the default "
                     f"{_fmt_value(v)} at {where}" for v, (n, where) in defaults.get(k, {}).items()]
            judged = "; ".join([judged, *unset])
            r.detail = f"{r.detail}; {text} ({judged})" if r.detail else f"{text} ({judged})"
            r.values[f"recipes.{k}"] = ", ".join(f"{_fmt_value(v)}: {n}" for v, n in counts)


def _agree_with_checks(project: Project, results: list[CheckResult]) -> None:
    """The overview says what the checks found: adapter training is G4's verdict (a PEFT call behind a switch that is off,
    verl ``lora_rank: 0``, made the overview read ``adapter_training: true`` beside G4 "full-parameter fine-tuning")."""
    g4 = next((r for r in results if r.id == "G4"), None)
    if g4 is not None and g4.status != Status.NA:
        project.adapter_training = g4.status == Status.USED


#: what step zero writes into the overview's notes (:func:`checks.bottleneck.classify_bottleneck`)
_STEP_ZERO_NOTES = ("bottleneck_reasons_zh", "bottleneck_scores", "profile_steps", "profile_steps_zh")


def _before_step_zero(project: Project) -> Project:
    """A copy of the overview without step zero's verdict, which no check reads: handed to the context pass, whose reuse
    compares it (an edit that only moves a count in a bottleneck reason, ``(+13)`` to ``(+14)``, leaves it the same)."""
    return replace(project, bottleneck=Bottleneck.UNKNOWN, bottleneck_reasons=[],
                   notes={k: v for k, v in project.notes.items() if k not in _STEP_ZERO_NOTES})


def _context_pass(context: Facts, project: Project, results: list[CheckResult], roles: Roles) -> None:
    """For a check not in use on the training path, the out-of-scope places that do use it ("also seen in tests").

    Only shown: the status, the score and step zero stay those of the files in scope.
    """
    if not context.files:
        return
    registry = {c.id: c for c in all_checks()}  # imports the checks: an audit that reused the last results ran none
    for r in results:
        if r.status not in (Status.UNUSED, Status.PARTIAL) or r.id not in registry:
            continue
        check = registry[r.id]
        out = detect_safely(check, Context(context.for_check(r.id), project))
        if out.status.points > r.status.points and out.evidence:
            r.context = _with_role(_sorted_evidence(out)[:5], roles)


@contextmanager
def _closing(deferred: Deferred | None) -> Iterator[None]:
    try:
        yield
    finally:
        if deferred is not None:
            deferred.close()


#: the share of a repository's Python files that must be evaluation code for the repository to be an evaluation harness
_HARNESS_SHARE = 0.9


def _evaluation_harness(roles: Roles, options: AuditOptions) -> str | None:
    """"N of M Python files are evaluation code" when nearly all of them are (and the configuration names no training path)."""
    if options.training:
        return None
    py = [r for p, r in roles.by_path.items() if p.endswith(".py")]
    ev = sum(1 for r in py if r == "eval")
    if ev < 50 or ev < _HARNESS_SHARE * len(py):
        return None
    return f"{ev} of {len(py)} Python files are evaluation code"


def audit_files(
    files: Iterable[tuple[str, bytes | Unread]], root: str = ".", options: AuditOptions | None = None, stats: ReadStats | None = None,
    index: TreeIndex | None = None, prior: dict[str, Any] | None = None,
) -> Audit:
    """Audit an in-memory or streamed set of ``(path, bytes)``.

    Every file gets a role first (:mod:`checks.roles`); the checks, the overview and step zero read only
    the files in scope, and the rest is searched afterwards for context only. ``index``: see :func:`parse_files`.
    With an index and a cache that keeps query logs, what the audit read of the facts is recorded and stored with
    its results (see :mod:`checks.query_log`), for :func:`audit_path` to reuse after an edit nobody read; ``prior``: the
    previous log of that directory (its files' digests are reused).
    """
    options = options or AuditOptions()
    stats = stats if stats is not None else ReadStats()
    from .bottleneck import classify_bottleneck  # step zero: needs the check results

    save_log = getattr(options.cache, "save_log", None) if index is not None else None
    recorder = Recorder() if save_log is not None else None
    ctx_recorder = Recorder() if save_log is not None else None
    # a cold parallel audit's context files are extracted while the checks run (see checks.deferred)
    deferred = Deferred(defer_context(options.training)) if options.jobs > 1 and options.cache is None and index is None else None
    with _gc_ignores_existing(), _closing(deferred):  # handed back to the collector at the end, whatever happens
        with _gc_paused():  # the facts and their indexes: a million objects without cycles (see _gc_paused)
            later = _stand_ins(prior, options.cache, index, options.limits) if recorder is not None else None
            parsed = parse_files(files, options.cache, options.exclude, options.jobs, index, options.limits, later, deferred)
            roles_kept = _roles_reused(parsed, index, prior) if recorder is not None else None
            parsed = _in_full(parsed, roles_kept)
            if later is not None and later.save is not None:
                later.save()
            facts, context, roles = split_facts(parsed, options.training, recorder, ctx_recorder, roles_kept)
            # parked before the collector is back on: its first collection would otherwise walk every new object (0.1 s)
            gc.freeze()
        main_log = _main_inputs(parsed, roles, index) if recorder is not None else None
        if main_log is not None and recorder is not None:
            main_log["roles_deps"] = set(recorder.per["roles"])
        kept = _main_reused(main_log, prior)
        if kept is None:
            if recorder is not None:
                recorder.begin("overview")
            overview = _overview_reused(main_log, prior, parsed) if recorder is not None and main_log is not None else None
            if overview is not None and recorder is not None:
                # nothing the overview read changed: the last audit's overview, as the checks saw it, with its reads kept
                project, (deps, shared, writes) = overview
                recorder.per["overview"] |= deps
                if shared:
                    recorder.shared.setdefault("overview", set()).update(shared)
                recorder.replay(facts, writes)
            else:
                project = detect_project(facts, hardware=options.hardware, training=[p for p, r in roles.by_path.items() if r == "training"])
                harness = _evaluation_harness(roles, options)
                if harness and not facts.calls("backward"):
                    # (a training repository whose eval task files outnumber its code still runs a backward pass: audited)
                    # lm-evaluation-harness: its package is evaluation code (14,873 files of role eval, 98% of its Python);
                    # the few scripts beside it that load a model score checkpoints, and no run of this repository trains
                    # one (the note says so also when those loads alone no longer make the project train)
                    project.does_training = project.does_inference = False
                    project.notes["evaluation_harness"] = harness
            per: dict[str, Any] | None = None
            reuse: dict[str, Any] = {}
            if main_log is not None and recorder is not None:
                main_log["project0"] = deepcopy(project)  # the overview as the checks see it
                per = main_log["per"] = {}
                reuse = _checks_reused(main_log, prior, parsed)
            results, ignored = run_checks(facts, project, options, recorder=recorder, reuse=reuse, kept=per)
            if "infrastructure_only" in project.notes and not (project.does_training or project.does_inference):
                results = [_not_judged(r, project.notes["infrastructure_only"]) for r in results]
            if recorder is not None:
                recorder.begin("step zero")
            _agree_with_checks(project, results)
            classify_bottleneck(facts, project, results, roles.by_path)
            if recorder is not None:
                recorder.begin("")
        else:
            project, results, ignored = kept
            all_checks()  # every check module imported (and what it registers), as after running them
        seen_by_checks = _before_step_zero(project)  # what the context pass reads of the overview
        ctx_log = _context_inputs(parsed, roles, seen_by_checks, results, index) if ctx_recorder is not None else None
        if not _context_reused(ctx_log, prior, results):
            _context_pass(context, seen_by_checks, results, roles)
        if ctx_log is not None:
            ctx_log["out"] = {r.id: r.context for r in results if r.context}
        if deferred is not None:
            deferred.take_in()  # the report lists every file's parse error
    if kept is None:  # a reused audit's results have their notes and their evidence in order already
        _note_distributions(facts, results)
        for r in results:
            r.evidence = _by_role(_with_role(r.evidence, roles), roles.library_copies)
            r.findings = _with_role(r.findings, roles)
    audit = Audit(root, project, results, stats, facts, ignored, roles, context)
    if recorder is not None and ctx_recorder is not None and save_log is not None and index is not None:
        _record(audit, recorder, ctx_recorder, ctx_log, main_log, parsed, index, options, save_log, prior)
    return audit


def _main_inputs(parsed: list[FileFacts], roles: Roles, index: TreeIndex | None) -> dict[str, Any] | None:
    """Everything the overview, the checks, step zero and the notes are a function of (the options and the code aside,
    which a log is keyed by): the files in scope and the docs whose documented hints join them (path and content key,
    in the order of their facts), and every file's role (None: a file has no content key)."""
    keys = index.keys() if index is not None else {}
    seen: dict[str, FileFacts] = {ff.path: ff for ff in parsed}
    files = [(p, keys.get(p)) for p in seen if roles.by_path[p] in IN_SCOPE or roles.by_path[p] == DOCS]
    if any(k is None for _p, k in files):
        return None
    return {"files": files, "roles": deepcopy(roles)}


def _roles_reused(parsed: list[FileFacts], index: TreeIndex | None, prior: dict[str, Any] | None) -> tuple[Roles, set[Any]] | None:
    """The last recorded audit's roles and what :func:`checks.roles.classify_roles` read to make them, when it would make
    the same again: every file is where it was (the same paths in the same order; the options and the code are the log's
    key), at most :data:`REUSE_MAX` files changed, and none of its reads has another answer on the changed files."""
    was = prior.get("main") if prior is not None else None
    if index is None or prior is None or was is None or "roles_deps" not in was:
        return None
    if [ff.path for ff in parsed] != prior["paths"]:
        return None
    keys, old = index.keys(), prior["keys"]
    changed = {ff.path: ff for ff in parsed if keys.get(ff.path) is None or keys[ff.path] != old.get(ff.path)}
    if len(changed) > REUSE_MAX:
        return None
    deps: set[Any] = was["roles_deps"]
    if changed and dirty_reads(prior, changed, deps):
        return None
    return deepcopy(was["roles"]), set(deps)


def _main_reused(now: dict[str, Any] | None, prior: dict[str, Any] | None) -> tuple[Project, list[CheckResult], list[str]] | None:
    """The last recorded audit's overview (as step zero left it), results (with their notes, without context evidence)
    and ignored checks, when the facts in scope and the roles are the same as then (an edit of tests, CI or other
    context files only): the overview, the checks, step zero and the notes would give the same again."""
    was = prior.get("main") if prior is not None else None
    if now is None or was is None or now["files"] != was["files"] or now["roles"] != was["roles"]:
        return None
    project, results, ignored, _roles, _derived = prior["audit"]
    for r in results:
        r.context = []  # the context pass runs (or is reused) on these results as on fresh ones
    now["deps"] = was["deps"]  # what they read then: the log stays a cover of every read the results depend on
    for k in ("per", "shared", "project0", "overview"):  # and what each check read, for a later audit that reuses some of them
        if k in was:
            now[k] = was[k]
    return project, results, ignored


def _changed_in_scope(now: dict[str, Any], was: dict[str, Any], parsed: list[FileFacts]) -> dict[str, FileFacts] | None:
    """The files in scope whose content changed since the last recorded audit (path -> facts), when the files in scope are
    the same paths in the same order with the same roles and at most :data:`REUSE_MAX` changed; else None."""
    if now["roles"] != was["roles"] or [p for p, _k in now["files"]] != [p for p, _k in was["files"]]:
        return None
    by_path = {ff.path: ff for ff in parsed}
    changed = {p: by_path[p] for (p, k), (_p, old) in zip(now["files"], was["files"]) if k != old}
    return changed if len(changed) <= REUSE_MAX else None


def _overview_reused(now: dict[str, Any], prior: dict[str, Any] | None, parsed: list[FileFacts]) -> tuple[Project, Any] | None:
    """The last recorded audit's overview as the checks saw it, and what the overview read, wrote to the accumulators and
    shared by ``setdefault`` then, when none of its reads (with those of the memos it built) has another answer on the
    changed files in scope (see :func:`_changed_in_scope`); the options and the code are the log's key."""
    was = prior.get("main") if prior is not None else None
    if was is None or "overview" not in was or "project0" not in was:
        return None
    changed = _changed_in_scope(now, was, parsed)
    if changed is None:
        return None
    deps, shared, writes = was["overview"]
    if changed and dirty_reads(prior, changed, deps):
        return None
    return deepcopy(was["project0"]), (set(deps), set(shared), list(writes))


def _checks_reused(now: dict[str, Any], prior: dict[str, Any] | None, parsed: list[FileFacts]) -> dict[str, Any]:
    """Check ID -> what the last recorded audit kept of it (see :func:`run_checks`), for each check whose result would be
    the same: the files in scope (and the docs whose hints join them) are the same paths in the same order with the same
    roles, at most :data:`REUSE_MAX` of them changed, the overview is the same as the checks saw it then, none of the
    check's own reads (with those of the memos it used) has a different answer on the changed files, and the same holds
    for every consumer that touched a memo the check shares with it by ``setdefault`` (roles, the overview and step zero,
    which are not checks, never let such a memo's checks be reused)."""
    was = prior.get("main") if prior is not None else None
    if was is None or "per" not in was or "project0" not in was or now["project0"] != was["project0"]:
        return {}
    changed = _changed_in_scope(now, was, parsed)
    if changed is None:
        return {}
    per: dict[str, Any] = was["per"]
    dirty = dirty_reads(prior, changed, set().union(*(v[0] for v in per.values()))) if changed else set()
    clean = {cid for cid, v in per.items() if not (v[0] & dirty)}
    # consumers that share a memo by setdefault are reused together or not at all
    holders: dict[str, set[str]] = {}
    for consumer, keys in was.get("shared", {}).items():
        for k in keys:
            holders.setdefault(k, set()).add(consumer)
    for cid in list(clean):
        todo, seen = [cid], {cid}
        while todo:
            c = todo.pop()
            for k in was.get("shared", {}).get(c, ()):
                for other in holders[k] - seen:
                    seen.add(other)
                    todo.append(other)
        if any(o not in clean for o in seen):
            clean.discard(cid)
    return {cid: per[cid] for cid in clean}


def _context_inputs(parsed: list[FileFacts], roles: Roles, project: Project, results: list[CheckResult],
                    index: TreeIndex | None) -> dict[str, Any] | None:
    """Everything the context pass's output is a function of: the context files (path and content key, in the order of
    their facts), every file's role, the overview without step zero's verdict (:func:`_before_step_zero`), and each
    check's status (None: a file has no content key, nothing to compare by)."""
    keys = index.keys() if index is not None else {}
    seen: dict[str, FileFacts] = {ff.path: ff for ff in parsed}  # the order and the last-wins rule of split_facts
    files = [(p, keys.get(p)) for p in seen if roles.by_path[p] not in IN_SCOPE]
    if any(k is None for _p, k in files):
        return None
    return {"files": files, "roles": deepcopy(roles), "project": deepcopy(project), "status": [(r.id, r.status) for r in results]}


def _context_reused(now: dict[str, Any] | None, prior: dict[str, Any] | None, results: list[CheckResult]) -> bool:
    """Give ``results`` the context evidence the last recorded audit found, when the context pass's every input is the
    same as then (its files' content, the roles, the overview, the statuses): it would find the same again."""
    was = prior.get("context") if prior is not None else None
    if now is None or was is None:
        return False
    if now["files"] != was["files"] or now["status"] != was["status"] or now["roles"] != was["roles"] \
            or now["project"] != was["project"]:
        return False
    out: dict[str, list[Evidence]] = was["out"]
    for r in results:
        r.context = list(out.get(r.id, ()))
    now["deps"] = was["deps"]  # what it read then: the log stays a cover of every read the results depend on
    return True


#: bump when what a query log holds changes
LOG_VERSION = 3
#: at most this many files changed since the log was written, for its results to be reused
REUSE_MAX = 32


def _log_key(options: AuditOptions) -> str:
    """What a query log's results were made with: the facts' version, the options that change a report, and the code."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = code_version([here, os.path.join(os.path.dirname(here), "reports")])
    return repr((TREE_VERSION, LOG_VERSION, options.ignore, options.exclude, options.training, options.hardware, options.limits, code))


def _record(audit: Audit, recorder: Recorder, ctx_recorder: Recorder, ctx_log: dict[str, Any] | None,
            main_log: dict[str, Any] | None, parsed: list[FileFacts], index: TreeIndex, options: AuditOptions,
            save_log: Callable[[str, dict[str, object]], None], prior: dict[str, Any] | None) -> None:
    """Store what ``audit`` read of the facts with its results (nothing when the recording cannot be trusted).
    ``ctx_recorder``: the reads of the context's facts; ``ctx_log``: the context pass's inputs and output (kept for the
    next full audit, :func:`_context_reused`). ``prior``: the directory's previous log made with the same options and
    code, whose files' digests are reused."""
    from reports.prereq import torch_cap, transformers_cap  # the report's facts-derived advice, recorded with the rest
    from reports.snippets import repo_style

    recorder.begin("report")
    audit.derived["parse_errors"] = audit.parse_errors
    audit.derived["style"] = repo_style(audit.facts, audit.project, audit.roles.by_path)
    audit.derived["torch_cap"] = torch_cap(audit)
    audit.derived["hf_cap"] = transformers_cap(audit)
    if recorder.unsound is not None or ctx_recorder.unsound is not None:
        return
    keys = index.keys()
    paths = [ff.path for ff in parsed]
    if len(set(paths)) != len(paths) or any(p not in keys for p in paths):
        return
    ctx_deps = ctx_recorder.deps | (ctx_log.get("deps", set()) if ctx_log is not None else set())
    main_deps = recorder.deps | (main_log.get("deps", set()) if main_log is not None else set())
    deps = main_deps | ctx_deps
    if ctx_log is not None:
        ctx_log["deps"] = ctx_deps
    if main_log is not None:
        main_log["deps"] = main_deps
        if "per" in main_log and "shared" not in main_log:
            main_log["shared"] = {c: set(ks) for c, ks in recorder.shared.items()}
        if "per" in main_log and "overview" not in main_log and "overview" in recorder.per:
            # what the overview read, shared and accumulated, when it ran or was reused (see _overview_reused)
            main_log["overview"] = (set(recorder.per.get("overview", ())), set(recorder.shared.get("overview", ())),
                                    list(recorder.writes.get("overview", ())))
    wholes, attrs = attributes(deps)
    known: dict[str, dict[str, bytes]] = prior["by_key"] if prior is not None else {}
    by_key: dict[str, dict[str, bytes]] = {}
    for ff in parsed:
        k = keys[ff.path]
        names = wholes | attrs.get(ff.path, frozenset())
        have = known.get(k, {})
        missing = [n for n in names if n not in have]
        by_key[k] = {n: have[n] for n in names if n in have} | (file_digests(ff, missing) if missing else {})
    facts = [f for f in (audit.facts, audit.context) if f is not None]
    kept = (audit.project, audit.results, audit.ignored, audit.roles, audit.derived)
    # the last log's shares of the files whose facts are the same are kept; those of added and changed files are hashed
    fresh = {ff.path: ff for ff in parsed if prior is None or prior["keys"].get(ff.path) != keys[ff.path]}
    hashes = share_hashes(deps, facts, prior["hashes"] if prior is not None else None, fresh if prior is not None else None,
                          set(paths))
    save_log(index.root, {"key": _log_key(options), "paths": paths, "keys": {p: keys[p] for p in paths}, "wholes": wholes,
                          "attrs": attrs, "by_key": by_key, "hashes": hashes, "audit": kept, "context": ctx_log,
                          "main": main_log})


class _LoadedLater(Facts):
    """Facts built only when something reads them (a report that needs more than a reused audit kept)."""

    def __init__(self, load: Callable[[], Facts]) -> None:
        self._load = load
        self.check_id = None
        self._memo = {}

    @property  # type: ignore[override]
    def _s(self) -> dict[str, object]:
        return self._load()._s


def _reuse(
    files: Iterable[tuple[str, bytes | Unread]], root: str, options: AuditOptions, stats: ReadStats, index: TreeIndex,
) -> tuple[Audit | None, Iterable[tuple[str, bytes | Unread]], dict[str, Any] | None]:
    """The audit stored with the directory's query log when no file changed since then in a way any of its reads saw;
    else None and the files to audit in full (what was walked already, then the rest)."""
    cache = options.cache
    open_log = getattr(cache, "open_log", None)
    present = getattr(cache, "pack_present", None)
    log = open_log(index.root, _log_key(options)) if open_log is not None and index.old else None
    if log is not None and present is not None and not present(index.root):
        return None, files, log  # the facts are gone: audit in full, which writes them again
    if log is None:
        return None, files, None
    taken: list[tuple[str, bytes | Unread]] = []
    it = iter(files)
    read = 0
    for path, data in it:
        taken.append((path, data))
        if not isinstance(data, Unread) and not (options.exclude and _excluded(path, options.exclude)):
            read += 1
            if read > REUSE_MAX:
                return None, chain(taken, it), log
    old_keys: dict[str, str] = log["keys"]
    paths: list[str] = []
    changed: dict[str, FileFacts] = {}
    fresh: dict[str, FileFacts] = {}
    for path, data in taken:
        if options.exclude and _excluded(path, options.exclude):
            continue
        paths.append(path)
        if isinstance(data, Unread):
            key = data.key
        else:
            key = cache_key(path, data)
            index.keyed(path, key)
        if old_keys.get(path) == key:
            continue
        if path not in old_keys:
            return None, taken, log  # an added file: the structure changed
        ff = cache.get(key) if isinstance(data, Unread) else None
        if ff is None:
            ff = extract_file(path, data.read(options.limits) if isinstance(data, Unread) else data)
            fresh[key] = ff
        changed[path] = ff
    if paths != log["paths"] or unchanged(log, changed) is not None:
        return None, taken, log
    save = getattr(cache, "save_index", None)
    if save is not None:
        save(index, fresh)
    project, results, ignored, roles, derived = log["audit"]
    loaded: list[tuple[Facts, Facts]] = []

    def load() -> tuple[Facts, Facts]:
        if not loaded:
            parsed = parse_files(taken, cache, options.exclude, 1, None, options.limits)
            facts, context, _roles = split_facts(parsed, options.training)
            loaded.append((facts, context))
        return loaded[0]

    return Audit(root, project, results, stats, _LoadedLater(lambda: load()[0]), ignored, roles,
                 _LoadedLater(lambda: load()[1]), derived), taken, log


def audit_path(path: str | os.PathLike[str], options: AuditOptions | None = None) -> Audit:
    """Audit a local directory or a ``.tar.gz`` archive file.

    With a cache that keeps each directory's index and query log, a re-scan after an edit that no read of the last
    audit saw returns that audit's results without loading the facts (:func:`_reuse`); anything else audits in full."""
    options = options or AuditOptions()
    p = Path(path)
    stats = ReadStats()
    if p.is_dir():
        open_tree = getattr(options.cache, "open_tree", None)  # a cache that keeps each directory's index and pack
        index = open_tree(p, TREE_VERSION) if open_tree is not None else None
        files: Iterable[tuple[str, bytes | Unread]] = iter_directory(p, options.limits, stats, index)
        if index is not None:
            reused, files, prior = _reuse(files, str(path), options, stats, index)
            if reused is not None:
                return reused
            return audit_files(files, str(path), options, stats, index, prior)
        return audit_files(files, str(path), options, stats, index)
    if p.is_file():
        with open(p, "rb") as fh:
            if not looks_like_archive(fh.read(512)):
                raise SourceError(f"not a directory or archive (.tar.gz, .tar): {path}")
            fh.seek(0)
            return audit_tarball(fh, str(path), options, stats)
    raise SourceError(f"path does not exist: {path}")


def audit_tarball(stream: BinaryIO, root: str, options: AuditOptions | None = None, stats: ReadStats | None = None) -> Audit:
    """Audit a tar(.gz) stream as GitHub's tarball endpoint returns it (one top-level folder)."""
    options = options or AuditOptions()
    stats = stats if stats is not None else ReadStats()
    # a broken archive raises SourceError while facts are built, before any check runs
    return audit_files(iter_tarball(stream, options.limits, stats), root, options, stats)
