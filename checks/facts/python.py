"""Python source -> facts, with the stdlib ``ast`` (never imports or runs the code)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..lazyre import lazy_compile
from .docs_md import extract_launcher_hints, extract_usage_hints
from .fstrings import parse_with_pep701
from .py_launch import TORCHX_DDP, Pending, finish, word_pieces
from .types import (
    _LINE_INTS,
    RETURNED_DICT,
    ArgOption,
    Assign,
    AttrAssign,
    Call,
    ClassSpan,
    ConfigEntry,
    Container,
    Decorator,
    EnvVar,
    Expr,
    Field,
    FileFacts,
    GradOff,
    Import,
    ParamDefault,
    PathLiteral,
    RatioAssign,
    Ref,
    expr_table,
    share_kwargs,
    share_tuple,
    share_value,
    shared_line,
)

#: context managers whose block runs without autograd (``torch.set_grad_enabled(False)`` is read apart)
_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
#: a line number's shared int (:func:`shared_line`) as a C call: :func:`extract_python` extends the table past the file's
#: last line before its walk, so every node's line is in it
_ln = _LINE_INTS.__getitem__

#: a project helper that sets one environment variable: ``set_env_var(name, value)``, ``setenv``, ``set_environ_var``
_SET_ENV_HELPER = lazy_compile(r"^_?(set_?env(iron(ment)?)?(_?var(iable)?)?|export_env(_var)?)$", re.I)
_ENV_NAME = lazy_compile(r"^[A-Z][A-Z0-9_]{2,}$")
#: keys that make a dict literal a DeepSpeed config
_DS_DICT_KEYS = frozenset({"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "zero_allow_untested_optimizer"})
#: a dict that holds a launched job's environment variables, by its name (``env``, ``env_vars``, ``PERF_ENV_VARS``,
#: ``environment``; not ``envelope`` or ``environment_name``)
#: an accumulation count bound to a quotient (``GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE``: RatioAssign)
_ACCUM_NAME = lazy_compile(r"(?i)accum")
_QUOTIENT = (ast.FloorDiv, ast.Div)
_ENV_DICT = lazy_compile(r"(?i)(^|_)env(s|_?vars?|iron(ment)?(_?vars?)?)?$")
# Names that conventionally hold parsed arguments / configs: ``args.bf16`` refers to setting "bf16".
_CONFIG_HOLDERS = lazy_compile(
    r"^(self\.)?(args|opt|opts|cfg|conf|config|hparams|training_args|train_args|"
    r"script_args|model_args|data_args|train_config|training_config|params|hp|flags|FLAGS|"
    r"self)(\.\w+)*$"
)
_PATH_LITERAL = lazy_compile(r"^(?:[a-z][a-z0-9+]*://|/(?:mnt|data|nfs|ssd|nvme|dev/shm|cfs|ceph|hdfs|home|scratch|lustre|gpfs|fsx|weka|local|tmp|raid|datasets?)\b)", re.I)
_NO_VALUE = object()
_MISSING = object()  # in the bindings' undo log: the name was not bound
#: classes whose ``__init__`` parameter defaults are a model's or run's defaults (HF ``PretrainedConfig`` subclasses)
_CONFIG_CLASS = lazy_compile(r"(Config|Args|Arguments|Params|Hparams|HParams)$")
_LINE_BREAK = lazy_compile(r"\r\n?|\n")
_NO_KWARGS: dict[str, Any] = {}
_WRAPPERS = frozenset({"int", "float", "bool", "str"})  # conversions that keep the value they wrap (see value)
_NO_KW_LINES: dict[str, int] = {}
#: fields that never hold a node a handler reads: identifiers, flags, and the Load/Store contexts and operator
#: nodes (a third of all nodes), which have no handler; skipping them is the same traversal, faster
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "level", "kind", "type_comment", "conversion", "is_async", "simple", "asname"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}  # see _every_node
_Name, _Constant, _Load, _Attribute = ast.Name, ast.Constant, ast.Load, ast.Attribute
#: the node classes besides ``Constant`` that :func:`_const` may fold into a value
_CONST_SHAPES = frozenset({ast.UnaryOp, ast.List, ast.Tuple, ast.Set, ast.BinOp})


def _const(node: ast.AST) -> Any:
    """The constant value of a literal node, or ``_NO_VALUE``."""
    cls = node.__class__  # the parser makes no subclasses of its node classes: the class is the test isinstance makes
    if cls is _Constant:
        return node.value  # type: ignore[attr-defined]
    if cls not in _CONST_SHAPES:  # a call, a name, a subscript...: most nodes asked, answered by one set lookup
        return _NO_VALUE
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        vals = tuple(_const(e) for e in node.elts)
        if all(v is not _NO_VALUE for v in vals):
            return vals
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.Pow, ast.FloorDiv)):
        a, b = _const(node.left), _const(node.right)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            try:
                if isinstance(node.op, ast.Mult):
                    return a * b
                if isinstance(node.op, ast.Add):
                    return a + b
                if isinstance(node.op, ast.Sub):
                    return a - b
                if isinstance(node.op, ast.FloorDiv) and b:
                    return a // b
                if isinstance(node.op, ast.Pow) and abs(b) <= 64:
                    return a**b
            except (OverflowError, ZeroDivisionError):
                return _NO_VALUE
    return _NO_VALUE


_FLOOR = lazy_compile(r"^\s*(\w+)\s*(?:==|<=?)\s*-?\d+(?:\.\d+)?\s*$|^\s*-?\d+(?:\.\d+)?\s*>=?\s*(\w+)\s*$")


def _floors_itself(guard: str, name: str) -> bool:
    """Whether an ``if`` test asks whether ``name`` itself fell to or below a number (``logging_steps == 0``,
    ``n < 1``): an assignment to ``name`` in that branch is a floor under the value computed before it, not its
    setting. A cap (``if n > 25: n = 25``) stays: it is the value the code settles on for all but tiny inputs."""
    m = _FLOOR.match(guard)
    return bool(m) and name in (m.group(1), m.group(2))


class _Enough(Exception):
    """Raised by :class:`_CappedUnparser` once the text it must return is written."""


class _CappedUnparser(ast._Unparser):  # type: ignore[name-defined,misc]
    """``ast.unparse(node)[:cap]`` without rendering the rest: top-level writes are appended in order, so the first
    ``cap`` characters written are the first ``cap`` of the whole text. Writes into a temporary buffer (f-strings) and
    nested unparsers (``type(self)(...)``, uncapped) are only counted when they land in the top-level text.

    One difference, by design: an f-string the unparser cannot render (``ValueError``) past the first ``cap``
    characters gives those characters instead of the failure. CPython 3.11 cannot parse such code.
    """

    def __init__(self, cap: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cap = cap
        self._top: list[str] | None = None
        self._written = 0

    def visit(self, node: ast.AST) -> str:
        if self._cap is None:
            return super().visit(node)  # type: ignore[no-any-return]
        self._source = self._top = []
        self._written = 0
        try:
            self.traverse(node)
        except _Enough:
            pass
        return "".join(self._top)[: self._cap]

    def write(self, *text: str) -> None:
        self._source.extend(text)
        if self._source is self._top:
            for t in text:
                self._written += len(t)
            if self._written >= self._cap:  # type: ignore[operator]
                raise _Enough


def _is_super(node: ast.AST) -> bool:
    """``super()`` (or ``super(Cls, self)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _unparse(node: ast.AST, cap: int) -> str:
    return _CappedUnparser(cap).visit(node)


def _catches_import_error(t: ast.expr | None) -> bool:
    """A handler that catches a missing package: ``except ImportError``, ``ModuleNotFoundError``, a tuple with one of them,
    and the handlers that catch everything (a bare ``except:``, ``except Exception``: Nanbeige's ``modeling_nanbeige.py``
    wraps ``from flash_attn import flash_attn_func`` in ``try: ... except:`` and falls back to eager attention)."""
    if t is None:
        return True
    if isinstance(t, ast.Tuple):
        return any(_catches_import_error(e) for e in t.elts)
    return isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


class _Dispatch(dict):  # type: ignore[type-arg]
    """Node class -> the extractor's handler (``visit_<Class>`` or ``generic_visit``), filled on first sight."""

    def __missing__(self, cls: type) -> Any:
        fn = getattr(_Extractor, "visit_" + cls.__name__, None) or _Extractor.generic_visit
        self[cls] = fn
        return fn


_STMT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_STMT_FIELDS_OF: dict[type, tuple[str, ...]] = {}  # node class -> those of _STMT_FIELDS it has, in that order
#: a ``for`` whose target may continue on the next line (``for (a,`` / ``for [`` / ``for`` at a line's end)
#: (both start with the literal ``for``, the word boundary before it checked behind: the regex engine then skips ahead to each
#: ``for`` instead of trying a match at every position, 10x faster on a function's text)
_TARGET_SPANS_LINES = lazy_compile(r"for(?<=\bfor)\s*(?:[(\[]|$)", re.M)
_FOR_TAIL = lazy_compile(r"for(?<=\bfor)\b([^\n]*)")
_WORD = lazy_compile(r"\w+")
#: nodes that bind one target: ``x: T = v``, ``x += v``, ``(x := v)``, ``for x in``, a comprehension's ``for x in``
_ONE_TARGET = frozenset({ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension})


def _for_names(body: str, names: set[str]) -> bool:
    """Whether a line of ``body`` names one of ``names`` (as a whole word) after a ``for``: what
    ``re.search(r"\\bfor\\b[^\\n]*\\b(?:name|...)\\b", body)`` answers, without compiling a pattern per set of names (the
    first ``for`` of a line takes the rest of the line, where every later one and its words are)."""
    if "for" not in body:
        return False
    for m in _FOR_TAIL.finditer(body):
        if not names.isdisjoint(_WORD.findall(m.group(1))):
            return True
    return False


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """Every statement under ``node`` (nested functions and classes included), not the expressions inside them."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        fields = _STMT_FIELDS_OF.get(n.__class__)
        if fields is None:
            fields = _STMT_FIELDS_OF[n.__class__] = tuple(f for f in _STMT_FIELDS if f in n._fields)
        for field in fields:  # most statements have none (an assignment, a call): no getattr at all
            sub = getattr(n, field)
            if sub:
                todo.extend(sub)


def _every_node(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself included) but the contexts and operators (``Load``, ``Add``: leaves no question
    asks about), as ``ast.walk`` yields them but in another order and without a generator per node: for questions whose
    answer is a set."""
    todo = [node]
    AST = ast.AST
    while todo:
        n = todo.pop()
        yield n
        fields = _NODE_FIELDS.get(n.__class__)
        if fields is None:  # the fields that may hold a node other than a context or operator (an except's ``type`` may)
            fields = _NODE_FIELDS[n.__class__] = tuple(f for f in n._fields if f == "type" or f not in _LEAF_FIELDS)
        for field in fields:
            v = getattr(n, field, None)
            if v.__class__ is list:
                todo.extend(x for x in v if isinstance(x, AST))
            elif isinstance(v, AST):
                todo.append(v)


#: a test module (its tests are read: they are shown as context, never as the run's settings)
_TEST_FILE = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")


class _Extractor(ast.NodeVisitor):
    def __init__(self, path: str, source: str, out: FileFacts, strings: dict[str, str] | None = None) -> None:
        self.path = path
        self._texts: dict[int, str] = {}
        self._strings = strings if strings is not None else {}  # equal texts share one object (see extract_python)
        self._guards: dict[tuple[str, ...], str] = {}
        self._exprs = expr_table(self._strings)  # the scan's, not the file's: a hit needs no Expr hashed (see expr)
        # the tokenizer's line breaks only (splitlines also splits on \f, \x1c, \u2028...); without a \r, that is "\n"
        self.lines = source.split("\n") if "\r" not in source else _LINE_BREAK.split(source)
        self._source = source
        self.out = out
        self.aliases: dict[str, str] = {}  # local name -> dotted import path
        self.scopes: list[dict[str, Any]] = [{}]  # constant bindings per function scope
        self._log: list[tuple[dict[str, Any], str, Any]] = []  # (scope, name, previous value) of each binding (see visit_If)
        self.func_stack: list[str] = []
        self.class_stack: list[tuple[str, str | None]] = []  # (name, the imported data loader it subclasses, if any)
        self.loop_stack: list[str] = []
        self.guard_stack: list[str] = []  # conditions of the enclosing if-branches
        self._loose_tests: set[str] = set()  # tests on that stack that bind looser than ``and`` (see _guard_text)
        self.param_stack: list[tuple[set[str], int]] = []  # each enclosing function's parameters and the guard depth at its entry
        # each enclosing function's parameters as callers pass them: name -> (position or None, has a default, constant default),
        # and the names rebound in its body so far (a rebound parameter no longer hands on the caller's value)
        self.signature_stack: list[tuple[dict[str, tuple[int | None, bool, Any, int, str]], set[str]]] = []
        # per enclosing function: locals first bound to None (their Assign records) and the ones later bound to a computed value
        self.none_locals: list[tuple[dict[str, Assign], set[str]]] = []
        self.optional_imports = 0  # depth of enclosing ``try:`` bodies whose handler catches ImportError
        # a local bound to one of two of the module's own classes or functions by a conditional expression (FastChat
        # ``dataset_cls = LazySupervisedDataset if data_args.lazy_preprocess else SupervisedDataset``): (function path, name)
        # -> each arm with the condition it is chosen under; a call of the local is recorded as a call of each arm under it
        self.choices: dict[tuple[tuple[str, ...], str], tuple[tuple[ast.expr, str], ...]] = {}
        # a local flag bound to an interval test (Megatron ``save_wgrads_in_this_iteration = (args.save_wgrads_interval is not
        # None and (iteration + 1) % args.save_wgrads_interval == 0)``): an ``if`` on the flag is guarded by that test
        self.interval_flags: dict[tuple[tuple[str, ...], str], str] = {}
        # a function's locals bound to a list literal (``args = ["--metrics.log_freq=1", ...]``, ``args += [...]``): the
        # words a launch call's ``*args`` hands on (see checks.facts.py_launch)
        self.lists: dict[tuple[tuple[str, ...], str], list[ast.expr]] = {}
        # a function's locals filled key by key (``env["NCCL_PROTO"] = "Simple"``): the environment a launch call's ``env=``
        # hands to the launched job, as (key, value node, line)
        self.env_dicts: dict[tuple[tuple[str, ...], str], list[tuple[str, ast.expr, int]]] = {}
        self.pending_launches: list[Pending] = []
        self.click_options: list[ArgOption] = []  # kept only in a file that trains (see extract_python)

    # -- dispatch (same traversal as ast.NodeVisitor, without a string build and getattr per node) --
    _dispatch: _Dispatch

    def visit(self, node: ast.AST) -> Any:
        return self._dispatch[node.__class__](self, node)

    def generic_visit(self, node: ast.AST) -> None:
        dispatch = self._dispatch
        cls = node.__class__
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = () if cls is ast.Constant else tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
        aliases = self.aliases
        for name in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            if value.__class__ is list:
                for item in value:
                    c = item.__class__
                    if c is _Name:  # visit_Name and visit_Constant, inlined: a third of all nodes, most of them no fact
                        if item.id in aliases and item.ctx.__class__ is _Load:
                            self.visit_Name(item)
                    elif c is _Constant:
                        if item.value.__class__ is str:
                            self.visit_Constant(item)
                    elif isinstance(item, ast.AST):
                        dispatch[c](self, item)
            else:
                c = value.__class__
                if c is _Name:
                    if value.id in aliases and value.ctx.__class__ is _Load:
                        self.visit_Name(value)
                elif c is _Constant:
                    if value.value.__class__ is str:
                        self.visit_Constant(value)
                elif isinstance(value, ast.AST):
                    dispatch[c](self, value)

    # -- helpers ---------------------------------------------------------
    def expr(self, text: str, dotted: str | None = None, ref: str | None = None) -> Expr:
        """An :class:`Expr`, shared by every equal one of the file (it is an immutable value)."""
        key = (text, dotted, ref)
        e = self._exprs.get(key)
        if e is None:  # the scan's one copy: ``args.lr``, ``torch.bfloat16``, ``self.model`` recur across files
            strings = self._strings
            e = Expr(strings.setdefault(text, text), dotted, ref)
            e = self._exprs[key] = strings.setdefault(e, e)
        return e

    def _guard_text(self) -> str:
        key = tuple(self.guard_stack)
        t = self._guards.get(key)
        if t is None:
            # an ``or`` test joined with ``and`` keeps its parentheses (``not (p == "amp") and (p == "a" or p == "b")`` for an
            # ``elif p == "a" or p == "b":``), or the joined text would read ``(... and p == "a") or p == "b"``
            t = " and ".join(f"({x})" if len(key) > 1 and x in self._loose_tests else x for x in key)
            t = self._guards[key] = self._strings.setdefault(t, t)
        return t

    def text(self, line: int) -> str:
        """The stripped source line; one string object per line, shared by every record on it."""
        t = self._texts.get(line)
        if t is None:
            t = self.lines[line - 1].strip()[:300] if 0 < line <= len(self.lines) else ""
            t = self._texts[line] = self._strings.setdefault(t, t)
        return t

    def src(self, node: ast.AST) -> str:
        """The expression's source text (its own one-line segment; ``ast.unparse`` only for multi-line nodes)."""
        if isinstance(node, ast.Name):
            return node.id
        line = getattr(node, "lineno", 0)
        if line and line == getattr(node, "end_lineno", None) and 0 < line <= len(self.lines):
            raw = self.lines[line - 1]
            c0, c1 = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
            if raw.isascii():
                return raw[c0:c1][:200]
            return raw.encode("utf-8", "surrogatepass")[c0:c1].decode("utf-8", "replace")[:200]  # offsets count UTF-8 bytes
        try:
            return _unparse(node, 200)
        except Exception:  # pragma: no cover - unparse failures on exotic nodes
            return "<expr>"

    def dotted(self, node: ast.AST) -> str | None:
        """Import-resolved dotted name of a Name/Attribute chain, else None."""
        cls = node.__class__
        if cls is _Name:  # the usual cases first: ``f`` and ``x.f``
            n = self.aliases.get(node.id, node.id)  # type: ignore[attr-defined]
            return self._strings.setdefault(n, n)  # the same dotted names recur in every file: the scan's one copy
        if cls is _Attribute and node.value.__class__ is _Name:  # type: ignore[attr-defined]
            base = node.value  # type: ignore[attr-defined]
            n = f"{self.aliases.get(base.id, base.id)}.{node.attr}"  # type: ignore[attr-defined]
            return self._strings.setdefault(n, n)
        parts: list[str] = []
        cur = node
        while cur.__class__ is _Attribute:
            parts.append(cur.attr)  # type: ignore[attr-defined]
            cur = cur.value  # type: ignore[attr-defined]
        if cur.__class__ is _Name:
            root = self.aliases.get(cur.id, cur.id)  # type: ignore[attr-defined]
            parts.append(root)
            n = ".".join(reversed(parts))
            return self._strings.setdefault(n, n)
        return None

    def is_imported_root(self, node: ast.AST) -> bool:
        cur = node
        while cur.__class__ is _Attribute:
            cur = cur.value  # type: ignore[attr-defined]
        return cur.__class__ is _Name and cur.id in self.aliases  # type: ignore[attr-defined]

    def lookup(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return _NO_VALUE

    def value(self, node: ast.AST) -> Any:
        cls = node.__class__
        if cls is _Constant:
            v = node.value  # type: ignore[attr-defined]
            return self._strings.setdefault(v, v) if v.__class__ is str else v
        if cls is _Name:  # names are never constants: the binding in scope, an import, or a reference
            name = node.id  # type: ignore[attr-defined]
            for scope in reversed(self.scopes):  # lookup(), inlined
                if name in scope:
                    bound = scope[name]
                    if bound is not _NO_VALUE:
                        return bound
                    break
            if name in self.aliases:
                return self.expr(name, self.aliases[name], None)
            return self.expr(name, None, name)
        v = _NO_VALUE if cls is _Attribute else _const(node)
        if v is not _NO_VALUE:
            return share_value(v, self._strings)
        if cls is ast.IfExp:
            # a conditional whose arms are the same constant is that constant, whatever it tests (Macaw-LLM
            # ``param.requires_grad = False if model_args.freeze_multi_modal_encoder is True else False``)
            a, b = _const(node.body), _const(node.orelse)  # type: ignore[attr-defined]
            if a is not _NO_VALUE and a.__class__ is b.__class__ and a == b:
                return share_value(a, self._strings)
        if cls is _Attribute:
            text = self.src(node)
            if self.is_imported_root(node):
                return self.expr(text, dotted=self.dotted(node))
            base = self.src(node.value)
            if _CONFIG_HOLDERS.match(base):
                return self.expr(text, ref=node.attr)
            return self.expr(text)
        if isinstance(node, ast.Dict):
            keys = [_const(k) if k is not None else _NO_VALUE for k in node.keys]
            if all(isinstance(k, str) for k in keys):
                return {k: self.value(v) for k, v in zip(keys, node.values, strict=True)}
        if isinstance(node, ast.Call):
            # str(...)/int(...)/bool(...) around a value: keep the inner reference
            if isinstance(node.func, ast.Name) and node.func.id in _WRAPPERS and len(node.args) == 1:
                inner = self.value(node.args[0])
                if not isinstance(inner, Expr):
                    return inner
                return self.expr(self.src(node), dotted=inner.dotted, ref=inner.ref)
        if cls is ast.JoinedStr:
            text = self.joined(node)
            if text is not _NO_VALUE:
                return self._strings.setdefault(text, text)
        return self.expr(self.src(node))

    def joined(self, node: ast.AST) -> Any:
        """An f-string whose every field is a name bound to a string or number constant, as the string it makes (amber-train
        ``MODEL_SIZE = '7b'`` then ``HF_MODEL_NAME_OR_PATH = f'huggyllama/llama-{MODEL_SIZE}'``); else ``_NO_VALUE``."""
        parts: list[str] = []
        for part in node.values:  # type: ignore[attr-defined]
            if part.__class__ is _Constant and isinstance(part.value, str):
                parts.append(part.value)
                continue
            if part.__class__ is not ast.FormattedValue or part.conversion != -1 or part.format_spec is not None \
                    or part.value.__class__ is not _Name:
                return _NO_VALUE
            bound = self.lookup(part.value.id)
            if bound.__class__ not in (str, int):
                return _NO_VALUE
            parts.append(str(bound))
        return "".join(parts)

    def constant(self, node: ast.AST) -> Any:
        """What :meth:`value` returns when that is not an :class:`Expr`, else ``_NO_VALUE``.

        A name bound to a non-constant is most assignments; this answers without building the
        expression's text, which :meth:`value` would make only to be thrown away.
        """
        cls = node.__class__
        if cls is ast.Name:
            return self.lookup(node.id)  # type: ignore[attr-defined]
        if cls is ast.Attribute:
            return _NO_VALUE
        if cls is ast.Call:  # only ``int(x)``/``str(x)``/... around a constant is one (see value)
            f = node.func  # type: ignore[attr-defined]
            if f.__class__ is _Name and f.id in _WRAPPERS and len(node.args) == 1:  # type: ignore[attr-defined]
                inner = self.value(node.args[0])  # type: ignore[attr-defined]
                return _NO_VALUE if isinstance(inner, Expr) else inner
            return _NO_VALUE
        if cls is ast.Dict:  # a mapping with string keys only (see value)
            if all(k is not None and isinstance(_const(k), str) for k in node.keys):  # type: ignore[attr-defined]
                return self.value(node)
            return _NO_VALUE
        if cls is ast.JoinedStr:
            return self.joined(node)
        return _const(node)

    # -- imports ---------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                top = a.name.split(".")[0]
                self.aliases[top] = top
            self.out.imports.append(Import(self.path, _ln(node.lineno), a.name, None, self.text(node.lineno), self.optional_imports > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = ("." * node.level) + (node.module or "")
        mod = self._strings.setdefault(mod, mod)
        for a in node.names:
            if a.name == "*":
                self.out.imports.append(Import(self.path, _ln(node.lineno), mod, "*", self.text(node.lineno), self.optional_imports > 0))
                continue
            full = f"{mod}.{a.name}" if mod else a.name
            self.aliases[a.asname or a.name] = self._strings.setdefault(full, full)  # a Ref's name: one copy for the scan
            self.out.imports.append(Import(self.path, _ln(node.lineno), mod, a.name, self.text(node.lineno), self.optional_imports > 0))

    def visit_Try(self, node: ast.Try) -> None:
        """``try: from apex.normalization import FusedRMSNorm`` / ``except ImportError: pass``: the imports of the body are optional,
        and so are those of a handler that catches ImportError (``except ImportError: from megatron import mpu``, the older
        spelling of the same package: it too runs only where the package is installed)."""
        optional = any(_catches_import_error(h.type) for h in node.handlers)
        self.optional_imports += optional
        for stmt in node.body:
            _DISPATCH[stmt.__class__](self, stmt)
        self.optional_imports -= optional
        for h in node.handlers:
            fallback = _catches_import_error(h.type)
            self.optional_imports += fallback
            _DISPATCH[h.__class__](self, h)
            self.optional_imports -= fallback
        for part in (*node.orelse, *node.finalbody):
            _DISPATCH[part.__class__](self, part)

    # -- scopes ----------------------------------------------------------
    def _visit_func(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self._pytest_test(node):
            return
        self._decorators(node)
        self.func_stack.append(node.name)
        a = node.args
        # parameters hide module constants of the same name
        params = {p.arg: _NO_VALUE for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]}
        self.scopes.append(params)
        self.param_stack.append((set(params), len(self.guard_stack)))
        self.signature_stack.append((self._signature(a), set()))
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            _DISPATCH[d.__class__](self, d)
        if node.name == "__init__" and self.class_stack and len(self.func_stack) == 1 and (
                _CONFIG_CLASS.search(self.class_stack[-1][0]) or self.class_stack[-1][1]):
            self._init_defaults(self.class_stack[-1][0], a)
        self._param_defaults(node)
        self.none_locals.append(({}, set()))
        self._visit_block(node.body, (ast.Return,))
        placeholders, computed = self.none_locals.pop()
        # ``max_doc_len: Optional[int] = None`` then ``max_doc_len = max(max_doc_lens)`` in a branch (olmo-core's forward): a
        # placeholder for a computed value, not a setting that is None
        dropped = {id(placeholders[n]) for n in computed if n in placeholders}
        if dropped:
            self.out.assigns[:] = [x for x in self.out.assigns if id(x) not in dropped]
        self.param_stack.pop()
        self.signature_stack.pop()
        self.scopes.pop()
        self.func_stack.pop()

    def _pytest_test(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A test that pytest collects from a library file and nothing in the file calls (lingua's ``lingua/probe.py``
        ends with ``def test_toy_model()``, which wraps a toy model's head in ``checkpoint_wrapper``): a module-level
        ``test_*`` function, or a ``test_*`` method of a ``Test*`` class. Its body is test code, not a setting of the run."""
        if not node.name.startswith("test_") or self.func_stack or _TEST_FILE.search(self.path):
            return False  # a test file's tests stay: their practices are the report's context ("also seen in tests")
        if self.class_stack and (len(self.class_stack) > 1 or not self.class_stack[-1][0].startswith("Test")):
            return False
        return self._source.count(node.name) == 1
    def _param_defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Parameters defaulting to ``None``/``False``/``0`` (``compile_config: Optional[dict] = None``): a guard on one inside the
        function is off unless a caller passes it (see :class:`ParamDefault`)."""
        a = node.args
        pos = [*a.posonlyargs, *a.args]
        pairs = [(p, d, i) for i, (p, d) in enumerate(zip(pos[len(pos) - len(a.defaults):], a.defaults), len(pos) - len(a.defaults))]
        pairs += [(p, d, -1) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        # (an integer 0 too: ``lora_rank=0`` in Open-Reasoner-Zero's ``Actor.__init__``, read as ``if lora_rank > 0:``)
        pairs = [(p, d, i) for p, d, i in pairs if isinstance(d, ast.Constant) and (d.value is None or d.value is False or (type(d.value) is int and d.value == 0))]
        if not pairs:
            return
        method = bool(self.class_stack) and len(self.func_stack) == 1 and bool(pos) and pos[0].arg in ("self", "cls")
        names = {p.arg for p, _, _ in pairs}
        rebound = self._rebound(node, names)
        owner = self.class_stack[-1][0] if method and node.name == "__init__" else None
        start, end = _ln(node.lineno), _ln(getattr(node, "end_lineno", None) or node.lineno)
        for p, d, i in pairs:
            line = _ln(d.lineno)
            self.out.params.append(ParamDefault(self.path, line, node.name, p.arg, d.value, self.text(line), start, end, owner,
                                                i - 1 if method and i >= 0 else i, p.arg in rebound))

    def _rebound(self, node: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> set[str]:
        """Which of ``names`` the function (nested code included) binds again: assignment, ``for`` and ``with`` targets,
        comprehension and ``:=`` targets. Statements are walked alone unless the function's text has a ``:=`` or a
        ``for`` naming one of them (then every node is walked): the same answer as walking every node, on 5,457 files of
        Megatron-LM and five corpus packages, without walking the expressions of most functions."""
        first, last = _ln(node.lineno), _ln(getattr(node, "end_lineno", None) or node.lineno)
        body = "\n".join(self.lines[first - 1:last])
        if ":=" in body or "\\\n" in body or _TARGET_SPANS_LINES.search(body) or _for_names(body, names):
            nodes: Iterable[ast.AST] = _every_node(node)
        else:
            nodes = _statements(node)
        rebound: set[str] = set()
        for n in nodes:
            c = n.__class__  # the parser makes no subclasses of its node classes: the class is the test isinstance makes
            targets: list[ast.AST]
            if c is ast.Assign:
                targets = list(n.targets)  # type: ignore[attr-defined]
            elif c in _ONE_TARGET:
                targets = [n.target]  # type: ignore[attr-defined]
            elif c is ast.With or c is ast.AsyncWith:
                targets = [i.optional_vars for i in n.items if i.optional_vars is not None]  # type: ignore[attr-defined]
            else:
                continue
            while targets:  # names bound, through tuple unpacking; not ``peft_config.peft_type = ...`` (an attribute of it)
                t = targets.pop()
                if isinstance(t, ast.Name) and t.id in names:
                    rebound.add(t.id)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    targets.extend(t.elts)
                elif isinstance(t, ast.Starred):
                    targets.append(t.value)
        return rebound

    def _signature(self, a: ast.arguments) -> dict[str, tuple[int | None, bool, Any, int, str]]:
        """Each parameter's position as a caller passes it (a method's ``self``/``cls`` is not passed), whether it has a
        default, that default when it is a constant (``num_workers=0``), and the line and text of the default; ``*args`` and
        ``**kwargs`` are left out."""
        pos = [*a.posonlyargs, *a.args]
        skip = 1 if pos and pos[0].arg in ("self", "cls") and self.class_stack else 0
        first_default = len(pos) - len(a.defaults)
        out: dict[str, tuple[int | None, bool, Any, int, str]] = {}
        for i, p in enumerate(pos):
            if i < skip:
                continue
            if i >= first_default:
                d = a.defaults[i - first_default]
                v = self.constant(d)
                line = _ln(d.lineno)
                out[p.arg] = (i - skip, True, None if v is _NO_VALUE or isinstance(v, dict) else v, line, self.text(line))
            else:
                out[p.arg] = (i - skip, False, None, 0, "")
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            v = _NO_VALUE if d is None else self.constant(d)
            line = _ln(d.lineno) if d is not None else 0
            out[p.arg] = (None, d is not None, None if v is _NO_VALUE or isinstance(v, dict) else v, line, self.text(line) if line else "")
        return out

    def _init_defaults(self, owner: str, a: ast.arguments) -> None:
        """``class MPTConfig(PretrainedConfig): def __init__(self, d_model: int = 2048, vocab_size: int = 50368, ...)``: the
        HF config idiom declares a model's defaults as ``__init__`` parameters; they are recorded like dataclass fields."""
        pos = [*a.posonlyargs, *a.args]
        pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + [
            (k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for arg, d in pairs:
            v = self.constant(d)
            if v is not _NO_VALUE and not isinstance(v, dict):
                line = _ln(d.lineno)
                self.out.fields.append(Field(self.path, line, owner, arg.arg, share_value(v, self._strings), self.text(line)))

    visit_FunctionDef = _visit_func
    visit_AsyncFunctionDef = _visit_func

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._decorators(node)
        for b in node.bases:
            _DISPATCH[b.__class__](self, b)
        for k in node.keywords:
            _DISPATCH[k.__class__](self, k)
        # a subclass of an imported data loader (picotron ``class MicroBatchDataLoader(DataLoader)``): its ``__init__``
        # defaults are the loader's settings and its ``super().__init__(...)`` builds that loader
        bases = [self.dotted(b) or "" for b in node.bases]
        line = _ln(node.lineno)
        self.out.classes.append(ClassSpan(self.path, line, node.name, _ln(node.end_lineno or node.lineno),
                                          share_tuple(tuple(bases), self._strings), self.text(line)))
        loader = next((b for b in bases if "." in b and b.endswith("DataLoader")), None)
        self.class_stack.append((node.name, loader))
        self.scopes.append({})
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                self._field(node.name, stmt.target.id, stmt.value, _ln(stmt.lineno))
            elif (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                self._field(node.name, stmt.targets[0].id, stmt.value, _ln(stmt.lineno))
            _DISPATCH[stmt.__class__](self, stmt)
        self.scopes.pop()
        self.class_stack.pop()

    def _field(self, owner: str, name: str, value_node: ast.AST, line: int) -> None:
        default: Any
        # dataclasses ``field(default=...)`` and pydantic ``Field(default=...)`` / ``Field(0, ge=0)`` (arctic-training's
        # ``save_every_n_steps: HumanInt = Field(default=0, ge=0)``)
        func = self.dotted(value_node.func) or "" if isinstance(value_node, ast.Call) else ""
        if isinstance(value_node, ast.Call) and (func.endswith("field") or func == "Field" or func.endswith(".Field")):
            kw = {k.arg: k.value for k in value_node.keywords if k.arg}
            first = value_node.args[0] if value_node.args and func.endswith("Field") else None
            if "default" in kw:
                default = self.value(kw["default"])
            elif first is not None and not (isinstance(first, ast.Constant) and first.value is Ellipsis):
                default = self.value(first)
            elif "default_factory" in kw:
                # ``field(default_factory=lambda: ['tensorboard'])`` builds that literal (ms-swift's ``report_to``)
                fac = kw["default_factory"]
                lit = _const(fac.body) if isinstance(fac, ast.Lambda) and not fac.args.args else _NO_VALUE
                default = lit if lit is not _NO_VALUE else Expr(self.src(fac))
            else:
                return
        elif isinstance(value_node, ast.Call) and any(
                k.arg == "default" and isinstance(k.value, ast.Constant) and (k.value.value is None or isinstance(k.value.value, bool))
                for k in value_node.keywords):
            # any other field-descriptor call whose ``default=`` is a switch's value (a schema helper:
            # ``use_mixed_precision: bool = schema_utils.Boolean(default=False, description=...)``): the field's default.
            # Only True/False/None: a schema library declares a numeric default per component (every text encoder's
            # ``vocab_size = schema_utils.PositiveInteger(default=30522)``), which says nothing about the trained model's size
            default = self.value(next(k.value for k in value_node.keywords if k.arg == "default"))
        else:
            default = self.value(value_node)
        self.out.fields.append(Field(self.path, line, owner, name, default, self.text(line)))

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            name = self.dotted(target)
            if name:
                self.out.decorators.append(Decorator(self.path, _ln(d.lineno), name, node.name, self.text(d.lineno)))
            _DISPATCH[d.__class__](self, d)

    # -- statements ------------------------------------------------------
    def _bind(self, scope: dict[str, Any], name: str, value: Any) -> None:
        """Bind ``name`` in ``scope``, logging the previous value so that an ``if`` can undo its body's bindings."""
        self._log.append((scope, name, scope.get(name, _MISSING)))
        scope[name] = value

    def visit_If(self, node: ast.If) -> None:
        """Both branches start from the scope before the ``if``; after it, a name the branches bind to different values
        is unknown. Only the names a branch binds are compared (an undo log of the bindings, not copies of the scope)."""
        _DISPATCH[node.test.__class__](self, node.test)
        test = self._test_src(node.test)
        scope = self.scopes[-1]
        log = self._log
        mark = len(log)
        self.guard_stack.append(test)
        for stmt in node.body:
            _DISPATCH[stmt.__class__](self, stmt)
        before: dict[str, Any] = {}  # each name a branch binds -> its value before the if (_MISSING: unbound)
        for s, k, old in log[mark:]:
            if s is scope and k not in before:
                before[k] = old
        after_body = {k: scope[k] for k in before}
        for s, k, old in reversed(log[mark:]):  # back to the state before the if
            if s is scope:
                if old is _MISSING:
                    del scope[k]
                else:
                    scope[k] = old
        del log[mark:]
        self.guard_stack[-1] = f"not ({test})"
        for stmt in node.orelse:
            _DISPATCH[stmt.__class__](self, stmt)
        self.guard_stack.pop()
        if node.body and isinstance(node.body[-1], (ast.Return, ast.Continue, ast.Break, ast.Raise)):
            return  # the body exits: after the if, only the else state holds
        for s, k, old in log[mark:]:
            if s is scope and k not in before:
                before[k] = old
        # a name bound in one branch only (``if not takes_input: num_workers = 0``) is no longer a known constant
        for k, old in before.items():
            was = _NO_VALUE if old is _MISSING else old
            a, b = after_body.get(k, was), scope.get(k, was)
            if a is not b and (a is _NO_VALUE or b is _NO_VALUE or type(a) is not type(b) or a != b):
                self._bind(scope, k, _NO_VALUE)
            elif k not in scope:
                self._bind(scope, k, a)

    def _chosen_calls(self, local: str, call: Call) -> None:
        """``dataset_cls(train_json, tokenizer=tokenizer)`` after ``dataset_cls = A if flag else B``: also a call of ``A``
        under ``flag`` and of ``B`` under ``not (flag)`` (with the call's own guard before them)."""
        arms = self.choices.get((tuple(self.func_stack), local))
        if not arms:
            return
        for arm, cond in arms:
            name = self.dotted(arm)
            if not name:
                continue
            guard = f"{call.guard} and {cond}" if call.guard else cond
            self.out.calls.append(replace(call, name=self._strings.setdefault(name, name), guard=self._strings.setdefault(guard, guard)))

    def _test_src(self, test: ast.expr) -> str:
        """The source of an ``if`` test; one that binds looser than ``and`` (an ``or``, a ternary, a walrus) is noted, so a
        guard joining it with others parenthesizes it."""
        if self.interval_flags and self.func_stack:
            neg = test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not
            name = test.operand if neg else test  # type: ignore[attr-defined]
            flag = self.interval_flags.get((tuple(self.func_stack), name.id)) if name.__class__ is _Name else None
            if flag is not None:
                # the flag's own test stands for it (``if save_wgrads_in_this_iteration:`` -> ``args.save_wgrads_interval
                # is not None and (iteration + 1) % args.save_wgrads_interval == 0``), parenthesized when joined with others
                text = f"not ({flag})" if neg else flag
                self._loose_tests.add(text)
                return text
            if test.__class__ is ast.BoolOp:
                # the flag inside a compound test (smollm's m4 trainer: ``if not opt_step_is_saved and (finished_training
                # or is_opt_to_save_model):``, the flag ``curr_opt_step % self.hparams.train_saving_opt_steps == 0``)
                scope = tuple(self.func_stack)
                names = {n.id for n in ast.walk(test) if n.__class__ is _Name and (scope, n.id) in self.interval_flags}
                if names:
                    text = self.src(test)
                    for n in names:
                        text = re.sub(rf"\b{re.escape(n)}\b", f"({self.interval_flags[(scope, n)]})", text)
                    if test.op.__class__ is ast.Or:
                        self._loose_tests.add(text)
                    return text
        text = self.src(test)
        if isinstance(test, (ast.IfExp, ast.Lambda, ast.NamedExpr)) or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
            self._loose_tests.add(text)
        return text

    def visit_IfExp(self, node: ast.IfExp) -> None:
        _DISPATCH[node.test.__class__](self, node.test)
        test = self._test_src(node.test)
        self.guard_stack.append(test)
        _DISPATCH[node.body.__class__](self, node.body)
        self.guard_stack[-1] = f"not ({test})"
        _DISPATCH[node.orelse.__class__](self, node.orelse)
        self.guard_stack.pop()

    def visit_With(self, node: ast.With) -> None:
        # ``with torch.no_grad():`` / ``torch.inference_mode()`` / ``torch.set_grad_enabled(False)``: a block without autograd
        for item in node.items:
            ctx = item.context_expr
            if ctx.__class__ is ast.Call:
                name = self.dotted(ctx.func) or ""  # type: ignore[attr-defined]
                off = name in _GRAD_OFF or (name == "torch.set_grad_enabled" and len(ctx.args) == 1  # type: ignore[attr-defined]
                                            and _const(ctx.args[0]) is False)  # type: ignore[attr-defined]
                if off:
                    line = _ln(node.lineno)
                    self.out.grad_off.append(GradOff(self.path, line, _ln(node.end_lineno or node.lineno), self.text(line)))
                    break
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        _DISPATCH[node.iter.__class__](self, node.iter)
        _DISPATCH[node.target.__class__](self, node.target)
        loop = self.src(node.iter)
        self.loop_stack.append(self._strings.setdefault(loop, loop))
        self._visit_block(node.body, (ast.Continue, ast.Return))
        for stmt in node.orelse:
            _DISPATCH[stmt.__class__](self, stmt)
        self.loop_stack.pop()

    def _visit_block(self, stmts: list[ast.stmt], exits: tuple[type, ...]) -> None:
        """Visit a function or loop body; an early exit (``if step % freq != 0: return`` / ``continue``) guards
        the statements after it with ``not (test)``, as an ``else`` branch would."""
        pushed = 0
        for stmt in stmts:
            _DISPATCH[stmt.__class__](self, stmt)
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], exits):
                self.guard_stack.append(f"not ({self.src(stmt.test)})")
                pushed += 1
            elif isinstance(stmt, ast.If) and stmt.orelse and (after := self._after_branches(stmt, exits)):
                self.guard_stack.append(after)
                pushed += 1
        if pushed:
            del self.guard_stack[-pushed:]

    def _after_branches(self, node: ast.If, exits: tuple[type, ...]) -> str | None:
        """The condition under which the statements after an ``if``/``else`` run when its arms exit early (xtuner
        ``_maybe_save``: ``if interval == -1: if step != total: return False`` / ``else: if step % interval != 0 and ...:
        return False``): each arm continues under its test and the negation of its own early exits. None when no arm
        exits early, or when an arm's exits are deeper than its top level."""
        test = self.src(node.test)
        arms = []
        any_exit = False
        for arm, cond in ((node.body, f"({test})"), (node.orelse, f"not ({test})")):
            if arm and isinstance(arm[-1], exits):
                arms.append(None)  # this arm never reaches the statements after the ``if``
                any_exit = True
                continue
            stops = [self.src(x.test) for x in arm if isinstance(x, ast.If) and not x.orelse and x.body and isinstance(x.body[-1], exits)]
            any_exit = any_exit or bool(stops)
            arms.append(f"{cond} and not ({' or '.join(stops)})" if stops else cond)
        live = [a for a in arms if a is not None]
        if not any_exit or not live:
            return None
        return f"({live[0]})" if len(live) == 1 else "(" + " or ".join(f"({a})" for a in live) + ")"

    def visit_Assign(self, node: ast.Assign) -> None:
        _DISPATCH[node.value.__class__](self, node.value)
        for t in node.targets:
            self._assign_target(t, node.value, _ln(node.lineno))
            if not isinstance(t, ast.Name):
                _DISPATCH[t.__class__](self, t)

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        # ``def get_default_train_dl_kwargs(self, batch_size): return {"pin_memory": True, "num_workers": 8}``: a helper whose
        # dict of keyword arguments a caller unpacks into a DataLoader (``DataLoader(ds, **self.get_default_train_dl_kwargs(8))``),
        # filed under the helper's name (keys ``get_default_train_dl_kwargs.pin_memory``)
        # kept out of the settings: only a loader reading the helper's dict asks for them (``RETURNED_DICT``)
        if node.value.__class__ is ast.Dict and self.func_stack:
            self._dict_literal(node.value, (self.func_stack[-1],), RETURNED_DICT)  # type: ignore[arg-type]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            _DISPATCH[node.value.__class__](self, node.value)
            if not self.class_stack or self.func_stack:
                self._assign_target(node.target, node.value, _ln(node.lineno))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if node.target.__class__ is _Name and self.signature_stack and node.target.id in self.signature_stack[-1][0]:
            self.signature_stack[-1][1].add(node.target.id)
        if node.target.__class__ is _Name and self.lists and self.func_stack:
            key = (tuple(self.func_stack), node.target.id)
            if key in self.lists:
                if isinstance(node.op, ast.Add) and isinstance(node.value, ast.List):
                    self.lists[key] = [*self.lists[key], *node.value.elts]
                else:
                    del self.lists[key]
        _DISPATCH[node.value.__class__](self, node.value)
        _DISPATCH[node.target.__class__](self, node.target)

    def _ratio(self, name: str, node: ast.BinOp, line: int) -> None:
        """Record ``name = a // b // c`` (see :class:`RatioAssign`): its terms, each with the number it is here."""
        terms: list[ast.AST] = []
        cur: ast.AST = node
        while cur.__class__ is ast.BinOp and cur.op.__class__ in _QUOTIENT:  # type: ignore[attr-defined]
            terms.append(cur.right)  # type: ignore[attr-defined]
            cur = cur.left  # type: ignore[attr-defined]
        terms.append(cur)
        out = []
        for x in reversed(terms):
            v = self.constant(x)
            out.append((self.src(x), v if v.__class__ in (int, float) else None))
        self.out.ratios.append(RatioAssign(self.path, line, name, share_value(tuple(out), self._strings), self.text(line),
                                           self.func_stack[-1] if self.func_stack else None))

    def _assign_target(self, t: ast.AST, value_node: ast.AST, line: int) -> None:
        tc = t.__class__  # exact classes (the parser makes no subclasses), as in _rebound
        if tc is _Name and not self.func_stack and not self.class_stack and value_node.__class__ in (_Name, _Attribute) \
                and self.is_imported_root(value_node):
            # a module-level alias of an imported name (fairseq2 ``DDPModule: TypeAlias = DDP`` after ``from
            # torch.nn.parallel import DistributedDataParallel as DDP``): calls through it resolve like the import
            dotted = self.dotted(value_node)
            if dotted:
                self.aliases[t.id] = dotted
        if tc is _Name:
            if self.signature_stack and t.id in self.signature_stack[-1][0]:
                self.signature_stack[-1][1].add(t.id)
            if self.func_stack:
                key = (tuple(self.func_stack), t.id)
                if isinstance(value_node, ast.List):
                    self.lists[key] = list(value_node.elts)
                elif self.lists:
                    self.lists.pop(key, None)
                # only the module's own names (a class or function it defines): an imported arm (ms-swift ``PackingDataset``
                # under ``args.packing``) would hand other rules a construction under a switch they may not resolve
                if isinstance(value_node, ast.IfExp) and all(isinstance(x, ast.Name) and x.id not in self.aliases
                                                              and "." not in (self.dotted(x) or ".")
                                                              for x in (value_node.body, value_node.orelse)):
                    test = self.src(value_node.test)
                    self.choices[key] = ((value_node.body, test), (value_node.orelse, f"not ({test})"))
                elif self.choices:
                    self.choices.pop(key, None)
                if value_node.__class__ in (ast.BoolOp, ast.Compare) and any(
                        n.__class__ is ast.BinOp and n.op.__class__ is ast.Mod for n in ast.walk(value_node)):
                    self.interval_flags[key] = self.src(value_node)
                elif value_node.__class__ is ast.BoolOp and value_node.op.__class__ is ast.And and any(
                        self._option_term(v) for v in value_node.values):
                    # a switch computed from the run's options (open_clip ``compile_step = getattr(args, "torchcompile",
                    # False) and getattr(args, "torchcompile_strategy", "task") == "step"``, then ``elif compile_step:``):
                    # its test stands for it in the guards below, as an interval flag's does
                    self.interval_flags[key] = self.src(value_node)
                elif value_node.__class__ is ast.BoolOp and key in self.interval_flags and any(
                        n.__class__ is _Name and n.id == t.id for n in value_node.values):
                    # the flag widened by another condition (ColossalAI ``save_model_condition = save_model_condition or
                    # (step + 1) == len(dataloader)``, the epoch's end): still the interval test, with that condition
                    text = self.src(value_node)
                    self.interval_flags[key] = re.sub(rf"\b{re.escape(t.id)}\b", f"({self.interval_flags[key]})", text, count=1)
                elif self.interval_flags and not (value_node.__class__ is ast.Constant and value_node.value is True and self.guard_stack):
                    # (``is_opt_to_save_model = True`` when a save switch file exists forces one save: the flag stays
                    # the interval test it was)
                    self.interval_flags.pop(key, None)
            v = self.constant(value_node)
            if v is not _NO_VALUE and not isinstance(v, dict):
                v = share_value(v, self._strings)
                self._bind(self.scopes[-1], t.id, v)
                params, depth = self.param_stack[-1] if self.param_stack else (set(), 0)
                # a parameter overridden in one branch (nanotron: ``if not takes_input: dataloader_num_workers = 0``)
                # is a special case of the caller's value, not a setting of the repository
                # a floor under a computed value (``if logging_steps == 0: logging_steps = 1``) is not a setting
                floor = bool(self.guard_stack) and _floors_itself(self.guard_stack[-1], t.id)
                if not (t.id in params and len(self.guard_stack) > depth) and not floor:
                    rec = Assign(self.path, line, t.id, v, self.text(line), self.func_stack[-1] if self.func_stack else None)
                    self.out.assigns.append(rec)
                    if v is None and self.none_locals and t.id not in self.none_locals[-1][0]:
                        self.none_locals[-1][0][t.id] = rec
            elif value_node.__class__ is _Attribute and self.func_stack and self.is_imported_root(value_node):
                # a local bound to an imported name (mistral-finetune ``param_dtype = torch.bfloat16`` in ``_train``, then
                # ``prepare_mixed_precision(..., param_dtype=param_dtype)``): its uses below read that name, not a setting
                # called ``param_dtype``
                self._bind(self.scopes[-1], t.id, self.expr(self.src(value_node), dotted=self.dotted(value_node)))
                if self.none_locals:
                    self.none_locals[-1][1].add(t.id)
            else:
                if value_node.__class__ is ast.BinOp and value_node.op.__class__ in _QUOTIENT and _ACCUM_NAME.search(t.id):
                    self._ratio(t.id, value_node, line)  # (before the binding below hides the name's constant)
                self._bind(self.scopes[-1], t.id, _NO_VALUE)  # a non-constant rebinding hides an outer constant of that name
                if self.none_locals:
                    self.none_locals[-1][1].add(t.id)
                if value_node.__class__ is ast.IfExp:
                    self._arms(t.id, value_node, line)
            if isinstance(value_node, ast.Dict):
                self._dict_literal(value_node, (t.id,))
                if _ENV_DICT.search(t.id):
                    self._env_dict(value_node)
        elif tc is _Attribute:
            target = self.dotted(t) or self._strings.setdefault(f"?.{t.attr}", f"?.{t.attr}")
            self.out.attr_assigns.append(
                AttrAssign(
                    self.path, line, target, self.value(value_node), self.text(line),
                    loop=self.loop_stack[-1] if self.loop_stack else None,
                    func=self.func_stack[-1] if self.func_stack else None,
                    guard=self._guard_text() if self.guard_stack else None,
                )
            )
            if value_node.__class__ is ast.Dict and any(_const(k) in _DS_DICT_KEYS for k in value_node.keys if k is not None):
                # a DeepSpeed config set on an object (collie's examples: ``config.ds_config = {"fp16": {"enabled": True},
                # "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}``): its keys, as a dict
                # literal bound to a name gives them
                self._dict_literal(value_node, (target,))
        elif tc is ast.Subscript:
            # os.environ["NCCL_IB_DISABLE"] = "0"
            if (self.dotted(t.value) or "").endswith("os.environ"):
                key = _const(t.slice)
                if isinstance(key, str):
                    v = self.value(value_node)
                    self.out.envs.append(EnvVar(self.path, line, key, "" if isinstance(v, Expr) else str(v), "python", self.text(line),
                                                self._guard_text() if self.guard_stack else None))
            elif isinstance(t.value, (ast.Name, ast.Attribute)):
                # kwargs["attn_implementation"] = "sdpa"; self.base_model_args["attn_implementation"] = ... (instructlab)
                owner = t.value.id if isinstance(t.value, ast.Name) else self.dotted(t.value)
                key = _const(t.slice)
                last = t.value.id if isinstance(t.value, ast.Name) else t.value.attr
                if isinstance(key, str) and _ENV_NAME.match(key) and _ENV_DICT.search(last):
                    # the environment a job is launched with (NeMo ``executor.env_vars["NCCL_NVLS_ENABLE"] = "1"``,
                    # ``PERF_ENV_VARS["NCCL_NET_GDR_LEVEL"] = "PHB"``)
                    v = self.value(value_node)
                    self.out.envs.append(EnvVar(self.path, line, key, "" if isinstance(v, Expr) else str(v), "python", self.text(line),
                                                self._guard_text() if self.guard_stack else None))
                if isinstance(t.value, ast.Name) and isinstance(key, str) and self.func_stack:
                    self.env_dicts.setdefault((tuple(self.func_stack), t.value.id), []).append((key, value_node, line))
                if owner and isinstance(key, str):
                    v = self.value(value_node)
                    self.out.configs.append(
                        ConfigEntry(self.path, line, share_tuple((owner, key), self._strings), _scalar(v), "python", self.text(line),
                                    self._guard_text() if self.guard_stack else None)
                    )
        elif tc is ast.Tuple or tc is ast.List:
            for e in t.elts:  # type: ignore[attr-defined]
                if isinstance(e, ast.Name):
                    self._bind(self.scopes[-1], e.id, _NO_VALUE)

    def _arms(self, name: str, node: ast.IfExp, line: int) -> None:
        """``strategy = "deepspeed_stage_2_offload" if optimizer_name == "cpu_adam" else "deepspeed_stage_2"``: a conditional
        expression whose arms are all constants (nested ``A if c1 else B if c2 else C`` too) binds ``name`` to one of them,
        chosen by its conditions: an :class:`Assign` per arm, at the arm's line, with the condition as its guard (``c1``,
        ``not (c1) and c2``, ``not (c1) and not (c2)``). The settings decide which arm a run takes (see
        :meth:`checks.facts.store.Facts.alternatives`); the name stays unknown to the calls below it, as any computed value.
        Kept out as a constant assignment is: a parameter rebound inside a branch, a floor under a computed value."""
        arms: list[tuple[ast.expr, list[str]]] = []
        conds: list[str] = []
        cur: ast.expr = node
        while cur.__class__ is ast.IfExp:
            test = cur.test  # type: ignore[attr-defined]
            text = self.src(test)
            if isinstance(test, (ast.IfExp, ast.Lambda, ast.NamedExpr)) or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
                text = f"({text})"
            arms.append((cur.body, [*conds, text]))  # type: ignore[attr-defined]
            conds.append(f"not ({self.src(test)})")
            cur = cur.orelse  # type: ignore[attr-defined]
        arms.append((cur, conds))
        values = [_const(a) for a, _ in arms]
        if any(v is _NO_VALUE for v in values) or len(arms) > 8:
            return
        params, depth = self.param_stack[-1] if self.param_stack else (set(), 0)
        if (name in params and len(self.guard_stack) > depth) or (self.guard_stack and _floors_itself(self.guard_stack[-1], name)):
            return
        func = self.func_stack[-1] if self.func_stack else None
        for (arm, cond), v in zip(arms, values, strict=True):
            at = _ln(arm.lineno)
            guard = " and ".join(cond)
            self.out.assigns.append(Assign(self.path, at, name, share_value(v, self._strings), self.text(at), func,
                                           self._strings.setdefault(guard, guard), line))

    def _dict_literal(self, node: ast.Dict, prefix: tuple[str | int, ...], fmt: str = "python") -> None:
        for k, v in zip(node.keys, node.values, strict=True):
            key = _const(k) if k is not None else _NO_VALUE
            if not isinstance(key, str):
                continue
            keys = share_tuple((*prefix, key), self._strings)
            if isinstance(v, ast.Dict):
                self.out.configs.append(ConfigEntry(self.path, _ln(k.lineno), keys, Container("map"), fmt, self.text(k.lineno)))
                self._dict_literal(v, keys, fmt)
            else:
                self.out.configs.append(
                    ConfigEntry(self.path, _ln(k.lineno), keys, _scalar(self.value(v)), fmt, self.text(k.lineno))
                )

    def _option_term(self, v: ast.expr) -> bool:
        """A term that reads a run option: ``getattr(args, "name", default)`` or ``args.name`` on an options holder."""
        if v.__class__ is ast.Compare:
            v = v.left
        if v.__class__ is ast.Call:
            f = v.func
            return (f.__class__ is _Name and f.id == "getattr" and len(v.args) == 3 and v.args[1].__class__ is _Constant
                    and isinstance(v.args[1].value, str) and _CONFIG_HOLDERS.match(self.dotted(v.args[0]) or self.src(v.args[0])) is not None)
        if v.__class__ is _Attribute:
            owner = self.dotted(v.value) or ""
            return _CONFIG_HOLDERS.match(owner) is not None and owner != "self"
        return False

    def _env_dict(self, node: ast.Dict) -> None:
        """The variables of a dict literal that holds a job's environment (``PERF_ENV_VARS = {"NCCL_NVLS_ENABLE": "0", ...}``,
        ``executor = run.SlurmExecutor(..., env_vars={...})``): each an environment setting at its key's line."""
        for k, v in zip(node.keys, node.values, strict=True):
            key = _const(k) if k is not None else _NO_VALUE
            if isinstance(key, str) and isinstance(v, ast.Dict) and _ENV_DICT.search(key):
                self._env_dict(v)  # Ray's ``runtime_env={"env_vars": {...}}``
            elif isinstance(key, str) and _ENV_NAME.match(key) and not isinstance(v, ast.Dict):
                val = self.value(v)
                line = _ln(k.lineno)
                self.out.envs.append(EnvVar(self.path, line, key, "" if isinstance(val, Expr) else str(val), "python", self.text(line),
                                            self._guard_text() if self.guard_stack else None))

    # -- expressions -----------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        if name is None:
            name = f"?.{node.func.attr}" if isinstance(node.func, ast.Attribute) else "?"
            if name == "?.__init__" and len(self.func_stack) == 1 and self.func_stack[0] == "__init__" and self.class_stack \
                    and self.class_stack[-1][1] and _is_super(node.func.value):
                name = self.class_stack[-1][1]  # ``super().__init__(ds, pin_memory=...)`` in a loader subclass builds the loader
            name = self._strings.setdefault(name, name)
        star = False
        forwarded = None
        keywords = node.keywords
        if keywords:
            kwargs: dict[str, Any] = {}
            kw_lines: dict[str, int] = {}
            lineno = node.lineno
            sig, rebound = self.signature_stack[-1] if self.signature_stack else (None, None)
            for k in keywords:
                arg = k.arg
                if arg is None:
                    star = True
                    continue
                a = k.value
                kwargs[arg] = self.value(a)
                if a.__class__ is ast.Dict and _ENV_DICT.search(arg):
                    self._env_dict(a)  # ``run.SlurmExecutor(..., env_vars={"NCCL_...": ...})``, ``subprocess.run(cmd, env={...})``
                if a.lineno != lineno:  # readers use ``kw_lines.get(k, call.line)``: same-line keywords are not stored
                    kw_lines[arg] = _ln(a.lineno)
                c = a.__class__
                if c is ast.Dict:
                    self._dict_literal(a, (name.rsplit(".", 1)[-1], arg))
                elif c is _Name and sig is not None and a.id in sig and a.id not in rebound:
                    # a parameter of the enclosing function handed on as it came (see Call.forwarded)
                    if forwarded is None:
                        forwarded = {}
                    forwarded[arg] = sig[a.id]
            kwargs = share_kwargs(kwargs, self._strings) if kwargs else _NO_KWARGS  # most calls: one shared empty mapping
            if not kw_lines:
                kw_lines = _NO_KW_LINES
        else:
            kwargs, kw_lines = _NO_KWARGS, _NO_KW_LINES
        args = _share_args(tuple([self.value(a) for a in node.args]), self._strings) if node.args else ()
        line = _ln(node.lineno)
        call = Call(
            self.path, line, name, args, kwargs, self.text(line), star,
            self.func_stack[-1] if self.func_stack else None, kw_lines,
            self.loop_stack[-1] if self.loop_stack else None,
            self._guard_text() if self.guard_stack else None,
            forwarded,
            self.func_stack[-2] if len(self.func_stack) > 1 else None,
        )
        self.out.calls.append(call)
        if self.choices and node.func.__class__ is _Name and self.func_stack:
            self._chosen_calls(node.func.id, call)
        if name in TORCHX_DDP:
            self._launch_call(node, call)
        short = name[name.rfind(".") + 1:]  # Call.short
        if short == "add_argument":
            self._argparse(call)
        elif name == "click.option":
            self._click_option(call)
        elif short in {"setdefault", "putenv"} and (name.startswith("os.environ") or name == "os.putenv"):
            if len(args) >= 2 and isinstance(args[0], str):
                self.out.envs.append(EnvVar(self.path, line, args[0], "" if isinstance(args[1], Expr) else str(args[1]), "python", call.text,
                                            self._guard_text() if self.guard_stack else None))
        elif len(args) >= 2 and isinstance(args[0], str) and _SET_ENV_HELPER.match(short) and _ENV_NAME.match(args[0]):
            # a project's own helper (OLMo-core ``set_env_var("NCCL_IB_HCA", "^=mlx5_bond_0")`` in init_distributed)
            self.out.envs.append(EnvVar(self.path, line, args[0], "" if isinstance(args[1], Expr) else str(args[1]), "python", call.text))
        dispatch = self._dispatch
        if name[0] == "?" and isinstance(node.func, ast.Attribute):
            dispatch[node.func.value.__class__](self, node.func.value)
        aliases = self.aliases
        for a in node.args:
            c = a.__class__
            if c is _Name:  # as in generic_visit: names and constants inline
                if a.id in aliases and a.ctx.__class__ is _Load:
                    self.visit_Name(a)
            elif c is _Constant:
                if a.value.__class__ is str:
                    self.visit_Constant(a)
            else:
                dispatch[c](self, a)
        for k in node.keywords:
            a = k.value
            c = a.__class__
            if c is _Name:
                if a.id in aliases and a.ctx.__class__ is _Load:
                    self.visit_Name(a)
            elif c is _Constant:
                if a.value.__class__ is str:
                    self.visit_Constant(a)
            else:
                dispatch[c](self, a)

    def _launch_call(self, node: ast.Call, call: Call) -> None:
        """A launch API call (torchx ``ddp(*args, script=..., j=...)``): its words, resolved once the file is read."""
        words: list[tuple[list[str | ast.expr], int]] = []
        for a in node.args:
            if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name):
                elts = self.lists.get((tuple(self.func_stack), a.value.id)) if self.func_stack else None
                items = [w for w in (word_pieces(e) for e in elts or ()) if w is not None]
            else:
                w = word_pieces(a)
                items = [w] if w is not None else []
            words.extend(items)
        kw = {k.arg: k.value for k in node.keywords if k.arg is not None}
        script = word_pieces(kw["script"]) if "script" in kw else None
        j = word_pieces(kw["j"]) if "j" in kw else None
        env: list[tuple[str, str, int, str]] = []
        if isinstance(kw.get("env"), ast.Name) and self.func_stack:
            for key, value_node, line in self.env_dicts.get((tuple(self.func_stack), kw["env"].id), ()):
                v = self.value(value_node)
                env.append((key, "" if isinstance(v, Expr) else str(v), line, self.text(line)))
        self.pending_launches.append(Pending(call.line, call.text, words, script, j, env))

    def _click_option(self, call: Call) -> None:
        """A click option of a command (dolly's ``@click.option("--gradient-checkpointing/--no-gradient-checkpointing",
        is_flag=True, default=True)``): an option like argparse's, its on/off pair's ``--on`` flag naming it."""
        names = [a for a in call.args if isinstance(a, str)]
        flags = share_tuple(tuple(f for a in names for f in a.split("/")[:1] if f.startswith("-")), self._strings)
        if not flags:
            return
        longs = [f for f in flags if f.startswith("--")]
        dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
        dest = self._strings.setdefault(dest, dest)
        flag = call.kwargs.get("is_flag") is True or any("/" in a for a in names)
        default = call.kwargs["default"] if "default" in call.kwargs else (False if flag else None)
        self.click_options.append(ArgOption(self.path, call.line, dest, flags, default, "store_true" if flag else None, call.text))

    def _argparse(self, call: Call) -> None:
        flags = share_tuple(tuple(a for a in call.args if isinstance(a, str) and a.startswith("-")), self._strings)
        if not flags:
            return
        dest = call.kwargs.get("dest")
        if not isinstance(dest, str):
            longs = [f for f in flags if f.startswith("--")]
            dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
            # OpenRLHF's dotted options (``--model.gradient_checkpointing_enable``, read as ``args.model.<name>``):
            # the setting is the last segment; the flag itself stays in ``flags``
            dest = dest.rsplit(".", 1)[-1]
            dest = self._strings.setdefault(dest, dest)
        action = call.kwargs.get("action")
        action = action if isinstance(action, str) else None
        if "default" in call.kwargs:
            default = call.kwargs["default"]
        elif action == "store_true":
            default = False
        elif action == "store_false":
            default = True
        else:
            default = None
        self.out.arg_options.append(ArgOption(self.path, call.line, dest, flags, default, action, call.text))

    def _ref(self, node: ast.expr, name: str) -> Ref:
        """A reference with where it sits: its function and the branch it is in (``return torch.cuda.amp.autocast`` under
        ``if precision == "amp":`` hands the autocast itself on, to be entered by the caller)."""
        return Ref(self.path, _ln(node.lineno), name, self.text(node.lineno), self.func_stack[-1] if self.func_stack else None,
                   self._guard_text() if self.guard_stack else None)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.is_imported_root(node) and isinstance(node.ctx, ast.Load):
            name = self.dotted(node)
            if name:
                self.out.refs.append(self._ref(node, name))
            return  # the chain below is the same reference
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.out.refs.append(self._ref(node, self.aliases[node.id]))

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, str) and 2 < len(v) < 300 and _PATH_LITERAL.match(v):
            self.out.paths.append(PathLiteral(self.path, _ln(node.lineno), v, self.text(node.lineno)))

    def visit_Expr(self, node: ast.Expr) -> None:
        # A bare string statement is a docstring or a comment-like literal: not evidence.
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return
        self.generic_visit(node)


#: node class -> handler; the handlers call it directly for their children (one Python call per node, not two)
_DISPATCH = _Extractor._dispatch = _Dispatch()


def _share_args(t: tuple[Any, ...], strings: dict[Any, Any]) -> tuple[Any, ...]:
    """:func:`share_tuple` of a tuple of :meth:`_Extractor.value` results, which are the scan's copies already (strings,
    expressions and tuples come shared from the table, or are of a type never shared): the same tuple, without asking the
    table for each item again."""
    for x in t:
        c = x.__class__
        if c is not str and c is not Expr and c is not int and x is not None:
            return t
    return strings.setdefault(t, t)  # type: ignore[no-any-return]


def _scalar(v: Any) -> Any:
    if isinstance(v, dict):
        return Container("map")
    return v


#: calls that run training in the file that makes them
_TRAINING_CALLS = frozenset({"backward", "train", "fit", "training_step"})
#: ... without ``train``, which a tokenizer trainer has too (llama-recipes' ``spm.SentencePieceTrainer.train`` under
#: ``fire.Fire(main)``): a backward pass, a fit, or a trainer built (``Trainer(...)``)
_STEP_CALLS = frozenset({"backward", "fit", "training_step"})


def _fire_options(ex: _Extractor, tree: ast.Module, out: FileFacts) -> list[ArgOption]:
    """The options of a training function a file hands to Python Fire (MobiLlama ``fire.Fire(main)`` with ``def main(n_nodes=1,
    ..., accumulate_grad_batches=1, run_wandb=False)``, alpaca-lora ``fire.Fire(train)``): each keyword parameter with a
    constant default is a ``--name`` option of the command, as argparse's would be. Only a function of the module's own top
    level, named by the call; a file that does not train keeps none (a conversion script's ``dtype`` is not a run's)."""
    named = {c.args[0].ref for c in out.calls if c.name == "fire.Fire" and len(c.args) == 1 and isinstance(c.args[0], Expr)
             and c.args[0].ref and "." not in c.args[0].ref}
    found: list[ArgOption] = []
    for node in tree.body:
        if node.__class__ not in (ast.FunctionDef, ast.AsyncFunctionDef) or node.name not in named:  # type: ignore[attr-defined]
            continue
        a = node.args  # type: ignore[attr-defined]
        pos = a.posonlyargs + a.args
        pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults), *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)]
        for arg, default in pairs:
            v = _const(default)
            if v is _NO_VALUE or isinstance(v, dict):
                continue
            name = ex._strings.setdefault(arg.arg, arg.arg)
            line = _ln(arg.lineno)
            found.append(ArgOption(ex.path, line, name, share_tuple((f"--{name}",), ex._strings), v,
                                   "store_true" if v is False else None, ex.text(line)))
    return found


def _apply_set_defaults(out: FileFacts) -> None:
    """``parser.set_defaults(pin_mem=True)`` (MAE, LLaMA-Adapter, LLaMA2-Accessory: ``--pin_mem`` is ``store_true`` with a
    ``--no_pin_mem`` ``store_false`` twin) replaces the default of every option of that dest in the file: the option
    then reads as that default, cited at the ``set_defaults`` line."""
    calls = [c for c in out.calls if c.short == "set_defaults" and c.kwargs and "." in c.name]
    if not calls or not out.arg_options:
        return
    for c in calls:
        line = c.line
        for k, v in c.kwargs.items():
            if isinstance(v, Expr):
                continue
            out.arg_options = [replace(o, default=v, line=line, text=c.text) if o.dest == k else o
                               for o in out.arg_options]


def extract_python(path: str, text: str, out: FileFacts, strings: dict[str, str] | None = None) -> None:
    """Fill ``out`` with the facts of one Python file; a syntax error is recorded, not raised.

    ``strings``: a table shared by the files of one scan, so that a source line or dict key that
    recurs across files (imports, boilerplate, copied code) is held once. Facts are immutable, so
    sharing is invisible to readers; the table lives as long as the scan.
    """
    try:
        tree = parse_with_pep701(text, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        out.error = f"Python syntax error{f' at line {line}' if line else ''}: {getattr(exc, 'msg', str(exc))}"
        return
    ex = _Extractor(path, text, out, strings)
    shared_line(len(ex.lines) + 1)  # every line of the file has its shared int: ``_ln`` is a plain lookup
    try:
        ex.visit(tree)
    except RecursionError:
        out.error = "Python file nested too deeply to analyse"
    # click options are the training command's where the file runs the trainer (dolly's ``training/trainer.py``:
    # ``Trainer(...).train()`` under ``@click.option("--gradient-checkpointing/--no-gradient-checkpointing", default=True)``);
    # a data tool's ``--batch_size`` (modalities' shuffling command) is not a training knob
    if ex.click_options and any(c.short in _TRAINING_CALLS or c.short.endswith("Trainer") for c in out.calls):
        out.arg_options.extend(ex.click_options)
    if any(c.name == "fire.Fire" for c in out.calls) and any(c.short in _STEP_CALLS or c.short.endswith("Trainer") for c in out.calls):
        out.arg_options.extend(_fire_options(ex, tree, out))
    _apply_set_defaults(out)
    finish(path, ex.pending_launches, out)  # launch calls, once the file's argparse defaults are known
    extract_usage_hints(path, text, tree, out)  # a CLI's usage text documenting a multi-node launch (E1)
    extract_launcher_hints(path, text, tree, out)  # a launcher module building a multi-node torchrun command (E1)
