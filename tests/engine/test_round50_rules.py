"""Round 50 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- baaivision/EVE: LLaVA's placeholder default named as a model family ------------------------------------------------

_EVE_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\n\n\n"
    "@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n"
    "    version: Optional[str] = field(default=\"v0\")\n\n\n"
    "def train():\n"
    "    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.LlamaForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = transformers.Trainer(model=model, args=training_args)\n"
    "    trainer.train()\n\n\nif __name__ == \"__main__\":\n    train()\n")


def _eve_launch(model: str) -> str:
    return ("#!/bin/bash\nCKPT_PATH=\"" + model + "\"\n"
            "torchrun --nproc_per_node=8 --nnodes=4 eve/train/train_mem.py \\\n"
            "    --deepspeed ./scripts/zero3.json \\\n    --model_name_or_path ${CKPT_PATH} \\\n"
            "    --version plain \\\n    --bf16 True \\\n    --model_max_length 2048\n")


def test_a_default_every_launch_overrides_names_no_model_family() -> None:
    files = {"eve/train/train_mem.py": "from eve.train.train import train\n\nif __name__ == \"__main__\":\n    train()\n",
             "eve/train/train.py": _EVE_TRAIN, "scripts/eve/eve7b_prealign.sh": _eve_launch("Qwen/Qwen2.5-7B-Instruct")}
    p = _audit(files).project
    assert p.model_families == ["qwen2"]
    assert p.model_names == ["Qwen/Qwen2.5-7B-Instruct"]
    # control: a launch that leaves the default in place trains that model, whose family it names
    files["scripts/eve/eve7b_prealign.sh"] = _eve_launch("Qwen/Qwen2.5-7B-Instruct").replace(" \\\n    --model_name_or_path ${CKPT_PATH}", "")
    assert "opt" in _audit(files).project.model_families

