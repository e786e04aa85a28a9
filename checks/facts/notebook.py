"""Jupyter notebooks -> the facts of their code cells, at the notebook file's own lines.

Many fine-tuning repositories keep their training code in ``.ipynb`` files (Colab QLoRA, Unsloth,
tutorial recipes). The code cells are joined in order (they share one namespace, so imports in an
early cell resolve names in later ones), IPython magics are blanked (``!pip install`` lines still
count as dependencies), cells that do not parse are left out, and every record is moved to the line
of the notebook where its source line is stored (nbformat writes one source line per file line).
"""

from __future__ import annotations

import ast
import json
from dataclasses import fields, is_dataclass, replace
from typing import Any

from ..lazyre import lazy_compile
from .deps import pip_installs
from .python import extract_python
from .shell import extract_shell_text, unset_var
from .types import FileFacts

_TOKEN = lazy_compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|\n|[^\s{}\[\]:,"]+')
_RECORDS = ("calls", "imports", "refs", "attr_assigns", "decorators", "arg_options", "fields", "assigns", "configs", "envs", "paths", "launches", "deps", "params", "classes", "grad_off", "ratios")


def _source_lines(text: str) -> dict[int, list[int]]:
    """Cell index -> the file line of each element of its ``"source"`` list (one line for a plain string)."""
    out: dict[int, list[int]] = {}
    stack: list[list[Any]] = []  # [kind, path, key-or-index]
    line = 1
    expect_key = False
    pending: str | None = None
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
            continue
        if tok in "{[":
            if stack:
                top = stack[-1]
                path = (*top[1], pending) if top[0] == "map" else (*top[1], top[2])
            else:
                path = ()
            stack.append(["map" if tok == "{" else "seq", path, 0])
            expect_key = tok == "{"
            pending = None
            continue
        if tok in "}]":
            if stack:
                stack.pop()
            pending = None
            continue
        if tok == ",":
            if stack and stack[-1][0] == "seq":
                stack[-1][2] += 1
            else:
                expect_key = True
            pending = None
            continue
        if tok == ":":
            expect_key = False
            continue
        if not stack:
            continue
        top = stack[-1]
        if expect_key and top[0] == "map" and tok.startswith('"'):
            pending = tok[1:-1]
            expect_key = False
            continue
        # a value token: a string of a cell's source list, or a cell's source given as one string
        path = top[1]
        if top[0] == "seq" and len(path) == 3 and path[0] == "cells" and path[2] == "source" and isinstance(path[1], int):
            out.setdefault(path[1], []).append(line)
        elif top[0] == "map" and pending == "source" and len(path) == 2 and path[0] == "cells" and isinstance(path[1], int):
            out.setdefault(path[1], []).append(line)
    return out


def _cell_lines(source: Any) -> list[str]:
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str)).split("\n")
    if isinstance(source, str):
        return source.split("\n")
    return []


def extract_notebook(path: str, text: str, out: FileFacts) -> None:
    try:
        nb = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        out.error = f"notebook is not valid JSON: {getattr(exc, 'msg', exc)}"
        return
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return
    where = _source_lines(text)
    code: list[str] = []
    file_line: list[int] = []  # file line of each joined code line
    shell: list[tuple[int, str]] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        lines = _cell_lines(cell.get("source"))
        positions = where.get(i, [])
        exact = len(positions) == len(lines) or (len(positions) == len(lines) - 1 and lines and lines[-1] == "")
        mapped = [positions[k] if exact and k < len(positions) else (positions[0] if positions else 1) for k in range(len(lines))]
        body, cmds = split_magics(lines)
        for k, cmd in cmds:
            shell.append((mapped[k], cmd))
        try:
            ast.parse("\n".join(body))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # a cell that does not parse (IPython syntax, a half-written cell) is left out
        code += body
        file_line += mapped
    pip_installs(path, shell, out)
    magic_launches(path, shell, out)
    if not code:
        return
    cell_facts = FileFacts(path=path, kind="python")
    extract_python(path, "\n".join(code), cell_facts)
    if cell_facts.error:
        out.error = cell_facts.error
    for attr in _RECORDS:
        getattr(out, attr).extend(_moved(r, file_line) for r in getattr(cell_facts, attr))


#: the first line of a notebook exported in Databricks' source format (cells separated by ``# COMMAND ----------``)
DATABRICKS_HEADER = "# Databricks notebook source"
_MAGIC = lazy_compile(r"^# MAGIC ?(.*)$")


def extract_databricks(path: str, text: str, out: FileFacts, strings: dict[str, str] | None = None) -> None:
    """A Databricks source-format notebook (dolly's ``train_dolly.py``): Python with IPython ``!`` commands, which do not
    parse as Python, and ``# MAGIC %sh`` / ``# MAGIC %pip`` cells. The Python is read with the commands blanked (its
    lines kept); the commands are read as shell, at their own lines."""
    lines = text.split("\n")
    body, cmds = split_magics(lines)
    shell = [(k + 1, cmd) for k, cmd in cmds]
    k = 0
    while k < len(lines):
        m = _MAGIC.match(lines[k])
        magic = m.group(1).strip() if m else ""
        k += 1
        if magic.startswith("%pip "):
            shell.append((k, magic[1:]))  # ``# MAGIC %pip install x``: a dependency
        elif magic in ("%sh", "%bash"):  # a shell cell: the ``# MAGIC`` lines that follow it
            start, part = k + 1, []
            while k < len(lines) and (mm := _MAGIC.match(lines[k])):
                part.append(mm.group(1))
                k += 1
            if part:
                shell.append((start, "\n".join(part)))
    pip_installs(path, [(ln, c) for ln, c in shell if c.lstrip().startswith("pip")], out)
    magic_launches(path, shell, out)
    extract_python(path, "\n".join(body), out, strings)


def split_magics(lines: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """The lines with IPython magics blanked (the count kept), and each ``!`` shell command as (index of its first line,
    its text). A command continued with a trailing backslash takes the lines that follow it, as IPython does (dolly's
    ``!deepspeed {num_gpus_flag} \\`` then ``    --module training.trainer \\`` ...): those are shell, not Python."""
    body: list[str] = []
    cmds: list[tuple[int, str]] = []
    k = 0
    while k < len(lines):
        raw = lines[k]
        stripped = raw.lstrip()
        if not stripped.startswith(("!", "%")):
            body.append(raw)
            k += 1
            continue
        start, parts = k, [stripped[1:]] if stripped.startswith("!") else []
        body.append("")  # keep the line count; a magic is not Python
        while lines[k].rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            body.append("")
            if parts:
                parts.append(lines[k])
        if parts:
            cmds.append((start, "\n".join(parts)))
        k += 1
    return body, cmds


#: ``{name}`` in an IPython shell command: the Python value IPython substitutes, unknown to a static reading
_IPY_EXPR = lazy_compile(r"\{([A-Za-z_][\w.\[\]'\"]*)\}")


def magic_launches(path: str, shell: list[tuple[int, str]], out: FileFacts) -> None:
    """The launches of a notebook's ``!`` shell commands (``!deepspeed --module training.trainer --deepspeed {config}``),
    at the notebook's lines; a ``{expr}`` IPython fills in is read as an unset shell variable."""
    for line, cmd in shell:
        scratch = FileFacts(path=path, kind="shell", lines=0)
        body = _IPY_EXPR.sub(lambda m: unset_var(m.group(1), "EXPR"), cmd)
        extract_shell_text(path, body, scratch, first_line=line)
        out.launches.extend(scratch.launches)
        out.envs.extend(e for e in scratch.envs if e.name.isupper())


def _moved(record: Any, file_line: list[int]) -> Any:
    def at(n: int) -> int:
        return file_line[n - 1] if 0 < n <= len(file_line) else n

    if not is_dataclass(record) or not hasattr(record, "line"):
        return record
    changes: dict[str, Any] = {"line": at(record.line)}
    names = {f.name for f in fields(record)}
    if "kw_lines" in names:
        changes["kw_lines"] = {k: at(v) for k, v in record.kw_lines.items()}
    for span in ("start", "end"):  # a function's or a class's lines (ParamDefault, ClassSpan)
        if span in names:
            changes[span] = at(getattr(record, span))
    return replace(record, **changes)
