"""C1's detail names no precision the run may not use (issue #9). Composer 0.32.1 was told "BF16 mixed precision"
although its Trainer defaults to ``amp_fp16`` on GPU: ``get_precision_context`` holds an FP16 autocast (with the
trainer's GradScaler) and a BF16 autocast, and the run's ``precision`` picks one."""

from __future__ import annotations

from checks.engine import audit_files

PRECISION = (
    "import contextlib\nfrom enum import Enum\n\nimport torch\n\n\n"
    "class Precision(str, Enum):\n    FP32 = 'fp32'\n    AMP_FP16 = 'amp_fp16'\n    AMP_BF16 = 'amp_bf16'\n\n\n"
    "@contextlib.contextmanager\ndef get_precision_context(precision):\n"
    "    if precision == Precision.FP32:\n        with torch.autocast('cuda', enabled=False):\n            yield\n"
    "    elif precision == Precision.AMP_FP16:\n        with torch.autocast('cuda', enabled=True):\n            yield\n"
    "    elif precision == Precision.AMP_BF16:\n        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=True):\n            yield\n"
)
TRAINER = (
    "from torch.cuda.amp import GradScaler\n\nfrom mylib.core.precision import Precision, get_precision_context\n\n\n"
    "class Trainer:\n    def __init__(self, model, precision=None):\n"
    "        self.precision = precision or Precision.AMP_FP16\n        self.scaler = GradScaler()\n\n"
    "    def fit(self, loader, optimizer):\n        for batch in loader:\n"
    "            with get_precision_context(self.precision):\n                loss = self.model(batch)\n"
    "            self.scaler.scale(loss).backward()\n            self.scaler.step(optimizer)\n"
)


def _c1(files: dict[str, str]):
    return next(r for r in audit_files((k, v.encode()) for k, v in files.items()).results if r.id == "C1")


def test_fp16_and_bf16_paths_are_not_called_bf16():
    r = _c1({"mylib/core/precision.py": PRECISION, "mylib/trainer/trainer.py": TRAINER})
    assert r.status.value == "used"
    assert "BF16 mixed precision" not in r.detail
    assert "FP16 path with a GradScaler and a BF16 path" in r.detail


def test_a_bf16_only_loop_is_still_bf16():
    bf16_only = PRECISION.replace("with torch.autocast('cuda', enabled=True)", "with torch.autocast('cuda', dtype=torch.bfloat16)")
    trainer = TRAINER.replace("self.scaler = GradScaler()", "self.scaler = None").replace(
        "            self.scaler.scale(loss).backward()\n            self.scaler.step(optimizer)\n", "            loss.backward()\n            optimizer.step()\n")
    r = _c1({"mylib/core/precision.py": bf16_only, "mylib/trainer/trainer.py": trainer.replace("from torch.cuda.amp import GradScaler\n\n", "")})
    assert r.detail == "BF16 mixed precision"


# InternVL: an FP16 loop with a GradScaler in its image-classification trainer, and 20+ chat-training launches that all
# pass ``--bf16 True``: the launches say which precision the runs use
_CHAT_TRAIN = (
    "from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\n"
    "def main():\n    (training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
    "    Trainer(model=build_model(), args=training_args, train_dataset=build_data()).train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_LAUNCH = "torchrun --nproc_per_node 8 internvl/train/internvl_chat_finetune.py --output_dir out {flag}\n"


def _internvl(flag: str) -> dict[str, str]:
    return {"mylib/core/precision.py": PRECISION, "mylib/trainer/trainer.py": TRAINER,
            "internvl/train/internvl_chat_finetune.py": _CHAT_TRAIN,
            "shell/stage1.sh": _LAUNCH.format(flag=flag), "shell/stage2.sh": _LAUNCH.format(flag=flag)}


def test_launches_that_all_ask_for_bf16_pick_bf16_and_the_fp16_loop_is_named():
    r = _c1(_internvl("--bf16 True"))
    assert r.status.value == "used"
    assert r.detail.startswith("BF16 mixed precision (every launch or recipe that sets a precision sets BF16; an FP16 loop with a "
                               "GradScaler also exists at mylib/trainer/trainer.py:"), r.detail


def test_control_a_launch_asking_for_fp16_keeps_the_choice_open():
    files = _internvl("--bf16 True")
    files["shell/stage2.sh"] = _LAUNCH.format(flag="--fp16 True")
    r = _c1(files)
    assert "FP16 path with a GradScaler and a BF16 path" in r.detail, r.detail
