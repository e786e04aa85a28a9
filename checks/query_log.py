"""What an audit read of the facts, so that a re-scan after an edit nobody read can reuse its results.

During an audit with a directory cache, every read the consumers (roles, the overview, the checks,
step zero, the context pass, the report's facts-derived parts) make of the facts goes through
recording views (:class:`Recorder`):

- a lookup in one of the facts' indexes (``calls_by_short["DataLoader"]``, ``configs_by_key["stage"]``,
  ...) is recorded as ``(index, key)``;
- a read of a whole record list (``calls``, ``suppressed``, ...) or an iteration over an index is
  recorded as ``("*", kind)``;
- a read of a file's own facts (``facts.files[p].assigns``, iteration over the files) is recorded as
  ``("f", path, attribute)``;
- the order of the records filed under some keys of an index (``Facts._in_order`` merging two index answers in
  repository order) is recorded as ``("<", index, *keys)``: a file's share is its records under those keys, in its order;
- a named selection of the calls (``Facts.calls_selected``) is recorded as ``("#", selection)``: a file's share is its
  calls that pass, in its order.

The *structure* (which files have facts, in scan order) is never recorded: any added, removed or
renamed file, or one that turns from parsed to skipped, ends the reuse.

Each recorded read is then stored as the hash of every file's share of its answer (files with an
empty share omitted): the records of that file under that key, all its records of that kind, or that
attribute of that file. A file's share depends on nothing but its own facts, so a re-scan evaluates
the recorded reads on the changed files alone (:func:`unchanged`): when every share hashes as before,
every answer any consumer got is the same, record for record and in order, and so are the results.
Anything the views do not know (an unknown key of the shared facts, a method of a file's facts) marks
the recording unusable (:attr:`Recorder.unsound`): that audit stores no log and the next scan runs in full.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .facts.store import CALL_FUNCS, CALL_SELECTIONS, Facts, _norm_key
from .facts.types import RECORD_LISTS, FileFacts
from .roles import role_calls

__all__ = ["Recorder", "attributes", "code_version", "dirty_reads", "file_digests", "share_hashes", "unchanged"]

#: an index of the shared facts -> the record list it files
INDEX_KIND = {
    "calls_by_short": "calls", "calls_by_kw": "calls", "configs_by_key": "configs", "launch_args_by_key": "launches",
    "arg_options_by_key": "arg_options", "fields_by_key": "fields", "assigns_by_key": "assigns", "refs_by_name": "refs",
    "decorators_by_name": "decorators", "attr_assigns_by_name": "attr_assigns", "imports_by_name": "imports",
    "params_by_key": "params",
}
#: record lists read whole: their share of a file is that list of the file (``suppressed``: its line -> check IDs)
WHOLE = frozenset(RECORD_LISTS) | {"suppressed"}
#: indexes whose set of keys (in order of first appearance) is read apart from their records: iterating their keys is
#: recorded as ``("#", index)``, whose share of a file is the file's own keys in that order (see :func:`keyset`)
KEYSETS = {"calls_by_short": "calls", "call_short_of": "calls", "calls_by_kw": "calls"}
#: what a consumer reads of a file's attribute, recorded as a read of its own (``("f", path, name)``, hashed as that
#: view): the file roles read ``calls`` as :func:`checks.roles.role_calls`
VIEWS: dict[str, Callable[[FileFacts], Any]] = {"calls@roles": role_calls}
#: memos the facts keep (keys made after the facts were built) that accumulate what several consumers write, in order
#: (``_majority``'s distributions): each consumer's writes are recorded, and replayed when its result is reused
ACCUMULATORS = ("distribution",)

Dep = tuple[str, ...]


class Recorder:
    """The reads made through the views it hands out, per consumer (:meth:`begin`); ``unsound``: why the recording cannot
    be trusted (None: it can).

    Memos the consumers leave in the facts' shared dict (keys made after the facts were built) are followed: a memo made
    by the ``get`` miss / set pattern (``recipe_modules``, ``call_names_by_segment``, ...) records the reads made while it
    was built as its own (:attr:`memo_deps`), and every consumer that finds it later is given them; a memo reached by
    ``setdefault`` is state the consumers share in an order (a cycle guard, tables filled key by key): the consumers that
    touch one are reused only together (:attr:`shared`); an accumulator (:data:`ACCUMULATORS`) records each consumer's
    writes (:attr:`writes`), replayed in order when that consumer's result is reused (:meth:`replay`)."""

    __slots__ = ("_indexes", "_stack", "_target", "_touched", "consumer", "memo_deps", "per", "shared", "unsound", "writes")

    def __init__(self) -> None:
        self.per: dict[str, set[Dep]] = {"": set()}
        self.consumer = ""
        self._target: set[Dep] = self.per[""]
        self._stack: list[tuple[str, set[Dep]]] = []  # memos being built (key, their reads), innermost last
        self._indexes: list[_Index] = []
        self._touched: list[_File] = []  # file views holding attribute values read by the current consumer
        self.memo_deps: dict[str, set[Dep]] = {}
        self.shared: dict[str, set[str]] = {}  # consumer -> the setdefault memos it touched
        self.writes: dict[str, list[tuple[str, Any, Any]]] = {}  # consumer -> (accumulator, key, value) in order
        self.unsound: str | None = None

    @property
    def deps(self) -> set[Dep]:
        """Every read recorded so far (by every consumer)."""
        out: set[Dep] = set()
        for d in self.per.values():
            out |= d
        return out

    def begin(self, consumer: str) -> None:
        """Record the following reads as ``consumer``'s (a memo left half-built counts as read by its builder)."""
        self._end()
        self.consumer = consumer
        self._target = self.per.setdefault(consumer, set())
        for fv in self._touched:
            d = object.__getattribute__(fv, "__dict__")
            d.clear()
        self._touched.clear()

    def _end(self) -> None:
        while self._stack:
            _key, deps = self._stack.pop()
            self._target = self._stack[-1][1] if self._stack else self.per[self.consumer]
            self._target |= deps

    def _open(self, key: str) -> None:
        self._stack.append((key, set()))
        self._target = self._stack[-1][1]
        for fv in self._touched:  # attribute values kept for the consumer are read again, so that the memo records them
            object.__getattribute__(fv, "__dict__").clear()
        self._touched.clear()

    def _close(self, key: str) -> None:
        if not any(k == key for k, _d in self._stack):  # set with no miss before it: whatever was read so far may be in it
            self.memo_deps[key] = set(self._target) | set(self.per[self.consumer])
            return
        while self._stack:
            k, deps = self._stack.pop()
            self._target = self._stack[-1][1] if self._stack else self.per[self.consumer]
            self._target |= deps
            if k == key:
                self.memo_deps[key] = deps
                return

    def _hit(self, key: str) -> None:
        deps = self.memo_deps.get(key)
        if deps is None:
            self.unsound = f"a memo {key!r} whose reads were not recorded"
        else:
            self._target |= deps

    def replay(self, facts: Facts, writes: list[tuple[str, Any, Any]]) -> None:
        """Write again what a consumer whose result is reused wrote to the accumulators (recorded as its writes)."""
        for acc, k, v in writes:
            facts._s.setdefault(acc, {})[k] = v

    def watch(self, facts: Facts) -> Facts:
        """Record every later read of ``facts`` and of its check views (they share its dict)."""
        facts._s = _Shared(facts._s, self)
        return facts

    def files(self, files: Mapping[str, FileFacts], views: Mapping[str, str] | None = None) -> dict[str, Any]:
        """A view of ``path -> facts`` that records which attributes of which files are read (which paths exist is
        the structure, never recorded: any change to it ends the reuse). ``views``: attribute -> a name of
        :data:`VIEWS`, read in its place (the roles read ``calls`` as ``calls@roles``)."""
        return {p: _File(ff, self, views) for p, ff in files.items()}


class _Acc(dict):  # type: ignore[type-arg]
    """An accumulator memo: each write is recorded as the current consumer's."""

    def __init__(self, name: str, rec: Recorder) -> None:
        super().__init__()
        self._name, self._rec = name, rec

    def __setitem__(self, key: Any, value: Any) -> None:
        self._rec.writes.setdefault(self._rec.consumer, []).append((self._name, key, value))
        dict.__setitem__(self, key, value)


class _Shared(dict):  # type: ignore[type-arg]
    """The facts' shared dict (:class:`checks.facts.store.Facts`), handing out recording views of what it holds."""

    def __init__(self, base: dict[str, Any], rec: Recorder) -> None:
        super().__init__(base)
        self._rec = rec
        self._known = frozenset(base)  # keys made when the facts were built; keys added later are memos of recorded reads
        self._views: dict[str, Any] = {}

    def _view(self, key: str, value: Any) -> Any:
        if key not in self._known:
            if not key.startswith(ACCUMULATORS):
                self._rec._hit(key)
            return value
        if key == "files":
            view: Any = self._rec.files(value)
        elif key in INDEX_KIND:
            view = _Index(key, value, self._rec)
            self._rec._indexes.append(view)
        elif key in KEYSETS:
            view = _Keys(key, value, self._rec)
        elif key in WHOLE:
            self._rec._target.add(("*", key))  # every read: each consumer's reads are its own
            return value
        else:
            self._rec.unsound = f"unrecorded read of the facts' {key!r}"
            return value
        self._views[key] = view
        return view

    def __getitem__(self, key: str) -> Any:
        view = self._views.get(key)
        return view if view is not None else self._view(key, dict.__getitem__(self, key))

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        view = self._views.get(key)
        if view is not None:
            return view
        if dict.__contains__(self, key):
            return self._view(key, dict.__getitem__(self, key))
        if key not in self._known and not key.startswith(ACCUMULATORS):
            self._rec._open(key)  # a memo's miss: what is read until it is set is what it is made of
        return default

    def __contains__(self, key: object) -> bool:
        self._rec.unsound = "a membership test on the facts' dict"
        return dict.__contains__(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self._known:
            self._rec.unsound = f"write to the facts' {key!r}"
        elif not key.startswith(ACCUMULATORS):
            self._rec._close(key)
        dict.__setitem__(self, key, value)

    def note_selection(self, selection: str) -> None:
        """``Facts.calls_selected`` read that selection of every file's calls (and nothing else of them)."""
        self._rec._target.add(("#", selection))

    def note_order(self, index: str, keys: Iterable[str]) -> None:
        """``Facts._in_order`` read the order of the records filed under ``keys`` in ``index`` (and nothing else of the
        files it touched)."""
        if index not in INDEX_KIND:
            self._rec.unsound = f"an order read of the facts' {index!r}"
            return
        self._rec._target.add(("<", index, *sorted(set(keys))))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self._known:
            self._rec.unsound = f"setdefault on the facts' {key!r}"
            return dict.setdefault(self, key, default)
        if key.startswith(ACCUMULATORS):
            acc = dict.get(self, key)
            if acc is None:
                acc = _Acc(key, self._rec)
                dict.__setitem__(self, key, acc)
            return acc
        self._rec.shared.setdefault(self._rec.consumer, set()).add(key)
        return dict.setdefault(self, key, default)

    def pop(self, *args: Any) -> Any:
        self._rec.unsound = "a pop from the facts' dict"
        return dict.pop(self, *args)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._rec.unsound = "an update of the facts' dict"
        dict.update(self, *args, **kwargs)

    def values(self) -> Any:
        self._rec.unsound = "iteration over the facts' dict"
        return dict.values(self)

    def items(self) -> Any:
        self._rec.unsound = "iteration over the facts' dict"
        return dict.items(self)


class _Keys:
    """A map whose keys are read and nothing else of it (``call_short_of``: a call name -> its last segment): any use
    records the kind's key set (the answer of a lookup is a function of the key)."""

    __slots__ = ("_d", "_dep", "_rec")

    def __init__(self, name: str, d: dict[str, Any], rec: Recorder) -> None:
        self._d, self._dep, self._rec = d, ("#", name), rec

    def __iter__(self) -> Iterator[str]:
        self._rec._target.add(self._dep)
        return iter(self._d)

    def keys(self) -> Any:
        self._rec._target.add(self._dep)
        return self._d.keys()

    def get(self, key: str, default: Any = None) -> Any:
        self._rec._target.add(self._dep)
        return self._d.get(key, default)

    def __len__(self) -> int:
        self._rec._target.add(self._dep)
        return len(self._d)


class _Index:
    """A name/key index of records: a lookup records its key, a walk over its keys records its key set (when kept, see
    :data:`KEYSETS`), anything that walks its records records the whole kind."""

    __slots__ = ("_d", "_rec", "name")

    def __init__(self, name: str, d: dict[str, list[Any]], rec: Recorder) -> None:
        self.name, self._d, self._rec = name, d, rec

    def _all(self) -> None:
        self._rec._target.add(("*", INDEX_KIND[self.name]))

    def _keys(self) -> None:
        self._rec._target.add(("#", self.name) if self.name in KEYSETS else ("*", INDEX_KIND[self.name]))

    def get(self, key: str, default: Any = None) -> Any:
        self._rec._target.add((self.name, key))
        return self._d.get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._rec._target.add((self.name, key))
        return self._d[key]

    def __contains__(self, key: object) -> bool:
        self._rec._target.add((self.name, str(key)))
        return key in self._d

    def items(self) -> Any:
        self._all()
        return self._d.items()

    def values(self) -> Any:
        self._all()
        return self._d.values()

    def keys(self) -> Any:
        self._keys()
        return self._d.keys()

    def __iter__(self) -> Iterator[str]:
        self._keys()
        return iter(self._d)

    def __len__(self) -> int:
        self._keys()
        return len(self._d)


class _File:
    """One file's facts, recording each attribute read (the first read of a name by a consumer keeps its value here:
    later reads of it are plain attribute reads until the next consumer begins, see :meth:`Recorder.begin`)."""

    __slots__ = ("__dict__", "_ff", "_rec", "_views")

    def __init__(self, ff: FileFacts, rec: Recorder, views: Mapping[str, str] | None = None) -> None:
        object.__setattr__(self, "_ff", ff)
        object.__setattr__(self, "_rec", rec)
        object.__setattr__(self, "_views", views)

    def __getattr__(self, name: str) -> Any:
        ff = object.__getattribute__(self, "_ff")
        rec: Recorder = object.__getattribute__(self, "_rec")
        views = object.__getattribute__(self, "_views")
        read = name
        if views is not None and name in views:  # read in its place: what the consumer reads of that attribute
            read = views[name]
            value = VIEWS[read](ff)
        else:
            value = getattr(ff, name)
        if callable(value) or name.startswith("__"):
            rec.unsound = f"use of a file's facts {name!r}"  # not a recordable read
            return value
        rec._target.add(("f", ff.path, read))
        if rec._stack:  # a memo being built: every read of it is recorded as the memo's
            return value
        d = object.__getattribute__(self, "__dict__")
        if not d:
            rec._touched.append(self)
        d[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a file's facts are read-only here")


# -- the answers' shares, hashed ----------------------------------------------------------------------------------------

def _digest(value: Any) -> bytes:
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogatepass"), digest_size=12).digest()


def _whole(ff: FileFacts, kind: str) -> Any:
    if kind == "suppressed":  # line -> frozenset of IDs: in an order that does not depend on the process's string hashing
        return sorted((line, sorted(ids)) for line, ids in ff.suppressed.items())
    return getattr(ff, kind)


def keyset(ff: FileFacts, index: str) -> list[Any]:
    """A file's share of an index's key set (:data:`KEYSETS`): its own keys, in the order they first appear in it; or
    of a selection of the calls (:data:`checks.facts.store.CALL_SELECTIONS`): its calls that pass, in its order."""
    if index == "calls_by_short":
        return list(dict.fromkeys(c.name.rsplit(".", 1)[-1] for c in ff.calls))
    if index == "call_short_of":
        return list(dict.fromkeys(c.name for c in ff.calls))
    if index == "calls_by_kw":
        return list(dict.fromkeys(_norm_key(k) for c in ff.calls if c.kwargs for k in c.kwargs))
    if index == CALL_FUNCS:
        return list(dict.fromkeys(c.func for c in ff.calls if c.func))
    if index in CALL_SELECTIONS:
        test = CALL_SELECTIONS[index]
        return [c for c in ff.calls if test(c)]
    raise KeyError(index)


def _attr(ff: FileFacts, name: str) -> Any:
    view = VIEWS.get(name)
    if view is not None:
        return view(ff)
    if name.startswith("#"):
        return keyset(ff, name[1:])
    return _whole(ff, name) if name == "suppressed" else getattr(ff, name)


def _answer(s: dict[str, Any], d: Dep) -> Any:
    """The answer of the index read ``d`` in the facts' dict ``s`` (of one file's facts, or of a scan's): the records
    under a key, or (``("<", index, *keys)``) the records under those keys in repository order."""
    if d[0] != "<":
        return dict.__getitem__(s, d[0]).get(d[1], ())
    idx = dict.__getitem__(s, d[1])
    members = {id(x) for k in d[2:] for x in idx.get(k, ())}
    return [x for x in dict.__getitem__(s, INDEX_KIND[d[1]]) if id(x) in members] if members else ()


def _path_of(x: Any) -> str:
    return x[0].path if isinstance(x, tuple) else x.path  # launch_args_by_key files (launch, key, value)


def share_hashes(deps: set[Dep], facts: list[Facts], known: Mapping[Dep, Mapping[str, bytes]] | None = None,
                 fresh: Mapping[str, FileFacts] | None = None, paths: set[str] | None = None) -> dict[Dep, dict[str, bytes]]:
    """For each read of an index (``(index, key)``, ``("<", index, *keys)``), the hash of every file's non-empty share of its answer (``facts``:
    the Facts the reads went to). Reads of whole kinds and of files' attributes are hashed by :func:`file_digests`.

    ``known``: the hashes of the last log, whose shares of the files not in ``fresh`` (path -> facts: every file that was
    added or changed since; the others have the facts they had then) are kept, so a later audit hashes only what changed.
    ``fresh`` None: every share is hashed. ``paths``: every file of ``facts`` (by default read from them)."""
    out: dict[Dep, dict[str, bytes]] = {}
    one: dict[str, Facts] = {}
    for d in deps:
        if d[0] in ("*", "f", "#"):
            continue
        was = known.get(d) if known is not None and fresh is not None else None
        if was is not None and fresh is not None:
            if paths is None:
                paths = {p for f in facts for p in dict.__getitem__(f._s, "files")}
            h = {p: v for p, v in was.items() if p not in fresh and p in paths}
            for p, ff in fresh.items():
                f1 = one.get(p)
                if f1 is None:
                    f1 = one[p] = Facts([ff])
                xs = _answer(f1._s, d)
                if xs:
                    h[p] = _digest(list(xs))
            out[d] = h
            continue
        by_path: dict[str, list[Any]] = {}
        for f in facts:
            for x in _answer(f._s, d):
                by_path.setdefault(_path_of(x), []).append(x)
        out[d] = {p: _digest(xs) for p, xs in by_path.items()}
    return out


def attributes(deps: set[Dep]) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The kinds read whole (and key sets read, as ``#index``), and per file the other attributes read of it."""
    wholes = frozenset(d[1] if d[0] == "*" else "#" + d[1] for d in deps if d[0] in ("*", "#"))
    attrs: dict[str, set[str]] = {}
    for d in deps:
        if d[0] == "f" and d[2] not in wholes:
            attrs.setdefault(d[1], set()).add(d[2])
    return wholes, {p: frozenset(a) for p, a in attrs.items()}


def file_digests(ff: FileFacts, names: Iterable[str]) -> dict[str, bytes]:
    """The hash of each named attribute of a file's facts (a function of its content: kept by facts key across scans)."""
    return {n: _digest(_attr(ff, n)) for n in names}


def unchanged(log: Mapping[str, Any], changed: Mapping[str, FileFacts]) -> str | None:
    """None when no read recorded in ``log`` has a different answer with ``changed`` (path -> its new facts) in place of
    those files' old facts; else the first read that differs (for the log)."""
    if not changed:
        return None
    wholes: frozenset[str] = log["wholes"]
    attrs: Mapping[str, frozenset[str]] = log["attrs"]
    by_key: Mapping[str, Mapping[str, bytes]] = log["by_key"]
    for p, ff in changed.items():
        old = by_key.get(log["keys"][p])
        if old is None:
            return f"{p}: no digests"
        for n in wholes | attrs.get(p, frozenset()):
            if old.get(n) != _digest(_attr(ff, n)):
                return f"{p}: {n}"
    one = {p: Facts([ff]) for p, ff in changed.items()}
    for d, by_path in log["hashes"].items():
        for p in changed:
            xs = _answer(one[p]._s, d)
            new = _digest(list(xs)) if xs else None
            if new != by_path.get(p):
                return f"{p}: {d[0]} {d[1]!r}"
    return None


def dirty_reads(log: Mapping[str, Any], changed: Mapping[str, FileFacts], deps: Iterable[Dep]) -> set[Dep]:
    """Those of ``deps`` (reads recorded in ``log``) whose answer differs with ``changed`` (path -> its new facts) in place
    of those files' old facts. A read whose old share is unknown counts as differing."""
    by_key: Mapping[str, Mapping[str, bytes]] = log["by_key"]
    old = {p: by_key.get(log["keys"].get(p, ""), {}) for p in changed}
    new: dict[tuple[str, str], bytes] = {}

    def differs(p: str, n: str) -> bool:
        d = new.get((p, n))
        if d is None:
            d = new[p, n] = _digest(_attr(changed[p], n))
        was = old[p].get(n)
        return was is None or was != d

    one: dict[str, Facts] = {}
    hashes: Mapping[Dep, Mapping[str, bytes]] = log["hashes"]
    out: set[Dep] = set()
    for d in deps:
        if d[0] == "*" or d[0] == "#":
            n = d[1] if d[0] == "*" else "#" + d[1]
            if any(differs(p, n) for p in changed):
                out.add(d)
        elif d[0] == "f":
            if d[1] in changed and differs(d[1], d[2]):
                out.add(d)
        else:
            by_path = hashes.get(d)
            if by_path is None:
                out.add(d)
                continue
            for p, ff in changed.items():
                f = one.get(p)
                if f is None:
                    f = one[p] = Facts([ff])
                xs = _answer(f._s, d)
                if (_digest(list(xs)) if xs else None) != by_path.get(p):
                    out.add(d)
                    break
    return out


def code_version(modules: list[str]) -> str:
    """A digest of the size and modification time of every ``.py`` file of the given packages (the checks, the
    reports): stored results are reused only by the code that made them."""
    h = hashlib.sha256()
    for mod in modules:
        for dirpath, dirnames, filenames in os.walk(mod):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, name))
                    h.update(f"{dirpath}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()
