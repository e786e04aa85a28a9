"""Round 12 (held-out VeOmni): a local switch taken out of **kwargs (``x = kwargs.pop("key", False)``) is the keyword as
the project's callers pass it, each value read through its typed config section."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import guard_off
from checks.rules.c_memory import _POPPED_OFFLOAD
from tests.rules_ghj.ghj_util import audit


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def _policy_call(files: dict[str, str]):
    f = _facts(files)
    [call] = f.calls("CPUOffloadPolicy")
    return f, call


def test_the_offload_policy_behind_a_popped_keyword_the_caller_fills_off_is_off():
    f, call = _policy_call(_POPPED_OFFLOAD)
    assert [(s.path, s.line) for s in guard_off(f, call)] == [("pkg/arguments.py", 6)]
    assert audit(_POPPED_OFFLOAD, "C4")[0].status.value == "unused"


def test_the_section_default_on_makes_it_offload():
    files = {**_POPPED_OFFLOAD, "pkg/arguments.py": _POPPED_OFFLOAD["pkg/arguments.py"].replace(
        "offload: bool = field(default=False)", "offload: bool = field(default=True)")}
    f, call = _policy_call(files)
    assert guard_off(f, call) == []
    assert audit(files, "C4")[0].status.value == "used"


def test_a_caller_passing_true_turns_it_on():
    files = {**_POPPED_OFFLOAD, "pkg/other.py": (
        "from pkg.parallelize import parallelize_model_fsdp2\n\n\ndef build(model):\n"
        "    return parallelize_model_fsdp2(model, enable_fsdp_offload=True)\n")}
    f, call = _policy_call(files)
    assert guard_off(f, call) == []


def test_no_caller_passing_it_leaves_the_pop_default():
    files = {k: v for k, v in _POPPED_OFFLOAD.items() if k != "pkg/trainer.py"}
    f, call = _policy_call(files)
    assert [(x.path, x.line) for x in guard_off(f, call)] == [("pkg/parallelize.py", 6)]
