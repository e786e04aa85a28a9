"""H1-H3: key polarity, launch precedence, and what is (not) token pruning."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit, status

LLAVA_NEXT = "deepspeed llava/train/train_mem.py --model_name_or_path lmms-lab/llava-onevision-qwen2-7b-ov " \
             "--vision_tower google/siglip-so400m-patch14-384 --mm_tunable_parts={parts}\n"


def test_h1_mm_tunable_parts_decides():
    frozen = {"scripts/pretrain.sh": LLAVA_NEXT.format(parts="mm_mlp_adapter")}
    assert status(frozen, "H1") == "used"
    tuned = {"scripts/finetune_si.sh": LLAVA_NEXT.format(parts="mm_vision_tower,mm_mlp_adapter,mm_language_model")}
    assert status(tuned, "H1") == "unused"
    # stage 1 frozen, stage 2 tuned: the recipe freezes the ViT where it matters
    r, _ = audit({**frozen, **tuned}, "H1")
    assert r.status.value == "used" and "unfrozen in another stage" in (r.detail or "")


def test_h1_freeze_backbone_means_the_vit_only_in_internvl():
    internvl = {"shell/finetune.sh": "torchrun --nproc_per_node 8 internvl_chat_finetune.py --model_name_or_path "
                "OpenGVLab/InternVL2-8B --freeze_llm False --freeze_backbone True --freeze_mlp False\n"}
    assert status(internvl, "H1") == "used"
    llava = {"scripts/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
             "--freeze_backbone True --model_name_or_path lmsys/vicuna-7b-v1.5\n"}
    assert status(llava, "H1") == "unused"  # LLaVA's freeze_backbone freezes the LLM


def test_h1_llamafactory_default_freezes_the_vision_tower():
    cfg = "model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\nfinetuning_type: full\ntemplate: qwen2_vl\n"
    r, _ = audit({"examples/qwen2vl_full_sft.yaml": cfg}, "H1")
    assert r.status.value == "used" and r.evidence[0].key == "freeze_vision_tower (LLaMA-Factory default)"


def test_h1_text_only_is_not_applicable():
    assert status({"train.py": "from transformers import AutoModel\nm = AutoModel.from_pretrained('gpt2')\n"}, "H1") == "n/a"


def test_h2_qwen2_5_vl_is_native_dynamic_resolution():
    cfg = "model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\nstage: sft\nimage_max_pixels: 262144\ntemplate: qwen2_vl\n"
    assert status({"qwen25vl_sft.yaml": cfg}, "H2") == "used"


def test_h2_llava_pad_is_fixed_resolution():
    files = {"scripts/v1_5/finetune.sh": "deepspeed llava/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
             "--image_aspect_ratio pad --model_name_or_path lmsys/vicuna-13b-v1.5\n"}
    r, _ = audit(files, "H2")
    assert r.status.value == "unused" and r.evidence[0].key == "--image_aspect_ratio"


def test_h3_architectural_pixel_shuffle_is_not_pruning():
    files = {"shell/finetune.sh": "torchrun --nproc_per_node 8 internvl_chat_finetune.py --model_name_or_path "
             "OpenGVLab/InternVL2-8B --down_sample_ratio 0.5 --dynamic_image_size True\n"}
    assert status(files, "H3") == "unused"


def test_h3_ldp_projector_is_partial():
    files = {"scripts/mobilevlm.sh": "deepspeed mobilevlm/train/train_mem.py --vision_tower openai/clip-vit-large-patch14-336 "
             "--mm_projector_type ldpnetv2 --model_name_or_path mtgv/MobileLLaMA-1.4B-Chat\n"}
    assert status(files, "H3") == "partial"


def test_h1_llamafactory_default_only_for_a_multimodal_config():
    text = {"examples/llama3_full_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\ntemplate: llama3\n"}
    assert status(text, "H1") == "n/a"
    both = {**text, "examples/qwen2vl_lora_sft.yaml": "model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\ntemplate: qwen2_vl\n"}
    r, _ = audit(both, "H1")
    assert r.status.value == "used" and all(e.path == "examples/qwen2vl_lora_sft.yaml" for e in r.evidence)
    fork = {**both, "src/hparams.py": "from dataclasses import dataclass, field\n@dataclass\nclass FinetuningArguments:\n"
            "    freeze_vision_tower: bool = field(default=False)\n"}
    assert status(fork, "H1") == "unused"  # this fork changed LLaMA-Factory's default


def test_h1_flags_inside_an_args_block_with_inner_quotes():
    sh = ('llm=Qwen/Qwen2.5-VL-3B-Instruct\nargs="\n    --deepspeed ./scripts/zero3.json \\\n'
          '    --model_name_or_path "${llm}" \\\n    --tune_mm_vision False \\\n    --tune_mm_llm True"\n'
          "torchrun --nproc_per_node=8 qwenvl/train/train_qwen.py ${args}\n")
    r, _ = audit({"scripts/sft.sh": sh}, "H1")
    assert r.status.value == "used" and r.evidence[0].key == "--tune_mm_vision"
