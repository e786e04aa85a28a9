"""Round 29 (issue #9, read on LLaVA-NeXT at HEAD): a copy of a third-party library kept in the repository is the
library's code. LLaVA-NeXT ships ``trl/`` (``__version__ = "0.7.11.dev0"``) beside its own ``llava`` package and imports
its DPOTrainer; SFTTrainer's packing, PPO's loss and ConstantLengthDataset's streaming were read as LLaVA's own."""

from __future__ import annotations

from checks.engine import audit_files

PYPROJECT = '[project]\nname = "llava"\nversion = "1.7.0"\n\n[tool.setuptools.packages.find]\ninclude = ["llava*", "trl*"]\n'
TRL = {
    "trl/__init__.py": ('__version__ = "0.7.11.dev0"\n\nfrom .trainer import DPOTrainer, PPOTrainer, SFTTrainer\n'),
    "trl/trainer/__init__.py": ("from .dpo_trainer import DPOTrainer\nfrom .ppo_trainer import PPOTrainer\nfrom .sft_trainer import SFTTrainer\n"
                                "from .utils import TokenStreamDataset, DPODataCollatorWithPadding\n"),
    "trl/trainer/utils.py": ("from torch.utils.data import IterableDataset\n\n\nclass DPODataCollatorWithPadding:\n    pass\n\n\n"
                             "class TokenStreamDataset(IterableDataset):\n    def __iter__(self):\n        yield from self.buffer\n"),
    "trl/trainer/sft_trainer.py": ("from transformers import Trainer\n\nfrom .utils import TokenStreamDataset\n\n\n"
                                   "class SFTTrainer(Trainer):\n    def _prepare(self, dataset):\n"
                                   "        return TokenStreamDataset(dataset, seq_length=2048)\n"),
    "trl/trainer/ppo_trainer.py": "class PPOTrainer:\n    def step(self):\n        self.optimizer.step()\n",
    "trl/trainer/dpo_trainer.py": "from transformers import Trainer\n\n\nclass DPOTrainer(Trainer):\n    pass\n",
}
LLAVA = {
    "llava/train/llava_trainer.py": ("from trl.trainer import DPOTrainer\nfrom trl.trainer.utils import DPODataCollatorWithPadding\n\n\n"
                                     "class LLaVADPOTrainer(DPOTrainer):\n    pass\n"),
    "llava/train/train_dpo.py": ("from transformers import AutoModelForCausalLM\n\nfrom llava.train.llava_trainer import LLaVADPOTrainer\n\n\n"
                                 "def train():\n    model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-7B-Instruct')\n"
                                 "    LLaVADPOTrainer(model=model).train()\n"),
}


def _audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


def test_a_library_copy_is_vendored_and_none_of_its_modules_join_the_training_path():
    a = _audit({"pyproject.toml": PYPROJECT, **TRL, **LLAVA})
    roles = a.roles.by_path
    assert roles["trl/__init__.py"] == "vendored", a.roles.why["trl/__init__.py"]
    assert roles["trl/trainer/sft_trainer.py"] == "vendored" and roles["trl/trainer/ppo_trainer.py"] == "vendored"
    # (round 57: the modules the project imports are the library's too, read as if installed; anole's copy of transformers
    # made 92 of its modules "training" before)
    assert roles["trl/trainer/dpo_trainer.py"] == "vendored" and roles["trl/trainer/utils.py"] == "vendored"
    by_id = {r.id: r for r in a.results}
    assert by_id["F9"].status.value == "unused", by_id["F9"].detail  # streaming dataset class: defined, never built here
    assert a.project.alignment  # the DPO run: trl.trainer.DPOTrainer, subclassed


def test_the_librarys_own_repository_and_a_tree_without_packaging_are_not_copies():
    own = _audit({"pyproject.toml": '[project]\nname = "trl"\n', **TRL, "examples/dpo.py": "from trl import DPOTrainer\n\nDPOTrainer().train()\n"})
    assert own.roles.by_path["trl/trainer/sft_trainer.py"] != "vendored"
    # (a wheel's tree names its distribution in METADATA; round 59: a root-level copy in a repository that packages
    # nothing, beside scripts of the project's own, is a copy: UniTok's ``open_clip/``)
    wheel = _audit({**TRL, "trl-0.7.11.dist-info/METADATA": "Metadata-Version: 2.1\nName: trl\n",
                    "examples/dpo.py": "from trl import DPOTrainer\n\nDPOTrainer().train()\n"})
    assert wheel.roles.by_path["trl/trainer/sft_trainer.py"] != "vendored"
