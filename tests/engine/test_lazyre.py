"""Module-level patterns compile on first use (checks.lazyre): each still compiles, behaves as ``re.Pattern``, and none
of the engine's modules compiles one at import."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

from checks.lazyre import LazyPattern, lazy_compile

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("checks", "reports")


def _modules() -> list[str]:
    out = []
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        out.append(pkg)
        out += [m.name for m in pkgutil.walk_packages(mod.__path__, prefix=f"{pkg}.")]
    return out


def _lazy_patterns() -> list[tuple[str, LazyPattern]]:
    found = []
    for name in _modules():
        mod = importlib.import_module(name)
        for attr, value in vars(mod).items():
            if isinstance(value, LazyPattern):
                found.append((f"{name}.{attr}", value))
            elif isinstance(value, type) and value.__module__ == name:
                found += [(f"{name}.{attr}.{a}", v) for a, v in vars(value).items() if isinstance(v, LazyPattern)]
            elif isinstance(value, (tuple, list)):
                found += [(f"{name}.{attr}[{i}]", v) for i, v in enumerate(value) if isinstance(v, LazyPattern)]
    return found


def test_every_module_level_pattern_compiles() -> None:
    found = _lazy_patterns()
    assert len(found) > 400  # the checks, extractors and reports hold about 560
    bad = []
    for where, pat in found:
        try:
            pat.compiled()
        except re.error as exc:
            bad.append(f"{where}: {exc}")
    assert not bad


def test_no_module_compiles_a_pattern_at_import() -> None:
    eager = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:  # statements that run at import, classes' bodies included
                stack = [node]
                while stack:
                    n = stack.pop()
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
                                      ast.DictComp, ast.GeneratorExp)):
                        continue
                    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile"
                            and isinstance(n.func.value, ast.Name) and n.func.value.id == "re"):
                        eager.append(f"{path.relative_to(ROOT)}:{n.lineno}")
                    stack.extend(ast.iter_child_nodes(n))
    assert not eager, "use checks.lazyre.lazy_compile for module-level patterns: " + ", ".join(eager)


def test_a_lazy_pattern_behaves_as_the_compiled_one() -> None:
    lazy = lazy_compile(r"num_workers\s*=\s*(?P<n>\d+)", re.I)
    eager = re.compile(r"num_workers\s*=\s*(?P<n>\d+)", re.I)
    assert lazy._compiled is None and lazy.pattern == eager.pattern  # nothing compiled yet
    text = "DataLoader(ds, NUM_WORKERS=4, pin_memory=True)\nDataLoader(ev, num_workers=0)"
    assert lazy.search(text).group("n") == "4"
    assert lazy._compiled is not None
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text) and lazy.sub("W", text) == eager.sub("W", text)
    assert lazy.match(text) is None and lazy.fullmatch("num_workers=2") is not None
    assert lazy.groups == 1 and lazy.groupindex == {"n": 1}
    again = pickle.loads(pickle.dumps(lazy))
    assert isinstance(again, LazyPattern) and again.search(text).group("n") == "4"


def test_a_bad_pattern_raises_on_first_use_and_a_non_pattern_at_once() -> None:
    bad = lazy_compile(r"(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    with pytest.raises(TypeError):
        lazy_compile(re.compile("x"))  # type: ignore[arg-type]
