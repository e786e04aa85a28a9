"""Unified diffs of edited files (``a/``/``b/`` paths), ``git apply``-able, missing final newlines marked."""

from __future__ import annotations

import difflib
import re

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def lines(text: str) -> list[str]:
    return _LINE.findall(text)


def unified(path: str, old: str, new: str, context: int = 3) -> str:
    out = []
    for ln in difflib.unified_diff(lines(old), lines(new), f"a/{path}", f"b/{path}", n=context):
        if ln.endswith("\n"):
            out.append(ln)
        else:
            out.append(ln + "\n\\ No newline at end of file\n")
    return "".join(out)


def unified_all(old: dict[str, str], new: dict[str, str]) -> str:
    return "".join(unified(p, old[p], new[p]) for p in sorted(new) if old.get(p) != new[p])
