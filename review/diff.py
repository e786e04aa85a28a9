"""The pull request's diff, parsed with unidiff: which lines a review comment may target.

Two inputs give the same :class:`DiffIndex`: a unified diff (``git diff``, GitHub's
``.diff`` media type) or the PR files API list (``GET /pulls/{n}/files``: one dict per
file with ``filename``, ``status``, ``previous_filename`` and ``patch``).

Sides follow GitHub's review API: ``RIGHT`` is the head version (added and context
lines), ``LEFT`` the base version (removed and context lines). A comment's ``path`` is
the file's head path, or its base path when the PR deletes the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from unidiff import PatchSet
from unidiff.constants import LINE_TYPE_ADDED, LINE_TYPE_CONTEXT, LINE_TYPE_REMOVED
from unidiff.errors import UnidiffParseError

RIGHT = "RIGHT"
LEFT = "LEFT"

__all__ = ["LEFT", "RIGHT", "DiffError", "DiffIndex", "FileDiff", "Hunk", "parse_diff", "parse_files"]


class DiffError(ValueError):
    """The diff text cannot be parsed."""


@dataclass(slots=True)
class Hunk:
    source_start: int
    source_length: int
    target_start: int
    target_length: int
    added: set[int] = field(default_factory=set)  # head line numbers
    removed: set[int] = field(default_factory=set)  # base line numbers
    context: dict[int, int] = field(default_factory=dict)  # head line -> base line

    def lines(self, side: str) -> set[int]:
        if side == RIGHT:
            return self.added | set(self.context)
        return self.removed | set(self.context.values())


@dataclass(slots=True)
class FileDiff:
    path: str  # the path a review comment names
    source_path: str | None  # base path (None: added file)
    target_path: str | None  # head path (None: deleted file)
    status: str  # "added" | "removed" | "modified" | "renamed"
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    added: dict[int, str] = field(default_factory=dict)  # head line -> text without end of line
    removed: dict[int, str] = field(default_factory=dict)  # base line -> text
    context_text: dict[int, str] = field(default_factory=dict)  # head line -> text
    crlf: bool = False  # the changed lines end with CRLF

    def hunk_index(self, side: str, line: int) -> int | None:
        for i, h in enumerate(self.hunks):
            if line in h.lines(side):
                return i
        return None

    def text(self, side: str, line: int) -> str | None:
        """The text of a line the diff shows (added/context on RIGHT, removed/context on LEFT)."""
        if side == RIGHT:
            return self.added.get(line, self.context_text.get(line))
        if line in self.removed:
            return self.removed[line]
        for h in self.hunks:
            for head_line, base_line in h.context.items():
                if base_line == line:
                    return self.context_text.get(head_line)
        return None

    def changed(self, side: str, line: int) -> bool:
        return line in (self.added if side == RIGHT else self.removed)


class DiffIndex:
    """Every file of the diff, looked up by head or base path."""

    def __init__(self, files: Iterable[FileDiff]) -> None:
        self.files = list(files)
        self._by_target = {f.target_path: f for f in self.files if f.target_path}
        self._by_source = {f.source_path: f for f in self.files if f.source_path}

    def __len__(self) -> int:
        return len(self.files)

    def head(self, path: str) -> FileDiff | None:
        """The file whose head version is ``path``."""
        return self._by_target.get(path)

    def base(self, path: str) -> FileDiff | None:
        """The file whose base version is ``path`` (a renamed file is found by its old name)."""
        return self._by_source.get(path)

    def by_comment_path(self, path: str) -> FileDiff | None:
        for f in self.files:
            if f.path == path:
                return f
        return None

    def valid_target(self, path: str, line: int, side: str, start_line: int | None = None, start_side: str | None = None) -> bool:
        """Whether GitHub accepts a review comment there: the line (and the whole range) inside one hunk."""
        f = self.by_comment_path(path)
        if f is None or f.binary or side not in (LEFT, RIGHT) or not isinstance(line, int) or line < 1:
            return False
        end_hunk = f.hunk_index(side, line)
        if end_hunk is None:
            return False
        if start_line is None:
            return True
        start_side = start_side or side
        if start_side not in (LEFT, RIGHT) or start_line < 1:
            return False
        start_hunk = f.hunk_index(start_side, start_line)
        if start_hunk != end_hunk:
            return False
        if start_side == side and start_line >= line:
            return False
        return True


def _strip_prefix(name: str | None, prefix: str) -> str | None:
    if name is None or name == "/dev/null":
        return None
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    return name[len(prefix):] if name.startswith(prefix) else name


def _eol_free(value: str) -> tuple[str, bool]:
    if value.endswith("\r\n"):
        return value[:-2], True
    if value.endswith("\n"):
        return value[:-1], False
    return value, False


def _split_lines(text: str) -> list[str]:
    """Split on LF only: a CR stays part of its line (CRLF files, lone CRs in content)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1] + "\n")
    return out


def _file_from_patched(pf: Any) -> FileDiff:
    source = _strip_prefix(pf.source_file, "a/")
    target = _strip_prefix(pf.target_file, "b/")
    if pf.is_added_file:
        source, status = None, "added"
    elif pf.is_removed_file:
        target, status = None, "removed"
    elif pf.is_rename or (source and target and source != target):
        status = "renamed"
    else:
        status = "modified"
    fd = FileDiff(path=target or source or pf.path, source_path=source, target_path=target, status=status, binary=bool(pf.is_binary_file))
    crlf = 0
    for h in pf:
        hunk = Hunk(h.source_start, h.source_length, h.target_start, h.target_length)
        for ln in h:
            text, is_crlf = _eol_free(ln.value)
            if ln.line_type == LINE_TYPE_ADDED:
                hunk.added.add(ln.target_line_no)
                fd.added[ln.target_line_no] = text
                crlf += is_crlf
            elif ln.line_type == LINE_TYPE_REMOVED:
                hunk.removed.add(ln.source_line_no)
                fd.removed[ln.source_line_no] = text
                crlf += is_crlf
            elif ln.line_type == LINE_TYPE_CONTEXT:
                hunk.context[ln.target_line_no] = ln.source_line_no
                fd.context_text[ln.target_line_no] = text
        fd.hunks.append(hunk)
    fd.crlf = crlf > 0 and crlf * 2 >= len(fd.added) + len(fd.removed)
    return fd


def parse_diff(text: str | bytes) -> DiffIndex:
    """A unified diff (``git diff base head``, GitHub's ``application/vnd.github.diff``)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        patch = PatchSet(_split_lines(text))
    except UnidiffParseError as exc:
        raise DiffError(f"unparseable diff: {exc}") from exc
    return DiffIndex(_file_from_patched(pf) for pf in patch)


def parse_files(files: Iterable[Mapping[str, Any]]) -> DiffIndex:
    """The PR files API list (``GET /repos/{o}/{r}/pulls/{n}/files``).

    A file without ``patch`` (binary, or too large for GitHub to show) has no hunks:
    no comment can target it.
    """
    out: list[FileDiff] = []
    for item in files:
        name = item.get("filename")
        if not isinstance(name, str) or not name:
            continue
        status = str(item.get("status") or "modified")
        prev = item.get("previous_filename") if isinstance(item.get("previous_filename"), str) else None
        source = None if status == "added" else (prev or name)
        target = None if status == "removed" else name
        patch = item.get("patch")
        if not isinstance(patch, str) or not patch.strip():
            kind = {"added": "added", "removed": "removed"}.get(status, "renamed" if prev and prev != name else "modified")
            out.append(FileDiff(path=name, source_path=source, target_path=target, status=kind, binary="patch" not in item and status != "renamed"))
            continue
        header = [
            f"diff --git a/{source or name} b/{target or name}\n",
            f"--- {'a/' + source if source else '/dev/null'}\n",
            f"+++ {'b/' + target if target else '/dev/null'}\n",
        ]
        try:
            patched = PatchSet(header + _split_lines(patch))
        except UnidiffParseError as exc:
            raise DiffError(f"unparseable patch for {name}: {exc}") from exc
        for pf in patched:
            fd = _file_from_patched(pf)
            fd.path = name
            fd.source_path, fd.target_path = source, target
            if status in ("added", "removed", "renamed"):
                fd.status = status
            out.append(fd)
    return DiffIndex(out)
