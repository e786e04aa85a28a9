"""G4 names QLoRA only when the project's runs choose it: LLaMA-Factory sets ``quantization_bit: 4`` in 5 of its 36
LoRA recipes, so its runs are LoRA on a 16-bit base, with QLoRA as an option a few recipes show (issue #9: recipes
that differ are judged by the majority)."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_RECIPE = ("model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
           "lora_rank: 8\nlora_target: all\n{quant}dataset: identity,alpaca_en_demo\ncutoff_len: 2048\n")


def _recipes(n_lora: int, n_qlora: int) -> dict[str, str]:
    files = {f"examples/train_lora/recipe_{i}.yaml": _RECIPE.format(quant="") for i in range(n_lora)}
    files |= {f"examples/train_qlora/recipe_{i}.yaml": _RECIPE.format(quant="quantization_bit: 4\n") for i in range(n_qlora)}
    return files


def test_qlora_in_a_minority_of_lora_recipes_is_reported_as_lora_with_the_count():
    r, _ = audit(_recipes(5, 2), "G4")
    assert r.status.value == "used"
    assert r.detail == ("LoRA/PEFT fine-tuning; QLoRA (a 4-bit base) only in 2 of 7 LoRA recipes "
                        "(examples/train_qlora/recipe_0.yaml, examples/train_qlora/recipe_1.yaml)"), r.detail
    assert r.values["finetuning"] == "lora"


def test_control_qlora_in_most_recipes_is_qlora():
    r, _ = audit(_recipes(1, 3), "G4")
    assert r.detail == "QLoRA fine-tuning" and r.values["finetuning"] == "qlora"
