"""Round 18 (lightning-gpt): a git submodule is another repository, a LightningModule is training code, Lightning's
default logging interval applies to its ``self.log``.

The fixture is shaped like a Lightning wrapper library: its own package ``gptlib/`` holds LightningModules over the model of
an upstream GPT repository kept as a git submodule in ``upstream/`` (the folder's ``.git`` is a file linking to the
superproject's ``.git/modules/upstream``), with upstream's own README, ``train.py`` (DDP, bf16 autocast, ``torch.compile``,
memmap ``train.bin``, warmup + cosine, ``log_interval = 1``) and config recipes. The README's ``python train.py`` names a root
script the release does not ship. Before the rules, the README command's "one file by its tail" fallback made upstream's
``train.py`` the run: compile, bf16, DDP, the memmap and the schedule were reported as the project's, and step zero called
it compute-bound on them; without upstream's script, no training code was recognised at all.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts import extract_file
from checks.facts.extract import classify
from checks.model import Status
from checks.roles import OUT_OF_SCOPE, VENDORED, classify_roles

README = """\
# gptlib

GPT training in Lightning over the upstream model (vendored in `upstream/`).

```shell
python train.py
```

```shell
python train.py --strategy deepspeed
```
"""
MODELS = """\
import torch
from lightning import LightningModule

import upstream.model


class GPT(LightningModule):
    def __init__(self, vocab_size: int, block_size: int, learning_rate: float = 3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.gpt = upstream.model.GPT(upstream.model.GPTConfig(vocab_size=vocab_size, block_size=block_size))

    def training_step(self, batch, batch_idx):
        idx, targets = batch
        _, loss = self.gpt(idx, targets)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.learning_rate)
"""
UP_MODEL = """\
from dataclasses import dataclass

import torch.nn as nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_embd: int = 768


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.head = nn.Linear(config.n_embd, config.vocab_size)

    def forward(self, idx, targets=None):
        return self.head(idx), None
"""
UP_TRAIN = """\
import math
import os

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from model import GPT, GPTConfig

log_interval = 1
batch_size = 12
block_size = 1024
warmup_iters = 2000
lr_decay_iters = 600000
dtype = 'bfloat16'
compile = True
ddp = int(os.environ.get('RANK', -1)) != -1
ctx = torch.amp.autocast(device_type='cuda', dtype=torch.bfloat16)
train_data = np.memmap(os.path.join('data', 'train.bin'), dtype=np.uint16, mode='r')
model = GPT(GPTConfig()).cuda()
if compile:
    model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[0])


def get_lr(it):
    if it < warmup_iters:
        return 6e-4 * it / warmup_iters
    return 6e-5 + 0.5 * (1.0 + math.cos(math.pi * it / lr_decay_iters)) * 6e-4


for it in range(600000):
    with ctx:
        _, loss = model(x, y)
    loss.backward()
    optimizer.step()
    if it % log_interval == 0:
        print(f"iter {it}: loss {loss.item():.4f}")
"""
UP_README = """\
# upstream

```sh
python train.py config/train_small.py
```

```sh
torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 --master_port=1234 train.py
```
"""


def _files(**over: str) -> dict[str, str]:
    files = {
        "README.md": README,
        "setup.py": "from setuptools import setup\nsetup(name='gptlib', packages=['gptlib', 'upstream'])\n",
        "gptlib/__init__.py": "from gptlib.models import GPT\n",
        "gptlib/models.py": MODELS,
        "upstream/.git": "gitdir: ../.git/modules/upstream\n",
        "upstream/README.md": UP_README,
        "upstream/model.py": UP_MODEL,
        "upstream/train.py": UP_TRAIN,
        "upstream/config/train_small.py": "batch_size = 64\nblock_size = 256\nlog_interval = 10\n",
    }
    files.update(over)
    return {p: t for p, t in files.items() if t is not None}


def _roles(files: dict[str, str]):
    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


def _audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


def test_a_submodule_link_is_read_and_the_root_link_is_not() -> None:
    assert classify("upstream/.git") == "gitlink"
    assert classify(".git") is None  # the scanned checkout's own link (a git worktree) is no submodule
    assert extract_file("upstream/.git", b"gitdir: ../.git/modules/upstream\n").kind == "gitlink"
    assert extract_file("upstream/.git", b"[core]\n\tbare = false\n").kind == "other"


def test_a_git_submodule_is_vendored_and_its_training_script_is_not_the_run() -> None:
    roles = _roles(_files())
    for p in ("upstream/train.py", "upstream/model.py", "upstream/README.md", "upstream/config/train_small.py", "upstream/.git"):
        assert roles.by_path[p] == VENDORED, (p, roles.by_path[p], roles.why.get(p))
        assert "git submodule" in roles.why[p]
    assert roles.by_path["gptlib/models.py"] not in OUT_OF_SCOPE
    assert "upstream/train.py" not in roles.entry_points


def test_before_the_rule_the_same_folder_without_its_link_is_the_run() -> None:
    # the control: no submodule link, so the README's ``python train.py`` finds upstream's script by its tail
    roles = _roles(_files(**{"upstream/.git": None}))
    assert roles.by_path["upstream/train.py"] == "training"
    assert "upstream/train.py" in roles.entry_points


def test_a_link_that_points_nowhere_vendors_nothing() -> None:
    roles = _roles(_files(**{"upstream/.git": "not a link\n"}))
    assert roles.by_path["upstream/train.py"] == "training"


def test_the_checks_no_longer_read_the_upstream_script_as_the_run() -> None:
    audit = _audit(_files())
    got = {r.id: r for r in audit.results}
    # upstream's compile, bf16 autocast, DDP, memmap and schedule are not the project's
    assert got["D2"].status == Status.UNUSED, got["D2"].detail
    assert got["C1"].status != Status.USED, got["C1"].detail
    assert got["A1"].status != Status.USED, got["A1"].detail
    assert got["F8"].status != Status.USED, got["F8"].detail
    assert got["G1"].status != Status.USED, got["G1"].detail
    for r in audit.results:
        assert not any(e.path.startswith("upstream/") for e in r.evidence), (r.id, r.evidence)
    # upstream's README is not the project's documentation of a multi-node run
    assert not audit.project.multi_node
    assert audit.project.max_seq_len is None
    control = {r.id: r for r in _audit(_files(**{"upstream/.git": None})).results}
    assert control["D2"].status == Status.USED  # the previous reading


def test_a_lightning_module_is_training_code() -> None:
    # upstream's script is out of scope: the LightningModule's training_step is what trains, run by the user's Trainer
    for files in (_files(), {"gptlib/__init__.py": "", "gptlib/models.py": MODELS}):
        audit = _audit(files)
        assert audit.project.does_training, sorted(files)
        assert audit.training_code_found
        assert audit.project.bottleneck_reasons != ["no training or inference code was recognised"]
    # a plain module that no Trainer runs is still no training code
    plain = MODELS.replace("from lightning import LightningModule", "import torch.nn as nn").replace("(LightningModule)", "(nn.Module)")
    other = _audit({"gptlib/models.py": plain, "gptlib/__init__.py": ""})
    assert not other.project.does_training


def test_lightning_default_logging_interval_applies_to_self_log() -> None:
    audit = _audit(_files())
    i4 = audit.result("I4")
    assert i4.status == Status.USED, i4.detail
    assert i4.values.get("log_every_n_steps") == 50
    assert "Lightning's default of 50" in i4.detail
    assert [(e.path, e.line) for e in i4.evidence] == [("gptlib/models.py", 16)]
    # a Trainer that sets the interval is read instead of the default
    every = _files(**{"train.py": "import lightning as L\nfrom gptlib import GPT\n\ntrainer = L.Trainer(log_every_n_steps=1)\n"
                                  "trainer.fit(GPT(65, 128), loader)\n"})
    assert _audit(every).result("I4").status == Status.UNUSED


def test_d7_says_checkpoint_only_when_one_is_loaded() -> None:
    # the LightningModule builds the model from presets the audit does not evaluate: no checkpoint is loaded
    d7 = _audit({"gptlib/__init__.py": "", "gptlib/models.py": MODELS}).result("D7")
    assert d7.status == Status.NA and d7.detail.startswith("not judged:"), d7.detail
    assert "checkpoint" not in d7.detail, d7.detail
    assert "sizes the audit cannot read" in d7.detail
    tuned = _audit({"train.py": "from transformers import AutoModelForCausalLM, Trainer\n"
                                "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-1B')\n"
                                "Trainer(model=model, train_dataset=ds).train()\n"}).result("D7")
    assert tuned.status == Status.NA and tuned.detail.startswith("not judged:"), tuned.detail
    assert "the architecture comes from a checkpoint" in tuned.detail


def test_lightning_default_is_only_a_fallback() -> None:
    # the run sets its own interval (a library's trainer with --log-interval 100); a LightningModule of another model family
    # in the library (FlagAI's AltDiffusion wrapper) is not the run: its self.log adds no Lightning default to I4
    files = {
        "lib/trainer.py": (
            "import argparse\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--log-interval', type=int, default=100)\nargs = parser.parse_args()\n\n\n"
            "def train(model, loader, optimizer):\n    for step, batch in enumerate(loader):\n        loss = model(batch)\n"
            "        loss.backward()\n        optimizer.step()\n        if step % args.log_interval == 0:\n"
            "            print(loss.item())\n"),
        "lib/model/mm/wrapper.py": MODELS,
    }
    i4 = _audit(files).result("I4")
    assert "log_every_n_steps" not in i4.values, i4.values
    assert not any(e.path == "lib/model/mm/wrapper.py" for e in i4.evidence)
