"""Launcher edits: change, add or remove one flag of a (backslash-continued) command on its own physical line."""

from __future__ import annotations

import re
import shlex

from .model import EditRefused
from .text import newline_of

_TEMPLATE = re.compile(r"\$|`")


def _command_lines(lines: list[str], line: int) -> list[int]:
    """0-based indices of the physical lines of the command starting at 1-based ``line``."""
    i = line - 1
    if not 0 <= i < len(lines):
        raise KeyError(f"line {line}")
    out = [i]
    while lines[i].rstrip("\r").endswith("\\") and i + 1 < len(lines):
        i += 1
        out.append(i)
    return out


def _variants(flag: str) -> list[str]:
    name = flag.lstrip("-")
    dashes = flag[: len(flag) - len(name)] or "--"
    return sorted({dashes + name, dashes + name.replace("_", "-"), dashes + name.replace("-", "_")})


def _pattern(flag: str) -> re.Pattern[str]:
    alts = "|".join(re.escape(v) for v in _variants(flag))
    return re.compile(rf"(?<![^\s])({alts})(?:=(\"[^\"]*\"|'[^']*'|[^\s\\]+)|([ \t]+)(\"[^\"]*\"|'[^']*'|[^\s\\-][^\s\\]*))?(?=\s|\\|$)")


def find(text: str, line: int, flag: str) -> tuple[int, re.Match[str]] | None:
    """(0-based physical line, match) of ``flag`` in the command at ``line``."""
    lines = text.split("\n")
    pat = _pattern(flag)
    for i in _command_lines(lines, line):
        m = pat.search(lines[i].rstrip("\r"))
        if m:
            return i, m
    return None


def get(text: str, line: int, flag: str) -> str | None:
    hit = find(text, line, flag)
    if hit is None:
        return None
    m = hit[1]
    return m.group(2) or m.group(4) or ""


def _token(value: object, old: str | None = None) -> str:
    s = str(value)
    if old and old[:1] in "\"'":
        return old[0] + s + old[0]
    return s if re.fullmatch(r"[A-Za-z0-9_./:+,=@-]+", s) else shlex.quote(s)


def set_flag(text: str, line: int, flag: str, value: object, add: bool = True, token: str | None = None) -> tuple[str, int]:
    """Set ``flag``'s value in the command at ``line`` (adding ``flag value`` on its own line when absent)."""
    lines = text.split("\n")
    hit = find(text, line, flag)
    if hit is not None:
        i, m = hit
        old = m.group(2) or m.group(4)
        if old is None:
            raise EditRefused(f"{m.group(1)} takes no value here")
        if _TEMPLATE.search(old):
            raise EditRefused(f"{m.group(1)} {old}: the value comes from a variable")
        new_tok = token if token is not None else _token(value, old)
        start, end = (m.start(2), m.end(2)) if m.group(2) is not None else (m.start(4), m.end(4))
        lines[i] = lines[i][:start] + new_tok + lines[i][end:]
        return "\n".join(lines), i
    if not add:
        raise KeyError(flag)
    tok = token if token is not None else _token(value)
    return add_line(text, line, f"{flag} {tok}")


def add_line(text: str, line: int, content: str) -> tuple[str, int]:
    """Add ``content`` (flags) at the end of the command at ``line``, on its own physical line when the command
    is continued over several lines (before a final line of flags, else after the last line)."""
    lines = text.split("\n")
    idx = _command_lines(lines, line)
    cr = "\r" if newline_of(text) == "\r\n" else ""
    if len(idx) == 1:
        i = idx[0]
        body = lines[i].rstrip("\r")
        code, comment = _split_comment(body)
        lines[i] = code.rstrip() + " " + content + (("  " + comment) if comment else "") + cr
        return "\n".join(lines), i
    last = idx[-1]
    body = lines[last].rstrip("\r")
    indent = re.match(r"[ \t]*", body).group(0)  # type: ignore[union-attr]
    if body.strip().startswith("-") and not _split_comment(body)[1]:
        lines.insert(last, f"{indent}{content} \\{cr}")
        return "\n".join(lines), last
    code, comment = _split_comment(body)
    if comment:
        raise EditRefused("the command's last line ends with a comment")
    lines[last] = code.rstrip() + " \\" + cr
    lines.insert(last + 1, f"{indent}{content}{cr}")
    return "\n".join(lines), last + 1


def remove_flag(text: str, line: int, flag: str) -> tuple[str, int]:
    """Remove ``flag`` (and its value): its physical line when the flag is alone on it."""
    lines = text.split("\n")
    hit = find(text, line, flag)
    if hit is None:
        raise KeyError(flag)
    i, m = hit
    body = lines[i].rstrip("\r")
    rest = (body[: m.start()] + body[m.end():]).strip()
    idx = _command_lines(lines, line)
    if rest in ("\\", "") and len(idx) > 1 and i != idx[0]:
        if i == idx[-1]:  # the last line: the previous one stops continuing
            prev = lines[i - 1]
            cr = "\r" if prev.endswith("\r") else ""
            lines[i - 1] = prev.rstrip("\r").rstrip()[:-1].rstrip() + cr
        del lines[i]
        return "\n".join(lines), i
    cr = "\r" if lines[i].endswith("\r") else ""
    lines[i] = (body[: m.start()].rstrip() + (" " if body[m.end():].strip() else "") + body[m.end():].lstrip()).rstrip() + cr
    if body[m.end():].strip() == "" and body[: m.start()].strip() == "":
        raise EditRefused("the flag is the whole line of a one-line command")
    return "\n".join(lines), i


def _split_comment(body: str) -> tuple[str, str]:
    m = re.search(r"\s#", body)
    if m and body.count('"', 0, m.start()) % 2 == 0 and body.count("'", 0, m.start()) % 2 == 0:
        return body[: m.start()], body[m.start():].strip()
    return body, ""
