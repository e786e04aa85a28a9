"""Round 63 (issue #9): claims of more public repositories (deita, SeeClick, Step-DPO, MovieChat, GRPO-Zero), read claim by
claim. Each test is one false claim of those reports, made from the shape of the real code, with a control that keeps the
rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- deita: ``GRADACC=$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))`` with the GPU count read from a device list -------------------------

_DEITA_SH = (
    'RUNNAME="Deita-7B-SFT"\nDEVICES=""  # e.g. 0,1,2,3\nNUMGPUS=$(echo $DEVICES | awk -F\',\' \'{{print NF}}\')\n'
    "TOTALBSZ=512\nBSZPERDEV=1\nGRADACC={gradacc}\n\n"
    "deepspeed --include localhost:${{DEVICES}} --master_port 29501 src/deita/alignment/train.py \\\n"
    "    --model_name_or_path mistralai/Mistral-7B-v0.1 \\\n    --per_device_train_batch_size ${{BSZPERDEV}} \\\n"
    "    --gradient_accumulation_steps ${{GRADACC}} \\\n    --learning_rate 2e-5 \\\n    --bf16 True\n"
)


def test_an_accumulation_divided_in_a_chain_is_computed_from_the_global_batch() -> None:
    files = {"src/deita/alignment/train.py": _LLAVA_TRAIN,
             "examples/train/sft.sh": _DEITA_SH.format(gradacc="$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))")}
    result = _audit(files)
    c5 = _check(result, "C5")
    assert c5.status.value == "used" and "512 / (1 x GPUs)" in c5.detail, c5.detail
    assert "estimated global batch 512" in _check(result, "G2").detail
    # control: a launch that passes a literal 1 accumulates nothing
    files["examples/train/sft.sh"] = _DEITA_SH.format(gradacc="1")
    assert _check(_audit(files), "C5").status.value == "unused"


# --- SeeClick: Qwen-VL's ``fix_vit`` switch, off in the launch -----------------------------------------------------------------

_QWENVL_FT = (
    "from dataclasses import dataclass, field\nimport transformers\n\n\n@dataclass\n"
    "class TrainingArguments(transformers.TrainingArguments):\n    use_lora: bool = False\n    fix_vit: bool = True\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('Qwen/Qwen-VL-Chat', trust_remote_code=True)\n"
    "    if not training_args.use_lora:\n"
    "        if training_args.fix_vit and hasattr(model, 'transformer') and hasattr(model.transformer, 'visual'):\n"
    "            model.transformer.visual.requires_grad_(False)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n"
)
_SEECLICK_SH = ("torchrun --nproc_per_node 8 finetune/finetune.py \\\n    --model_name_or_path Qwen/Qwen-VL-Chat \\\n"
                "    --bf16 True \\\n    --fix_vit {fix} \\\n    --per_device_train_batch_size 4 \\\n    --use_lora\n")


def test_a_fix_vit_switch_left_off_trains_the_vision_encoder() -> None:
    files = {"finetune/finetune.py": _QWENVL_FT, "finetune/finetune_lora_ds.sh": _SEECLICK_SH.format(fix="False"),
             "qwen_vl/visual.py": "class VisionTransformer:\n    pass\n"}
    h1 = _check(_audit(files), "H1")
    assert h1.status.value == "unused" and any(e.key == "--fix_vit" for e in h1.evidence), h1
    # control: the launch that fixes the ViT freezes it
    files["finetune/finetune_lora_ds.sh"] = _SEECLICK_SH.format(fix="True")
    assert _check(_audit(files), "H1").status.value == "used"
