"""Round 54 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


_LLAVA_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


# --- EAGLE: xformers kernels in a monkey patch nothing imports ---------------------------------------------------------------

_XFORMERS_PATCH = (
    "import transformers\nimport xformers.ops\n\n\ndef replace_llama_attn_with_xformers_attn():\n"
    "    transformers.models.llama.modeling_llama.LlamaAttention.forward = xformers_forward\n\n\n"
    "def xformers_forward(self, hidden_states, attention_mask=None):\n"
    "    q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)\n"
    "    return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=xformers.ops.LowerTriangularMask())\n")


def test_fused_kernels_in_a_module_nothing_imports_are_no_fusion() -> None:
    files = {"train_mem.py": "from train import train\n\nif __name__ == '__main__':\n    train()\n", "train.py": _LLAVA_TRAIN,
             "eagle/train/llama_xformers_attn_monkey_patch.py": _XFORMERS_PATCH,
             "scripts/finetune.sh": "deepspeed train_mem.py --bf16 True --output_dir out\n"}
    assert _check(_audit(files), "D6").status.value == "unused"
    # control: the entry point applies the patch
    files["train_mem.py"] = ("from eagle.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn\n"
                             "replace_llama_attn_with_xformers_attn()\nfrom train import train\n\nif __name__ == '__main__':\n    train()\n")
    assert _check(_audit(files), "D6").status.value == "used"


# --- Ovis: D2 raised AttributeError on a DeepSpeed config's compile section ----------------------------------------------------

def test_a_deepspeed_compile_section_does_not_crash_d2() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "scripts/zero3_cp.json": '{\n  "zero_optimization": {"stage": 3},\n  "compile": {\n    "enabled": true\n  }\n}\n',
             "scripts/run.sh": "deepspeed train.py --deepspeed scripts/zero3_cp.json --bf16 True --output_dir out\n"}
    audit = _audit(files)
    d2 = _check(audit, "D2")
    assert "failed on this repository" not in d2.detail, d2.detail
