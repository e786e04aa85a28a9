"""Round 12 (held-out VeOmni): a project's own copies of HF's schedule builders, chosen by a decay-style name, with a
warmup computed from a ratio that is 0."""

from __future__ import annotations

from checks.rules.g_strategy import _OWN_BUILDERS
from tests.rules_ghj.ghj_util import audit


def _with(files: dict[str, str], path: str, old: str, new: str) -> dict[str, str]:
    assert old in files[path]
    return {**files, path: files[path].replace(old, new)}


def test_constant_builder_with_a_zero_ratio_warmup_is_a_constant_lr():
    result, _ = audit(_OWN_BUILDERS, "G1")
    assert (result.status.value, result.detail) == ("unused", "constant learning rate")
    # the builder's own LambdaLR body is not a custom schedule
    assert all("LambdaLR" not in e.snippet for e in result.evidence)
    assert any((e.path, e.line) == ("pkg/arguments.py", 7) for e in result.evidence)  # lr_warmup_ratio 0


def test_a_positive_ratio_is_warmup():
    files = _with(_OWN_BUILDERS, "pkg/arguments.py", "lr_warmup_ratio: float = field(default=0)",
                  "lr_warmup_ratio: float = field(default=0.03)")
    assert audit(files, "G1")[0].status.value == "partial"


def test_the_cosine_style_decays():
    files = _with(_OWN_BUILDERS, "pkg/arguments.py", 'lr_decay_style: str = field(default="constant")',
                  'lr_decay_style: str = field(default="cosine")')
    files = _with(files, "pkg/arguments.py", "lr_warmup_ratio: float = field(default=0)",
                  "lr_warmup_ratio: float = field(default=0.03)")
    result = audit(files, "G1")[0]
    assert (result.status.value, result.detail) == ("used", "warmup + cosine schedule")


def test_a_fallback_from_a_zero_ratio_is_not_read_as_the_warmup():
    # verl: ``num_warmup_steps = cfg.lr_warmup_steps`` then ``if num_warmup_steps <= 0: num_warmup_steps = int(ratio * n)``
    files = _with(_OWN_BUILDERS, "pkg/lr_scheduler.py", "    lr_warmup_steps = int(train_steps * lr_warmup_ratio)\n",
                  "    lr_warmup_steps = warmup_steps_arg\n    if lr_warmup_steps <= 0:\n"
                  "        lr_warmup_steps = int(train_steps * lr_warmup_ratio)\n")
    assert audit(files, "G1")[0].status.value != "unused"


def test_the_schedule_named_is_the_one_most_decay_sites_use():
    # Megatron-LM: ``--lr-decay-style cosine`` in most launches, ``constant`` in an old paper script that sorts first
    files = {
        "examples/academic/finetune_gpt.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --lr-decay-style constant --lr 1e-5\n",
        "examples/gpt3/train_gpt3.sh": ("torchrun --nproc_per_node 8 pretrain_gpt.py --lr-decay-style cosine --lr-warmup-fraction .01 "
                                        "--lr 6e-5\n"),
        "examples/llama/train_llama3.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --lr-decay-style cosine --lr-warmup-iters 2000\n",
        "examples/mixtral/train_mixtral.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --lr-decay-style cosine --lr-warmup-iters 500\n",
        "pretrain_gpt.py": "import torch\nloss.backward()\n",
    }
    result, _ = audit(files, "G1")
    assert result.status.value == "used"
    assert result.detail == "warmup + cosine schedule", result.detail
