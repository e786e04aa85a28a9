"""Rules of round 20 of issue #9 (llava-torch 1.2.2.post1: the Stanford Alpaca template's ``model_name_or_path`` default
``facebook/opt-125m`` kept in a training script that can load that option only with Llama-architecture classes): the rule
test fails on the rule before it; each control passes on both."""

from __future__ import annotations

from checks.engine import audit_files

#: the shape of LLaVA's llava/train/train.py (lines 53-56, 816-841): the option's default names an OPT checkpoint, every
#: model load of the option is a Llama-architecture class (the project's own subclass or transformers')
_LLAVA_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\n"
    "from mmpkg.model import LlavaLlamaForCausalLM\n\n\n@dataclass\n"
    "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n"
    "    vision_tower: Optional[str] = field(default=None)\n\n\n"
    "def train(attn_implementation=None):\n"
    "    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    if model_args.vision_tower is not None:\n"
    "        model = LlavaLlamaForCausalLM.from_pretrained(model_args.model_name_or_path, attn_implementation=attn_implementation)\n"
    "    else:\n"
    "        model = transformers.LlamaForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    tokenizer = transformers.AutoTokenizer.from_pretrained(model_args.model_name_or_path, use_fast=False)\n"
    "    trainer = transformers.Trainer(model=model, tokenizer=tokenizer, args=training_args)\n    trainer.train()\n"
)
_LLAVA_MODEL = (
    "from transformers import LlamaForCausalLM\n\n\n"
    "class LlavaLlamaForCausalLM(LlamaForCausalLM):\n    def forward(self, input_ids=None, images=None, **kwargs):\n"
    "        return super().forward(input_ids=input_ids, **kwargs)\n"
)


def _audit(train: str):
    files = {"mmpkg/__init__.py": "", "mmpkg/model.py": _LLAVA_MODEL, "mmpkg/train/__init__.py": "", "mmpkg/train/train.py": train}
    return audit_files((k, v.encode()) for k, v in files.items())


def test_a_default_the_training_code_can_only_load_with_another_architecture_sizes_nothing():
    # previous rule: estimated_params "125M" and step zero "launch-bound: a small model (~125M, from the model name
    # `facebook/opt-125m` at `mmpkg/train/train.py:10`)"
    p = _audit(_LLAVA_TRAIN).project
    assert p.estimated_params is None
    assert not any("opt-125m" in r or "small model" in r for r in p.bottleneck_reasons)


def test_control_an_auto_class_can_load_the_default_so_it_still_sizes_the_run():
    src = _LLAVA_TRAIN.replace("transformers.LlamaForCausalLM.from_pretrained", "transformers.AutoModelForCausalLM.from_pretrained")
    assert _audit(src).project.estimated_params == "125M"


def test_control_a_class_of_the_defaults_own_family_still_sizes_the_run():
    src = (_LLAVA_TRAIN.replace("LlavaLlamaForCausalLM.from_pretrained", "transformers.OPTForCausalLM.from_pretrained")
           .replace("transformers.LlamaForCausalLM.from_pretrained", "transformers.OPTForCausalLM.from_pretrained"))
    assert _audit(src).project.estimated_params == "125M"
