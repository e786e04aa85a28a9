"""Round 15 (held-out medusa-llm 0.1): rules fixed after its first contact. Each rule test fails on the engine before the fix;
the controls pass on both."""

from __future__ import annotations

from checks.rules.j_inference import _MEDUSA_FILES
from tests.rules_ghj.ghj_util import audit, status


def test_a_models_own_generate_method_in_a_chat_cli_is_inference():
    result, project = audit(_MEDUSA_FILES, "J7")
    assert project.does_inference
    assert result.status.value == "used"


def test_control_the_method_called_in_training_code_is_not_inference():
    files = {k: v for k, v in _MEDUSA_FILES.items() if k != "medusa/inference/cli.py"}
    # the same call from an evaluation callback of the training package: not an inference workload
    files["medusa/train/eval_callback.py"] = (
        "def on_evaluate(model, input_ids):\n    return list(model.medusa_generate(input_ids, max_steps=16))\n")
    _, project = audit(files, "J7")
    assert not project.does_inference


def test_control_step_builders_named_generate_something_are_not_the_loop():
    files = {"medusa/inference/cli.py": "from medusa.model.utils import generate_candidates\n"
                                        "c = generate_candidates(logits, topk)\nb = utils.generate_medusa_buffers(choices)\n"}
    assert status(files, "J1") == "n/a"

