"""Step zero's mixture-of-experts reason cites where the experts are (issue #9: every reason cites its evidence), and a
training recipe's line before an inference config's (oumi: a serving config of Qwen3-235B-A22B was cited first). The reason
is given where the experts exchange tokens all-to-all (an expert-parallel size; round 45), so each case sets one."""

from __future__ import annotations

from checks.engine import audit_files

LOOP = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def train(cfg, loader, optimizer):\n"
    "    model = AutoModelForCausalLM.from_pretrained(cfg['model_name_or_path'])\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
)
LAUNCH = "torchrun --nproc_per_node 8 pkg/train.py --config configs/sft/train.yaml\n"


def _moe_reason(files: dict[str, str]) -> str:
    p = audit_files((k, v.encode()) for k, v in files.items()).project
    [reason] = [r for r in p.bottleneck_reasons if "mixture-of-experts" in r]
    return reason


def test_the_moe_reason_cites_the_training_recipe_that_names_the_model():
    files = {
        "pkg/train.py": LOOP,
        "configs/infer/serve.yaml": "model_name_or_path: mistralai/Mixtral-8x7B-Instruct-v0.1\nmax_new_tokens: 256\n",
        "configs/sft/train.yaml": "model_name_or_path: mistralai/Mixtral-8x7B-v0.1\nlearning_rate: 1.0e-5\nbf16: true\n"
                                  "expert_parallel_degree: 4\n",
        "scripts/train.sh": LAUNCH,
    }
    reason = _moe_reason(files)
    assert "(`configs/sft/train.yaml:1`)" in reason, reason
    assert "serve.yaml" not in reason


def test_an_expert_layer_in_code_is_cited_first():
    moe = "from deepspeed.moe.layer import MoE\n\n\nclass Block:\n    def __init__(self, expert):\n        self.moe = MoE(hidden_size=4096, expert=expert, num_experts=8, ep_size=4)\n"
    files = {"pkg/train.py": LOOP, "pkg/model.py": moe, "configs/sft/train.yaml": "model_name_or_path: org/my-moe\n", "scripts/train.sh": LAUNCH}
    assert "(`pkg/model.py:" in _moe_reason(files)
