"""A README that swaps one script of its run for another in prose ("replace `llava/train/train_mem.py` above with
`llava/train/train_xformers.py`" on V100s) names the run's script and an alternative entry point: the alternative and
the patch only it imports are not the training path (LLaVA 1.2.2: the xformers attention patch made D6 say "fused
kernels are in use"). The rule tests fail on the engine before this change; the control passes on both."""

from __future__ import annotations

from checks.facts import extract_file
from checks.model import Status

from .claims import audit as _audit

_PATCH = (
    "import transformers\nfrom xformers import ops as xops\n\n\ndef forward(self, hidden_states, attention_mask=None, **kwargs):\n"
    "    q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)\n"
    "    return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())\n\n\n"
    "def replace_llama_attn_with_xformers_attn():\n"
    "    transformers.models.llama.modeling_llama.LlamaAttention.forward = forward\n"
)
_FILES = {
    "llava/train/train.py": (
        "import transformers\nfrom transformers import Trainer\n\n\ndef train(attn_implementation=None):\n"
        "    model = transformers.LlamaForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5', attn_implementation=attn_implementation)\n"
        "    trainer = Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'))\n    trainer.train()\n"
    ),
    "llava/train/train_mem.py": "from llava.train.train import train\n\nif __name__ == '__main__':\n    train(attn_implementation='flash_attention_2')\n",
    "llava/train/train_xformers.py": (
        "from llava.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn\n\n"
        "replace_llama_attn_with_xformers_attn()\n\nfrom llava.train.train import train\n\nif __name__ == '__main__':\n    train()\n"
    ),
    "llava/train/llama_xformers_attn_monkey_patch.py": _PATCH,
    "README.md": (
        "# LLaVA\n\n## Train\n\nWe provide training scripts with DeepSpeed.\n\n"
        "- If you are using V100 which is not supported by FlashAttention, you can use the memory-efficient attention "
        "implemented in xFormers. Install xformers and replace `llava/train/train_mem.py` above with "
        "[llava/train/train_xformers.py](llava/train/train_xformers.py).\n"
    ),
}


def test_the_prose_names_the_run_and_the_alternative():
    ff = extract_file("README.md", _FILES["README.md"].encode())
    hints = {(h.kind, h.value, h.line) for h in ff.doc_hints}
    assert ("run_script", "llava/train/train_mem.py", 7) in hints and ("alternative", "llava/train/train_xformers.py", 7) in hints


def test_the_offered_script_and_its_patch_are_not_the_training_path():
    audit = _audit(_FILES)
    roles = audit.roles.by_path
    assert roles["llava/train/train_mem.py"] == "training" and roles["llava/train/train.py"] == "training"
    assert audit.roles.why["llava/train/train_mem.py"] == "named as the run's script at README.md:7"
    assert roles["llava/train/train_xformers.py"] == "other"
    assert roles["llava/train/llama_xformers_attn_monkey_patch.py"] == "other"
    assert audit.result("D6").status is not Status.USED
    assert "xformers" not in audit.result("D1").detail


def test_control_without_the_prose_every_train_script_is_an_entry_point():
    files = dict(_FILES, **{"README.md": "# LLaVA\n\nSee the scripts on GitHub.\n"})
    roles = _audit(files).roles.by_path
    assert roles["llava/train/train_xformers.py"] == "training"
    assert roles["llava/train/llama_xformers_attn_monkey_patch.py"] == "training"
