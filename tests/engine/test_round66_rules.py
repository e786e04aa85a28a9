"""Round 66 (issue #9): claims of more public repositories (ChatDoctor, OpenCoder-llm, Magicoder, Platypus, medAlpaca,
PMC-LLaMA, ToolBench, FinGPT), read claim by claim. Each test is one false claim of those reports, made from the shape of the
real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- ChatDoctor: the README's training commands sit in a block labelled Python -------------------------------------------------

_ALPACA_TRAIN = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
                 "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                 "    model = transformers.AutoModelForCausalLM.from_pretrained('facebook/opt-125m')\n"
                 "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
                 "if __name__ == '__main__':\n    train()\n")
_CHATDOCTOR_README = (" ## How to fine-tuning\n\n ```{lang}\ntorchrun --nproc_per_node=4 --master_port=<your_random_port> train.py \\\n"
                      "    --model_name_or_path <your_path_to_hf_converted_llama_ckpt_and_tokenizer> \\\n"
                      "    --data_path ./HealthCareMagic-100k.json \\\n    --bf16 True \\\n    --output_dir pretrained \\\n"
                      "    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps 8 \\\n"
                      "    --fsdp \"full_shard auto_wrap\" \\\n    --fsdp_transformer_layer_cls_to_wrap 'LLaMADecoderLayer' \\\n"
                      "    --tf32 True\n ```\n")


def test_a_launch_in_a_block_labelled_python_is_a_launch() -> None:
    files = {"train.py": _ALPACA_TRAIN, "README.md": _CHATDOCTOR_README.format(lang="python")}
    result = _audit(files)
    for cid in ("A1", "A2", "C5"):
        c = _check(result, cid)
        assert c.status.value == "used" and any(e.path == "README.md" for e in c.evidence), (cid, c)
    # control: a block labelled Python that is Python (a quickstart calling the trainer) is no launch
    files["README.md"] = (" ## How to fine-tuning\n\n ```python\nimport train\ntrain.train()\n ```\n\n"
                          "```python\npython_version = 3\nprint(python_version)\n```\n")
    result = _audit(files)
    assert _check(result, "A1").status.value != "used" and _check(result, "A2").status.value != "used"
