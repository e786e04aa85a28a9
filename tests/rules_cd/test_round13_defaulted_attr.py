"""Round 13 (held-out RLinf): a keyword that hands on an attribute of its object (``op_type=self.entropy_op_type``), set
only by config reads with a constant default (``cfg.algorithm.get("entropy_op_type", "flash_attn")``) of a key nothing sets,
stands for those defaults when a comparison guard is judged."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import callers_off
from checks.rules.d_compute import _LIGER_OP_ACTOR, _LIGER_OP_UTILS
from tests.rules_ghj.ghj_util import audit

FILES = {"pkg/utils.py": _LIGER_OP_UTILS, "pkg/actor.py": _LIGER_OP_ACTOR}


def _liger(files: dict[str, str]):
    f = build_facts((p, t.encode()) for p, t in files.items())
    [call] = [c for c in f.calls("liger_kernel.*") if c.short == "LigerCrossEntropyLoss"]
    return f, call


def test_the_liger_branch_is_off_when_the_attribute_defaults_to_another_op():
    f, call = _liger(FILES)
    assert [(s.path, s.line) for s in callers_off(f, call)] == [("pkg/actor.py", 7)]
    assert audit(FILES, "D5")[0].status.value == "unused"


def test_a_config_naming_the_key_leaves_it_to_the_config():
    files = {**FILES, "examples/grpo.yaml": "algorithm:\n  entropy_op_type: liger_kernel\n"}
    f, call = _liger(files)
    assert callers_off(f, call) == []
    assert audit(files, "D5")[0].status.value == "used"


def test_a_default_that_picks_the_branch_keeps_it():
    files = {**FILES, "pkg/actor.py": _LIGER_OP_ACTOR.replace('"flash_attn"', '"liger_kernel"')}
    f, call = _liger(files)
    assert callers_off(f, call) == []


def test_an_assignment_that_is_not_a_defaulted_read_leaves_it_unknown():
    files = {**FILES, "pkg/actor.py": _LIGER_OP_ACTOR.replace(
        "    def compute_logprobs", "    def set_op(self, op):\n        self.entropy_op_type = op\n\n    def compute_logprobs")}
    f, call = _liger(files)
    assert callers_off(f, call) == []
