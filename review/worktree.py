"""The working tree of a local git repository as the head of a review (``accel-audit pr --worktree``).

The pre-commit hook compares what is about to be committed with ``HEAD``. pre-commit stashes unstaged
changes before it runs a hook, so there the working tree *is* the staged tree; run by hand, the
working tree includes unstaged edits.

Which files: ``git ls-files --cached --others --exclude-standard`` (tracked files, and new files that
``.gitignore`` does not ignore), read from disk with the limits of a directory scan (symlinks are not
followed, files over the size limit and binaries are skipped and listed). Which files changed: each
file's git blob id is computed here (``sha1("blob N\\0" + bytes)``) and compared with ``git ls-tree
HEAD``; the diff of the changed files is made with :mod:`difflib`. Neither step runs a program
that the repository's configuration could name (no clean/smudge filter, no external diff): only
``ls-files``, ``ls-tree`` and ``cat-file --batch`` are run.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from checks.engine import Audit, AuditOptions, CacheDirError, DirFactsCache, FactsCache, audit_files
from checks.facts import FileFacts, classify
from checks.source import Limits, ReadStats, Skipped

from .gitlocal import GitError, Revisions, _commit, _git, _skip, audit_revision

__all__ = ["WORKTREE_REF", "GitError", "WorktreeChanges", "WorktreeInputs", "blob_id", "default_cache_dir", "review_inputs", "toplevel", "worktree_changes", "worktree_diff"]

WORKTREE_REF = "(working tree)"


def blob_id(data: bytes) -> str:
    """The id git gives a blob of these bytes."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


@dataclass(slots=True)
class WorktreeChanges:
    """What differs between the base commit and the working tree, in the files the audit reads."""

    files: list[tuple[str, bytes]]  # the working tree's auditable files (the head of the review)
    stats: ReadStats
    changed: list[str] = field(default_factory=list)  # added or modified auditable paths
    removed: list[str] = field(default_factory=list)  # auditable paths of the base that the working tree lacks
    base_blobs: dict[str, str] = field(default_factory=dict)  # path -> blob id at the base


@dataclass(slots=True)
class WorktreeInputs:
    revs: Revisions
    base: Audit | None  # None when no auditable file changed (nothing to compare)
    head: Audit | None
    diff_text: str
    changed: list[str]
    removed: list[str]


def _base_blobs(repo: str, commit: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob" and fields[0] != b"120000":
            path = raw.decode("utf-8", "replace")
            if classify(path) is not None and not _skip(path):
                out[path] = fields[2].decode()
    return out


def _listed(repo: str) -> list[str]:
    raw = _git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name")
    return sorted({p.decode("utf-8", "replace") for p in raw.split(b"\0") if p})


def _read(top: Path, rel: str, limits: Limits, stats: ReadStats) -> bytes | None:
    full = top / rel
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None  # deleted in the working tree, not yet staged
    except OSError as exc:
        stats.skipped.append(Skipped(rel, f"unreadable: {exc.strerror}"))
        return None
    if stat.S_ISLNK(st.st_mode):
        stats.skipped.append(Skipped(rel, "symlink (not followed)"))
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    stats.files_seen += 1
    if st.st_size > limits.max_file_bytes:
        stats.skipped.append(Skipped(rel, f"larger than {limits.max_file_bytes} bytes"))
        return None
    if stats.bytes_read + st.st_size > limits.max_total_bytes:
        stats.truncated = True
        stats.skipped.append(Skipped(rel, "total read limit reached"))
        return None
    try:
        data = full.read_bytes()
    except OSError as exc:
        stats.skipped.append(Skipped(rel, f"unreadable: {exc.strerror}"))
        return None
    if b"\x00" in data[:8192]:
        stats.skipped.append(Skipped(rel, "binary"))
        return None
    stats.bytes_read += len(data)
    stats.files_read += 1
    return data


def toplevel(repo: str) -> Path:
    return Path(_git(repo, "rev-parse", "--show-toplevel").decode().strip())


def worktree_changes(repo: str, base_commit: str, limits: Limits | None = None) -> WorktreeChanges:
    """The working tree's auditable files and which of them differ from ``base_commit``."""
    limits = limits or Limits()
    top = toplevel(repo)
    base = _base_blobs(repo, base_commit)
    stats = ReadStats()
    files: list[tuple[str, bytes]] = []
    changed: list[str] = []
    present: set[str] = set()
    for rel in _listed(repo):
        if classify(rel) is None or _skip(rel):
            continue
        data = _read(top, rel, limits, stats)
        if data is None:
            if (top / rel).is_symlink() or (top / rel).exists():
                present.add(rel)  # there, but not read (skipped and listed): not a removal
            continue
        present.add(rel)
        files.append((rel, data))
        if base.get(rel) != blob_id(data):
            changed.append(rel)
    removed = sorted(p for p in base if p not in present)
    return WorktreeChanges(files, stats, changed, removed, base)


def _cat_blobs(repo: str, ids: list[str]) -> list[bytes]:
    if not ids:
        return []
    out = _git(repo, "cat-file", "--batch", input_bytes=b"".join(f"{i}\n".encode() for i in ids))
    blobs: list[bytes] = []
    pos = 0
    for _ in ids:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        pos = nl + 1
        if len(header) < 3 or header[1] != b"blob":  # "<id> missing"
            blobs.append(b"")
            continue
        size = int(header[2])
        blobs.append(out[pos : pos + size])
        pos += size + 1  # the blob is followed by a newline
    return blobs


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def _file_diff(path: str, old: bytes | None, new: bytes | None) -> str:
    a = _lines(old) if old is not None else []
    b = _lines(new) if new is not None else []
    head = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    elif new is None:
        head.append("deleted file mode 100644\n")
    body = list(difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{path}", "/dev/null" if new is None else f"b/{path}", n=3))
    if not body:
        return ""
    out: list[str] = []
    for line in body:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(head + out)


def worktree_diff(repo: str, changes: WorktreeChanges) -> str:
    """The unified diff (3 lines of context, ``a/`` and ``b/`` prefixes) from the base to the working tree."""
    new = dict(changes.files)
    paths = sorted(set(changes.changed) | set(changes.removed))
    had = [p for p in paths if p in changes.base_blobs]
    old = dict(zip(had, _cat_blobs(repo, [changes.base_blobs[p] for p in had]), strict=True))
    return "".join(_file_diff(p, old.get(p), new.get(p)) for p in paths)


def default_cache_dir(repo: str) -> Path:
    """``<git dir>/accel-audit/facts``: private to the user who owns the repository, removed with it."""
    git_dir = _git(repo, "rev-parse", "--absolute-git-dir").decode().strip()
    return Path(git_dir) / "accel-audit" / "facts"


class SharedFacts:
    """A facts cache in front of another (or none): the head's unchanged files reuse the base's parsed facts
    in memory instead of parsing or unpickling them a second time (records are immutable to their readers)."""

    def __init__(self, inner: FactsCache | None = None) -> None:
        self.inner = inner
        self.memo: dict[str, FileFacts] = {}

    def get(self, key: str) -> FileFacts | None:
        value = self.memo.get(key)
        if value is None and self.inner is not None:
            value = self.inner.get(key)
            if value is not None:
                self.memo[key] = value
        return value

    def put(self, key: str, value: FileFacts) -> None:
        self.memo[key] = value
        if self.inner is not None:
            self.inner.put(key, value)


def review_inputs(repo: str, base_ref: str, options: AuditOptions | None = None, *, use_cache: bool = True) -> WorktreeInputs:
    """Audits of ``base_ref`` and of the working tree, and the diff between them.

    When no file that the audit reads changed, nothing is audited (a commit hook answers at once).
    Facts are cached by content hash in :func:`default_cache_dir` unless ``options`` has a cache, so
    a second run parses only the files that changed.
    """
    options = options or AuditOptions()
    base_commit = _commit(repo, base_ref)
    revs = Revisions(base_commit, base_commit, base_ref, WORKTREE_REF)
    changes = worktree_changes(repo, base_commit, options.limits)
    if not changes.changed and not changes.removed:
        return WorktreeInputs(revs, None, None, "", [], [])
    disk = options.cache
    if disk is None and use_cache:
        try:
            disk = DirFactsCache(default_cache_dir(repo), private=True)
        except (OSError, CacheDirError):
            pass  # an unusable cache only costs time
    options = dataclasses.replace(options, cache=SharedFacts(disk))
    base = audit_revision(repo, base_commit, options)
    head = audit_files(iter(changes.files), f"{repo}@{WORKTREE_REF}", options, changes.stats)
    return WorktreeInputs(revs, base, head, worktree_diff(repo, changes), changes.changed, changes.removed)
