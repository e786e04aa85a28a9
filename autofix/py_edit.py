"""Python edits with libcst: a keyword of a call, a dataclass field default, an argparse default, a constant.

libcst keeps comments and formatting; on top of that every edit checks that only the lines of the edited
call or statement changed. A value that is not a literal (``bf16=args.bf16``) is never overwritten: the
setting lives elsewhere and the fix goes there.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .model import EditRefused
from .text import newline_of


def literal(value: Any, old: str | None = None) -> str:
    """``value`` as Python source, in the quote style of the token it replaces."""
    if isinstance(value, str):
        q = "'" if (old and old[:1] == "'") else '"'
        body = value.replace("\\", "\\\\").replace(q, "\\" + q)
        return f"{q}{body}{q}"
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)
    raise EditRefused(f"cannot write {value!r} as a literal")


def _parse(text: str) -> MetadataWrapper:
    try:
        return MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError as exc:
        raise EditRefused(f"Python does not parse: {exc.message}") from None


def _name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _name(node.value) + "." + node.attr.value
    if isinstance(node, cst.Call):
        return _name(node.func) + "()"
    return "?"


def _short(func: str) -> str:
    return func.split("(")[0].split(".")[-1]


def _is_literal(src: str) -> bool:
    try:
        ast.literal_eval(src)
    except (ValueError, SyntaxError):
        return False
    return True


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, new: cst.CSTNode) -> None:
        self.target, self.new = target, new

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.new if original is self.target else updated


def _find_calls(wrapper: MetadataWrapper, line: int, func: str) -> list[tuple[cst.Call, int, int]]:
    pos = wrapper.resolve(PositionProvider)
    want = _short(func)
    out = []
    for node, rng in pos.items():
        if isinstance(node, cst.Call) and rng.start.line <= line <= rng.end.line and _name(node.func).split(".")[-1] == want:
            out.append((node, rng.start.line, rng.end.line))
    out.sort(key=lambda x: (x[2] - x[1], -x[1]))  # the innermost call covering the line
    return out


def _code(module: cst.Module, wrapper: MetadataWrapper, target: cst.CSTNode, new: cst.CSTNode) -> str:
    return wrapper.module.visit(_Replace(target, new)).code


def _verify(old: str, new: str, first: int, last: int, grow: int) -> None:
    """Lines outside ``first..last`` (1-based, of the old text) are byte-identical."""
    a, b = old.split("\n"), new.split("\n")
    if len(b) != len(a) + grow:
        raise EditRefused("the edit would change the number of lines unexpectedly")
    if a[: first - 1] != b[: first - 1] or a[last:] != b[last + grow :]:
        raise EditRefused("the edit would change lines outside the edited statement")


def get_kw(text: str, line: int, func: str, kw: str) -> str | None:
    wrapper = _parse(text)
    for call, _, _ in _find_calls(wrapper, line, func):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == kw:
                return wrapper.module.code_for_node(arg.value)
        return None
    return None


def set_kw(text: str, line: int, func: str, kw: str, value: Any, add: bool = True, token: str | None = None) -> tuple[str, int]:
    """Set (or add) ``kw=value`` in the call of ``func`` covering ``line``; returns new text and the 0-based line."""
    wrapper = _parse(text)
    calls = _find_calls(wrapper, line, func)
    if not calls:
        raise KeyError(f"{func} at line {line}")
    call, first, last = calls[0]
    pos = wrapper.resolve(PositionProvider)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == kw:
            old = wrapper.module.code_for_node(arg.value)
            if not _is_literal(old):
                raise EditRefused(f"{kw}={old} is not a literal: the value is set elsewhere")
            src = token if token is not None else literal(value, old)
            new_arg = arg.with_changes(value=cst.parse_expression(src))
            new = _code(wrapper.module, wrapper, arg, new_arg)
            _verify(text, new, first, last, 0)
            return new, pos[arg].start.line - 1
    if not add:
        raise KeyError(f"{func}({kw}=)")
    if any(a.star for a in call.args) and not any(a.keyword for a in call.args):
        raise EditRefused("a call with only *args/**kwargs")
    src = token if token is not None else literal(value)
    new_call, grow = _append_kw(call, kw, src, newline_of(text))
    new = _code(wrapper.module, wrapper, call, new_call)
    _verify(text, new, first, last, grow)
    a, b = text.split("\n"), new.split("\n")
    return new, next((i for i in range(first - 1, len(b)) if i >= len(a) or a[i] != b[i]), last - 1)


def _append_kw(call: cst.Call, kw: str, src: str, nl: str) -> tuple[cst.Call, int]:
    """``call`` with ``kw=src`` after its last argument, in the call's own layout; (new call, lines added).

    One argument per line: the new argument gets its own line with the arguments' indentation; the last
    argument's line (its comment included) and the lines before the closing parenthesis stay as they were.
    """
    args = list(call.args)
    arg = cst.Arg(keyword=cst.Name(kw), value=cst.parse_expression(src), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if not args:
        return call.with_changes(args=[arg]), 0
    last = args[-1]
    has_comma = isinstance(last.comma, cst.Comma)
    ws_last = last.comma.whitespace_after if has_comma else last.whitespace_after_arg  # type: ignore[union-attr]
    if not isinstance(ws_last, cst.ParenthesizedWhitespace):
        # one line: ``f(a, b)`` -> ``f(a, b, kw=v)``
        new_last = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                     whitespace_after_arg=cst.SimpleWhitespace(""))
        return call.with_changes(args=[*args[:-1], new_last, arg.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)]), 0
    between = None
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) and isinstance(args[-2].comma.whitespace_after, cst.ParenthesizedWhitespace):
        between = args[-2].comma.whitespace_after
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        between = call.whitespace_before_args
    if between is None:
        raise EditRefused("a call laid out in a way the editor does not reproduce")
    to_next = ws_last.with_changes(empty_lines=[], indent=between.indent, last_line=between.last_line)
    to_close = ws_last.with_changes(first_line=cst.TrailingWhitespace(newline=ws_last.first_line.newline))
    old_comma = last.comma if has_comma else cst.Comma()
    new_last = last.with_changes(comma=old_comma.with_changes(whitespace_after=to_next), whitespace_after_arg=cst.SimpleWhitespace(""))
    if has_comma:
        new_arg = arg.with_changes(comma=cst.Comma(whitespace_after=to_close))
    else:
        new_arg = arg.with_changes(whitespace_after_arg=to_close)
    return call.with_changes(args=[*args[:-1], new_last, new_arg]), 1


_ARGS_CALL = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "ORPOConfig", "KTOConfig", "GRPOConfig",
              "RewardConfig", "CPOConfig", "PPOConfig")


def set_in_arguments_call(text: str, line: int, kw: str, value: Any, token: str | None = None) -> tuple[str, int]:
    """Set or add ``kw`` in the training-arguments call (``TrainingArguments(...)``, TRL configs) starting at ``line``."""
    wrapper = _parse(text)
    for name in _ARGS_CALL:
        calls = [c for c in _find_calls(wrapper, line, name) if c[1] == line]
        if calls:
            return set_kw(text, line, name, kw, value, add=True, token=token)
    raise KeyError(f"no training-arguments call at line {line}")


def set_field_default(text: str, line: int, key: str, value: Any, token: str | None = None) -> tuple[str, int]:
    """``Owner.name``: the default of a class-level field (``name: T = X`` or ``= field(default=X)``) at ``line``."""
    name = key.split(".")[-1]
    wrapper = _parse(text)
    pos = wrapper.resolve(PositionProvider)
    for node, rng in pos.items():
        if isinstance(node, cst.AnnAssign) and rng.start.line == line and isinstance(node.target, cst.Name) and node.target.value == name:
            v = node.value
            if v is None:
                raise EditRefused("the field has no default")
            if isinstance(v, cst.Call) and _name(v.func).split(".")[-1] == "field":
                return set_kw(text, line, "field", "default", value, add=False, token=token)
            old = wrapper.module.code_for_node(v)
            if not _is_literal(old):
                raise EditRefused(f"the default {old} is not a literal")
            new = _code(wrapper.module, wrapper, v, cst.parse_expression(token or literal(value, old)))
            _verify(text, new, rng.start.line, rng.end.line, 0)
            return new, line - 1
    raise KeyError(key)


def set_argparse_default(text: str, line: int, value: Any, token: str | None = None) -> tuple[str, int]:
    """The ``default=`` of the ``add_argument`` call at ``line`` (a ``store_true`` flag is refused)."""
    wrapper = _parse(text)
    calls = _find_calls(wrapper, line, "add_argument")
    if not calls:
        raise KeyError(f"add_argument at line {line}")
    for arg in calls[0][0].args:
        if arg.keyword is not None and arg.keyword.value == "action":
            raise EditRefused("a store_true/store_false flag: its default is not a value to change")
    return set_kw(text, line, "add_argument", "default", value, add=False, token=token)


def set_assign(text: str, line: int, name: str, value: Any, token: str | None = None) -> tuple[str, int]:
    wrapper = _parse(text)
    pos = wrapper.resolve(PositionProvider)
    for node, rng in pos.items():
        if isinstance(node, cst.Assign) and rng.start.line == line and len(node.targets) == 1:
            t = node.targets[0].target
            if isinstance(t, cst.Name) and t.value == name.split(".")[-1]:
                old = wrapper.module.code_for_node(node.value)
                if not _is_literal(old):
                    raise EditRefused(f"{name} = {old} is not a literal")
                new = _code(wrapper.module, wrapper, node.value, cst.parse_expression(token or literal(value, old)))
                _verify(text, new, rng.start.line, rng.end.line, 0)
                return new, line - 1
    raise KeyError(name)


def ensure_import(text: str, module: str, name: str) -> str:
    """Add ``from module import name`` after the last top-level import, only when ``name`` is not imported yet."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name for a in node.names):
            return text
    last = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
    nl = newline_of(text)
    lines = text.split("\n")
    cr = "\r" if nl == "\r\n" else ""
    lines.insert(last, f"from {module} import {name}{cr}")
    return "\n".join(lines)
