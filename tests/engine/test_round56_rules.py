"""Round 56 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- axlearn: ``trainer_state._replace(model={})``, a model option whose value is a mapping -------------------------------

def test_a_mapping_as_a_model_option_is_no_model_name() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "common/state_builder.py": ("def empty(state):\n    # Empty model.\n"
                                         "    return state._replace(learner=dict(ema=1), model={})\n")}
    result = _audit(files)  # the audit used to stop here: TypeError: unhashable type: 'dict'
    assert _check(result, "C1").status.value in ("used", "partial", "unused"), _check(result, "C1")
    # control: a named model beside it is still the run's
    files["common/state_builder.py"] += "\n\nMODEL = dict(model_name_or_path='Qwen/Qwen2.5-7B')\n"
    assert "Qwen/Qwen2.5-7B" in _audit(files).project.model_names
