"""C1 says "explicitly disabled" only for a setting of the run; a precision field left at its FP32 default in code is
"off by default", cited (tevatron ``dtype: Optional[str] = field(default="float32")``)."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_ARGS = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: str = field(default=None)\n"
    "    dtype: Optional[str] = field(\n        default=\"float32\",\n"
    "        metadata={\"help\": \"Floating-point format in which the model weights should be trained\"},\n    )\n"
)
_TRAIN = (
    "import torch\nfrom transformers import AutoModel, HfArgumentParser\n\nfrom .arguments import ModelArguments\n\n\n"
    "def main():\n    (model_args,) = HfArgumentParser((ModelArguments,)).parse_args_into_dataclasses()\n"
    "    model = AutoModel.from_pretrained(model_args.model_name_or_path)\n"
    "    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        opt.step()\n        opt.zero_grad()\n"
)


def test_a_precision_field_left_at_float32_is_off_by_default():
    r, _ = audit({"src/pkg/arguments.py": _ARGS, "src/pkg/train.py": _TRAIN}, "C1")
    assert r.status.value == "unused"
    assert "explicitly disabled" not in r.detail
    assert r.detail.startswith("mixed precision is off by default: ModelArguments.dtype defaults to 'float32' (src/pkg/arguments.py:8)")


def test_control_a_launch_that_passes_float32_is_explicit():
    files = {"src/pkg/arguments.py": _ARGS, "src/pkg/train.py": _TRAIN,
             "scripts/train.sh": "python -m pkg.train --model_name_or_path bert-base-uncased --dtype float32\n"}
    r, _ = audit(files, "C1")
    assert r.status.value == "unused"
    assert r.detail == "mixed precision is explicitly disabled"
