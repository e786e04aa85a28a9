"""Round 30 (issue #9), G rules on shapes read in public repositories: G4 on a project whose LoRA is its own model
converter listed per recipe in a Python config registry (torchtitan: ``LoRAConverter.Config`` only in
``llama3_debugmodel_float8_emulate_lora``, 1 of 109 recipes), and G2 on a launch that does not fix the GPU count."""

from __future__ import annotations

from checks.rules.g_strategy import _lora_registry
from tests.rules_ghj.ghj_util import audit


def test_converter_listed_by_a_debug_recipe_is_named_with_the_count():
    r, _ = audit(_lora_registry(("llama3_debugmodel_lora",)), "G4")
    assert r.status.value == "unused"
    assert r.detail == ("full-parameter training unless a recipe lists the project's LoRA converter: listed in 1 of 3 "
                        "config-registry recipes (llama3_debugmodel_lora)"), r.detail
    assert [(e.path, e.line) for e in r.evidence] == [("torchtitan/models/llama3/config_registry.py", 21)]


def test_control_converter_listed_by_most_recipes_is_lora():
    r, _ = audit(_lora_registry(("llama3_8b", "llama3_70b")), "G4")
    assert r.status.value == "used" and r.values["finetuning"] == "lora"


def test_g2_batch_without_a_gpu_count_is_per_gpu():
    """LLaVA's ``deepspeed llava/train/train_mem.py --per_device_train_batch_size 16`` runs on every GPU of the node:
    16 is one GPU's share, not the global batch."""
    files = {"scripts/finetune.sh": "deepspeed train.py --per_device_train_batch_size 16 --gradient_accumulation_steps 1 --bf16 True\n",
             "train.py": "import transformers\ntrainer = transformers.Trainer(model=model, args=args)\ntrainer.train()\n"}
    r, _ = audit(files, "G2")
    assert r.detail == ("no LAMB/LARS optimizer (a batch of 16 sequences per GPU per optimizer step; the launch does not "
                        "fix the GPU count)"), r.detail
    files["scripts/finetune.sh"] = "deepspeed --num_gpus 8 " + files["scripts/finetune.sh"].removeprefix("deepspeed ")
    r, _ = audit(files, "G2")
    assert r.detail == "no LAMB/LARS optimizer (estimated global batch 128)", r.detail


def test_g1_names_the_decay_a_setting_turns_on_not_another_scripts_constant():
    """TinyLlama: ``decay_lr = True`` and nanoGPT's cosine ``get_lr`` in the pre-training script; its SFT script's
    arguments default ``lr_scheduler_type`` to "constant". The schedule is warmup + cosine, not "warmup + constant"."""
    files = {
        "pretrain/tinyllama.py": (
            "import math\n\nlearning_rate = 4e-4\nwarmup_steps = 2000\ndecay_lr = True\nmin_lr = 4e-5\nmax_iters = 100000\n\n\n"
            "def get_lr(it):\n    if it < warmup_steps:\n        return learning_rate * it / warmup_steps\n"
            "    decay_ratio = (it - warmup_steps) / (max_iters - warmup_steps)\n"
            "    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))\n    return min_lr + coeff * (learning_rate - min_lr)\n\n\n"
            "def train(fabric, model, optimizer, loader):\n    for it, batch in enumerate(loader):\n"
            "        lr = get_lr(it) if decay_lr else learning_rate\n        for g in optimizer.param_groups:\n            g['lr'] = lr\n"
            "        loss = model(batch)\n        fabric.backward(loss)\n        optimizer.step()\n"),
        "sft/finetune.py": (
            "from dataclasses import dataclass, field\n\n\n@dataclass\nclass TrainingArguments:\n"
            "    lr_scheduler_type: str = field(default='constant')\n    learning_rate: float = 2e-5\n"),
    }
    r, _ = audit(files, "G1")
    assert r.status.value == "used" and r.detail == "warmup + cosine schedule", r.detail


def test_g5_a_freeze_in_a_branch_the_settings_switch_off_is_not_layer_freezing():
    """nanoVLM: ``else: p.requires_grad = False`` of ``if train_cfg.lr_vision_backbone > 0:``, the rate 5e-5 by default
    (``--lr_vision_backbone`` defaults to None and is copied onto the config only when given)."""
    from checks.rules.h_multimodal import _nanovlm

    r, _ = audit(_nanovlm(5e-5), "G5")
    assert r.status.value == "unused", r.detail
    r, _ = audit(_nanovlm(0), "G5")
    assert r.status.value == "used", r.detail


def test_i_guard_reads_the_interval_behind_a_spelled_out_accumulation_test():
    """litgpt/oumi: an interval flag inside a compound test is spelled out by the extractor (``not (iter_num %
    accum_iters != 0) and step_count % save_interval == 0``); the accumulation modulus before the save interval's is
    a once-per-optimizer-step test, not the interval."""
    from checks.engine import build_facts
    from checks.rules.i_infra import _guard

    f = build_facts([("train.py", b"save_interval = 1000\n")])
    assert _guard(f, "not (iter_num % train.gradient_accumulation_iters != 0) and state['step_count'] % save_interval == 0",
                  "train.py") == (True, 1000.0)
    assert _guard(f, "not (iter_num % train.gradient_accumulation_iters != 0)", "train.py") == (False, None)
