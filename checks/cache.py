"""Cached facts, authenticated: an entry is loaded only when its HMAC proves that we wrote it.

A cache entry is ``MAGIC + HMAC-SHA256(key, payload) + payload`` where the payload is a pickle
of one file's :class:`FileFacts`. Loading a pickle can run code, so the MAC is checked first,
with a key only the writer holds (the App: derived from its private key; the CLI: a random key
in a 0600 file of the cache directory), and an entry that fails is never unpickled: it is a
miss and the file is parsed again. Anyone who can write to Redis or to the cache folder can
therefore spoil entries (a re-parse) but not run code in the process that reads them.

Why an authenticated pickle rather than a plain serialisation: a marshal of tuples that builds
the records back (no pickle at all) was built and measured on Megatron-LM's facts (2,131 files):
0.63-0.79 s to load, 27 MB; the pickle below, whose records are rebuilt by their constructors
(:func:`dumps_facts`), loads in 0.21-0.24 s plus 0.02 s for the HMAC, 24 MB. Both must carry the
MAC anyway to reject entries that are not ours, so the faster one ships.
"""

from __future__ import annotations

import copyreg
import gc
import hashlib
import hmac
import io
import os
import pickle
import secrets
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from .facts import FileFacts
from .facts.types import (
    ArgOption,
    Assign,
    AttrAssign,
    Call,
    ClassSpan,
    ConfigEntry,
    Decorator,
    Dependency,
    EnvVar,
    Expr,
    Field,
    GradOff,
    Import,
    Launch,
    ParamDefault,
    PathLiteral,
    Ref,
)
from .model import CheckResult, Evidence, Project
from .tree_index import TreeIndex

__all__ = ["MAGIC", "TREE_MAGIC", "CacheDirError", "DirFactsCache", "dumps_batch", "dumps_facts", "loads_batch", "open_entry", "seal_entry"]

#: the start of every entry (bump it when the layout changes: older entries are then misses)
MAGIC = b"AAF\x01"
#: the start of a directory's index and of its pack of facts (see :meth:`DirFactsCache.open_tree`)
TREE_MAGIC = b"AAT\x01"
#: the start of a directory's query log (see :mod:`checks.query_log`)
LOG_MAGIC = b"AAQ\x01"
_MAC = hashlib.sha256
_MAC_LEN = 32
KEY_FILE = "key"


class CacheDirError(Exception):
    """A facts cache directory that is not private to this user."""


def _by_constructor(cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
    get = attrgetter(*(f.name for f in fields(cls) if f.init))  # a derived field (``Call.short``) is made again by the constructor
    return lambda obj: (cls, get(obj))


#: fact records pickle as ``cls(*fields)``: the default for frozen slotted dataclasses restores each object through
#: ``dataclasses._dataclass_setstate``, which calls ``fields()`` per object (half the load time of a facts entry)
_DISPATCH = copyreg.dispatch_table.copy()
_DISPATCH.update({cls: _by_constructor(cls) for cls in (
    Call, Import, Ref, AttrAssign, Decorator, ArgOption, Field, Assign, ConfigEntry, Launch, EnvVar, Dependency, PathLiteral, Expr,
    ParamDefault, ClassSpan, GradOff,
    # a query log's results (checks.query_log): 1,360 pieces of evidence on Megatron-LM, 0.15 s of a re-scan by default
    Evidence, CheckResult, Project,
)})


def dumps_facts(value: Any) -> bytes:
    """Pickle facts (a :class:`FileFacts` or a list of them) so that they load fast; ``pickle.loads`` reads it."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(value)
    return buf.getvalue()


def dumps_batch(facts: list[FileFacts], strings: list[str]) -> bytes:
    """A worker's answer: ``strings`` (the distinct strings its facts hold, from its table), then its facts, pickled by
    one pickler, so that the facts refer to those strings through the pickle's memo (read by :func:`loads_batch`)."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(strings)  # first, each memoized once and in order: memo index i + 1 is strings[i]
    pickler.dump(facts)
    return buf.getvalue()


def loads_batch(blob: bytes, strings: dict[Any, Any] | None) -> list[FileFacts]:
    """The facts of :func:`dumps_batch`, built with the scan's one copy of each of the worker's strings (``strings``,
    the scan's table): the strings are shared once each, at C speed, and the unpickler's memo then hands the shared
    ones to every record that refers to them, with no pass over the records. (Expressions, tuples and keyword mappings
    are shared within the worker's batch only; line numbers by :func:`checks.facts.types.share_line_numbers`.)"""
    u = pickle.Unpickler(io.BytesIO(blob))
    strs: list[str] = u.load()
    n = len(strs)
    if strings is None or not n:
        return u.load()  # type: ignore[no-any-return]
    memo = u.memo.copy()
    if memo.get(1) is not strs[0] or memo.get(n) is not strs[-1]:  # not the layout dumps_batch writes: no sharing
        return u.load()  # type: ignore[no-any-return]
    u.memo = _memo_of([memo.get(0), *map(strings.setdefault, strs, strs), *map(memo.get, range(n + 1, max(memo) + 1))])
    return u.load()  # type: ignore[no-any-return]


_MEMO_ENTRY = 8  # BININT i, BINPERSID, MEMOIZE, POP
_memo_stream = bytearray()


def _memo_of(objs: list[Any]) -> Any:
    """An unpickler memo holding ``objs[i]`` at index ``i``, to assign to another unpickler's ``memo``: made by loading a
    stream that memoizes each in turn (``BINPERSID i``, ``MEMOIZE``, ``POP``). Assigning a dict to ``Unpickler.memo``
    loses its entries in CPython (3.11: they go to the memo it then replaces); another unpickler's memo is copied whole."""
    n = len(objs)
    have = len(_memo_stream) // _MEMO_ENTRY
    if have < n:  # the stream's entries are the same for every batch: made once, grown as needed
        _memo_stream.extend(b"".join(b"J" + i.to_bytes(4, "little") + b"Q\x940" for i in range(have, max(n, 2 * have))))
    m = pickle.Unpickler(io.BytesIO(b"\x80\x04" + bytes(memoryview(_memo_stream)[: n * _MEMO_ENTRY]) + b"N."))
    m.persistent_load = objs.__getitem__  # type: ignore[assignment]
    m.load()
    return m.memo


def _seal(value: Any, key: bytes, magic: bytes) -> bytes:
    payload = dumps_facts(value)
    return magic + hmac.new(key, payload, _MAC).digest() + payload


def _open(blob: bytes | None, key: bytes, magic: bytes) -> Any:
    """What :func:`_seal` sealed with ``key`` and ``magic``; None for anything else (never unpickled)."""
    if not blob or len(blob) <= len(magic) + _MAC_LEN or not blob.startswith(magic):
        return None
    head = len(magic) + _MAC_LEN
    payload = memoryview(blob)[head:]
    if not hmac.compare_digest(blob[len(magic) : head], hmac.new(key, payload, _MAC).digest()):
        return None
    # the facts hold no reference cycles: a collection while a pack or log is unpickled only walks what was just made
    # again (half the load time of a Megatron-LM query log, a quarter of its pack)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(payload)  # authenticated: written by a holder of the key
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None  # ours, but from an older layout of the classes
    finally:
        if collecting:
            gc.enable()


def seal_entry(value: FileFacts, key: bytes) -> bytes:
    """The bytes to store for ``value``."""
    return _seal(value, key, MAGIC)


def open_entry(blob: bytes | None, key: bytes) -> FileFacts | None:
    """The facts in an entry written by :func:`seal_entry` with ``key``; None for anything else (never unpickled)."""
    value = _open(blob, key, MAGIC)
    return value if isinstance(value, FileFacts) else None


def _dir_key(directory: Path, private: bool) -> bytes:
    """The directory's key: 32 random bytes in ``key`` (mode 0600), made on first use."""
    path = directory / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    st = os.lstat(path)
    if private and (st.st_uid != os.getuid() or st.st_mode & 0o077 or not path.is_file() or path.is_symlink()):
        raise CacheDirError(f"{path} (the cache's key) is owned by another user or readable by group/others (chmod 600 it, or remove it)")
    key = path.read_bytes()
    if len(key) < 32:  # a writer was interrupted between creating and writing it: a fresh key (old entries become misses)
        tmp = directory / f".{KEY_FILE}.{os.getpid()}.{threading.get_ident()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        os.replace(tmp, path)
        key = path.read_bytes()
    return key


class DirFactsCache:
    """Parsed facts on disk, keyed by a hash of path and content (a ``synchronize`` re-parses only changed files).

    Entries carry an HMAC (see the module's doc): ``key`` when given (the App derives one from
    its private key), else the directory's own key file. ``private=True`` (the CLI's ``--cache``)
    creates the directory with mode 0700 and refuses one that another user owns or that
    group/others may write (:class:`CacheDirError`). A write that fails (disk full) only skips
    that entry.
    """

    def __init__(self, directory: str | os.PathLike[str], *, private: bool = False, key: bytes | None = None) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if private:
            st = self.dir.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                raise CacheDirError(
                    f"{self.dir} is owned by another user or writable by group/others; "
                    "its pickled facts could run code when loaded (chmod 700 it, or choose another directory)"
                )
        self.key = key if key is not None else _dir_key(self.dir, private)
        self._packs: dict[str, list[_Pack]] = {}  # by the scanned directory's real path: its parts (see save_tree)

    def _file(self, key: str) -> Path:
        return self.dir / key[:2] / key

    def get(self, key: str) -> FileFacts | None:
        for packs in self._packs.values():
            for pack in packs:
                if key in pack.keys:
                    ff = pack.get(key, self.key)
                    if ff is not None:
                        return ff
        try:
            with open(self._file(key), "rb") as fh:
                blob = fh.read()
        except OSError:
            return None
        return open_entry(blob, self.key)

    def put(self, key: str, value: FileFacts) -> None:
        self._write(self._file(key), lambda: seal_entry(value, self.key))

    def _write(self, target: Path, blob: Callable[[], bytes]) -> None:
        tmp = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # unique per writer thread too
        try:
            data = blob()
            target.parent.mkdir(exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except (OSError, pickle.PicklingError):  # a cache is an optimisation: a failed write (disk full, read-only) skips this entry
            with suppress(OSError):
                tmp.unlink(missing_ok=True)

    # -- a scanned directory's index and pack (see checks.tree_index) -----------------------------------------------
    def _tree_files(self, real: str) -> tuple[Path, Path]:
        rid = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:40]
        return self.dir / "trees" / f"{rid}.idx", self.dir / "trees" / f"{rid}.pack"

    def _log_file(self, real: str) -> Path:
        return self._tree_files(real)[0].with_suffix(".qlog")

    def open_log(self, root: str, key: str) -> dict[str, Any] | None:
        """The query log the last full audit of directory ``root`` stored (:mod:`checks.query_log`), when it was made
        with ``key`` (the options and the code); None when there is none, or it fails its HMAC, or is another's."""
        try:
            blob = self._log_file(root).read_bytes()
        except OSError:
            return None
        data = _open(blob, self.key, LOG_MAGIC)
        if not (isinstance(data, dict) and data.get("root") == root and data.get("key") == key
                and isinstance(data.get("paths"), list) and isinstance(data.get("keys"), dict)
                and isinstance(data.get("hashes"), dict) and isinstance(data.get("by_key"), dict) and isinstance(data.get("audit"), tuple) and len(data["audit"]) == 5):
            return None
        return data

    def pack_present(self, root: str) -> bool:
        """Whether directory ``root``'s pack of facts is still there (a lost one is written again by a full audit)."""
        return self._tree_files(root)[1].is_file()

    def save_log(self, root: str, log: dict[str, Any]) -> None:
        """Store ``log`` (see :meth:`open_log`) for directory ``root``; one that cannot be pickled is not stored (and
        the last one is removed: it no longer describes the directory's last full audit)."""
        target = self._log_file(root)
        try:
            blob = _seal({**log, "root": root}, self.key, LOG_MAGIC)
        except Exception:  # an optimisation: results that do not pickle are audited in full next time
            with suppress(OSError):
                target.unlink(missing_ok=True)
            return
        self._write(target, lambda: blob)

    def save_index(self, index: TreeIndex, fresh: dict[str, FileFacts]) -> None:
        """Record ``index`` for the next scan of its directory when its pack stays as it is: ``fresh`` (facts parsed
        now, by key) are stored one file each beside the pack (a re-scan that reused a query log's audit)."""
        for k, ff in fresh.items():
            self.put(k, ff)
        if not index.changed:
            return
        parts = tuple(p.held() for p in self._packs.get(index.root, ()))
        payload = {"root": index.root, "version": index.version, "entries": index.new, "parts": parts}
        self._write(self._tree_files(index.root)[0], lambda: _seal(payload, self.key, TREE_MAGIC))

    def open_tree(self, root: str | os.PathLike[str], version: str) -> TreeIndex:
        """The index of what the last scan of directory ``root`` found (empty when there is none, or it is not ours,
        or of another ``version``); the pack of that scan's facts is loaded on the first :meth:`get` of one of them."""
        real = os.path.realpath(root)
        index = TreeIndex(real, version, available=self._available)
        idx_file, pack_file = self._tree_files(real)
        try:
            blob = idx_file.read_bytes()
        except OSError:
            blob = None
        data = _open(blob, self.key, TREE_MAGIC)
        parts = data.get("parts") if isinstance(data, dict) else None
        if (isinstance(data, dict) and data.get("root") == real and data.get("version") == version
                and isinstance(data.get("entries"), dict) and isinstance(parts, tuple) and len(parts) <= len(PARTS)
                and all(isinstance(k, frozenset) for k in parts)):
            index.old = data["entries"]
            self._packs[real] = [_Pack(_part_file(pack_file, i), real, keys) for i, keys in enumerate(parts)]
        return index

    def packed(self, key: str) -> bool:
        """Whether ``key``'s facts come from a directory's pack (whose texts are shared already: one pickle)."""
        return any(key in p.keys for packs in self._packs.values() for p in packs)

    def _available(self, key: str) -> bool:
        return self.packed(key) or self._file(key).is_file()

    def save_tree(self, index: TreeIndex, facts: Mapping[str, FileFacts], fresh: set[str],
                  part: Callable[[FileFacts], int] | None = None) -> None:
        """Record ``index`` for the next scan of its directory, with ``facts`` (every facts key of this scan, ``fresh``:
        those parsed now). The facts go into the directory's pack, rewritten when it misses or holds too many stale
        entries; otherwise the few new ones are stored one file each, beside it. ``part``: which of the pack's
        :data:`PARTS` a file's facts go to (each part is one file, loaded on the first :meth:`get` of one of its keys:
        an audit that needs only the files in scope never unpickles the tests')."""
        wanted = set(index.keys().values())
        packs = self._packs.get(index.root, [])
        packed = frozenset().union(*(p.held() for p in packs))
        missing = wanted - packed
        stale = packed - wanted
        idx_file, pack_file = self._tree_files(index.root)
        lost = any(p.keys and not p.held() for p in packs)  # a part that failed to load: written again
        if not packed or lost or len(missing) > max(32, len(wanted) // 10) or len(stale) > max(32, len(packed) // 4):
            contents: list[dict[str, FileFacts]] = [{} for _ in PARTS]
            for k in wanted:
                if k in facts:
                    ff = facts[k]
                    contents[part(ff) if part is not None else 0][k] = ff
            packs = []
            for i, content in enumerate(contents):
                target = _part_file(pack_file, i)
                self._write(target, lambda c=content: _seal({"root": index.root, "facts": c}, self.key, TREE_MAGIC))
                packs.append(_Pack(target, index.root, frozenset(content), content))
            self._packs[index.root] = packs
        else:
            for k in missing & fresh:
                if k in facts:
                    self.put(k, facts[k])
            if not index.changed:
                return
        parts = tuple(p.held() for p in packs)
        payload = {"root": index.root, "version": index.version, "entries": index.new, "parts": parts}
        self._write(idx_file, lambda: _seal(payload, self.key, TREE_MAGIC))


#: the parts of a directory's pack: the files in scope (and anything else), the files whose path alone puts them out of
#: scope (tests, docs, CI, benchmarks: :func:`checks.roles.path_role`)
PARTS = ("main", "context")


def _part_file(pack_file: Path, i: int) -> Path:
    return pack_file if i == 0 else pack_file.with_suffix(f".pack{i}")


class _Pack:
    """One directory's facts in one authenticated file, loaded whole on first use (one read, one MAC, one unpickle)."""

    def __init__(self, path: Path, root: str, keys: frozenset[str], facts: dict[str, FileFacts] | None = None) -> None:
        self.path = path
        self.root = root
        self.keys = keys
        self._facts = facts

    def held(self) -> frozenset[str]:
        """The keys the pack holds: those its index lists, less those a pack that was lost or spoilt lacks."""
        if self._facts is None:
            return self.keys
        return frozenset(k for k in self.keys if k in self._facts)

    def get(self, key: str, mac_key: bytes) -> FileFacts | None:
        if self._facts is None:
            try:
                blob = self.path.read_bytes()
            except OSError:
                blob = None
            data = _open(blob, mac_key, TREE_MAGIC)
            ok = isinstance(data, dict) and data.get("root") == self.root and isinstance(data.get("facts"), dict)
            self._facts = data["facts"] if ok else {}
        ff = self._facts.get(key)
        return ff if isinstance(ff, FileFacts) else None
