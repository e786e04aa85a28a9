"""Round 12 (held-out VeOmni): ``if compile_config.enable:`` resolved through the holder's class (``CompileConfig``) and
every construction of it, including one that copies a typed section's fields."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import typed_field_state
from checks.rules.d_compute import _COPIED_COMPILE
from tests.rules_ghj.ghj_util import audit


def _with(path: str, old: str, new: str) -> dict[str, str]:
    assert old in _COPIED_COMPILE[path]
    return {**_COPIED_COMPILE, path: _COPIED_COMPILE[path].replace(old, new)}


def _state(files: dict[str, str]):
    return typed_field_state(build_facts((p, t.encode()) for p, t in files.items()), "compile_config", "enable")[0]


def test_compile_behind_a_config_copied_from_an_off_section_is_off():
    assert _state(_COPIED_COMPILE) is False
    result, _ = audit(_COPIED_COMPILE, "D2")
    assert result.status.value == "unused"
    assert all(e.path != "pkg/torch_compile.py" or e.line != 15 for e in result.evidence)


def test_a_copy_from_a_section_that_is_on_is_not_off():
    files = _with("pkg/arguments.py", "enable: bool = field(default=False)\n    backend", "enable: bool = field(default=True)\n    backend")
    assert _state(files) is None
    assert audit(files, "D2")[0].status.value == "used"


def test_a_construction_passing_true_is_not_off():
    files = {**_COPIED_COMPILE, "pkg/bench.py": (
        "from pkg.parallelize import parallelize_model\nfrom pkg.torch_compile import CompileConfig\n\n\n"
        "def bench(model):\n    return parallelize_model(model, compile_config=CompileConfig(enable=True))\n")}
    assert _state(files) is None


def test_a_yaml_key_of_the_flags_name_leaves_a_name_only_holder_unknown():
    files = {**_COPIED_COMPILE, "configs/train.yaml": "train:\n  torch_compile:\n    enable: true\n"}
    assert _state(files) is None
