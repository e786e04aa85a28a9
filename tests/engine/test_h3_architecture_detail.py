"""H3 says only what it saw: 'every visual token reaches the LLM' was claimed of Flamingo's Perceiver resampler (64
latents per image) and BLIP-2's Q-Former (32 queries), and of every HF MLLM whose model merges patches inside
transformers. Each test fails on the rule before this change; the control passes on both."""

from __future__ import annotations

from checks.model import Status
from checks.rules.h_multimodal import H3VisualTokenPruning
from reports.advice import build_plan

from .claims import audit as _audit

_FLAMINGO = next(e for e in H3VisualTokenPruning.examples if "Perceiver" in e.name).files

_LLAVA = {
    "llava/train/train.py": (
        "from transformers import AutoModelForCausalLM, CLIPVisionModel\n"
        "vision_tower = CLIPVisionModel.from_pretrained('openai/clip-vit-large-patch14-336')\n"
        "model = AutoModelForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5')\n"
        "for batch in loader:\n    model(**batch).loss.backward()\n"
    ),
    "scripts/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
                           "--mm_projector_type mlp2x_gelu --image_aspect_ratio pad\n",
}

_QWEN_MERGER = {
    "mymllm/vision.py": (
        "import torch\nfrom torch import nn\n\n\nclass PatchMerger(nn.Module):\n"
        "    def __init__(self, dim, context_dim, spatial_merge_size=2):\n        super().__init__()\n"
        "        self.hidden_size = context_dim * spatial_merge_size**2\n        self.mlp = nn.Linear(self.hidden_size, dim)\n\n\n"
        "class VisionTransformer(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
        "        self.merger = PatchMerger(dim=config.out_hidden_size, context_dim=config.embed_dim)\n"
    ),
    "train.py": (
        "from transformers import Qwen2VLForConditionalGeneration\nfrom mymllm.vision import VisionTransformer\n"
        "model = Qwen2VLForConditionalGeneration.from_pretrained('Qwen/Qwen2-VL-7B-Instruct')\n"
        "for batch in loader:\n    model(**batch).loss.backward()\n"
    ),
}


def test_a_perceiver_resampler_is_named_and_no_pruning_is_advised():
    audit = _audit(_FLAMINGO)
    r = audit.result("H3")
    assert r.status is Status.UNUSED
    assert "every visual token" not in r.detail
    assert "`PerceiverResampler` at open_flamingo/src/flamingo.py:10" in r.detail
    assert any(e.path == "open_flamingo/src/flamingo.py" and e.line == 10 for e in r.evidence)
    assert build_plan(audit).get("H3") is None


def test_a_patch_merger_is_named_and_pruning_is_still_advised():
    audit = _audit(_QWEN_MERGER)
    r = audit.result("H3")
    assert r.status is Status.UNUSED and "merges visual patches by a fixed factor" in r.detail
    assert build_plan(audit).get("H3") is not None


def test_nothing_found_claims_nothing_about_the_architecture():
    audit = _audit(_LLAVA)
    r = audit.result("H3")
    assert r.status is Status.UNUSED and "every visual token" not in r.detail and r.detail.startswith("no visual-token pruning")


def test_control_a_pooled_projector_is_still_partial():
    files = dict(_LLAVA)
    files["scripts/finetune.sh"] = files["scripts/finetune.sh"].replace("--mm_projector_type mlp2x_gelu", "--mm_spatial_pool_stride 2")
    assert _audit(files).result("H3").status is Status.PARTIAL
