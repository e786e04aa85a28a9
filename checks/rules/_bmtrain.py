"""OpenBMB BMTrain's training primitives: what a model built on them does without any config saying so.

BMTrain (``import bmtrain as bmt``; ModelCenter, CPM-Live, MiniCPM's first trainers) is a ZeRO-style framework of its own,
not DeepSpeed: the practices live in the classes a model is built from, not in a config file.

* ``bmt.DistributedParameter(...)``: a parameter whose storage is partitioned over the ranks (each keeps its slice) and
  all-gathered when its module runs: parameters, gradients and optimizer states sharded, ZeRO-3
  (``bmtrain/parameter.py``). Layers subclass ``bmt.DistributedModule`` to hold them.
* ``bmt.CheckpointBlock(block)`` (``bmt.Block`` since BMTrain 1.0): gathers the block's partitioned parameters for its
  forward, frees them after, reduce-scatters its gradients, and recomputes the block's activations in backward
  (``use_checkpoint=True`` and ``zero_level=3`` by default; ``bmtrain/block_layer.py``).
* ``bmt.TransformerBlockList([...])``: runs the blocks in order, all-gathering the next block's parameters and
  reduce-scattering the previous block's gradients on a side stream while the current block computes (communication /
  computation overlap).
* ``bmt.optim.AdamOffloadOptimizer``: Adam whose states and fp32 master weights live in host memory; the update runs on
  the CPU (optimizer offload).
"""

from __future__ import annotations

import re
from typing import Any

from ..facts import Call, Facts, as_number
from ..lazyre import lazy_compile
from ._helpers import callers_off, guard_off, value_on

_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$", re.I)

#: partitioned parameters and the blocks that gather them (``bmt.Block`` is ``CheckpointBlock``'s name since 1.0)
PARAMS = ("bmtrain.DistributedParameter", "bmtrain.parameter.DistributedParameter")
BLOCKS = ("bmtrain.CheckpointBlock", "bmtrain.Block", "bmtrain.block_layer.CheckpointBlock", "bmtrain.block_layer.Block")
BLOCK_LISTS = ("bmtrain.TransformerBlockList", "bmtrain.block_layer.TransformerBlockList")
OFFLOAD_OPTIMIZERS = ("bmtrain.optim.AdamOffloadOptimizer", "bmtrain.optim.adam_offload.AdamOffloadOptimizer")


def _bmtrain(c: Call) -> bool:
    return c.name.startswith("bmtrain.")


def _live(f: Facts, c: Call) -> bool:
    return _bmtrain(c) and not _TEST_PATH.search(c.path) and not guard_off(f, c) and runs_on_bmtrain(f)


def runs_on_bmtrain(f: Facts) -> bool:
    """Whether BMTrain is the framework the package trains on: a declared dependency (ModelCenter's ``install_requires``),
    or a ``bmt.init_distributed(...)`` outside tests that no switch turns off. Not a multi-backend trainer whose BMTrain
    branch is an option left off (FlagAI: ``bmt.init_distributed`` only under ``if self.env_type == 'bmtrain':``, env_type
    'pytorch' by default, bmtrain not a dependency): its BMTrain layers serve that option only."""
    key = ("bmtrain-run",)
    if key not in f._memo:
        f._memo[key] = bool([d for d in f.deps("bmtrain") if not _TEST_PATH.search(d.path)]) or any(
            c.name.startswith("bmtrain.") and not _TEST_PATH.search(c.path) and not guard_off(f, c) and not callers_off(f, c)
            for c in f.calls("bmtrain.init_distributed"))
    return bool(f._memo[key])


def sharded_sites(f: Facts) -> list[tuple[Call, int]]:
    """(call, ZeRO stage) of the BMTrain primitives that partition model states over the ranks: every
    ``DistributedParameter`` (stage 3) and every ``CheckpointBlock``/``Block`` (its ``zero_level``, 3 by default).
    Not in tests, not under a switch that is off."""
    out: list[tuple[Call, int]] = []
    for c in f.calls(*BLOCKS):
        if not _live(f, c):
            continue
        level = as_number(c.kwargs.get("zero_level", 3))
        out.append((c, int(level) if level in (2, 3) else 3))
    out += [(c, 3) for c in f.calls(*PARAMS) if _live(f, c)]
    return out


def checkpointed_blocks(f: Facts) -> list[Call]:
    """``bmt.CheckpointBlock(block)`` / ``bmt.Block(block)`` that recompute the block in backward: every one not built with
    ``use_checkpoint=False`` (a value that is off)."""
    return [c for c in f.calls(*BLOCKS) if _live(f, c) and value_on(f, c.kwargs.get("use_checkpoint", True)) is not False]


def overlapping_block_lists(f: Facts) -> list[Call]:
    """``bmt.TransformerBlockList([...])``: the next block's all-gather and the previous block's gradient reduce-scatter run on
    a side stream while the current block computes."""
    return [c for c in f.calls(*BLOCK_LISTS) if _live(f, c)]


def offload_optimizers(f: Facts) -> list[Call]:
    """``bmt.optim.AdamOffloadOptimizer(...)``: Adam states and fp32 master weights in host memory, the step on the CPU."""
    return [c for c in f.calls(*OFFLOAD_OPTIMIZERS) if _live(f, c)]


def what(c: Any) -> str:
    """The primitive's name as BMTrain users write it (``bmt.CheckpointBlock``)."""
    return "bmt." + getattr(c, "name", "").rsplit(".", 1)[-1]


def model_files(layers: str = "bmt.TransformerBlockList([bmt.CheckpointBlock(TransformerBlock(dim)) for _ in range(num_layers)])",
                param: str = "bmt.DistributedParameter", optimizer: str = "bmt.optim.AdamOffloadOptimizer") -> dict[str, str]:
    """A ModelCenter-like library on BMTrain: layers holding ``bmt.DistributedParameter`` weights, an encoder whose blocks are
    ``bmt.CheckpointBlock`` in a ``bmt.TransformerBlockList``, and a fine-tuning script launched with torchrun."""
    return {
        "mylib/layer/linear.py": (
            "import bmtrain as bmt\nimport torch\n\n\nclass Linear(bmt.DistributedModule):\n"
            "    def __init__(self, dim_in, dim_out, dtype=torch.half):\n        super().__init__()\n"
            f"        self.weight = {param}(torch.empty((dim_out, dim_in), dtype=dtype), init_method=torch.nn.init.xavier_normal_)\n\n"
            "    def forward(self, x):\n        return torch.nn.functional.linear(x, self.weight)\n"),
        "mylib/layer/transformer.py": (
            "import bmtrain as bmt\nimport torch\n\nfrom mylib.layer.blocks import TransformerBlock\n\n\nclass Encoder(torch.nn.Module):\n"
            "    def __init__(self, num_layers, dim):\n        super().__init__()\n"
            f"        self.layers = {layers}\n\n"
            "    def forward(self, hidden_states, mask):\n        return self.layers(hidden_states, mask)\n"),
        "examples/finetune.py": (
            "import bmtrain as bmt\n\nfrom mylib.model import Bert\n\nbmt.init_distributed(seed=0)\n"
            "model = Bert.from_pretrained('bert-base-uncased')\n"
            f"optimizer = {optimizer}(model.parameters(), weight_decay=1e-2)\n"
            "optim_manager = bmt.optim.OptimManager(loss_scale=1024)\noptim_manager.add_optimizer(optimizer)\n"
            "for data in loader:\n    loss = loss_func(model(data['input_ids'], data['attention_mask']), data['labels'])\n"
            "    optim_manager.zero_grad()\n    optim_manager.backward(loss)\n    optim_manager.step()\n"),
        "scripts/finetune.sh": "torchrun --nnodes=1 --nproc_per_node=8 examples/finetune.py\n",
    }


def multi_backend_files() -> dict[str, str]:
    """The same BMTrain layers in a FlagAI-like multi-backend trainer: BMTrain joins the run only when ``env_type`` is
    'bmtrain', and it defaults to 'pytorch'."""
    files = {k: v for k, v in model_files().items() if k.startswith("mylib/layer/")}
    files["mylib/env_args.py"] = (
        "import argparse\n\n\nclass EnvArgs:\n    def __init__(self, env_type='pytorch', lr=1e-5):\n"
        "        self.parser = argparse.ArgumentParser()\n        self.parser.add_argument('--env_type', default=env_type)\n"
        "        self.parser.add_argument('--lr', default=lr, type=float)\n")
    files["mylib/trainer.py"] = (
        "import torch\n\n\nclass Trainer:\n    def __init__(self, env_args):\n        self.env_type = env_args.env_type\n"
        "        if self.env_type == 'bmtrain':\n            import bmtrain as bmt\n            bmt.init_distributed(seed=0)\n\n"
        "    def train(self, model, loader):\n        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
        "        for batch in loader:\n            loss = model(**batch)['loss']\n            loss.backward()\n            optimizer.step()\n")
    files["examples/train.py"] = ("from mylib.env_args import EnvArgs\nfrom mylib.trainer import Trainer\n\n"
                                  "Trainer(EnvArgs(lr=1e-5)).train(model, loader)\n")
    return files
