"""Step zero over Python config recipes (mmengine configs read by ``Config.fromfile``; xtuner's layout): the loader reason
cites a recipe of the majority, and per-image work that only a minority of recipes use is said to be weak."""

from __future__ import annotations

from checks.bottleneck import signals
from checks.engine import audit_files
from checks.rules.f_data import _MM_DATASETS, _mm_data_config


def _reasons(files: dict[str, str]) -> list[str]:
    return audit_files((p, t.encode()) for p, t in files.items()).project.bottleneck_reasons


#: a LLaVA config's model: a CLIP vision tower beside the LLM (xtuner/configs/llava/...)
VISION = ("from transformers import CLIPImageProcessor, CLIPVisionModel\n"
          "visual_encoder_name_or_path = 'openai/clip-vit-large-patch14-336'\n"
          "model = dict(type='LLaVAModel', freeze_visual_encoder=True,\n"
          "             visual_encoder=dict(type=CLIPVisionModel.from_pretrained, pretrained_model_name_or_path=visual_encoder_name_or_path))\n")


def _repo(kinds: dict[str, str]) -> dict[str, str]:
    return {**_MM_DATASETS, **{f"xtuner/configs/{name}.py": _mm_data_config(kind) + (VISION if kind == "llava" else "")
                               for name, kind in kinds.items()}}


TEXT = ("internlm2_7b_qlora_alpaca_e3", "qwen_7b_qlora_alpaca_e3", "llama2_7b_qlora_alpaca_e3", "baichuan2_13b_qlora_alpaca_e3")


def test_loader_reason_cites_a_config_recipe_and_images_of_a_minority_are_weak():
    reasons = _reasons(_repo({**{n: "hf" for n in TEXT}, "llava/llava_7b_pretrain": "llava"}))
    loader = next(r for r in reasons if "batches are loaded in the training process" in r)
    assert "xtuner/configs/" in loader and "llava" not in loader.split("(weak")[0]  # a text recipe of the majority
    images = next(r for r in reasons if "images are decoded" in r)
    assert "only 1 of the 5 recipes train on images" in images


def test_images_in_most_recipes_are_not_weakened():
    files = _repo({"internlm2_7b_qlora_alpaca_e3": "hf", **{f"llava/llava_{n}": "llava" for n in ("7b", "13b", "34b")}})
    a = audit_files((p, t.encode()) for p, t in files.items())
    images = next(s.en for s in signals(a.facts, a.project, a.results, a.roles.by_path) if "images are decoded" in s.en)
    assert "recipes train on images" not in images


def test_config_recipes_and_the_modules_they_import_are_on_the_training_path():
    files = _repo({**{n: "hf" for n in TEXT}, "llava/llava_7b": "llava"})
    roles = audit_files((p, t.encode()) for p, t in files.items()).roles.by_path
    assert all(roles[f"xtuner/configs/{n}.py"] == "training" for n in TEXT)
    assert roles["xtuner/dataset/llava.py"] == roles["xtuner/dataset/huggingface.py"] == "training"
    # without a config loader, a folder of Python modules named configs is code like any other
    plain = {p: t for p, t in files.items() if p != "xtuner/tools/train.py"}
    plain["xtuner/tools/train.py"] = "import json\n\ndef main(args):\n    cfg = json.load(open(args.config))\n"
    roles = audit_files((p, t.encode()) for p, t in plain.items()).roles.by_path
    assert roles["xtuner/configs/internlm2_7b_qlora_alpaca_e3.py"] != "training"
