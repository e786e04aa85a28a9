"""Round 70 (issue #9): claims of more public repositories (SpinQuant, OmniQuant, LongQLoRA, LLM-Blender, RouteLLM, lorahub,
MathCoder), read claim by claim. Each test is one false claim of those reports, made from the shape of the real code, with a
control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- LLM-Blender: the branch of a launch script its own variable selects; FP16 launches beside a BF16 dtype field ----------

_RANKER_SH = (
    "#!/bin/bash\n{dataset}\nbackbone_name=\"microsoft/phi-2\"\nn_gpu=8\nfp16=True # whether to use fp16\n\n"
    "if [[ $dataset =~ \"reward_model\" ]]; then\n    per_device_train_batch_size=2\n    gradient_accumulation_steps=8\n\n"
    "elif [[ $dataset =~ \"UnifiedFeedback\" ]]; then\n    per_device_train_batch_size=1\n    gradient_accumulation_steps=16\n\n"
    "elif [[ $dataset =~ \"pairrm_2.7b\" ]]; then\n    per_device_train_batch_size=1\n    gradient_accumulation_steps=8\n\n"
    "else\n    echo \"Unknown dataset: ${{dataset}}\"\n    exit 1\nfi\n\n"
    "deepspeed --num_gpus ${{n_gpu}} train_ranker.py \\\n    --model_name ${{backbone_name}} \\\n"
    "    --per_device_train_batch_size ${{per_device_train_batch_size}} \\\n"
    "    --gradient_accumulation_steps ${{gradient_accumulation_steps}} \\\n    --fp16 ${{fp16}}\n")
_RANKER_PY = (
    "import argparse\n\nfrom transformers import AutoModel, Trainer, TrainingArguments\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--model_name', type=str)\n"
    "parser.add_argument('--per_device_train_batch_size', type=int, default=1)\n"
    "parser.add_argument('--gradient_accumulation_steps', type=int, default=32)\n"
    "parser.add_argument('--fp16', type=bool, default=False)\nargs = parser.parse_args()\n"
    "model = AutoModel.from_pretrained(args.model_name)\n"
    "training_args = TrainingArguments(output_dir='out', per_device_train_batch_size=args.per_device_train_batch_size,\n"
    "    gradient_accumulation_steps=args.gradient_accumulation_steps, fp16=args.fp16)\n"
    "Trainer(model=model, args=training_args, train_dataset=ds).train()\n")


def test_a_launch_scripts_if_elif_on_its_own_variable_picks_one_branch() -> None:
    files = {"train_ranker.sh": _RANKER_SH.format(dataset='dataset="UnifiedFeedback"'), "train_ranker.py": _RANKER_PY}
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 16, c5
    # control: the variable comes from the command line, so no branch is known and the last assignment stays as before
    files["train_ranker.sh"] = _RANKER_SH.format(dataset='dataset=$1')
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 8, c5
    # control: a default the caller's environment overrides (MeZO ``MODE=${MODE:-ft}``, run as ``MODE=lora bash ...``)
    files["train_ranker.sh"] = _RANKER_SH.format(dataset='dataset=${DATASET:-UnifiedFeedback}')
    c5 = _check(_audit(files), "C5")
    assert c5.values.get("gradient_accumulation_steps") == 8, c5
