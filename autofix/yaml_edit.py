"""YAML edits that keep every other byte: ruamel.yaml finds and validates, the value's own span is spliced.

A plain ruamel round-trip dump rewrites untouched lines of real recipes (``null`` becomes empty, ``True``
becomes ``true``, flow lists reflow), so it is never used to write. An edit is refused when its target is an
alias, an anchored value, a merged key, a block or multi-line scalar, a flow collection or a templated value
(``${...}``, Jinja), and when anything but the named line would move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from .model import EditRefused
from .text import check_only, line_starts, newline_of

_TEMPLATE = re.compile(r"\$\{|\{\{|\{%|<%")
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./\-+]*$")
_YAML_SPECIAL = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$")


@dataclass(slots=True)
class Span:
    start: int
    end: int
    token: str
    line: int  # 0-based
    value: Any


def _load(text: str) -> list[Any]:
    y = YAML(typ="rt")
    try:
        return [d for d in y.load_all(text)]
    except YAMLError as exc:
        raise EditRefused(f"YAML does not parse: {str(exc).splitlines()[0]}") from None


def split_key(key: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in key.split(".")]


def _walk(doc: Any, keys: list[str | int]) -> tuple[Any, str | int] | None:
    node = doc
    for k in keys[:-1]:
        node = _child(node, k)
        if node is None:
            return None
    last = keys[-1]
    if isinstance(node, CommentedMap) and (last in node or str(last) in node):
        return node, (last if last in node else str(last))
    if isinstance(node, CommentedSeq) and isinstance(last, int) and last < len(node):
        return node, last
    return None


def _child(node: Any, k: str | int) -> Any:
    if isinstance(node, CommentedMap):
        if k in node:
            return node[k]
        if str(k) in node:
            return node[str(k)]
        return None
    if isinstance(node, CommentedSeq) and isinstance(k, int) and k < len(node):
        return node[k]
    return None


def _own(node: Any, k: Any) -> bool:
    ok = getattr(node, "_ok", None)
    return ok is None or k in ok


def _key_end(text: str, pos: int) -> int:
    """Offset just after the ``:`` that ends the mapping key starting at ``pos``."""
    if text[pos] in "\"'":
        q = text[pos]
        i = pos + 1
        while i < len(text):
            if text[i] == "\\" and q == '"':
                i += 2
                continue
            if text[i] == q:
                if q == "'" and text[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                break
            i += 1
        i += 1
        while text[i] in " \t":
            i += 1
        if text[i] != ":":
            raise EditRefused("unusual key syntax")
        return i + 1
    i = pos
    while i < len(text):
        c = text[i]
        if c == ":" and (i + 1 == len(text) or text[i + 1] in " \t\r\n"):
            return i + 1
        if c in "\r\n":
            break
        i += 1
    raise EditRefused("a complex mapping key")


def _scalar_span(text: str, start: int) -> int:
    """End offset of the scalar token starting at ``start`` (quoted or plain, on one line)."""
    c = text[start]
    if c in "\"'":
        i = start + 1
        while i < len(text):
            ch = text[i]
            if ch in "\r\n":
                raise EditRefused("a quoted scalar spanning lines")
            if ch == "\\" and c == '"':
                i += 2
                continue
            if ch == c:
                if c == "'" and text[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        raise EditRefused("unterminated quoted scalar")
    i = start
    while i < len(text) and text[i] not in "\r\n":
        if text[i] == "#" and text[i - 1] in " \t":
            break
        i += 1
    end = i
    while end > start and text[end - 1] in " \t":
        end -= 1
    return end


def _value_start(text: str, key_pos: int) -> int:
    i = _key_end(text, key_pos)
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _refuse_token(token: str) -> None:
    if not token or token[0] == "#":
        raise EditRefused("the value is a nested block, not a scalar")
    c = token[0]
    if c == "*":
        raise EditRefused("the value is an alias: editing it here would not change what it points to")
    if c == "&":
        raise EditRefused("the value carries an anchor: other places alias it")
    if c in "|>":
        raise EditRefused("a block scalar")
    if c in "[{":
        raise EditRefused("a flow collection")
    if c == "!":
        raise EditRefused("a tagged value")
    if _TEMPLATE.search(token):
        raise EditRefused("a templated value (${...} or Jinja): the real value is decided elsewhere")


def locate(text: str, key: str, line: int | None = None) -> Span:
    """The scalar value of ``key`` (dotted), in the document holding it (the one at ``line`` when several do)."""
    keys = split_key(key)
    docs = _load(text)
    starts = line_starts(text)
    found: list[Span] = []
    for doc in docs:
        hit = _walk(doc, keys)
        if hit is None:
            continue
        parent, k = hit
        if isinstance(parent, CommentedMap):
            if not _own(parent, k):
                raise EditRefused("the key comes through a merge (<<): editing it here would change its source")
            kl, kc = parent.lc.key(k)
            vstart = _value_start(text, starts[kl] + kc)
        else:
            kl, kc = parent.lc.item(k)
            vstart = starts[kl] + kc
        rest = text[vstart : text.find("\n", vstart) if "\n" in text[vstart:] else len(text)]
        _refuse_token(rest.strip())
        if vstart >= len(text) or text[vstart] in "\r\n":
            raise EditRefused("the value is a nested block, not a scalar")
        end = _scalar_span(text, vstart)
        value = parent[k]
        if isinstance(value, (CommentedMap, CommentedSeq)):
            raise EditRefused("the value is a collection")
        if getattr(value, "anchor", None) is not None and getattr(value.anchor, "value", None):
            raise EditRefused("the value carries an anchor: other places alias it")
        tail = text[end : text.find("\n", end) if "\n" in text[end:] else len(text)].strip()
        if tail and not tail.startswith("#"):
            raise EditRefused("a multi-line or unusual scalar")
        nxt = text.find("\n", end)
        if nxt != -1 and isinstance(value, str) and text[vstart] not in "\"'":
            # a plain scalar continued on the next line: ruamel's value is longer than the token
            if str(value) != text[vstart:end]:
                raise EditRefused("a plain scalar continued over several lines")
        found.append(Span(vstart, end, text[vstart:end], kl, value))
    if not found:
        raise KeyError(key)
    if line is not None:
        for s in found:
            if s.line == line - 1:
                return s
    return found[0]


def format_scalar(value: Any, old: str | None = None) -> str:
    """``value`` as a YAML token in the style of the token it replaces (``True``/``true``, the same quotes)."""
    if isinstance(value, bool):
        if old and old in ("True", "False"):
            return "True" if value else "False"
        if old and old in ("TRUE", "FALSE"):
            return "TRUE" if value else "FALSE"
        return "true" if value else "false"
    if value is None:
        return old if old in ("null", "~", "Null", "NULL") else "null"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    q = old[0] if old and old[0] in "\"'" else ""
    if q == "'" and "\n" not in s:
        return "'" + s.replace("'", "''") + "'"
    if q == '"' or not _PLAIN_SAFE.match(s) or _YAML_SPECIAL.match(s) or _looks_numeric(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def _looks_numeric(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _reparse_value(text: str, key: str, line: int) -> Any:
    return locate(text, key, line + 1).value


def set_value(text: str, key: str, value: Any, line: int | None = None, token: str | None = None) -> tuple[str, int]:
    """Replace the value of ``key``; returns the new text and the 0-based edited line."""
    span = locate(text, key, line)
    new_tok = token if token is not None else format_scalar(value, span.token)
    new = text[: span.start] + new_tok + text[span.end :]
    check_only(text, new, {span.line})
    got = _reparse_value(new, key, span.line)
    if token is None and not _same(got, value):
        raise EditRefused(f"after the edit {key} reads {got!r}, not {value!r}")
    return new, span.line


def _same(a: Any, b: Any) -> bool:
    if isinstance(b, bool) or isinstance(a, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    return a == b or str(a) == str(b)


def _block_of(doc: Any, parent_keys: list[str | int]) -> CommentedMap:
    node = doc
    for k in parent_keys:
        node = _child(node, k)
    if not isinstance(node, CommentedMap):
        raise KeyError(".".join(map(str, parent_keys)))
    if node.fa.flow_style():
        raise EditRefused("the block is a flow mapping ({...}): a key is not added there")
    return node


def _scalar_line_keys(text: str, node: CommentedMap, starts: list[int]) -> list[tuple[str, int, int]]:
    """(key, 0-based line, column) of the keys of ``node`` whose value is a one-line scalar."""
    out = []
    for k in node:
        if not _own(node, k):
            continue
        v = node[k]
        if isinstance(v, (CommentedMap, CommentedSeq)):
            continue
        kl, kc = node.lc.key(k)
        out.append((str(k), kl, kc))
    return out


def add_key(text: str, parent: str, key: str, value: Any, after: tuple[str, ...] = (), line: int | None = None) -> tuple[str, int]:
    """Add ``key: value`` to the block mapping at ``parent`` ("" = the top level), after the first sibling of
    ``after`` present (else after the block's last one-line scalar key), with the block's own indentation."""
    parent_keys = split_key(parent) if parent else []
    docs = _load(text)
    if not docs:
        raise EditRefused("an empty YAML file")
    starts = line_starts(text)
    doc = None
    for d in docs:
        try:
            node = _block_of(d, parent_keys)
        except KeyError:
            continue
        if line is None or any(node.lc.key(k)[0] <= line - 1 for k in node) or doc is None:
            doc = node
    if doc is None:
        raise KeyError(parent or "<top level>")
    node = doc
    if key in node:
        raise EditRefused(f"{key} is already set")
    if any(not _own(node, k) for k in node) and getattr(node, "merge", None):
        merged = {k for k in node if not _own(node, k)}
        if key in merged:
            raise EditRefused(f"{key} comes through a merge (<<)")
    cands = _scalar_line_keys(text, node, starts)
    if not cands:
        raise EditRefused("no one-line sibling to place the key next to")
    anchor = None
    for a in after:
        for c in cands:
            if c[0] == a:
                anchor = c
                break
        if anchor:
            break
    if anchor is None:
        anchor = max(cands, key=lambda c: c[1])
    _, kl, kc = anchor
    lines = text.split("\n")
    sib = lines[kl]
    indent = sib[:kc]
    if indent.strip() and indent.strip() != "-":
        raise EditRefused("unusual indentation")
    if "-" in indent:  # the first key of a list item: siblings align under it
        indent = " " * kc
    nl = newline_of(text)
    cr = "\r" if nl == "\r\n" else ""
    new_line = f"{indent}{_key_token(key)}: {format_scalar(value)}"
    if kl == len(lines) - 1:  # the last line, without a final newline: keep it missing
        new = text + nl + new_line
    elif kl == len(lines) - 2 and lines[-1] == "":
        new = text + new_line + nl
    else:
        lines.insert(kl + 1, new_line + cr)
        new = "\n".join(lines)
    check_only(text, new, {kl}, inserted=1) if kl == len(text.split("\n")) - 1 else _check_insert(text, new, kl + 1)
    got = _reparse_value(new, ".".join([*map(str, parent_keys), key]), kl + 1)
    if not _same(got, value):
        raise EditRefused(f"after the edit {key} reads {got!r}, not {value!r}")
    return new, kl + 1


def _key_token(key: str) -> str:
    return key if _PLAIN_SAFE.match(key) and not _YAML_SPECIAL.match(key) else '"' + key + '"'


def _check_insert(old: str, new: str, at: int) -> None:
    a, b = old.split("\n"), new.split("\n")
    if len(b) != len(a) + 1 or b[:at] != a[:at] or b[at + 1 :] != a[at:]:
        raise EditRefused("the insertion would move other lines")
