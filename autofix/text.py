"""Byte-preserving text helpers every editor shares: line endings, line offsets, the "nothing else moved" check."""

from __future__ import annotations

from .model import EditRefused


def newline_of(text: str) -> str:
    """The file's own line ending (CRLF when its first line ends so)."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def line_starts(text: str) -> list[int]:
    """Offset of the start of each line (``splitlines(keepends=True)`` boundaries on ``\\n``)."""
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    if starts[-1] == len(text) and len(starts) > 1:
        starts.pop()
    return starts


def offset(text: str, line: int, col: int, starts: list[int] | None = None) -> int:
    """Offset of a 0-based (line, column)."""
    starts = starts if starts is not None else line_starts(text)
    return starts[line] + col


def physical_lines(text: str) -> list[str]:
    """Lines with their endings (``\\n`` only: ``\\r`` stays part of the line, so CRLF survives)."""
    return text.split("\n")


def line_of(text: str, pos: int) -> int:
    """0-based line of an offset."""
    return text.count("\n", 0, pos)


def check_only(old: str, new: str, changed: set[int], inserted: int = 0, removed: int = 0) -> None:
    """Raise unless ``new`` equals ``old`` except on the 0-based old lines ``changed``.

    ``inserted``/``removed``: how many lines the edit adds or deletes, all of them within or next to ``changed``.
    """
    a, b = old.split("\n"), new.split("\n")
    if len(b) != len(a) + inserted - removed:
        raise EditRefused(f"the edit would change the number of lines by {len(b) - len(a)}, not {inserted - removed}")
    lo = min(changed) if changed else 0
    hi = max(changed) if changed else -1
    if a[:lo] != b[:lo]:
        raise EditRefused("the edit would change lines before the edited one")
    tail_a = a[hi + 1:]
    tail_b = b[len(b) - len(tail_a):] if tail_a else []
    if tail_a != tail_b:
        raise EditRefused("the edit would change lines after the edited one")
    for i in range(lo, hi + 1):
        if i not in changed and i < len(a) and i < len(b) and not inserted and not removed and a[i] != b[i]:
            raise EditRefused(f"the edit would change line {i + 1}, which it does not name")
