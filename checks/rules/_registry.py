"""Python config registries: training recipes written as functions that build a config object.

torchtitan 0.3.0 replaced its TOML files with ``models/<model>/config_registry.py``: one function per run
(``llama3_8b()``, ``llama3_70b()``, ``qwen35_debugmodel_moe()``) returning ``Trainer.Config(...)`` over dataclass
defaults. Each such function is a recipe, like one YAML file of a recipe folder: a setting made inside it holds for
that run only, and a recipe named for debugging or tests is not the project's training setting.
"""

from __future__ import annotations

import re
from typing import Any

from ..facts import Facts, Setting, truthy

#: a file that holds recipes as functions (``config_registry.py``, ``recipes.py``, ``presets.py``)
_REGISTRY_FILE = re.compile(r"(^|/)\w*(config|recipe|registry|preset)\w*\.py$", re.I)
_HELPERS = re.compile(r"(?i)(util|helper)")
#: a recipe for debugging or tests (``qwen35_debugmodel_moe``, ``llama3_debugmodel``, ``smoke_test``)
_DEBUG = re.compile(r"(?i)(^|_)(debug|test|smoke|toy|dummy|mock)")
#: registries of fewer recipes are helper modules, not a recipe collection
_MIN_RECIPES = 3


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def recipes(f: Facts) -> dict[str, frozenset[str]]:
    """Registry file -> its recipe functions: public functions that construct a ``*Config``/``*.Config`` object,
    in files named for configs/recipes that hold at least three of them. Memoised per scan."""
    memo = f._memo
    key = ("registry-recipes",)
    if key not in memo:
        out: dict[str, frozenset[str]] = {}
        for path, ff in f.files.items():
            if not _REGISTRY_FILE.search(path) or _HELPERS.search(path.rsplit("/", 1)[-1]):
                continue
            funcs = frozenset(c.func for c in ff.calls if c.func and not c.func.startswith("_") and _short(c.name).endswith("Config"))
            if len(funcs) >= _MIN_RECIPES:
                out[path] = funcs
        memo[key] = out  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def recipe_of(f: Facts, x: Any) -> tuple[str, str] | None:
    """(file, recipe function) a call or a call-keyword setting sits in; None outside a registry recipe."""
    regs = recipes(f)
    path = getattr(x, "path", "")
    if path not in regs:
        return None
    func = getattr(x, "func", None)
    if func is None and isinstance(x, Setting) and x.source == "call":
        short = x.key.split("(", 1)[0]
        for c in f.files[path].calls:
            if _short(c.name) == short and (c.line == x.line or x.line in c.kw_lines.values()):
                func = c.func
                break
    return (path, func) if func in regs[path] else None


def debug_recipe(f: Facts, x: Any) -> bool:
    """Whether ``x`` is set inside a registry recipe named for debugging or tests."""
    r = recipe_of(f, x)
    return r is not None and bool(_DEBUG.search(r[1]))


def total_recipes(f: Facts) -> int:
    return sum(len(v) for v in recipes(f).values())


def _bases(f: Facts, path: str, func: str) -> list[str]:
    """The recipes a recipe starts from (``config = llama3_8b()`` inside ``llama3_8b_float8()``)."""
    names = recipes(f)[path]
    return [_short(c.name) for c in f.files[path].calls if c.func == func and _short(c.name) in names and _short(c.name) != func]


def recipes_on(f: Facts, settings: list[Setting]) -> tuple[list[tuple[str, str]], list[Setting]]:
    """The registry recipes that turn a switch on through ``settings`` (call keywords such as ``CompileConfig(enable=True)``),
    counting a recipe that starts from one that turns it on and does not turn it off itself, and the settings that do."""
    state: dict[tuple[str, str], bool] = {}
    cited: list[Setting] = []
    for s in settings:
        r = recipe_of(f, s)
        t = truthy(s.value)
        if r is None or t is None:
            continue
        state[r] = t
        if t:
            cited.append(s)
    on = _inherit(f, {r for r, t in state.items() if t}, set(state))  # through base recipes, to a fixed point
    return sorted(on, key=_order), sorted(cited, key=lambda x: (_order((x.path, "")), x.line))


def _inherit(f: Facts, on: set[tuple[str, str]], decided: set[tuple[str, str]]) -> set[tuple[str, str]]:
    out = set(on)
    changed = True
    while changed:
        changed = False
        for path, funcs in recipes(f).items():
            for fn in funcs:
                r = (path, fn)
                if r not in out and r not in decided and any((path, b) in out for b in _bases(f, path, fn)):
                    out.add(r)
                    changed = True
    return out


def recipes_calling(f: Facts, pattern: re.Pattern[str]) -> tuple[list[tuple[str, str]], list[Any]]:
    """The registry recipes that construct something whose name matches ``pattern`` (``Float8LinearConverter.Config`` in
    ``llama3_405b``), counting recipes that start from one of them, and those calls."""
    on: set[tuple[str, str]] = set()
    cited: list[Any] = []
    for path, funcs in recipes(f).items():
        for c in f.files[path].calls:
            if c.func in funcs and pattern.search(c.name):
                on.add((path, c.func))
                cited.append(c)
    return sorted(_inherit(f, on, set()), key=_order), sorted(cited, key=lambda x: (_order((x.path, "")), x.line))


def _order(r: tuple[str, str]) -> tuple[bool, str, str]:
    """The project's own model recipes before experiments."""
    return ("experiment" in r[0], r[0], r[1])


def split_text(what: str, on: list[tuple[str, str]], total: int) -> str:
    """``compile.enable on in 39 of 97 recipes (llama3_405b, ...)``."""
    names = ", ".join(fn for _, fn in on[:4]) + (", ..." if len(on) > 4 else "")
    return f"{what} in {len(on)} of {total} config-registry recipes" + (f" ({names})" if on else "")
