"""Step zero's "batches are loaded in the training process" reason cites the loader setting a run changes (a config
field's default) before a loader call's literal keyword in an edge branch (NeMo AutoModel 0.7.0: an empty Subset's
``DataLoader(..., num_workers=0)`` for a resume past the end was cited ahead of ``DataloaderConfig.num_workers = 0``)."""

from __future__ import annotations

from checks.engine import audit_files

CACHE = (
    "from torch.utils.data import DataLoader, Subset\n\n\n"
    "def dataloader_from_sample(dataloader, start_sample):\n"
    "    if start_sample >= len(dataloader.dataset):\n"
    "        return DataLoader(\n            Subset(dataloader.dataset, []),\n            batch_size=1,\n"
    "            shuffle=False,\n            num_workers=0,\n        )\n"
    "    return dataloader\n"
)
LOADER = (
    "from dataclasses import dataclass\n\nfrom torch.utils.data import DataLoader\n\n\n"
    "@dataclass\nclass DataloaderConfig:\n    batch_size: int = 1\n    num_workers: int = 0\n    pin_memory: bool = False\n\n\n"
    "def build_dataloader(dataset, cfg: DataloaderConfig):\n"
    "    return DataLoader(dataset, batch_size=cfg.batch_size, num_workers=cfg.num_workers, pin_memory=cfg.pin_memory)\n"
)
TRAIN = (
    "import torch\n\nfrom pkg.data.cache import dataloader_from_sample\nfrom pkg.data.loader import DataloaderConfig, build_dataloader\n\n\n"
    "def train(model, dataset, optimizer, start_sample=0):\n"
    "    loader = dataloader_from_sample(build_dataloader(dataset, DataloaderConfig()), start_sample)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def test_the_workers_reason_cites_the_config_default_before_an_edge_branch_loader():
    files = {"pkg/data/cache.py": CACHE, "pkg/data/loader.py": LOADER, "pkg/train.py": TRAIN,
             "scripts/train.sh": "torchrun --nproc_per_node 8 pkg/train.py\n"}
    audit = audit_files((k, v.encode()) for k, v in files.items())
    [f1] = [r for r in audit.results if r.id == "F1"]
    assert [e.path for e in f1.evidence][:1] == ["pkg/data/cache.py"], f1.evidence  # the check lists the sites by path
    [reason] = [r for r in audit.project.bottleneck_reasons if "batches are loaded in the training process" in r]
    assert "num_workers = 0 at `pkg/data/loader.py:" in reason, reason
