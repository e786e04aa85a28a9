"""Round 16 (held-out oat-llm 0.2.4): rules fixed after its first contact. Each rule test fails on the engine before the
fix; the controls pass on both."""

from __future__ import annotations

from checks.rules.e_comm import _DS_CONFIG_BUILDER
from tests.rules_ghj.ghj_util import audit, status


def test_overlap_comm_under_a_builder_parameter_left_false_is_not_use():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", "")}
    result, _ = audit(files, "E2")
    assert result.status.value == "unused"
    assert not any(e.line == 11 for e in result.evidence)  # not the ``zero_opt_dict["overlap_comm"] = True`` line


def test_control_the_builder_called_with_overlap_comm_true_overlaps():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", ", overlap_comm=True")}
    assert status(files, "E2") == "used"


def test_control_a_zero3_builder_with_overlap_comm_off_keeps_deepspeeds_stage3_default():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", "").replace("stage=2", "stage=3")}
    files["myrl/config.yaml"] = "zero_stage: 3\n"
    assert status(files, "E2") == "used"
