"""Round 14 (held-out SpecForge): code in a closure (``def make_rms_norm(...)`` inside ``def load_liger_kernels():``) runs only
once the function that defines it has run; when every caller of that function is behind a switch that is off, the closure's
Liger modules are not in effect, whoever calls the closure."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import callers_off
from checks.rules.d_compute import _liger_closure_lib
from tests.rules_ghj.ghj_util import audit


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def test_calls_record_the_function_that_defines_their_closure():
    f = _facts(_liger_closure_lib(True))
    norm = next(c for c in f.calls("liger_kernel.*") if c.short == "LigerRMSNorm")
    assert (norm.func, norm.outer) == ("make_rms_norm", "load_liger_kernels")
    loader = next(c for c in f.calls("load_liger_kernels"))
    assert (loader.func, loader.outer) == ("resolve_kernels", None)


def test_a_method_of_a_top_level_class_has_no_outer_function():
    f = _facts({"m.py": "class A:\n    def run(self):\n        return helper()\n"})
    [c] = f.calls("helper")
    assert (c.func, c.outer) == ("run", None)


def test_closure_of_a_switched_off_loader_is_off():
    f = _facts(_liger_closure_lib(True))
    for c in f.calls("liger_kernel.*"):
        assert [(s.path, s.line) for s in callers_off(f, c)] == [("mylib/config.py", 5)]
    result, _ = audit(_liger_closure_lib(True), "D5")
    assert result.status.value == "unused"
    assert "use_liger_kernel=False" in result.detail


def test_closure_of_a_loader_called_unconditionally_is_used():
    f = _facts(_liger_closure_lib(False))
    assert all(callers_off(f, c) == [] for c in f.calls("liger_kernel.*"))
    assert audit(_liger_closure_lib(False), "D5")[0].status.value == "used"


def test_a_recipe_turning_the_switch_on_keeps_the_closure_in_effect():
    files = {**_liger_closure_lib(True), "examples/dflash.yaml": "model:\n  use_liger_kernel: true\n"}
    assert audit(files, "D5")[0].status.value == "used"
