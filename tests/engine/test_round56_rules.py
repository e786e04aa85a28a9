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


# --- Vary: a README command spelt ``Vary/train/...`` for ``Vary-master/vary/train/...``, its flags one per line ------------

_VARY_README = ("# Vary\n\n```Shell\ndeepspeed   Vary/train/train_qwen_vary.py  --deepspeed /Vary/zero_config/zero2.json\n"
                "            --model_name_or_path /Qwen-7B/path/\n            --bf16 True\n"
                "            --gradient_checkpointing True\n            --dataloader_num_workers 4\n"
                "            --model_max_length 4096\n            --output_dir /path/to/save/\n```\n")
_VARY_TRAIN = _LLAVA_TRAIN.replace(
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n",
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    model.vision_tower = transformers.CLIPVisionModel.from_pretrained('/cache/vit-large-patch14/')\n")


def test_a_readme_command_spelt_with_other_capitals_runs_the_repositorys_script() -> None:
    files = {"README.md": _VARY_README, "Vary-master/vary/train/train_qwen_vary.py": _VARY_TRAIN,
             "Vary-master/zero_config/zero2.json": '{"zero_optimization": {"stage": 2}}\n'}
    result = _audit(files)
    assert "Vary-master/vary/train/train_qwen_vary.py" in result.roles.entry_points, result.roles.entry_points
    c3 = _check(result, "C3")
    assert c3.status.value == "used", c3.detail
    assert ("README.md", 7) in [(e.path, e.line) for e in c3.evidence], c3.evidence
    assert result.project.max_seq_len == 4096, result.project.max_seq_len
    # control: a README that names a script the repository does not have runs nothing of it
    files["README.md"] = _VARY_README.replace("Vary/train/train_qwen_vary.py", "Vary/train/train_other.py")
    assert _check(_audit(files), "C3").status.value != "used"


def test_flags_on_the_lines_below_a_readme_command_are_its_flags() -> None:
    files = {"README.md": _VARY_README.replace("Vary/train/", "vary/train/"), "vary/train/train_qwen_vary.py": _VARY_TRAIN}
    f1 = _check(_audit(files), "F1")
    assert f1.status.value == "used" and ("README.md", 8) in [(e.path, e.line) for e in f1.evidence], (f1.detail, f1.evidence)
    # control: a blank line ends the command (the next block of flags is prose, not this command's)
    files["README.md"] = files["README.md"].replace("            --bf16 True\n", "\n            --bf16 True\n")
    assert _check(_audit(files), "F1").status.value != "used"


def test_a_placeholder_folder_after_the_model_name_keeps_the_model_and_a_vision_tower_names_none() -> None:
    files = {"README.md": _VARY_README.replace("Vary/train/", "vary/train/"), "vary/train/train_qwen_vary.py": _VARY_TRAIN}
    project = _audit(files).project
    assert project.model_names[:1] == ["Qwen-7B"] and project.estimated_params == "7B", (project.model_names, project.estimated_params)
    assert not any("vit-large" in n for n in project.model_names), project.model_names
