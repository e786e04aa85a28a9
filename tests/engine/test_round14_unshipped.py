"""Sub-packages the project's packaging leaves out are not the run (round 14, ochat).

The fixture is shaped like a chat-model trainer whose package keeps a copied Alpaca ``train_alpaca.py`` (HF Trainer,
``facebook/opt-125m``, ``model_max_length`` 512) in ``chatpkg/experimental/``, which ``pyproject.toml`` excludes from the
package, while the README's command runs ``chatpkg.training.train`` (DeepSpeed ZeRO-2, a 1-worker loader). Before the
rule, the copied script was an entry point by its ``train*.py`` name: step zero called the project launch-bound from
"a small model (~125M, facebook/opt-125m)" and the overview said 125M parameters and 512 tokens.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts import extract_file
from checks.model import Status
from checks.roles import OUT_OF_SCOPE, UNSHIPPED, classify_roles

PYPROJECT = """\
[project]
name = "chatpkg"
dependencies = ["torch", "deepspeed", "transformers"]

[tool.setuptools.packages.find]
exclude = ["assets*", "chatpkg/experimental*"]
"""
README = """\
# chatpkg

## Training

```bash
deepspeed --num_gpus=8 --module chatpkg.training.train --model_path BASE --deepspeed --deepspeed_config ds.json
```
"""
TRAIN = """\
import torch
import deepspeed
from torch.utils.data import DataLoader


def train(args, model, dataset):
    loader = DataLoader(dataset, batch_size=None, num_workers=1, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
    for batch in loader:
        loss = engine(**batch).loss
        engine.backward(loss)
        engine.step()
"""
ALPACA = """\
from dataclasses import dataclass, field
from typing import Optional

import transformers
import utils
from transformers import Trainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="facebook/opt-125m")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = Trainer(model=model, args=training_args, train_dataset=utils.load())
    trainer.train()


if __name__ == "__main__":
    train()
"""


def _files(**over: str) -> dict[str, str]:
    files = {"pyproject.toml": PYPROJECT, "README.md": README, "chatpkg/__init__.py": "", "chatpkg/training/__init__.py": "",
             "chatpkg/training/train.py": TRAIN, "chatpkg/experimental/train_alpaca.py": ALPACA}
    files.update(over)
    return files


def _roles(files: dict[str, str]):
    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


def _audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


def test_an_excluded_sub_package_is_not_the_run() -> None:
    roles = _roles(_files())
    assert UNSHIPPED in OUT_OF_SCOPE
    assert roles.role("chatpkg/experimental/train_alpaca.py") == UNSHIPPED
    assert roles.why["chatpkg/experimental/train_alpaca.py"] == 'left out of the package by pyproject.toml:6 (exclude "chatpkg/experimental*")'
    assert roles.entry_points == ["chatpkg/training/train.py"]


def test_step_zero_and_the_overview_no_longer_read_the_copied_script() -> None:
    audit = _audit(_files())
    assert audit.project.estimated_params is None
    assert audit.project.max_seq_len is None
    assert not any("opt-125m" in r for r in audit.project.bottleneck_reasons)
    f1 = audit.result("F1")
    assert f1.status == Status.PARTIAL  # the run's 1-worker loader, not the HF Trainer's default 0 workers
    assert all(e.path == "chatpkg/training/train.py" for e in f1.evidence)


def test_before_the_rule_the_same_script_without_the_exclude_is_an_entry_point() -> None:
    # control: the exclude is what decides (a copied script the packaging keeps is still read as a recipe)
    files = _files(**{"pyproject.toml": PYPROJECT.replace(', "chatpkg/experimental*"', "")})
    roles = _roles(files)
    assert roles.role("chatpkg/experimental/train_alpaca.py") == "training"
    # (its ``model_max_length`` is read; its ``facebook/opt-125m`` is the Alpaca template's placeholder, which names no model
    # once the README's command passes one, ``--model_path BASE``: round 62)
    assert _audit(files).project.max_seq_len == 512


def test_a_top_level_exclude_keeps_recipes_in_scope() -> None:
    # ``exclude = ["examples*"]``: examples are not installed, but they are the recipes users run
    files = _files(**{"pyproject.toml": PYPROJECT.replace('"chatpkg/experimental*"', '"examples*"'),
                      "examples/train_sft.py": ALPACA})
    assert _roles(files).role("examples/train_sft.py") == "training"


def test_dotted_patterns_and_a_src_layout() -> None:
    files = {"pyproject.toml": PYPROJECT.replace('"chatpkg/experimental*"', '"chatpkg.experimental*"') + 'where = ["src"]\n',
             "README.md": README.replace("chatpkg.training.train", "src/chatpkg/training/train.py"),
             "src/chatpkg/training/train.py": TRAIN, "src/chatpkg/experimental/train_alpaca.py": ALPACA}
    roles = _roles(files)
    assert roles.role("src/chatpkg/experimental/train_alpaca.py") == UNSHIPPED
    assert roles.role("src/chatpkg/training/train.py") == "training"


def test_a_documented_command_or_an_import_brings_an_unshipped_file_back() -> None:
    readme = README + "\n```bash\npython chatpkg/experimental/train_alpaca.py --model_name_or_path x\n```\n"
    assert _roles(_files(**{"README.md": readme})).role("chatpkg/experimental/train_alpaca.py") == "training"
    imported = _files(**{"chatpkg/training/train.py": "from chatpkg.experimental.train_alpaca import ModelArguments\n" + TRAIN})
    assert _roles(imported).role("chatpkg/experimental/train_alpaca.py") == "training"
