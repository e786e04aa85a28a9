"""Round 17 (held-out trl 1.16.0): rules fixed after its first contact. Each rule test fails on the engine before the
fix; the controls pass on both."""

from __future__ import annotations

from pathlib import Path

from checks.engine import audit_path
from checks.rules.a_parallelism import accelerate_menu_lib
from tests.rules_ghj.ghj_util import audit, status

_LAUNCH_FSDP = "accelerate launch --config_file mylib/accelerate_configs/fsdp2.yaml train.py\n"
_LAUNCH_ZERO3 = "accelerate launch --config_file mylib/accelerate_configs/zero3.yaml train.py\n"


def test_fsdp_only_in_a_menu_of_accelerate_configs_and_a_wrap_following_the_launch_is_not_use():
    result, _ = audit(accelerate_menu_lib(), "A2")
    assert result.status.value == "unused"
    assert result.detail.startswith("FSDP only if a run picks it")
    assert ("mylib/accelerate_configs/fsdp2.yaml", 2) in {(e.path, e.line) for e in result.evidence}


def test_control_a_launch_naming_the_fsdp_config_of_the_menu_is_fsdp():
    assert status(accelerate_menu_lib(_LAUNCH_FSDP), "A2") == "used"


def test_control_an_unguarded_fsdp_wrap_is_still_fsdp():
    files = accelerate_menu_lib()
    files["mylib/trainer/dpo_trainer.py"] = files["mylib/trainer/dpo_trainer.py"].replace(
        "        if self.is_deepspeed_enabled:\n            self.ref_model = prepare_deepspeed(ref_model, self.accelerator)\n"
        "        elif self.is_fsdp_enabled:\n            self.ref_model", "        self.ref_model")
    assert status(files, "A2") == "used"


def test_control_a_guard_on_not_is_fsdp_enabled_does_not_follow_the_launch():
    files = accelerate_menu_lib()
    files["mylib/trainer/dpo_trainer.py"] = files["mylib/trainer/dpo_trainer.py"].replace(
        "elif self.is_fsdp_enabled:", "elif not self.is_fsdp_enabled:")
    assert status(files, "A2") == "used"


def test_zero_stage_only_in_a_menu_of_accelerate_configs_is_not_use():
    result, _ = audit(accelerate_menu_lib(), "A3")
    assert result.status.value == "unused"
    assert "no launch names" in result.detail


def test_control_a_launch_naming_the_zero3_config_of_the_menu_is_zero3():
    result, _ = audit(accelerate_menu_lib(_LAUNCH_ZERO3), "A3")
    assert result.status.value == "used"
    assert result.values["zero_stage"] == 3


def test_control_a_single_accelerate_config_is_still_the_run():
    files = {"acc.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"}
    assert status(files, "A3") == "used"


_BASE_CONFIG = (
    "from dataclasses import dataclass, field\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
    "class BaseConfig(TrainingArguments):\n    logging_steps: float = field(default=10)\n")
_EXPERIMENTAL_CONFIG = (
    "from dataclasses import dataclass, field\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
    "class AsyncGRPOConfig(TrainingArguments):\n    logging_steps: float = field(default=1)\n"
    "    lr_scheduler_type: str = field(default='constant')\n")


def _sideline_lib(tmp_path: Path, console_script: bool = True) -> Path:
    """A package whose console script runs its trainers, with an ``experimental/`` sub-package of extra recipes beside it."""
    files = {
        "mylib/__init__.py": "",
        "mylib/cli.py": "from mylib.scripts import sft\n\n\ndef main():\n    sft.main()\n",
        "mylib/scripts/__init__.py": "",
        "mylib/scripts/sft.py": ("from mylib.trainer.sft_trainer import SFTTrainer\nfrom mylib.trainer.base_config import BaseConfig\n\n\n"
                                 "def main():\n    SFTTrainer(model='Qwen/Qwen2.5-0.5B', args=BaseConfig('out')).train()\n"),
        "mylib/trainer/__init__.py": "",
        "mylib/trainer/base_config.py": _BASE_CONFIG,
        "mylib/trainer/sft_trainer.py": "from transformers import Trainer\n\n\nclass SFTTrainer(Trainer):\n    pass\n",
        "mylib/experimental/__init__.py": "",
        "mylib/experimental/async_grpo/__init__.py": "",
        "mylib/experimental/async_grpo/async_grpo_config.py": _EXPERIMENTAL_CONFIG,
        "mylib/experimental/async_grpo/grpo_trainer.py": (
            "from transformers import Trainer\nfrom .async_grpo_config import AsyncGRPOConfig\n\n\n"
            "class AsyncGRPOTrainer(Trainer):\n    pass\n"),
    }
    if console_script:
        files["pyproject.toml"] = '[project]\nname = "mylib"\n\n[project.scripts]\nmylib = "mylib.cli:main"\n'
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_an_experimental_sub_package_beside_a_console_script_run_is_not_the_run(tmp_path):
    a = audit_path(_sideline_lib(tmp_path))
    assert a.roles.role("mylib/experimental/async_grpo/grpo_trainer.py") == "other"
    assert a.roles.role("mylib/experimental/async_grpo/async_grpo_config.py") == "other"
    assert a.roles.role("mylib/trainer/base_config.py") == "training"
    i4 = next(r for r in a.results if r.id == "I4")
    assert i4.status.value == "used"  # logging_steps 10 of the run's config, not the experimental default 1
    g1 = next(r for r in a.results if r.id == "G1")
    assert g1.status.value != "unused"  # not the experimental 'constant' schedule


def test_control_an_experimental_module_the_run_imports_is_the_runs(tmp_path):
    root = _sideline_lib(tmp_path)
    (root / "mylib/trainer/sft_trainer.py").write_text(
        "from transformers import Trainer\nfrom mylib.experimental.async_grpo.async_grpo_config import AsyncGRPOConfig\n\n\n"
        "class SFTTrainer(Trainer):\n    pass\n")
    a = audit_path(root)
    assert a.roles.role("mylib/experimental/async_grpo/async_grpo_config.py") == "training"


def test_control_a_project_whose_only_trainers_are_experimental_keeps_them(tmp_path):
    root = _sideline_lib(tmp_path, console_script=False)
    for rel in ("mylib/cli.py", "mylib/scripts/sft.py", "mylib/trainer/sft_trainer.py"):
        (root / rel).unlink()
    a = audit_path(root)
    assert a.roles.role("mylib/experimental/async_grpo/grpo_trainer.py") == "training"


_LAUNCHER = (
    "from accelerate.commands.launch import launch_command, launch_command_parser\n\n\n"
    "def launch_training_script(script, launch_args, script_args, launch_command_fn=launch_command,\n"
    "                           launch_parser_fn=launch_command_parser):\n"
    "    launch_command_fn(launch_parser_fn().parse_args(launch_args + [script] + script_args))\n")
_MULTI_GPU = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n"


def test_a_cli_launching_through_accelerates_launch_command_is_accelerate_use():
    result, _ = audit({"mylib/cli/launcher.py": _LAUNCHER, "mylib/accelerate_configs/multi_gpu.yaml": _MULTI_GPU}, "B3")
    assert result.status.value == "used"
    assert ("mylib/cli/launcher.py", 4) in {(e.path, e.line) for e in result.evidence}


def test_control_accelerates_launch_command_called_directly_is_accelerate_use():
    files = {"mylib/cli.py": ("from accelerate.commands.launch import launch_command, launch_command_parser\n\n"
                              "launch_command(launch_command_parser().parse_args(['train.py']))\n")}
    assert status(files, "B3") == "used"


def test_control_a_shipped_accelerate_config_with_no_launch_stays_partial():
    assert status({"mylib/accelerate_configs/multi_gpu.yaml": _MULTI_GPU}, "B3") == "partial"


def test_a_packing_helper_called_only_under_a_switch_that_defaults_off_is_not_packing():
    from checks.rules.f_data import _PACK_HELPER

    result, _ = audit(_PACK_HELPER, "F7")
    assert result.status.value == "unused"
    assert "mylib/data_utils.py:6 is behind a switch that is off" in result.detail


def test_control_the_same_helper_with_packing_on_by_default_packs():
    from checks.rules.f_data import _PACK_HELPER

    files = {**_PACK_HELPER, "mylib/sft_config.py": _PACK_HELPER["mylib/sft_config.py"].replace("default=False", "default=True")}
    assert status(files, "F7") == "used"
