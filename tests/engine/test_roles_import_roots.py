"""Absolute imports resolve where Python would find them (InternVL: ``import datasets`` in the chat model's dataloader
patch is Hugging Face's library, not the bundled ``clip_benchmark/clip_benchmark/datasets`` package, and ``from models
import build_model`` in ``classification/main.py`` is ``classification/models``). Otherwise the bundled benchmark joined
the training path and its model code was cited for F6, D7 and J1-J6."""

from __future__ import annotations

from checks.facts import extract_file
from checks.roles import classify_roles

_PATCH = (
    "import datasets\nimport torch\nfrom transformers.trainer import Trainer\n\n\n"
    "def get_train_dataloader(self):\n    train_dataset = self.train_dataset\n"
    "    if isinstance(train_dataset, datasets.Dataset):\n        train_dataset = self._remove_unused_columns(train_dataset)\n"
    "    return torch.utils.data.DataLoader(train_dataset, batch_size=self._train_batch_size, pin_memory=True)\n\n\n"
    "def replace_train_dataloader():\n    Trainer.get_train_dataloader = get_train_dataloader\n"
)
_FINETUNE = (
    "from transformers import Trainer\n\nfrom internvl.patch.train_dataloader_patch import replace_train_dataloader\n\n\n"
    "def main():\n    replace_train_dataloader()\n    Trainer(model=model, args=args, train_dataset=ds).train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_BENCH = {
    "clip_benchmark/setup.py": "from setuptools import setup\n\nsetup(name='clip_benchmark', packages=['clip_benchmark'])\n",
    "clip_benchmark/clip_benchmark/__init__.py": "",
    "clip_benchmark/clip_benchmark/cli.py": "from clip_benchmark.datasets import build_dataset\n",
    "clip_benchmark/clip_benchmark/datasets/__init__.py": "from .builder import build_dataset\n",
    "clip_benchmark/clip_benchmark/datasets/builder.py": "def build_dataset(name):\n    return name\n",
    "clip_benchmark/clip_benchmark/models/__init__.py": "def build_model(name):\n    return name\n",
}
_CLS = {
    "classification/main.py": ("import torch\n\nfrom models import build_model\n\n\ndef main():\n    model = build_model('vit')\n"
                               "    loss = model(torch.randn(2, 3)).sum()\n    loss.backward()\n\n\nif __name__ == '__main__':\n    main()\n"),
    "classification/models/__init__.py": "from .build import build_model\n",
    "classification/models/build.py": "def build_model(name):\n    return name\n",
    "classification/train_in1k.sh": "torchrun --nproc_per_node 8 main.py --cfg configs/vit.yaml\n",
}


def _roles(files: dict[str, str]):
    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


def test_a_third_party_package_name_is_not_a_bundled_packages_subpackage():
    files = {"internvl_chat/internvl/patch/train_dataloader_patch.py": _PATCH,
             "internvl_chat/internvl/patch/__init__.py": "", "internvl_chat/internvl/__init__.py": "",
             "internvl_chat/internvl/train/internvl_chat_finetune.py": _FINETUNE, **_BENCH}
    roles = _roles(files)
    assert roles.by_path["internvl_chat/internvl/patch/train_dataloader_patch.py"] == "training"
    assert roles.by_path["clip_benchmark/clip_benchmark/datasets/__init__.py"] == "vendored"
    assert roles.by_path["clip_benchmark/clip_benchmark/datasets/builder.py"] == "vendored"


def test_a_scripts_own_folder_comes_before_another_sub_projects_package_of_the_same_name():
    roles = _roles({**_CLS, **_BENCH})
    assert roles.by_path["classification/models/build.py"] == "training"
    assert roles.by_path["clip_benchmark/clip_benchmark/models/__init__.py"] == "vendored"


def test_control_the_bundled_packages_own_top_level_name_still_resolves():
    files = {**_BENCH, "train.py": ("import torch\n\nfrom clip_benchmark.datasets import build_dataset\n\n\n"
                                    "def main():\n    ds = build_dataset('cifar10')\n    loss = model(ds).sum()\n    loss.backward()\n\n\n"
                                    "if __name__ == '__main__':\n    main()\n")}
    roles = _roles(files)
    assert roles.by_path["clip_benchmark/clip_benchmark/datasets/builder.py"] == "training"
