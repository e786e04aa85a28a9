"""C2's "FP8 is explicitly disabled" needs a setting of the run that turns FP8 off; a layer's local
``te.fp8_autocast(enabled=False)`` (megatron-bridge's LoRA layer) only turns it off in that code."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_TRAIN = (
    "from transformers import Trainer, TrainingArguments\n\n"
    "args = TrainingArguments(output_dir='out', bf16=True)\nTrainer(model=model, args=args).train()\n"
)
_LORA_LAYER = (
    "import transformer_engine.pytorch as te\nimport torch\n\n\nclass LoRALinear(torch.nn.Module):\n"
    "    def forward(self, x):\n        with te.fp8_autocast(enabled=False):\n            return self.adapter(x)\n"
)


def test_a_local_autocast_off_is_not_an_explicit_choice():
    r, _ = audit({"train.py": _TRAIN, "pkg/peft/lora_layers.py": _LORA_LAYER}, "C2")
    assert r.status.value == "unused"
    assert r.detail == "no FP8 training setting found (FP8 is turned off locally in the calls cited)"
    assert [(e.path, e.line) for e in r.evidence] == [("pkg/peft/lora_layers.py", 7)]


def test_a_config_that_turns_fp8_off_is_explicit():
    r, _ = audit({"train.py": _TRAIN, "pkg/peft/lora_layers.py": _LORA_LAYER,
                 "configs/train.yaml": "model: llama\nenable_fp8: false\n"}, "C2")
    assert r.status.value == "unused"
    assert r.detail == "FP8 is explicitly disabled"
