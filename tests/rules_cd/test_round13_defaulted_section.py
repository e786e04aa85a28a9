"""Round 13 (held-out RLinf): a section key that the config validation fills in with a default
(``cfg.fsdp_config.cpu_offload = cfg.fsdp_config.get("cpu_offload", False)``) is off when nothing sets it, so a policy built in
a conditional expression on it is not offload."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import defaulted_section_state, guard_off
from checks.rules.c_memory import _DEFAULTED_OFFLOAD
from tests.rules_ghj.ghj_util import audit


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def _policy(files: dict[str, str]):
    f = _facts(files)
    [call] = f.calls("CPUOffloadPolicy")
    return f, call


def test_the_validated_default_switches_the_ternary_branch_off():
    f, call = _policy(_DEFAULTED_OFFLOAD)
    assert call.guard == "self.cfg.fsdp_config.cpu_offload"
    assert [(s.path, s.line) for s in guard_off(f, call)] == [("pkg/config.py", 7)]
    assert audit(_DEFAULTED_OFFLOAD, "C4")[0].status.value == "unused"


def test_a_recipe_setting_the_key_on_leaves_it_unknown():
    files = {**_DEFAULTED_OFFLOAD, "examples/run.yaml": "actor:\n  fsdp_config:\n    cpu_offload: true\n"}
    f, call = _policy(files)
    assert defaulted_section_state(f, "fsdp_config", "cpu_offload") == (None, [])
    assert guard_off(f, call) == []
    assert audit(files, "C4")[0].status.value == "used"


def test_a_default_of_true_is_on():
    files = {**_DEFAULTED_OFFLOAD, "pkg/config.py": _DEFAULTED_OFFLOAD["pkg/config.py"].replace(
        '"cpu_offload", False', '"cpu_offload", True')}
    f, call = _policy(files)
    assert defaulted_section_state(f, "fsdp_config", "cpu_offload")[0] is True
    assert guard_off(f, call) == []


def test_another_assignment_of_the_key_leaves_it_unknown():
    files = {**_DEFAULTED_OFFLOAD, "pkg/launch.py": (
        "def enable_offload(cfg):\n    cfg.fsdp_config.cpu_offload = True\n")}
    f, call = _policy(files)
    assert defaulted_section_state(f, "fsdp_config", "cpu_offload") == (None, [])
    assert guard_off(f, call) == []


def test_a_default_filled_only_under_a_branch_is_not_the_run_s():
    files = {**_DEFAULTED_OFFLOAD, "pkg/config.py": _DEFAULTED_OFFLOAD["pkg/config.py"].replace(
        "        cfg.fsdp_config.cpu_offload = ",
        "        if cfg.get(\"small_gpu\"):\n            cfg.fsdp_config.cpu_offload = ")}
    f, _ = _policy(files)
    assert defaulted_section_state(f, "fsdp_config", "cpu_offload") == (None, [])
