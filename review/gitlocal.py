"""Read two revisions of a local git repository without a checkout: trees, blobs, the diff.

Only plumbing commands that run no repository-controlled program: ``ls-tree`` and
``cat-file --batch`` read raw blobs (no smudge/textconv filters), ``diff`` runs with
``--no-ext-diff --no-textconv`` and explicit prefixes and context, so local
configuration cannot change what the review sees.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from checks.engine import Audit, AuditOptions, audit_files
from checks.facts import classify
from checks.source import SKIP_DIRS, Limits, ReadStats, Skipped

__all__ = ["GitError", "Revisions", "audit_revision", "git_diff", "iter_revision", "read_blob", "resolve"]

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
_SAFE = ["-c", "core.quotePath=false", "-c", "core.fsmonitor=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false"]


class GitError(RuntimeError):
    """A git command failed (not a repository, unknown revision...)."""


@dataclass(frozen=True, slots=True)
class Revisions:
    base: str  # the merge base of base and head (what a PR's diff is taken against)
    head: str
    base_ref: str
    head_ref: str


def _git(repo: str, *args: str, input_bytes: bytes | None = None) -> bytes:
    env = {**os.environ, **_GIT_ENV}
    try:
        res = subprocess.run(["git", *_SAFE, "-C", repo, *args], input=input_bytes, capture_output=True, env=env, check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    if res.returncode != 0:
        raise GitError(res.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return res.stdout


def _commit(repo: str, ref: str) -> str:
    if ref.startswith("-"):
        raise GitError(f"not a revision: {ref}")
    try:
        _git(repo, "rev-parse", "--git-dir")
    except GitError as exc:
        raise GitError(f"not a git repository: {repo} ({exc})") from exc
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").decode().strip()
    except GitError as exc:
        raise GitError(f"unknown revision {ref!r} in {repo}") from exc


def read_blob(repo: str, rev: str, path: str) -> bytes | None:
    """One file of a commit (``None`` when the commit has no such file)."""
    try:
        return _git(repo, "cat-file", "blob", f"{rev}:{path}")
    except GitError:
        return None


def resolve(repo: str, base_ref: str, head_ref: str) -> Revisions:
    """Commit ids; ``base`` becomes the merge base, as on GitHub where a PR diff is ``base...head``."""
    base, head = _commit(repo, base_ref), _commit(repo, head_ref)
    try:
        mb = _git(repo, "merge-base", base, head).decode().strip() or base
    except GitError:
        mb = base  # unrelated histories: compare with the base itself
    return Revisions(mb, head, base_ref, head_ref)


def _skip(path: str) -> bool:
    parts = path.split("/")[:-1]
    return any(p in SKIP_DIRS or p.endswith(".egg-info") for p in parts)


def iter_revision(repo: str, rev: str, limits: Limits, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    """``(path, bytes)`` of the regular files of a commit that the engine can read (same limits as a directory scan)."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", rev)
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        path = raw_path.decode("utf-8", "replace")
        fields = meta.split()
        if len(fields) < 4:
            continue
        mode, kind, sha, size = fields[0].decode(), fields[1].decode(), fields[2].decode(), fields[3].decode()
        if kind != "blob" or _skip(path) or classify(path) is None:
            continue
        if mode == "120000":
            stats.skipped.append(Skipped(path, "symlink (not followed)"))
            continue
        stats.files_seen += 1
        n = int(size) if size.isdigit() else 0
        if n > limits.max_file_bytes:
            stats.skipped.append(Skipped(path, f"larger than {limits.max_file_bytes} bytes"))
            continue
        if stats.bytes_read + n > limits.max_total_bytes:
            stats.truncated = True
            stats.skipped.append(Skipped(path, "total read limit reached"))
            continue
        stats.bytes_read += n
        wanted.append((path, sha))
    if not wanted:
        return
    for path, data in _blobs(repo, wanted):
        if data is None:
            continue
        if b"\x00" in data[:8192]:
            stats.bytes_read -= len(data)
            stats.skipped.append(Skipped(path, "binary"))
            continue
        stats.files_read += 1
        yield path, data


def _blobs(repo: str, wanted: list[tuple[str, str]]) -> Iterator[tuple[str, bytes | None]]:
    """The blobs, one at a time from ``git cat-file --batch`` (never the whole tree in memory at once)."""
    env = {**os.environ, **_GIT_ENV}
    try:
        proc = subprocess.Popen(["git", *_SAFE, "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    assert proc.stdin is not None and proc.stdout is not None
    request = b"".join(f"{sha}\n".encode() for _, sha in wanted)

    def feed() -> None:
        try:
            proc.stdin.write(request)  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for path, _sha in wanted:
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                yield path, None
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the blob is followed by a newline
            yield path, data
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
        writer.join(timeout=5)


def audit_revision(repo: str, rev: str, options: AuditOptions | None = None) -> Audit:
    options = options or AuditOptions()
    stats = ReadStats()
    return audit_files(iter_revision(repo, rev, options.limits, stats), f"{repo}@{rev[:12]}", options, stats)


def git_diff(repo: str, base: str, head: str) -> str:
    """The PR-style unified diff (3 lines of context, renames detected, binary files named only)."""
    raw = _git(repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-U3", "--src-prefix=a/", "--dst-prefix=b/",
               "--end-of-options", base, head, "--")
    return raw.decode("utf-8", "replace")
