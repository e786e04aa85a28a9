"""What an audit read of the facts, so that a re-scan after an edit nobody read can reuse its results.

During an audit with a directory cache, every read the consumers (roles, the overview, the checks,
step zero, the context pass, the report's facts-derived parts) make of the facts goes through
recording views (:class:`Recorder`):

- a lookup in one of the facts' indexes (``calls_by_short["DataLoader"]``, ``configs_by_key["stage"]``,
  ...) is recorded as ``(index, key)``;
- a read of a whole record list (``calls``, ``suppressed``, ...) or an iteration over an index is
  recorded as ``("*", kind)``;
- a read of a file's own facts (``facts.files[p].assigns``, iteration over the files) is recorded as
  ``("f", path, attribute)``.

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
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .facts.store import Facts
from .facts.types import RECORD_LISTS, FileFacts

__all__ = ["Recorder", "attributes", "code_version", "file_digests", "share_hashes", "unchanged"]

#: an index of the shared facts -> the record list it files
INDEX_KIND = {
    "calls_by_short": "calls", "calls_by_kw": "calls", "configs_by_key": "configs", "launch_args_by_key": "launches",
    "arg_options_by_key": "arg_options", "fields_by_key": "fields", "assigns_by_key": "assigns", "refs_by_name": "refs",
    "decorators_by_name": "decorators", "attr_assigns_by_name": "attr_assigns", "imports_by_name": "imports",
}
#: record lists read whole: their share of a file is that list of the file (``suppressed``: its line -> check IDs)
WHOLE = frozenset(RECORD_LISTS) | {"suppressed"}

Dep = tuple[str, ...]


class Recorder:
    """The reads made through the views it hands out; ``unsound``: why the recording cannot be trusted (None: it can)."""

    __slots__ = ("_deps", "_indexes", "unsound")

    def __init__(self) -> None:
        self._deps: set[Dep] = set()
        self._indexes: list[_Index] = []
        self.unsound: str | None = None

    @property
    def deps(self) -> set[Dep]:
        """Every read recorded so far."""
        out = set(self._deps)
        for ix in self._indexes:
            out.update((ix.name, k) for k in ix.keys_read)
        return out

    def watch(self, facts: Facts) -> Facts:
        """Record every later read of ``facts`` and of its check views (they share its dict)."""
        facts._s = _Shared(facts._s, self)
        return facts

    def files(self, files: Mapping[str, FileFacts]) -> dict[str, Any]:
        """A view of ``path -> facts`` that records which attributes of which files are read (which paths exist is
        the structure, never recorded: any change to it ends the reuse)."""
        return {p: _File(ff, self) for p, ff in files.items()}


class _Shared(dict):  # type: ignore[type-arg]
    """The facts' shared dict (:class:`checks.facts.store.Facts`), handing out recording views of what it holds."""

    def __init__(self, base: dict[str, Any], rec: Recorder) -> None:
        super().__init__(base)
        self._rec = rec
        self._known = frozenset(base)  # keys made when the facts were built; keys added later are memos of recorded reads
        self._views: dict[str, Any] = {}

    def _view(self, key: str, value: Any) -> Any:
        if key not in self._known:
            return value
        if key == "files":
            view: Any = self._rec.files(value)
        elif key in INDEX_KIND:
            view = _Index(key, value, self._rec)
            self._rec._indexes.append(view)
        elif key in WHOLE:
            self._rec._deps.add(("*", key))
            view = value
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
        return default

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self._known:
            self._rec.unsound = f"write to the facts' {key!r}"
        dict.__setitem__(self, key, value)

    def values(self) -> Any:
        self._rec.unsound = "iteration over the facts' dict"
        return dict.values(self)

    def items(self) -> Any:
        self._rec.unsound = "iteration over the facts' dict"
        return dict.items(self)


class _Index:
    """A name/key index of records: a lookup records its key, anything that walks it records the whole kind."""

    __slots__ = ("_d", "_rec", "keys_read", "name")

    def __init__(self, name: str, d: dict[str, list[Any]], rec: Recorder) -> None:
        self.name, self._d, self._rec = name, d, rec
        self.keys_read: set[str] = set()

    def _all(self) -> None:
        self._rec._deps.add(("*", INDEX_KIND[self.name]))

    def get(self, key: str, default: Any = None) -> Any:
        self.keys_read.add(key)
        return self._d.get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.keys_read.add(key)
        return self._d[key]

    def __contains__(self, key: object) -> bool:
        self.keys_read.add(str(key))
        return key in self._d

    def items(self) -> Any:
        self._all()
        return self._d.items()

    def values(self) -> Any:
        self._all()
        return self._d.values()

    def keys(self) -> Any:
        self._all()
        return self._d.keys()

    def __iter__(self) -> Iterator[str]:
        self._all()
        return iter(self._d)

    def __len__(self) -> int:
        self._all()
        return len(self._d)


class _File:
    """One file's facts, recording each attribute read (the first read of a name keeps its value here: later reads of
    it are plain attribute reads)."""

    def __init__(self, ff: FileFacts, rec: Recorder) -> None:
        object.__setattr__(self, "_ff", ff)
        object.__setattr__(self, "_rec", rec)

    def __getattr__(self, name: str) -> Any:
        ff = object.__getattribute__(self, "_ff")
        rec: Recorder = object.__getattribute__(self, "_rec")
        value = getattr(ff, name)
        if callable(value) or name.startswith("__"):
            rec.unsound = f"use of a file's facts {name!r}"  # not a recordable read
            return value
        rec._deps.add(("f", ff.path, name))
        object.__setattr__(self, name, value)
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


def _attr(ff: FileFacts, name: str) -> Any:
    return _whole(ff, name) if name == "suppressed" else getattr(ff, name)


def _path_of(x: Any) -> str:
    return x[0].path if isinstance(x, tuple) else x.path  # launch_args_by_key files (launch, key, value)


def share_hashes(deps: set[Dep], facts: list[Facts]) -> dict[Dep, dict[str, bytes]]:
    """For each read of an index (``(index, key)``), the hash of every file's non-empty share of its answer (``facts``:
    the Facts the reads went to). Reads of whole kinds and of files' attributes are hashed by :func:`file_digests`."""
    out: dict[Dep, dict[str, bytes]] = {}
    wholes = {d[1] for d in deps if d[0] == "*"}
    for d in deps:
        if d[0] in ("*", "f") or INDEX_KIND[d[0]] in wholes:  # a file's whole list of that kind is compared already
            continue
        by_path: dict[str, list[Any]] = {}
        for f in facts:
            for x in dict.__getitem__(f._s, d[0]).get(d[1], ()):
                by_path.setdefault(_path_of(x), []).append(x)
        out[d] = {p: _digest(xs) for p, xs in by_path.items()}
    return out


def attributes(deps: set[Dep]) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The kinds read whole, and per file the other attributes read of it."""
    wholes = frozenset(d[1] for d in deps if d[0] == "*")
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
            xs = dict.__getitem__(one[p]._s, d[0]).get(d[1], ())
            new = _digest(list(xs)) if xs else None
            if new != by_path.get(p):
                return f"{p}: {d[0]} {d[1]!r}"
    return None


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
