"""Parse Python 3.12 f-strings (PEP 701) on an older interpreter, for analysis only.

Python 3.12 lets an f-string's replacement field reuse the outer quote, hold backslashes and comments
and span lines (``f"{path / "checkpoints"}"``). CPython 3.11's parser rejects the whole file, so every
fact of a training script written for 3.12 would be lost for one log message. When the plain parse
fails, :func:`parse_with_pep701` finds each f-string with 3.12's grammar, and blanks those that 3.11
cannot parse into a plain string of the same shape: the same number of characters on each line, so
every other node keeps its line and column. What is lost is the text of those f-strings, which no
check reads (they are log lines and paths); the calls, keywords and values around them are kept.
"""

from __future__ import annotations

import ast
import sys
import warnings

_PREFIXES = frozenset({"f", "rf", "fr"})
_STRING_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "rf", "fr"})


def _scan_string(src: str, i: int, prefix: str) -> int:
    """Index just past the string literal whose opening quote is at ``src[i]``, read with 3.12's grammar."""
    quote = src[i : i + 3] if src[i : i + 3] in ('"""', "'''") else src[i]
    i += len(quote)
    n = len(src)
    fmt = "f" in prefix
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if src.startswith(quote, i):
            return i + len(quote)
        if len(quote) == 1 and c == "\n":
            return i  # an unterminated single-quoted string: stop at the line end, as the tokenizer does
        if fmt and c == "{":
            if src.startswith("{{", i):
                i += 2
                continue
            i = _scan_field(src, i + 1)
            continue
        i += 1
    return n


def _scan_field(src: str, i: int) -> int:
    """Index just past the ``}`` closing a replacement field whose body starts at ``src[i]``."""
    n = len(src)
    depth = 0
    while i < n:
        c = src[i]
        if c in "([{":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "}":
            if depth == 0:
                return i + 1
            depth -= 1
        elif c == ":" and depth == 0 and not src.startswith(":=", i):
            return _scan_spec(src, i + 1)
        elif c == "#":
            while i < n and src[i] != "\n":
                i += 1
            continue
        elif c in "\"'":
            i = _scan_string(src, i, "")
            continue
        elif c.isalpha():
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            if j < n and src[j] in "\"'" and src[i:j].lower() in _STRING_PREFIXES:
                i = _scan_string(src, j, src[i:j].lower())
            else:
                i = j
            continue
        i += 1
    return n


def _scan_spec(src: str, i: int) -> int:
    """Index just past the ``}`` ending a format spec (which may hold nested fields)."""
    n = len(src)
    while i < n:
        c = src[i]
        if c == "{":
            i = _scan_field(src, i + 1)
            continue
        if c == "}":
            return i + 1
        i += 1
    return n


def _blank(token: str) -> str:
    """A plain string literal of the same shape as ``token``: same characters per line, newlines kept."""
    lines = token.split("\n")
    if len(lines) == 1:
        return '"' + " " * (len(token) - 2) + '"'
    out = ['"""' + " " * (len(lines[0]) - 3)]
    out += [" " * len(line) for line in lines[1:-1]]
    out.append(" " * (len(lines[-1]) - 3) + '"""')
    return "\n".join(out)


def _fits(token: str) -> bool:
    """Whether :func:`_blank` can keep the token's shape (a closing quote on its last line)."""
    lines = token.split("\n")
    if len(lines) == 1:
        return len(token) >= 2
    return len(lines[0]) >= 3 and len(lines[-1]) >= 3


def rewrite_pep701(src: str) -> str | None:
    """``src`` with each f-string the running parser rejects blanked, or None when there is none."""
    out: list[str] = []
    last = 0
    i = 0
    n = len(src)
    changed = False
    while i < n:
        c = src[i]
        if c == "#":
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            i = _scan_string(src, i, "")
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            word = src[i:j].lower()
            if j < n and src[j] in "\"'" and word in _STRING_PREFIXES:
                end = _scan_string(src, j, word)
                if word in _PREFIXES:
                    token = src[i:end]
                    try:
                        ast.parse(token, mode="eval")
                    except SyntaxError:
                        if _fits(token):
                            out.append(src[last:i])
                            out.append(_blank(token))
                            last = end
                            changed = True
                i = end
                continue
            i = j
            continue
        i += 1
    if not changed:
        return None
    out.append(src[last:])
    return "".join(out)


def parse_with_pep701(text: str, filename: str) -> ast.Module:
    """``ast.parse``, retried on an interpreter older than 3.12 with PEP 701 f-strings blanked.

    Raises the original ``SyntaxError`` when the retry does not help, so the file's error names the
    real line.
    """
    # the audited code's own warnings (``SyntaxWarning: invalid decimal literal`` in a vendored grammar example, invalid
    # escape sequences) are not ours to print on the user's terminal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return ast.parse(text, filename=filename)
        except SyntaxError:
            if sys.version_info >= (3, 12):
                raise
            rewritten = rewrite_pep701(text)
            if rewritten is None:
                raise
            try:
                return ast.parse(rewritten, filename=filename)
            except SyntaxError:
                pass
            raise
