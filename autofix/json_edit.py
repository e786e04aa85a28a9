"""JSON edits that keep every other byte: the value's token span is spliced; an added key copies its
siblings' indentation (2 or 4 spaces, tabs) and separator style; key order and the final newline stay."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .model import EditRefused
from .text import check_only, line_of, newline_of

_WS = " \t\r\n"
_NUM = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")


@dataclass(slots=True)
class Node:
    start: int
    end: int
    kind: str  # "object" | "array" | "scalar"
    members: list[tuple[str, int, int, Node]] = field(default_factory=list)  # key, key start, colon end, value
    items: list[Node] = field(default_factory=list)


class _Parser:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0

    def ws(self) -> None:
        while self.i < len(self.t) and self.t[self.i] in _WS:
            self.i += 1

    def value(self) -> Node:
        self.ws()
        c = self.t[self.i]
        start = self.i
        if c == "{":
            node = Node(start, 0, "object")
            self.i += 1
            self.ws()
            if self.t[self.i] == "}":
                self.i += 1
                node.end = self.i
                return node
            while True:
                self.ws()
                kstart = self.i
                key = self.string()
                self.ws()
                self.i += 1  # ':'
                colon = self.i
                val = self.value()
                node.members.append((key, kstart, colon, val))
                self.ws()
                if self.t[self.i] == ",":
                    self.i += 1
                    continue
                self.i += 1  # '}'
                node.end = self.i
                return node
        if c == "[":
            node = Node(start, 0, "array")
            self.i += 1
            self.ws()
            if self.t[self.i] == "]":
                self.i += 1
                node.end = self.i
                return node
            while True:
                node.items.append(self.value())
                self.ws()
                if self.t[self.i] == ",":
                    self.i += 1
                    continue
                self.i += 1
                node.end = self.i
                return node
        if c == '"':
            self.string()
            return Node(start, self.i, "scalar")
        for lit in ("true", "false", "null"):
            if self.t.startswith(lit, self.i):
                self.i += len(lit)
                return Node(start, self.i, "scalar")
        m = _NUM.match(self.t, self.i)
        if not m:
            raise EditRefused("JSON token not understood")
        self.i = m.end()
        return Node(start, self.i, "scalar")

    def string(self) -> str:
        start = self.i
        self.i += 1
        while self.t[self.i] != '"':
            self.i += 2 if self.t[self.i] == "\\" else 1
        self.i += 1
        return json.loads(self.t[start : self.i])


def parse(text: str) -> Node:
    try:
        json.loads(text)
    except ValueError as exc:
        raise EditRefused(f"not strict JSON ({exc}): not edited") from None
    return _Parser(text).value()


def _find(root: Node, keys: list[str]) -> tuple[Node, int] | None:
    """The object holding the last key, and the member's index."""
    node = root
    for n, k in enumerate(keys):
        if node.kind == "object":
            idx = [i for i, m in enumerate(node.members) if m[0] == k]
            if not idx:
                return None
            if n == len(keys) - 1:
                return node, idx[-1]  # a duplicated key: the last one wins, as json.loads reads it
            node = node.members[idx[-1]][3]
        elif node.kind == "array" and k.isdigit() and int(k) < len(node.items):
            if n == len(keys) - 1:
                return None
            node = node.items[int(k)]
        else:
            return None
    return None


def _obj(root: Node, keys: list[str]) -> Node | None:
    node = root
    for k in keys:
        if node.kind == "object":
            idx = [i for i, m in enumerate(node.members) if m[0] == k]
            if not idx:
                return None
            node = node.members[idx[-1]][3]
        elif node.kind == "array" and k.isdigit() and int(k) < len(node.items):
            node = node.items[int(k)]
        else:
            return None
    return node if node.kind == "object" else None


def get(text: str, key: str) -> tuple[Any, str, int] | None:
    """(value, token, 0-based line) of ``key`` or None."""
    root = parse(text)
    hit = _find(root, key.split("."))
    if hit is None:
        return None
    obj, i = hit
    v = obj.members[i][3]
    if v.kind != "scalar":
        return json.loads(text[v.start : v.end]), text[v.start : v.end], line_of(text, v.start)
    tok = text[v.start : v.end]
    return json.loads(tok), tok, line_of(text, v.start)


def format_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def set_value(text: str, key: str, value: Any, token: str | None = None) -> tuple[str, int]:
    root = parse(text)
    hit = _find(root, key.split("."))
    if hit is None:
        raise KeyError(key)
    obj, i = hit
    v = obj.members[i][3]
    if v.kind != "scalar":
        raise EditRefused("the value is an object or array")
    line = line_of(text, v.start)
    if line != line_of(text, v.end):
        raise EditRefused("a value spanning lines")
    new = text[: v.start] + (token if token is not None else format_value(value)) + text[v.end :]
    check_only(text, new, {line})
    got = get(new, key)
    if got is None or (token is None and got[0] != value):
        raise EditRefused(f"after the edit {key} does not read {value!r}")
    return new, line


def add_key(text: str, parent: str, key: str, value: Any, after: tuple[str, ...] = ()) -> tuple[str, int]:
    """Add ``"key": value`` to the object at ``parent`` next to its siblings, in their style."""
    root = parse(text)
    obj = _obj(root, parent.split(".") if parent else [])
    if obj is None:
        raise KeyError(parent or "<root>")
    if any(m[0] == key for m in obj.members):
        raise EditRefused(f"{key} is already set")
    if not obj.members:
        raise EditRefused("an empty object: no sibling to copy the style of")
    idx = len(obj.members) - 1
    for a in after:
        hits = [i for i, m in enumerate(obj.members) if m[0] == a]
        if hits:
            idx = hits[-1]
            break
    _mk, kstart, _colon, val = obj.members[idx]
    sep_raw = text[kstart:val.start]
    sep = sep_raw[sep_raw.rfind('"') + 1:] if '"' in sep_raw else ": "
    klines = line_of(text, kstart)
    multi = line_of(text, obj.start) != line_of(text, obj.end)
    if multi and line_of(text, val.end) != klines and not (val.kind != "scalar"):
        raise EditRefused("unusual layout")
    rendered = _render(value, text, kstart)
    if multi:
        line_start = text.rfind("\n", 0, kstart) + 1
        indent = text[line_start:kstart]
        if indent.strip():
            raise EditRefused("the sibling shares its line with other keys")
        nl = newline_of(text)
        is_last = idx == len(obj.members) - 1
        end = val.end
        if is_last:
            insert = "," + nl + indent + format_value(key) + sep + rendered
            new = text[:end] + insert + text[end:]
        else:
            # after the sibling's comma
            comma = text.index(",", end)
            insert = nl + indent + format_value(key) + sep + rendered + ","
            new = text[: comma + 1] + insert + text[comma + 1 :]
        at = line_of(text, end) + 1
        _check_insert(text, new, line_of(text, end), rendered.count("\n") + 1)
    else:
        end = val.end
        insert = ", " + format_value(key) + sep + rendered
        new = text[:end] + insert + text[end:]
        at = line_of(text, end)
        check_only(text, new, {at})
    got = get(new, ".".join([p for p in [parent, key] if p]))
    if got is None or got[0] != value:
        raise EditRefused(f"after the edit {key} does not read {value!r}")
    return new, at


def _render(value: Any, text: str, kstart: int) -> str:
    if not isinstance(value, dict):
        return format_value(value)
    line_start = text.rfind("\n", 0, kstart) + 1
    indent = text[line_start:kstart]
    unit = _indent_unit(text)
    body = json.dumps(value, indent=unit, ensure_ascii=False)
    nl = newline_of(text)
    return body.replace("\n", nl + indent)


def _indent_unit(text: str) -> str | int:
    for ln in text.split("\n")[1:]:
        s = ln[: len(ln) - len(ln.lstrip(" \t"))]
        if s:
            return "\t" if s.startswith("\t") else len(s)
    return 2


def _check_insert(old: str, new: str, after_line: int, count: int) -> None:
    """Only the sibling's line (which gains a comma) changes, and ``count`` new lines follow it."""
    a, b = old.split("\n"), new.split("\n")
    if len(b) != len(a) + count:
        raise EditRefused("the insertion would move other lines")
    if b[:after_line] != a[:after_line] or b[after_line + 1 + count :] != a[after_line + 1 :]:
        raise EditRefused("the insertion would move other lines")
    if b[after_line].rstrip("\r").rstrip(",") != a[after_line].rstrip("\r").rstrip(","):
        raise EditRefused("the insertion would change the sibling's line beyond its comma")
