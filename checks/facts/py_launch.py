"""Launch records built from Python code: a launcher's command line written as a call of a launch API.

torchx's DDP component, ``ddp(*args, script="./torchtitan/train.py", j=f"{nodes}x{nproc}")`` (from
``torchx.components.dist``), runs ``torchrun --nnodes N --nproc_per_node M script *args`` on the scheduler: the flags in
``args`` (a list literal of the function, ``args += [...]`` included) are the launched script's, each at its own line.
An f-string piece that reads an argparse option of the same file (``{cli_args.nodes * cli_args.nproc_per_node}``) takes
that option's default (a default a run must change is judged as the default); anything else stays an unresolved
``${...}`` word, as an unset shell variable does. ``env=env``, a dict the function fills key by key, is the launched job's
environment: its variables are recorded at their own lines.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any

from ..lazyre import lazy_compile
from .shell import _word, launch_of
from .types import EnvVar, FileFacts

#: launch APIs whose call is a torchrun command line
TORCHX_DDP = frozenset({"torchx.components.dist.ddp"})

_ENV_NAME = lazy_compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


@dataclass(slots=True)
class Pending:
    """A launch call seen during the walk: its words as pieces (text or an expression to resolve), each with its line."""

    line: int
    text: str
    words: list[tuple[list[str | ast.expr], int]]
    script: tuple[list[str | ast.expr], int] | None
    j: tuple[list[str | ast.expr], int] | None
    env: list[tuple[str, str, int, str]]  # ``env=`` entries set key by key in the function: (name, value, line, text)


def word_pieces(node: ast.expr) -> tuple[list[str | ast.expr], int] | None:
    """A string literal or an f-string as pieces, with its line; None for anything else (a name, a call)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value], node.lineno
    if isinstance(node, ast.JoinedStr):
        pieces: list[str | ast.expr] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                pieces.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                pieces.append(v.value)
        return pieces, node.lineno
    return None


def _defaults(out: FileFacts) -> dict[str, Any]:
    """The file's argparse options with one constant default: dest -> default."""
    seen: dict[str, set[str]] = {}
    vals: dict[str, Any] = {}
    for a in out.arg_options:
        if isinstance(a.default, (int, float, str)) and not isinstance(a.default, bool):
            seen.setdefault(a.dest, set()).add(repr(a.default))
            vals[a.dest] = a.default
    return {k: v for k, v in vals.items() if len(seen[k]) == 1}


def _resolve(node: ast.expr, defaults: dict[str, Any]) -> Any:
    """The value of an f-string piece: a constant, ``<parsed args>.<option>`` at its default, or arithmetic of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return defaults.get(node.attr)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _resolve(node.left, defaults), _resolve(node.right, defaults)
        if isinstance(a, int) and isinstance(b, int) and not (isinstance(node.op, ast.FloorDiv) and b == 0):
            return _OPS[type(node.op)](a, b)
    return None


def _text(pieces: list[str | ast.expr], defaults: dict[str, Any]) -> str:
    out: list[str] = []
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
            continue
        v = _resolve(p, defaults)
        out.append(str(v) if v is not None else "${" + ast.unparse(p) + "}")
    return "".join(out)


def finish(path: str, pending: list[Pending], out: FileFacts) -> None:
    """Turn the file's launch calls into :class:`Launch` records (once the whole file, its argparse options included, is read)."""
    if not pending:
        return
    defaults = _defaults(out)
    for p in pending:
        if p.script is None:
            continue
        launcher = [_word("torchrun", p.line)]
        if p.j is not None:
            spec = _text(p.j[0], defaults).rpartition(":")[2]  # ``1:2x4``: elastic min:max nodes
            nodes, x, procs = spec.partition("x")
            if not x:
                nodes, procs = "1", nodes
            launcher += [_word(f"--nnodes={nodes}", p.j[1]), _word(f"--nproc_per_node={procs}", p.j[1])]
        else:  # torchx's own default layout is not this file's to state: unknown, not one process
            launcher.append(_word("--nproc_per_node=${j}", p.line))
        script = _word(_text(p.script[0], defaults), p.script[1])
        tokens = [*launcher, script, *(_word(_text(w, defaults), ln) for w, ln in p.words)]
        launch = launch_of(tokens, path, p.line, p.text)
        if launch is None:
            continue
        out.launches.append(launch)
        for name, value, line, text in p.env:
            if _ENV_NAME.match(name):  # the launched job's environment (``env["NCCL_PROTO"] = "Simple"``), at its line
                launch.env[name] = value
                if not any(e.line == line and e.name == name for e in out.envs):  # (a dict named for it is one already)
                    out.envs.append(EnvVar(path, line, name, value, "python", text))
