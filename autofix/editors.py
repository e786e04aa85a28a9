"""One entry point over the editors: apply an :class:`Edit` to a file's text."""

from __future__ import annotations

import re

from . import json_edit, py_edit, shell_edit, yaml_edit
from .model import Edit, EditRefused
from .text import newline_of

_CALL_KEY = re.compile(r"^([A-Za-z_][\w.]*)\((\w+)=\)$")


def apply(text: str, edit: Edit) -> tuple[str, int]:
    """The new text and the 0-based line of the edit in it. Raises EditRefused or KeyError (site not found)."""
    s = edit.site
    if edit.raw_line is not None:
        return insert_line(text, edit.insert_at or 0, edit.raw_line)
    if s.kind == "yaml":
        try:
            return yaml_edit.set_value(text, s.key, edit.after, s.line, edit.token)
        except KeyError:
            if edit.before is not None:
                raise
            parent, _, leaf = s.key.rpartition(".")
            return yaml_edit.add_key(text, parent, leaf, edit.after, _after(edit), s.line)
    if s.kind == "json":
        try:
            return json_edit.set_value(text, s.key, edit.after, edit.token)
        except KeyError:
            if edit.before is not None:
                raise
            parent, _, leaf = s.key.rpartition(".")
            return json_edit.add_key(text, parent, leaf, edit.after, _after(edit))
    if s.kind == "call":
        m = _CALL_KEY.match(s.key)
        if not m:
            raise EditRefused(f"not a call keyword: {s.key}")
        return py_edit.set_kw(text, s.line, m.group(1), m.group(2), edit.after, add=True, token=edit.token)
    if s.kind == "field":
        return py_edit.set_field_default(text, s.line, s.key, edit.after, edit.token)
    if s.kind == "argparse":
        return py_edit.set_argparse_default(text, s.line, edit.after, edit.token)
    if s.kind == "assign":
        try:
            return py_edit.set_assign(text, s.line, s.key, edit.after, edit.token)
        except KeyError:  # a training-arguments default the check read at the call (Trainer's dataloader_num_workers=0)
            return py_edit.set_in_arguments_call(text, s.line, s.key, edit.after, edit.token)
    if s.kind == "shell":
        if edit.remove:
            return shell_edit.remove_flag(text, s.line, s.key)
        return shell_edit.set_flag(text, s.line, s.key, edit.after, token=edit.token)
    raise EditRefused(f"no editor for {s.kind}")


def _after(edit: Edit) -> tuple[str, ...]:
    return tuple(x for x in (edit.after_key or "").split(",") if x)


def insert_line(text: str, index: int, raw: str) -> tuple[str, int]:
    """Insert one line (without its ending) before 0-based line ``index``, in the file's own line ending."""
    nl = newline_of(text)
    cr = "\r" if nl == "\r\n" else ""
    lines = text.split("\n")
    if index >= len(lines) or (index == len(lines) - 1 and lines[-1] == ""):
        if text and not text.endswith("\n"):
            return text + nl + raw.rstrip("\r"), len(lines)
        return text + raw.rstrip("\r") + nl, len(lines) - 1
    lines.insert(index, raw.rstrip("\r") + cr)
    return "\n".join(lines), index
