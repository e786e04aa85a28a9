"""Where a repository's files come from: a local directory or a streamed ``.tar.gz``.

Both sources yield ``(relative_path, bytes)`` for the files a check can read and
report every file they passed over, with the reason. Nothing is extracted to disk;
symlinks are never followed; archive entries with absolute paths or ``..`` are rejected.
"""

from __future__ import annotations

import codecs
import gzip
import os
import stat
import tarfile
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .facts.extract import classify
from .sniff import HEAD_BYTES, SMALL_BYTES, data_reason
from .tree_index import KEY, SKIP, TreeIndex

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "vendor", "vendored", "third_party", "third-party", "3rdparty",
    "site-packages", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "build", "dist", ".eggs", "wandb", "mlruns", "lightning_logs", ".ipynb_checkpoints",
    ".cache", ".idea", ".vscode",
}


class SourceError(Exception):
    """The source cannot be read at all (missing path, not an archive)."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = 1 << 20  # 1 MiB
    max_total_bytes: int = 512 << 20  # 512 MiB


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


@dataclass(slots=True)
class ReadStats:
    files_read: int = 0
    bytes_read: int = 0
    files_seen: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    truncated: bool = False  # the total cap was hit


def _skip_dir(part: str) -> bool:
    return part in SKIP_DIRS or part.endswith(".egg-info")


#: the byte-order marks a UTF-16 text file starts with
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _admit(rel: str, size: int, limits: Limits, stats: ReadStats) -> bool:
    """Count a candidate file; False (and the reason recorded) when it is over a size limit."""
    stats.files_seen += 1
    if size > limits.max_file_bytes:
        stats.skipped.append(Skipped(rel, f"larger than {limits.max_file_bytes} bytes"))
        return False
    if stats.bytes_read + size > limits.max_total_bytes:
        stats.truncated = True
        stats.skipped.append(Skipped(rel, "total read limit reached"))
        return False
    return True


def _accept(rel: str, data: bytes, stats: ReadStats) -> bool:
    """Count a file that was read; False (and recorded) for a binary."""
    if _is_binary(data):
        stats.skipped.append(Skipped(rel, "binary"))
        return False
    stats.files_read += 1
    stats.bytes_read += len(data)
    return True


def _read_sniffed(fh: BinaryIO, kind: str, size: int, limits: Limits) -> bytes | str:
    """The file's bytes (up to the limit), or the reason it is data no check reads (JSON/YAML sniffed first).

    Sized by the stat or the archive header: a read(limit) would allocate the whole limit for every small file.
    """
    data = b""
    if kind == "json" or (kind in _SNIFFED and size > SMALL_BYTES):
        data = fh.read(HEAD_BYTES)
        reason = data_reason(kind, size, data)
        if reason:
            return reason
    data += fh.read(max(min(size, limits.max_file_bytes) + 1 - len(data), 0))
    if len(data) > size:  # the file grew since the stat: read on, up to the limit
        data += fh.read(limits.max_file_bytes + 1 - len(data))
    return data


_SNIFFED = {"json", "yaml"}


@dataclass(frozen=True, slots=True)
class Unread:
    """Yielded instead of a file's bytes when the tree index vouches for it (see :mod:`checks.tree_index`):
    ``key`` is its facts' cache key; :meth:`read` reads it after all (its facts are gone from the cache)."""

    full: str
    key: str
    size: int

    def read(self, limits: Limits) -> bytes:
        """The file's bytes (empty when it vanished since the walk: a race a cold scan can lose alike)."""
        try:
            with open(self.full, "rb") as fh:
                return fh.read(limits.max_file_bytes + 1)
        except OSError:
            return b""


def _is_binary(data: bytes) -> bool:
    # (UTF-16 text opens with its byte-order mark and holds a NUL in every other byte: ReST-MCTS's requirements_mistral.txt,
    # saved by a Windows tool, pins transformers 4.45.2; read as text, see checks.facts.extract.decode_text)
    return b"\x00" in data[:8192] and not data.startswith(UTF16_BOMS)


def _safe_rel(name: str) -> str | None:
    """A safe relative POSIX path, or None for absolute paths and ``..`` tricks."""
    if not name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if any(p == ".." for p in parts):
        return None
    clean = [p for p in parts if p not in {"", "."}]
    return "/".join(clean) if clean else None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _listing(fd: int) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    """A folder's sub-folders and other entries (a symlink to a folder counts as a folder, as ``os.walk`` has it), each
    sorted by name; empty when it cannot be listed."""
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except OSError:
        return [], []
    dirs, files = [], []
    for e in entries:
        try:
            (dirs if e.is_dir() else files).append(e)
        except OSError:
            files.append(e)
    dirs.sort(key=lambda e: e.name)
    files.sort(key=lambda e: e.name)
    return dirs, files


def iter_directory(
    root: str | os.PathLike[str], limits: Limits, stats: ReadStats, index: TreeIndex | None = None,
) -> Iterator[tuple[str, bytes | Unread]]:
    """``(path, bytes)`` of every file a check reads, in a stable order (each folder's files by name, then its
    sub-folders by name, depth first); skipped files are recorded in ``stats``.

    Folders are opened relative to their parent's descriptor with ``O_NOFOLLOW``, and files relative to their folder's:
    a symlink is never followed, even one that replaces a folder or a file while the walk runs, so nothing outside the
    tree is read. Each file costs one ``lstat`` (``fstatat``), and each folder one ``open``: no ``realpath``.

    With ``index`` (a facts cache's record of this directory), a file whose stat signature is unchanged is not
    read: ``(path, Unread)`` carries its facts key instead, and a skipped one is skipped for its recorded reason.
    The stats are the same as when every file is read.
    """
    base = Path(root)
    if not base.exists():
        raise SourceError(f"path does not exist: {root}")
    if not base.is_dir():
        raise SourceError(f"not a directory or .tar.gz archive: {root}")
    top = str(base)
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root itself may be reached through a symlink
    except OSError as exc:
        raise SourceError(f"unreadable directory: {root}: {exc.strerror}") from exc
    stack: list[tuple[int, str, Iterator[str]]] = []
    try:
        kept = yield from _folder(fd, "", top, limits, stats, index)
        stack.append((fd, "", iter(kept)))
        while stack:
            parent, rel_dir, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(parent)
                stack.pop()
                continue
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except OSError:
                continue  # gone since it was listed, or a symlink now: never entered (os.walk skips it alike)
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                kept = yield from _folder(fd, rel, top, limits, stats, index)
            except BaseException:
                os.close(fd)
                raise
            stack.append((fd, rel, iter(kept)))
    finally:
        for parent, _rel, _names in stack:
            os.close(parent)


def _folder(fd: int, rel_dir: str, top: str, limits: Limits, stats: ReadStats,
            index: TreeIndex | None) -> Generator[tuple[str, bytes | Unread], None, list[str]]:
    """Yield the files of the folder open as ``fd`` (``rel_dir`` in the tree); return the names of its sub-folders to walk."""
    dirs, files = _listing(fd)
    prefix = f"{rel_dir}/" if rel_dir else ""
    kept = []
    for e in dirs:
        if e.is_symlink():
            stats.skipped.append(Skipped(prefix + e.name, "symlink (not followed)"))
        elif not _skip_dir(e.name):
            kept.append(e.name)
    for e in files:
        fn = e.name
        rel = prefix + fn
        kind = classify(rel)
        if kind is None:
            continue  # no check reads it: not even its stat is needed, and nothing is recorded of it
        try:
            st = e.stat(follow_symlinks=False)
        except OSError as exc:
            stats.skipped.append(Skipped(rel, f"unreadable: {exc.strerror}"))
            continue
        if stat.S_ISLNK(st.st_mode):
            if kind:
                stats.skipped.append(Skipped(rel, "symlink (not followed)"))
            continue
        if not stat.S_ISREG(st.st_mode) or kind is None:
            continue
        if not _admit(rel, st.st_size, limits, stats):
            continue
        full = os.path.join(top, rel)
        sig = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) if index is not None else None
        if index is not None and sig is not None:
            known = index.lookup(rel, sig)
            if known is not None:
                if known.startswith(KEY):
                    stats.files_read += 1
                    stats.bytes_read += st.st_size
                    yield rel, Unread(full, known[len(KEY):], st.st_size)
                else:
                    stats.skipped.append(Skipped(rel, known[len(SKIP):]))
                continue
        try:
            with open(fn, "rb", opener=lambda path, _flags: os.open(path, _FILE_FLAGS, dir_fd=fd)) as fh:
                data = _read_sniffed(fh, kind, st.st_size, limits)
        except OSError as exc:
            stats.skipped.append(Skipped(rel, f"unreadable: {exc.strerror}"))
            continue
        if isinstance(data, str):
            stats.skipped.append(Skipped(rel, data))
            if index is not None and sig is not None:
                index.skipped(rel, sig, data)
            continue
        if _accept(rel, data, stats):
            if index is not None and sig is not None and len(data) == st.st_size:
                index.read(rel, sig)  # the stat before the read is what the next scan compares (a later write changes ctime)
            yield rel, data
        elif index is not None and sig is not None:
            index.skipped(rel, sig, "binary")
    return kept


def iter_tarball(fileobj: BinaryIO, limits: Limits, stats: ReadStats, strip_top: bool = True) -> Iterator[tuple[str, bytes]]:
    """Stream a ``.tar.gz`` (GitHub's tarball: one top-level folder) without extracting it."""
    try:
        tf, gz = _open_stream(fileobj)
    except _ARCHIVE_ERRORS as exc:
        raise SourceError(f"unreadable archive: {exc}") from exc
    try:
        yield from _iter_members(tf, limits, stats, strip_top)
        if gz is not None:  # read to the end so that a truncated or corrupt gzip trailer is noticed
            while gz.read(1 << 20):
                pass
    except _ARCHIVE_ERRORS as exc:
        # a truncated or corrupt stream fails while a member's data is read or skipped, or at the gzip CRC check
        raise SourceError(f"unreadable archive: {exc}") from exc
    finally:
        tf.close()


# what a damaged archive raises while it is read: tarfile, gzip (BadGzipFile is an OSError), zlib and EOF errors
_ARCHIVE_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeDecodeError)


class _Prefixed:
    """A read-only stream that returns ``head`` and then the rest of ``raw`` (to sniff the magic bytes of a pipe)."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self.head = head
        self.raw = raw

    def read(self, n: int = -1) -> bytes:
        if not self.head:
            return self.raw.read(n)
        if n is None or n < 0:
            data, self.head = self.head + self.raw.read(), b""
            return data
        data, self.head = self.head[:n], self.head[n:]
        if len(data) < n:
            data += self.raw.read(n - len(data))
        return data


_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")  # gzip, bzip2, xz: what tarfile's stream mode opens


def looks_like_archive(head: bytes) -> bool:
    """Whether the first 512 bytes of a file start a (compressed) tar archive: a text or other file is not."""
    if head.startswith(_COMPRESSED_MAGIC):
        return True
    if head[257:262] == b"ustar":  # POSIX and GNU tar headers
        return True
    try:  # an old v7 header has no magic: its checksum must match
        tarfile.TarInfo.frombuf(head[:512], "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def _open_stream(fileobj: BinaryIO) -> tuple[tarfile.TarFile, gzip.GzipFile | None]:
    """gzip goes through :class:`gzip.GzipFile`, which checks the CRC and the length at the end of the stream
    (tarfile's own stream mode does not, so a truncated download would pass silently); other formats via ``r|*``."""
    head = fileobj.read(2)
    stream = _Prefixed(head, fileobj)
    if head == b"\x1f\x8b":
        gz = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[arg-type]
        return tarfile.open(fileobj=gz, mode="r|"), gz
    return tarfile.open(fileobj=stream, mode="r|*"), None  # type: ignore[arg-type]


def _iter_members(tf: tarfile.TarFile, limits: Limits, stats: ReadStats, strip_top: bool) -> Iterator[tuple[str, bytes]]:
    for member in _members(tf):
        name = member.name
        if strip_top:
            name = name.split("/", 1)[1] if "/" in name else ""
            if not name:
                continue
        rel = _safe_rel(name)
        if rel is None:
            stats.skipped.append(Skipped(member.name[:200], "unsafe archive path (absolute or '..')"))
            continue
        if any(_skip_dir(p) for p in rel.split("/")[:-1]):
            continue
        kind = classify(rel)
        if member.issym() or member.islnk():
            if kind:
                stats.skipped.append(Skipped(rel, f"{'symlink' if member.issym() else 'hardlink'} (not followed)"))
            continue
        if not member.isfile() or kind is None:
            continue
        if not _admit(rel, member.size, limits, stats):
            continue
        fh = tf.extractfile(member)
        if fh is None:
            continue
        data = _read_sniffed(fh, kind, member.size, limits)
        if isinstance(data, str):
            stats.skipped.append(Skipped(rel, data))
            continue
        if _accept(rel, data, stats):
            yield rel, data


def _members(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        try:
            m = tf.next()
        except (tarfile.TarError, OSError, EOFError, UnicodeDecodeError) as exc:
            raise SourceError(f"unreadable archive: {exc}") from exc
        if m is None:
            # a tar archive ends with a block of zeros: a stream that stops at (or inside) a header was cut short
            if getattr(tf.fileobj, "pos", tf.offset + tarfile.BLOCKSIZE) - tf.offset < tarfile.BLOCKSIZE:
                raise SourceError("unreadable archive: truncated (it ends before the end-of-archive marker)")
            return
        yield m
