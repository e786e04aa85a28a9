"""Round 14 (verifiers, held-out): rules written after its first contact, each shown failing on the previous rule."""

from __future__ import annotations

from checks.base import all_checks
from checks.engine import AuditOptions, parse_files, run_checks, split_facts
from checks.model import Status
from checks.project import detect_project

CHECKS = {c.id: c for c in all_checks()}


def _run(check_id: str, files: dict[str, str]):
    facts, _, roles = split_facts(parse_files((p, t.encode()) for p, t in files.items()))
    project = detect_project(facts, training=[p for p, r in roles.by_path.items() if r == "training"])
    [result], _ = run_checks(facts, project, AuditOptions(), [CHECKS[check_id]])
    return result


# -- G4: an exported LoRA helper the package never calls --------------------------------------------------------------

_LIB = {
    "vlib/__init__.py": "from .trainers import GRPOConfig, GRPOTrainer, grpo_defaults, lora_defaults\n",
    "vlib/trainers/__init__.py": (
        "from peft import LoraConfig\n\nfrom .grpo_config import GRPOConfig\nfrom .grpo_trainer import GRPOTrainer\n\n\n"
        "def grpo_defaults(run_name: str) -> GRPOConfig:\n    return GRPOConfig(output_dir=f'outputs/{run_name}', bf16=True)\n\n\n"
        "def lora_defaults(r=8, alpha=16) -> LoraConfig:\n"
        "    return LoraConfig(r=r, lora_alpha=alpha, target_modules=['q_proj', 'v_proj'], task_type='CAUSAL_LM')\n"),
    "vlib/trainers/grpo_config.py": (
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n\n\n"
        "@dataclass\nclass GRPOConfig(TrainingArguments):\n    num_generations: int = 8\n"),
    "vlib/trainers/grpo_trainer.py": (
        "from peft import PeftConfig, get_peft_model\nfrom transformers import Trainer\n\n\nclass GRPOTrainer(Trainer):\n"
        "    def __init__(self, model, env, args, processing_class, peft_config: PeftConfig | None = None, **kwargs):\n"
        "        if peft_config is not None:\n            model = get_peft_model(model, peft_config)\n"
        "        super().__init__(model=model, args=args, processing_class=processing_class)\n"),
    "vlib/utils/model_utils.py": (
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef get_model(name):\n"
        "    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)\n"),
}


def test_g4_uncalled_lora_helper_is_not_the_run():
    r = _run("G4", _LIB)
    assert r.status is Status.UNUSED, r.detail
    assert not any(e.path == "vlib/trainers/__init__.py" for e in r.evidence)


def test_g4_uncalled_lora_helper_fails_on_the_previous_rule(monkeypatch):
    from checks.rules import g_strategy

    monkeypatch.setattr(g_strategy, "_uncalled_config_helper", lambda f, c: False)
    assert _run("G4", _LIB).status is Status.USED  # the previous rule took the helper's LoraConfig as the run's adapter


def test_g4_helper_called_by_a_shipped_script_is_lora():
    files = {**_LIB, "examples/train.py": (
        "from transformers import AutoModelForCausalLM\nimport vlib\n\n"
        "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-1.5B-Instruct')\n"
        "trainer = vlib.GRPOTrainer(model=model, env=None, args=vlib.grpo_defaults('x'), processing_class=None,\n"
        "                           peft_config=vlib.lora_defaults())\ntrainer.train()\n")}
    assert _run("G4", files).status is Status.USED


# -- F1/F3 and step zero: a Trainer whose own input hook builds each batch on the device ------------------------------

def _hook_fed() -> dict[str, str]:
    from checks.rules.f_data import _HOOK_FED_TRAINER

    return {**_HOOK_FED_TRAINER, "mylib/utils/model_utils.py": _LIB["vlib/utils/model_utils.py"]}


def test_f3_hook_built_batches_are_not_pinned_by_the_prompt_loader():
    r = _run("F3", _hook_fed())
    assert r.status is Status.UNUSED, r.detail
    assert "input hook" in r.detail and all(e.path == "mylib/trainers/grpo_trainer.py" for e in r.evidence)


def test_f3_hook_built_batches_fail_on_the_previous_rule(monkeypatch):
    from checks.rules import f_data

    monkeypatch.setattr(f_data, "hook_built_batches", lambda f, path: [])
    monkeypatch.setattr(f_data, "hook_fed_loaders", lambda f: [])
    # the previous rule read HF's dataloader_pin_memory default (True) in the prompt loader as pinned training batches
    assert _run("F3", _hook_fed()).status is Status.USED


def test_f3_a_hook_that_moves_the_loader_batch_keeps_the_hf_pin_default():
    from checks.rules.f_data import _LOADER_FED_TRAINER

    assert _run("F3", {**_LOADER_FED_TRAINER, "mylib/utils/model_utils.py": _LIB["vlib/utils/model_utils.py"]}).status is Status.USED


def test_f1_names_the_hook_instead_of_a_loader_setting():
    r = _run("F1", _hook_fed())
    assert r.status is Status.UNUSED and "input hook" in r.detail, r.detail


def test_step_zero_gives_no_loader_reason_for_hook_built_batches(monkeypatch):
    from checks import bottleneck
    from checks.engine import audit_files

    files = _hook_fed()
    reasons = audit_files((k, v.encode()) for k, v in files.items()).project.bottleneck_reasons
    assert not any("DataLoader worker" in r or "num_workers = 0" in r for r in reasons), reasons
    monkeypatch.setattr(bottleneck, "hook_fed_loaders", lambda f: [])
    from checks.rules import f_data

    monkeypatch.setattr(f_data, "hook_built_batches", lambda f, path: [])
    monkeypatch.setattr(f_data, "hook_fed_loaders", lambda f: [])
    before = audit_files((k, v.encode()) for k, v in files.items()).project.bottleneck_reasons
    assert any("DataLoader worker" in r or "num_workers = 0" in r for r in before), before  # the previous rule's reason


# -- A1/A3: a launch the README shows but the package does not ship -----------------------------------------------------

_README = (
    "# mylib\n\n## Training\n\n```bash\n# inference (shell 0)\nCUDA_VISIBLE_DEVICES=0,1 vf-vllm --model org/model-1.7B\n\n"
    "# training (shell 1)\nCUDA_VISIBLE_DEVICES=2,3 accelerate launch --num-processes 2 \\\n"
    "    --config-file configs/zero3.yaml examples/train.py --size 1.7B\n```\n"
)


def test_a1_takes_the_documented_multi_process_launch_a3_names_its_zero_config_without_advice():
    from checks.engine import audit_files

    files = {**_LIB, "README.md": _README}
    a1, a3 = _run("A1", files), _run("A3", files)
    # the package ships no launch: the README's training command is the run, and two processes are data parallel
    assert a1.status is Status.USED, a1.detail
    assert "accelerate launch --num-processes 2" in a1.detail and "README.md:" in a1.detail, a1.detail
    assert [(e.path, e.line) for e in a1.evidence] == [("README.md", 10)]  # the command's line
    assert a1.values["nproc_per_node"] == 2
    # the ZeRO config the command names is not shipped: still not seen, named, and no advice to add a ZeRO config
    assert a3.status is Status.UNUSED and "configs/zero3.yaml" in a3.detail and "ZeRO stage 3" in a3.detail, a3.detail
    recs = {r.id for r in audit_files((k, v.encode()) for k, v in files.items()).results if r.priority}
    assert "A3" not in recs and "A1" not in recs


def test_a1_a3_keep_the_plain_detail_without_a_documented_launch():
    files = {**_LIB, "README.md": _README.replace("--num-processes 2", "--num-processes 1").replace("zero3", "ddp")}
    assert _run("A1", files).detail == "no multi-GPU launch or DDP wrapper found"
    assert _run("A3", files).detail == "no ZeRO configuration found"
