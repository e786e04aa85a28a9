"""Does a branch's condition rule out a value of one name?

The extractor carries a local constant into the calls below it (``init_from = 'scratch'`` makes
``GPT.from_pretrained(init_from)`` read as ``from_pretrained('scratch')``), and it records the conditions of the
enclosing branches as the call's guard text. When that guard tests the same name (``elif init_from.startswith('gpt2'):``)
the carried constant is the value the branch exists to exclude: the call never receives it.
"""

from __future__ import annotations

import ast
from typing import Any

_UNKNOWN = object()


def excludes(guard: str | None, name: str, value: str) -> bool:
    """True when one and-ed term of ``guard`` is false with ``name`` bound to ``value`` (terms that read anything else
    are unknown and never decide)."""
    if not guard or not name:
        return False
    try:
        node = ast.parse(guard, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return False
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    return any(_eval(t, name, value) is False for t in terms)


def _eval(node: ast.AST, name: str, value: str) -> Any:
    """The term's truth with only ``name`` known, or ``_UNKNOWN``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _eval(node.operand, name, value)
        return _UNKNOWN if inner is _UNKNOWN else not inner
    if isinstance(node, ast.BoolOp):
        parts = [_eval(v, name, value) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in parts else True if all(p is True for p in parts) else _UNKNOWN
        return True if True in parts else False if all(p is False for p in parts) else _UNKNOWN
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and _is_name(node.left, name):
        right = _constant(node.comparators[0])
        op = node.ops[0]
        if right is _UNKNOWN:
            return _UNKNOWN
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, str):
            return (value == right) == isinstance(op, ast.Eq)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, tuple) and all(isinstance(r, str) for r in right):
            return (value in right) == isinstance(op, ast.In)
        return _UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_name(node.func.value, name) \
            and node.func.attr in ("startswith", "endswith") and len(node.args) == 1 and not node.keywords:
        arg = _constant(node.args[0])
        if isinstance(arg, str) or (isinstance(arg, tuple) and all(isinstance(a, str) for a in arg)):
            return getattr(value, node.func.attr)(arg)
    return _UNKNOWN


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _constant(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_constant(e) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    return _UNKNOWN
