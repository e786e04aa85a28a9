"""Rewrite one line so that it sets a setting back to its base value, keeping everything else.

The line keeps its indentation, quoting, trailing comma and comment; only the value
token changes. The token must read as the value the audit found there, otherwise no
suggestion is made (a suggestion that edits the wrong token is worse than none).
Handles YAML ``key: value``, JSON ``"key": value``, Python ``key=value`` / ``"key": value`` /
``name: type = value`` / ``default=value`` and launcher flags ``--key value`` / ``--key=value``.
"""

from __future__ import annotations

import re
from typing import Any

from checks.facts import as_number

__all__ = ["rewrite_line"]

_TOKEN = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s,#)}\]'"]+)"""


def _bare_key(key: str) -> str:
    k = key.strip()
    m = re.match(r"^[\w.]*\((\w+)=\)$", k)
    if m:
        return m.group(1)
    k = k.lstrip("-")
    return k.rsplit(".", 1)[-1]


def _unquote(tok: str) -> tuple[str, str]:
    if len(tok) >= 2 and tok[0] == tok[-1] and tok[0] in "\"'":
        return tok[1:-1], tok[0]
    return tok, ""


def _same(tok: str, value: Any) -> bool:
    inner, _ = _unquote(tok)
    if isinstance(value, bool):
        return inner.lower() in ({"true", "yes", "on", "1"} if value else {"false", "no", "off", "0"})
    n = as_number(value)
    if n is not None:
        return as_number(inner) == n
    if value is None:
        return inner.lower() in {"none", "null", "~", ""}
    text = getattr(value, "text", None) or str(value)
    return inner == text or tok == text


def _render(new: Any, old_tok: str, python: bool) -> str | None:
    inner, quote = _unquote(old_tok)
    if isinstance(new, bool):
        if quote:
            return f"{quote}{'true' if new else 'false'}{quote}"
        if inner in {"True", "False"} or python:
            return "True" if new else "False"
        if inner.isupper():
            return "TRUE" if new else "FALSE"
        return "true" if new else "false"
    if isinstance(new, (int, float)):
        text = str(int(new)) if float(new).is_integer() else repr(new)
        return f"{quote}{text}{quote}"
    if isinstance(new, str):
        if quote:
            if quote in new or "\\" in new:
                return None
            return f"{quote}{new}{quote}"
        if python:
            return '"' + new.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return new if re.fullmatch(r"[\w./:+-]+", new) else None
    return None


def rewrite_line(line: str, key: str, current: Any, new: Any, *, python: bool = False) -> str | None:
    """``line`` with the value of ``key`` (now ``current``) replaced by ``new``; None when unsure."""
    if new is None or key is None:
        return None
    bare = re.escape(_bare_key(key))
    patterns = [
        rf"""(?P<pre>(?<![\w-])--{bare}(?:=|\s+))(?P<tok>{_TOKEN})""",  # launcher flag
        rf"""(?P<pre>["']{bare}["']\s*:\s*)(?P<tok>{_TOKEN})""",  # JSON / Python dict
        rf"""(?P<pre>^\s*(?:-\s+)?{bare}\s*:\s*)(?P<tok>{_TOKEN})(?=\s*(?:#.*)?$)""",  # YAML
        rf"""(?P<pre>(?<![\w.]){bare}\s*(?::\s*[\w\[\]., |]+?)?\s*=\s*)(?P<tok>{_TOKEN})""",  # keyword / assignment / typed field
        rf"""(?P<pre>["']--?{bare}["'].*?\bdefault\s*=\s*)(?P<tok>{_TOKEN})""",  # argparse add_argument
        rf"""(?P<pre>(?<![\w.]){bare}\s*:\s*[\w\[\]., |]+?=\s*(?:\w+\.)?field\(.*?\bdefault\s*=\s*)(?P<tok>{_TOKEN})""",  # dataclass field()
    ]
    for pat in patterns:
        for m in re.finditer(pat, line):
            tok = m.group("tok")
            if not _same(tok, current):
                continue
            rendered = _render(new, tok, python)
            if rendered is None or rendered == tok:
                return None
            out = line[: m.start("tok")] + rendered + line[m.end("tok"):]
            return out
    return None
