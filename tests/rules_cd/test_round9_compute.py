"""Round 9 (held-out unsloth): a replaced attention forward bypasses attn_implementation (D1); a loss function's own
compile switch and a compile patch nothing installs are not the model compiled (D2)."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_PATCH = ("import torch\nfrom torch.nn.functional import scaled_dot_product_attention\n"
          "from transformers import AutoModelForCausalLM\nfrom transformers.models.llama.modeling_llama import LlamaAttention\n\n"
          "def fast_forward(self, hidden_states, attention_mask=None):\n"
          "    return scaled_dot_product_attention(hidden_states, hidden_states, hidden_states, is_causal=True)\n\n"
          "def pre_patch():\n    LlamaAttention.forward = fast_forward\n\n")
_LOAD = "def load(name):\n    pre_patch()\n    return AutoModelForCausalLM.from_pretrained(name, attn_implementation='eager')\n"


def test_eager_load_after_replacing_the_attention_forward_is_not_eager() -> None:
    result, _ = audit({"mylib/llama.py": _PATCH + _LOAD}, "D1")
    assert result.status.value == "used"
    assert "bypassed" in result.detail and "mylib/llama.py:10" in result.detail


def test_eager_load_without_a_replaced_forward_stays_partial() -> None:
    body = _PATCH.replace("    LlamaAttention.forward = fast_forward\n", "    pass\n") + _LOAD
    assert audit({"mylib/llama.py": body}, "D1")[0].status.value == "partial"


def test_a_loss_functions_torch_compile_keyword_is_a_helper() -> None:
    body = ("from mylib_zoo.loss_utils import fused_ce_loss\n\n"
            "def forward(self, h, labels):\n    return fused_ce_loss(h, self.lm_head.weight, labels, torch_compile=True)\n")
    result, _ = audit({"mylib/llama.py": body}, "D2")
    assert result.status.value == "partial" and "helper" in result.detail


def test_training_arguments_torch_compile_is_the_model() -> None:
    body = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', torch_compile=True)\n"
    assert audit({"train.py": body}, "D2")[0].status.value == "used"


_MODULE_LIST = ("import torch\n\ndef patch_regional_compilation():\n    old = torch.nn.ModuleList\n"
                "    def FastModuleList(*args, **kwargs):\n        if len(args) == 1 and type(args[0]) is list:\n"
                "            args = [old([torch.compile(x, dynamic=True) for x in args[0]])]\n"
                "        return old(*args, **kwargs)\n    torch.nn.ModuleList = FastModuleList\n")


def test_a_compile_patch_nothing_installs_is_off() -> None:
    assert audit({"mylib/_utils.py": _MODULE_LIST}, "D2")[0].status.value == "unused"


def test_a_compile_patch_installed_at_import_compiles_the_model() -> None:
    files = {"mylib/_utils.py": _MODULE_LIST, "mylib/__init__.py": "from ._utils import patch_regional_compilation\npatch_regional_compilation()\n"}
    assert audit(files, "D2")[0].status.value == "used"


_ALIAS = ("try:\n    import xformers.ops.fmha as xformers\n    xformers_attention = xformers.memory_efficient_attention\n"
          "except ImportError:\n    xformers_attention = None\n")


def test_a_fused_op_called_through_an_alias_is_fusion() -> None:
    files = {"mylib/_utils.py": _ALIAS,
             "mylib/llama.py": "from ._utils import *\n\ndef attn(self, Q, K, V, mask):\n    return xformers_attention(Q, K, V, attn_bias=mask)\n"}
    result, _ = audit(files, "D6")
    assert result.status.value == "used"
    assert {(e.path, e.line) for e in result.evidence} >= {("mylib/_utils.py", 3), ("mylib/llama.py", 4)}


def test_an_alias_never_called_is_not_fusion() -> None:
    assert audit({"mylib/_utils.py": _ALIAS}, "D6")[0].status.value == "unused"
