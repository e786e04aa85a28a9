"""Round 9 (held-out unsloth): LoRA machinery and activation toggles are not layer freezing (G5)."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_TRAIN = ("from transformers import AutoModelForCausalLM\nfrom peft import LoraConfig\nfrom mylib.models.gemma import post_patch\n"
          "model = post_patch(AutoModelForCausalLM.from_pretrained('google/gemma-2b'), LoraConfig(r=16))\n")


def _g5(body: str) -> tuple[str, str]:
    result, _ = audit({"mylib/models/gemma.py": body, "train.py": _TRAIN}, "G5")
    return result.status.value, result.detail


def test_freeze_all_but_lora_by_name_test_is_the_adapter_base_freeze() -> None:
    body = ("def post_patch(model, cfg):\n    for name, param in model.named_parameters():\n"
            "        if '.lora_A.' in name or '.lora_B.' in name:\n            param.requires_grad_(True)\n"
            "        else:\n            param.requires_grad_(False)\n    return model\n")
    assert _g5(body)[0] == "unused"


def test_a_name_test_on_real_layers_is_freezing() -> None:
    body = ("def post_patch(model, cfg):\n    for name, param in model.named_parameters():\n"
            "        if 'embed_tokens' in name:\n            param.requires_grad_(False)\n    return model\n")
    assert _g5(body)[0] == "used"


def test_an_activation_toggled_off_and_on_is_not_freezing() -> None:
    body = ("def post_patch(model, cfg):\n    return model\n\n"
            "def forward(self, inputs_embeds):\n    was = inputs_embeds.requires_grad\n"
            "    if was:\n        inputs_embeds.requires_grad_(False)\n    inputs_embeds *= self.normalizer\n"
            "    if was:\n        inputs_embeds.requires_grad_(True)\n    return inputs_embeds\n")
    assert _g5(body)[0] == "unused"


def test_a_module_frozen_and_never_re_enabled_is_freezing() -> None:
    body = "def post_patch(model, cfg):\n    model.lm_head.requires_grad_(False)\n    model.model.norm.requires_grad_(True)\n    return model\n"
    assert _g5(body)[0] == "used"


def test_kbit_preparation_keywords_are_the_qlora_base_freeze() -> None:
    body = ("from mylib_zoo.training_utils import prepare_model_for_training\n\n"
            "def prepare_model_for_kbit_training(model):\n"
            "    return prepare_model_for_training(model, train_embedding=False, train_lm_head=False)\n\n"
            "def post_patch(model, cfg):\n    return prepare_model_for_kbit_training(model)\n")
    assert _g5(body)[0] == "unused"
