"""Fact records: what one parse of one file tells the checks.

Every record carries ``path`` (relative, POSIX) and a 1-based ``line`` so that a
check can turn it into :class:`checks.model.Evidence` directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_LINE_INTS: list[int] = list(range(4096))


def shared_line(n: int) -> int:
    """The one shared int object for a line number.

    Ints above 256 are objects of their own (32 bytes); the parser makes one per node, so a
    million records held a million copies of a few thousand values.
    """
    if n >= len(_LINE_INTS):
        _LINE_INTS.extend(range(len(_LINE_INTS), n + 1))
    return _LINE_INTS[n]


@dataclass(frozen=True, slots=True)
class Expr:
    """A Python expression that is not a constant.

    ``dotted`` is the import-resolved dotted name when the expression is a name or
    attribute chain (``torch.bfloat16``); ``ref`` is the attribute read from an
    arguments/config object (``args.bf16`` -> ``"bf16"``), which the effective-setting
    resolver looks up across the repository.
    """

    text: str
    dotted: str | None = None
    ref: str | None = None


class Container:
    """Marker value for a YAML/JSON mapping or a list of mappings."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "map" | "seq"

    def __repr__(self) -> str:
        return f"<{self.kind}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Container) and other.kind == self.kind

    def __hash__(self) -> int:
        return hash(self.kind)


@dataclass(slots=True)
class Call:
    path: str
    line: int
    name: str  # import-resolved dotted name; "?.to" when the receiver is not a dotted name
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    text: str  # the source line (stripped, first line of the call)
    star_kwargs: bool = False
    func: str | None = None  # enclosing function
    kw_lines: dict[str, int] = field(default_factory=dict)  # line of each keyword not on the call's own line: read with .get(k, line)
    loop: str | None = None  # text of the iterable of the innermost enclosing ``for`` loop, if any
    guard: str | None = None  # conditions of the enclosing ``if``/ternary branches, joined with ``and``
    # keywords that hand on a parameter of the enclosing function unchanged (``DataLoader(num_workers=num_workers)`` in
    # ``def prepare_dataloader(self, dataset, num_workers=0)``): keyword -> (the parameter's position as a caller passes it,
    # None for keyword-only; whether it has a default; the default when it is a constant, else None; the line and text of the
    # default). None when there is none
    forwarded: dict[str, tuple[int | None, bool, Any, int, str]] | None = None
    # the function that defines ``func`` when ``func`` is nested in it (a closure such as ``def make_norm(...)`` inside
    # ``def load_kernels():``): its body can run only once that function has run. None at the top level of a function
    outer: str | None = None
    # the last part of ``name`` (``step`` of ``optimizer.step``), kept once: the checks and the roles ask it of every call
    # of a file, a million times on Megatron-LM, where a property split the name each time
    short: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.short = self.name.rsplit(".", 1)[-1]

    def kw_line(self, keyword: str) -> int:
        """The line of a keyword's value (a multi-line call puts keywords below its first line)."""
        return self.kw_lines.get(keyword, self.line)


@dataclass(frozen=True, slots=True)
class Import:
    path: str
    line: int
    module: str  # "torch.distributed.fsdp"
    name: str | None  # "FullyShardedDataParallel" for from-imports
    text: str
    optional: bool = False  # in the body of a ``try:`` whose handler catches ImportError: used only if installed

    @property
    def full(self) -> str:
        return f"{self.module}.{self.name}" if self.name else self.module


@dataclass(frozen=True, slots=True)
class Ref:
    """A name or attribute chain rooted in an import (``ShardingStrategy.FULL_SHARD``)."""

    path: str
    line: int
    name: str  # resolved dotted name
    text: str
    func: str | None = None  # enclosing function
    guard: str | None = None  # conditions of the enclosing ``if`` branches, joined with ``and`` (as :attr:`Call.guard`)


@dataclass(frozen=True, slots=True)
class AttrAssign:
    """``target.attr = value`` (``torch.backends.cuda.matmul.allow_tf32 = True``, ``p.requires_grad = False``)."""

    path: str
    line: int
    target: str  # resolved dotted target, "?.requires_grad" when not dotted
    value: Any
    text: str
    loop: str | None = None  # text of the iterable of the enclosing ``for`` loop, if any
    func: str | None = None
    guard: str | None = None  # conditions of the enclosing ``if`` branches, joined with ``and``

    @property
    def attr(self) -> str:
        return self.target.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class Decorator:
    path: str
    line: int
    name: str  # resolved dotted name of the decorator (call decorators: the callee)
    target: str  # decorated function or class
    text: str


@dataclass(frozen=True, slots=True)
class ArgOption:
    """An ``argparse`` option: ``parser.add_argument("--bf16", action="store_true")``."""

    path: str
    line: int
    dest: str
    flags: tuple[str, ...]
    default: Any
    action: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Field:
    """A class-level field with a default (dataclasses for HfArgumentParser, config classes)."""

    path: str
    line: int
    owner: str
    name: str
    default: Any
    text: str


@dataclass(frozen=True, slots=True)
class Assign:
    """A plain name bound to a constant (``NUM_WORKERS = 8``), or one arm of a conditional expression of constants.

    ``strategy = "deepspeed_stage_2_offload" if optimizer_name == "cpu_adam" else "deepspeed_stage_2"`` is two records,
    one per arm, each at the arm's line with the condition it is chosen under as ``guard`` (``optimizer_name ==
    "cpu_adam"`` / ``not (optimizer_name == "cpu_adam")``) and ``stmt`` the line of the assignment (the arms of one
    expression share it). A plain assignment has neither: its enclosing ``if`` is not recorded, as before."""

    path: str
    line: int
    name: str
    value: Any
    text: str
    func: str | None = None  # enclosing function (None at module or class level)
    guard: str | None = None  # an arm's condition (see above)
    stmt: int = 0  # an arm's assignment line


@dataclass(frozen=True, slots=True)
class RatioAssign:
    """A plain name bound to a quotient, kept for accumulation counts only (Alpaca-LoRA and its forks:
    ``GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE``, then ``GRADIENT_ACCUMULATION_STEPS =
    GRADIENT_ACCUMULATION_STEPS // world_size`` under DDP). ``terms``: the dividend, then each divisor, as (source text,
    value) where the value is the number the operand is (a literal, or a name bound to one in that scope), else None."""

    path: str
    line: int
    name: str
    terms: tuple[tuple[str, Any], ...]
    text: str
    func: str | None = None


@dataclass(frozen=True, slots=True)
class ParamDefault:
    """A function parameter whose default is ``None``, ``False`` or ``0`` (``compile_config: Optional[dict] = None``).

    ``start``/``end`` are the lines the function spans (a guard inside it reads the parameter); ``owner`` the class of
    an ``__init__`` (its callers are the class's constructions); ``index`` the parameter's position among the positional
    parameters after ``self``/``cls`` (-1 for keyword-only); ``rebound`` when the body assigns the name again."""

    path: str
    line: int
    func: str
    name: str
    value: Any  # None | False | 0
    text: str
    start: int
    end: int
    owner: str | None = None
    index: int = -1
    rebound: bool = False


@dataclass(frozen=True, slots=True)
class GradOff:
    """A block that runs without autograd: ``with torch.no_grad():``, ``with torch.inference_mode():``, ``with
    torch.set_grad_enabled(False):`` (``line`` the ``with``, ``end`` its body's last line). What runs in it takes no
    gradient: a vision tower called there is frozen (moondream's ``img_emb = model._run_vision_encoder(...)``)."""

    path: str
    line: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class ClassSpan:
    """A ``class`` statement: its name, the dotted names of its bases (as written, import-resolved), and the last line of
    its body (``line`` is the ``class`` keyword's line; decorators sit above it). A method's class is the innermost span
    that holds its line."""

    path: str
    line: int
    name: str
    end: int
    bases: tuple[str, ...]
    text: str


#: ``fmt`` of an entry of a dict literal a function returns (``return {"pin_memory": True}``, keys under the function's name):
#: kept in its file's ``configs`` but out of :class:`~checks.facts.store.Facts`' settings (a reply payload, a layout report
#: or an HTTP response is no setting); read only where a caller unpacks the helper's dict into a call
RETURNED_DICT = "python-return"


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """A key of a YAML/JSON/TOML config or of a Python dict literal with string keys."""

    path: str
    line: int
    keys: tuple[str | int, ...]
    value: Any  # scalar, tuple of scalars, or Container
    fmt: str  # "yaml" | "json" | "toml" | "python" | RETURNED_DICT
    text: str
    guard: str | None = None  # Python ``d["k"] = v``: conditions of the enclosing ``if`` branches, joined with ``and``

    @property
    def key(self) -> str:
        for k in reversed(self.keys):
            if isinstance(k, str):
                return k
        return ""

    @property
    def dotted(self) -> str:
        return ".".join(str(k) for k in self.keys)


@dataclass(slots=True)
class Launch:
    """One launcher command line in a shell script, Makefile, Dockerfile or YAML string."""

    path: str
    line: int
    launcher: str  # torchrun | deepspeed | accelerate | python | colossalai | llamafactory | axolotl | ...
    launcher_args: dict[str, Any]
    script: str | None
    script_args: dict[str, Any]
    text: str
    wrappers: tuple[str, ...] = ()  # srun, mpirun, ...
    env: dict[str, str] = field(default_factory=dict)  # VAR=value prefixes of this command
    arg_lines: dict[str, int] = field(default_factory=dict)  # physical line of a script flag not on the command's first line
    launcher_arg_lines: dict[str, int] = field(default_factory=dict)  # same for the launcher's own flags
    arg_text: dict[str, str] = field(default_factory=dict)  # a script flag as written (``--ds.zero_stage 3``, ``a.b=2``)

    def arg_line(self, key: str) -> int:
        """The line that holds a flag (``--bf16`` on line 12 of a command continued from line 4): read with .get(k, line)."""
        return self.arg_lines.get(key, self.launcher_arg_lines.get(key, self.line))


@dataclass(frozen=True, slots=True)
class EnvVar:
    path: str
    line: int
    name: str
    value: str
    source: str  # "shell" | "docker" | "python" | "yaml"
    text: str
    #: the ``if`` conditions a Python assignment sits under (``not check_cuda_p2p_ib_support()``), as calls record theirs
    guard: str | None = None
    #: the comment lines right above a shell export, as written (octopack ``# do not remove or the training will hang and
    #: nodes will be lost w/o this workaround`` over ``export CUDA_LAUNCH_BLOCKING=1``): the author's reason for the setting
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class Dependency:
    path: str
    line: int
    name: str  # normalised: lower case, "_" -> "-"
    spec: str
    text: str


@dataclass(frozen=True, slots=True)
class PathLiteral:
    """A string that names a storage location (``/mnt/ssd/data``, ``s3://bucket/x``, ``hdfs://...``)."""

    path: str
    line: int
    value: str
    text: str


@dataclass(frozen=True, slots=True)
class DocHint:
    """A fact documented in prose (README, docs/*.md): ``kind`` "multi_node" for a documented multi-node launch
    (``torchrun --nnodes 2``, ``num_machines: 2``, ``#SBATCH --nodes=4``); "command"/"command_file"/"run_recipe" for what a
    documented training command runs; "command_flag" for a sharding flag it passes (``--fsdp``, ``--deepspeed``), at the
    command's line; "model" for the checkpoint a documented run starts from; "script_block" for a Python script the document
    gives whole under its file name (a command of the same document that runs it is a documented run); "run_script" and
    "alternative" for the run's script and the one prose offers in its place ("replace `train_mem.py` above with
    `train_xformers.py`"). Never evidence of a practice in use."""

    path: str
    line: int
    kind: str
    value: str
    text: str


@dataclass(slots=True)
class FileFacts:
    """Everything one file contributed. Picklable; cached by content hash."""

    path: str
    kind: str
    calls: list[Call] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    attr_assigns: list[AttrAssign] = field(default_factory=list)
    decorators: list[Decorator] = field(default_factory=list)
    arg_options: list[ArgOption] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    assigns: list[Assign] = field(default_factory=list)
    configs: list[ConfigEntry] = field(default_factory=list)
    params: list[ParamDefault] = field(default_factory=list)
    classes: list[ClassSpan] = field(default_factory=list)
    grad_off: list[GradOff] = field(default_factory=list)
    ratios: list[RatioAssign] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    envs: list[EnvVar] = field(default_factory=list)
    deps: list[Dependency] = field(default_factory=list)
    paths: list[PathLiteral] = field(default_factory=list)
    doc_hints: list[DocHint] = field(default_factory=list)
    # the training commands of a README/docs code block, parsed as a launch script's would be: the run's settings only
    # when the repository ships no launch of its own (:meth:`checks.facts.store.Facts.documented_runs`)
    doc_launches: list[Launch] = field(default_factory=list)
    suppressed: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> check IDs
    error: str | None = None  # parse error (the file is still listed)
    lines: int = 0

    def share(self, strings: dict[Any, Any]) -> None:
        """Point every record's ``text`` and ``line`` at the scan's one copy of that value.

        Extraction shares these and the other values as it goes; facts loaded from a cache arrive with copies
        of their own (a pickle shares only within one file or pack, and never ints; a worker's strings are shared
        as they load, see :func:`checks.cache.loads_batch`). Done once, on load, before any check reads them: the
        records are immutable to their readers, so this bypasses ``frozen`` on purpose. Only the texts and lines: a
        pass over every field costs more CPU than it saves memory on the few files a warm scan loads one by one,
        and an in-memory cache (``accel-audit pr``, the App's PR audit) hands back facts already shared.
        """
        set_ = object.__setattr__
        for attr in RECORD_LISTS:
            for r in getattr(self, attr):
                t = r.text
                shared = strings.setdefault(t, t)
                if shared is not t:
                    set_(r, "text", shared)
                if r.line > 256:  # smaller ints are shared by CPython already
                    set_(r, "line", shared_line(r.line))


def share_line_numbers(ff: FileFacts) -> None:
    """Point every record's ``line`` at the one shared int of its value (see :func:`shared_line`): for facts whose other
    values are shared already (a worker's, see :func:`checks.cache.loads_batch`)."""
    set_ = object.__setattr__
    for attr in RECORD_LISTS:
        for r in getattr(ff, attr):
            if r.line > 256:  # smaller ints are shared by CPython already
                set_(r, "line", shared_line(r.line))


def share_value(v: Any, strings: dict[Any, Any]) -> Any:
    """The scan's one copy of an immutable value equal to ``v`` (a string, an :class:`Expr`, a tuple of those, of ints
    and of None), ``v`` itself for anything else. Equal values of different types (``1``, ``True``, ``1.0``) are never
    merged: only exact types that compare equal to nothing of another type are shared."""
    c = v.__class__
    if c is str or c is Expr:
        return strings.setdefault(v, v)
    if c is tuple:
        return share_tuple(v, strings)
    return v


def share_tuple(t: tuple[Any, ...], strings: dict[Any, Any]) -> tuple[Any, ...]:
    """``t`` with its strings and expressions shared and, when it holds only strings, expressions, ints (not bools)
    and None, the scan's one copy of it (see :func:`share_value`)."""
    if not t:
        return t
    setdefault = strings.setdefault
    whole = True
    items: list[Any] | None = None
    for i, x in enumerate(t):
        c = x.__class__
        if c is str or c is Expr:
            s = setdefault(x, x)
            if s is not x:
                if items is None:
                    items = list(t)
                items[i] = s
        elif c is not int and x is not None:
            whole = False
    if items is not None:
        t = tuple(items)
    return setdefault(t, t) if whole else t


#: the key, in a scan's table, of its table of keyword mappings (dropped when the scan's facts are built: see drop_tables)
_KWARGS = object()


def share_kwargs(d: dict[str, Any], strings: dict[Any, Any]) -> dict[str, Any]:
    """The scan's one copy of a call's keyword mapping equal to ``d`` (``dim=-1``, ``non_blocking=True``: half of a
    large repository's mappings are repeats), ``d`` itself when a value is not a string, expression, int, bool or None
    (a float, a tuple, a nested mapping). Values are compared with their types (``True`` is not ``1``). The mappings are
    read, never written, once extracted."""
    if not d:
        return d
    key = []
    for k, v in d.items():
        c = v.__class__
        if c is not str and c is not Expr and c is not int and c is not bool and v is not None:
            return d
        key.append((k, c, v))
    table = strings.get(_KWARGS)
    if table is None:
        table = strings[_KWARGS] = {}
    return table.setdefault(tuple(key), d)


#: the key, in a scan's table, of its expressions by ``(text, dotted, ref)`` (see :func:`expr_table`)
_EXPRS = object()


def expr_table(strings: dict[Any, Any]) -> dict[tuple[str, str | None, str | None], Expr]:
    """The scan's expressions by their ``(text, dotted, ref)`` tuple: a tuple of strings is hashed in C, an :class:`Expr`
    by its dataclass ``__hash__`` in Python, so an expression seen again in another file is found without hashing one."""
    table = strings.get(_EXPRS)
    if table is None:
        table = strings[_EXPRS] = {}
    return table  # type: ignore[no-any-return]


#: the key, in a scan's table, of its YAML scalars' values by ``(tag, text)`` (see checks.facts.configs._yaml_scalar)
_YAML_SCALARS = object()


def yaml_scalar_table(strings: dict[Any, Any]) -> dict[tuple[str, str], Any]:
    """The scan's constructed YAML scalars by their resolved tag and text."""
    table = strings.get(_YAML_SCALARS)
    if table is None:
        table = strings[_YAML_SCALARS] = {}
    return table  # type: ignore[no-any-return]


def drop_tables(strings: dict[Any, Any]) -> None:
    """Free what a scan's table keeps only while facts are made (the keys of its keyword mappings, expressions and YAML
    scalars)."""
    strings.pop(_KWARGS, None)
    strings.pop(_EXPRS, None)
    strings.pop(_YAML_SCALARS, None)


RECORD_LISTS = ("calls", "imports", "refs", "attr_assigns", "decorators", "arg_options", "fields", "assigns", "configs", "launches", "envs", "deps", "paths",
                "doc_hints", "params", "doc_launches", "classes", "grad_off", "ratios")


@dataclass(frozen=True, slots=True)
class Setting:
    """One place that sets a named training setting, with its precedence.

    ``rank``: 3 launcher flag, 2 config file / code literal, 0 a default in code
    (argparse default, dataclass field default) that takes effect only when
    nothing of higher rank sets the same name.
    """

    name: str
    value: Any
    path: str
    line: int
    source: str  # "launcher" | "config" | "call" | "assign" | "argparse-default" | "field-default"
    text: str
    key: str  # what an edit needs: "bf16", "zero_optimization.stage", "TrainingArguments(bf16=)", "--bf16"
    rank: int
    script: str | None = None  # for a launcher flag: the script it is passed to
    guard: str | None = None  # an arm of a conditional expression that the project's settings choose (see Facts.alternatives)
    spelled: str | None = field(default=None, compare=False)  # a launcher flag as written (``--ds.zero_stage 3``, ``a.b=2``)
