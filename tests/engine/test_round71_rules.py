"""Round 71 (issue #9): claims of more public repositories (Index-1.9B, Firefly-LLaMA2-Chinese, DeepSeek-Math, Baichuan-13B,
XVERSE-13B, sailor-llm, Chinese-Mixtral, TeleChat2), read claim by claim. Each test is one false claim of those reports,
made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- Index-1.9B: ``"$@"`` after a store-true flag is the caller's arguments, not that flag's value ------------------------

_INDEX_SH = (
    "LR=1e-4\nNUM_GPUS=1\nentrypoint=\"finetune.py\"\n"
    "args=\"       --model_name_or_path your_model_path \\\n             --per_device_train_batch_size 4 \\\n"
    "             --gradient_accumulation_steps 4 \\\n             --learning_rate $LR \\\n             --bf16 \"\n\n"
    "python -m torch.distributed.launch --nproc_per_node=$NUM_GPUS --nnode=1 ${entrypoint} ${args} {tail} 2>&1 | tee -a train.log\n")
_INDEX_PY = ("from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
             "args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]\n"
             "model = AutoModelForCausalLM.from_pretrained('IndexTeam/Index-1.9B-Chat', trust_remote_code=True)\n"
             "Trainer(model=model, args=args, train_dataset=ds).train()\n")


def test_passthrough_arguments_after_a_switch_are_not_its_value() -> None:
    files = {"finetune/train.sh": _INDEX_SH.replace("{tail}", '"$@"'), "finetune/finetune.py": _INDEX_PY}
    c1 = _check(_audit(files), "C1")
    assert c1.status.value == "used" and c1.values.get("precision") == "bf16", c1
    # control: a real value after the flag is its value (``--bf16 False`` turns it off)
    files["finetune/train.sh"] = _INDEX_SH.replace("--bf16 \"", "--bf16 False\"").replace("{tail}", '"$@"')
    c1 = _check(_audit(files), "C1")
    assert c1.status.value != "used", c1
