"""Round 55 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


_LLAVA_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


# --- GeoChat: ``--include localhost:gpu_ids``, a placeholder for the GPU list -------------------------------------------------

def test_a_placeholder_gpu_list_is_no_single_gpu_launch() -> None:
    files = {"geochat/train/train_mem.py": _LLAVA_TRAIN,
             "scripts/finetune_lora.sh": ("deepspeed --master_port=$((RANDOM + 10000)) --include localhost:gpu_ids "
                                          "geochat/train/train_mem.py \\\n    --deepspeed ./scripts/zero2.json \\\n"
                                          "    --bf16 True --output_dir out\n"),
             "scripts/zero2.json": '{\n  "zero_optimization": {"stage": 2, "overlap_comm": true}\n}\n'}
    a1 = _check(_audit(files), "A1")
    assert "--num_gpus 1" not in a1.detail and a1.status.value == "used", a1.detail
    # control: a real one-GPU list is one process
    files["scripts/finetune_lora.sh"] = files["scripts/finetune_lora.sh"].replace("localhost:gpu_ids", "localhost:0")
    a1 = _check(_audit(files), "A1")
    assert a1.status.value == "partial" and "--num_gpus 1" in a1.detail, a1.detail


# --- GeoChat: ``--save_strategy "epoch"`` a line above ``--save_steps 7000`` -------------------------------------------------

def test_save_steps_under_an_epoch_strategy_cite_the_strategy() -> None:
    launch = ("deepspeed train.py \\\n    --bf16 True \\\n    --save_strategy \"epoch\" \\\n    --save_steps 7000 \\\n"
              "    --output_dir out\n")
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch}), "I3")
    assert i3.status.value == "used" and "save_strategy=epoch" in i3.detail, i3.detail
    assert [(e.path, e.line) for e in i3.evidence] == [("scripts/run.sh", 3)], i3.evidence
    # control: a step strategy keeps the step count
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch.replace('"epoch"', '"steps"')}), "I3")
    assert "save_steps=7000" in i3.detail, i3.detail
    # a "no" strategy saves nothing on a step interval
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch.replace('"epoch"', '"no"')}), "I3")
    assert "no periodic checkpoint" in i3.detail and "save_strategy" in i3.detail, i3.detail


# --- GOT-OCR2.0: the README runs ``deepspeed /GOT-OCR-2.0-master/GOT/train/train_GOT.py``, the checkout at / ----------------

_GOT_README = ("# GOT\n\n## Train\n\n```Shell\ndeepspeed   /GOT-master/GOT/train/train_GOT.py \\\n"
               " --deepspeed /GOT-master/zero_config/zero2.json \\\n --gradient_checkpointing True \\\n"
               " --gradient_accumulation_steps 2 \\\n --dataloader_num_workers 8 \\\n --model_max_length 8192 \\\n"
               " --output_dir /your/output/path\n```\n")


def test_a_documented_command_rooted_at_the_checkout_is_the_run() -> None:
    files = {"README.md": _GOT_README, "GOT-master/GOT/train/train_GOT.py": _LLAVA_TRAIN,
             "GOT-master/GOT/train/train_lora.py": _LLAVA_TRAIN.replace("train()", "train_lora()"),
             "GOT-master/zero_config/zero2.json": '{\n  "zero_optimization": {"stage": 2}\n}\n'}
    a = _audit(files)
    assert a.roles.entry_points == ["GOT-master/GOT/train/train_GOT.py"], a.roles.entry_points
    assert _check(a, "C3").status.value == "used" and _check(a, "C5").status.value == "used"
    assert a.project.max_seq_len == 8192
    # control: a path that is not the repository's (``/workspace/train.py``) stays unresolved
    files["README.md"] = _GOT_README.replace("/GOT-master/GOT/train/train_GOT.py", "/workspace/GOT/train/train_GOT.py")
    a = _audit(files)
    assert _check(a, "C3").status.value == "unused", _check(a, "C3").detail
