"""Patterns of real training code (issue 9): hand-written token pipelines, loader sizes, the real prefetch value."""

from __future__ import annotations

from ._audit import audit

MODDED = (
    "from pathlib import Path\nimport torch\n"
    "def _load_data_shard(file: Path):\n"
    "    header = torch.from_file(str(file), False, 256, dtype=torch.int32)\n"
    "    num_tokens = int(header[2])\n"
    "    with file.open('rb', buffering=0) as f:\n"
    "        tokens = torch.empty(num_tokens, dtype=torch.uint16, pin_memory=True)\n"
    "        f.seek(256 * 4)\n"
    "        nbytes = f.readinto(tokens.numpy())\n"
    "    return tokens\n"
)


def test_modded_nanogpt_reader_is_pretokenized_sharded_offline_and_pinned():
    r, _ = audit({"train_gpt.py": MODDED}, "F3", "F4", "F6", "F10")
    assert {k: v.status.value for k, v in r.items()} == {"F3": "used", "F4": "used", "F6": "used", "F10": "used"}
    assert any(e.line == 4 for e in r["F10"].evidence)  # torch.from_file, at its own line
    assert [e.line for e in r["F3"].evidence] == [7]  # the pinned buffer


def test_far_too_many_workers_is_a_finding_at_its_line():
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8,\n    num_workers=64, pin_memory=True)\n"}, "F1")
    f1 = r["F1"]
    assert f1.status.value == "used" and f1.values["max_num_workers"] == 64
    assert [(e.line, e.value) for e in f1.findings] == [(3, 64)]
    assert "num_workers=64" in f1.detail


def test_prefetch_detail_states_the_real_value_and_a_huge_one_is_a_finding():
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8, num_workers=8, prefetch_factor=4)\n"}, "F2")
    assert "prefetch_factor=4" in r["F2"].detail and "default" not in r["F2"].detail
    r, _ = audit({"train.py": "from torch.utils.data import DataLoader\n"
                              "train_loader = DataLoader(train_ds, batch_size=8, num_workers=8, prefetch_factor=64)\n"}, "F2")
    assert r["F2"].findings and "prefetch_factor=64" in r["F2"].detail


def test_tokenizer_statistics_are_not_token_shards():
    r, _ = audit({"stats.py": "import numpy as np\nnp.save('tokenizer_length_stats.npy', lengths)\n"}, "F10")
    assert r["F10"].status.value == "unused"


def test_a_callers_config_value_reaches_the_loader_one_hop():
    files = {
        "config.py": "from dataclasses import dataclass\n@dataclass\nclass DataArgs:\n    num_loading_workers: int = 1\n",
        "dataloader.py": ("from torch.utils.data import DataLoader\n"
                          "def get_train_dataloader(ds, dataloader_num_workers: int):\n"
                          "    return DataLoader(ds, batch_size=8, num_workers=dataloader_num_workers)\n"),
        "run_train.py": ("from dataloader import get_train_dataloader\n"
                         "loader = get_train_dataloader(ds, dataloader_num_workers=config.data.num_loading_workers)\n"),
    }
    r, _ = audit(files, "F1")
    assert r["F1"].status.value == "partial" and r["F1"].values["num_workers"] == 1
