"""The overview's frameworks are the ones the project trains with: a library imported only to load weights is not one."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = ("import torch\nfrom torch.distributed.fsdp import fully_shard\n\n"
         "def train(model, loader, opt):\n    fully_shard(model)\n    for batch in loader:\n"
         "        loss = model(batch).loss\n        loss.backward()\n        opt.step()\n")
CONVERTER = ("try:\n    from accelerate import init_empty_weights\nexcept ImportError:\n    init_empty_weights = None\n\n"
             "def load_hf_model(config):\n    with init_empty_weights():\n        return AutoModelForCausalLM.from_config(config)\n")


def _frameworks(files: dict[str, str]) -> list[str]:
    return audit_files((p, t.encode()) for p, t in files.items()).project.frameworks


def test_accelerate_imported_only_to_build_empty_weights_is_not_a_framework():
    # olmo-core: ``from accelerate import init_empty_weights`` in its HF checkpoint converter
    assert "accelerate" not in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/nn/hf/checkpoint.py": CONVERTER})


def test_accelerate_that_drives_training_is_a_framework():
    driver = "from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision='bf16')\nmodel, opt = accelerator.prepare(model, opt)\n"
    assert "accelerate" in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/nn/hf/checkpoint.py": CONVERTER, "src/pkg/launch.py": driver})
    assert "accelerate" in _frameworks({"src/pkg/train.py": TRAIN, "run.sh": "accelerate launch src/pkg/train.py\n",
                                        "src/pkg/nn/hf/checkpoint.py": CONVERTER})
