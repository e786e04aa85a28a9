"""The report's file list is the same on every run: the Python config modules a config loader reads (xtuner's 587
mmengine configs) came out of a set, so their order in ``files`` followed the interpreter's string hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CONFIG = "from mmengine.config import read_base\nmodel_name = '{m}'\nlr = 2e-4\nmax_epochs = 3\nbatch_size = 1\n"


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "mylib" / "configs").mkdir(parents=True)
    (tmp_path / "mylib" / "train.py").write_text(
        "from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n\ndef main(path):\n"
        "    cfg = Config.fromfile(path)\n    Runner.from_cfg(cfg).train()\n\n\nif __name__ == '__main__':\n    main('cfg.py')\n")
    for i in range(24):
        (tmp_path / "mylib" / "configs" / f"llama_{i:02d}_qlora.py").write_text(_CONFIG.format(m=f"model-{i}"))
    return tmp_path


def _files(repo: Path, seed: str) -> list[dict[str, object]]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-m", "accel_audit", "scan", str(repo), "--format", "json", "--jobs", "1"],
                         capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out)["files"]


def test_the_file_list_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = _files(repo, "1")
    assert sum(1 for f in first if "/configs/" in str(f["path"])) == 24
    assert all(_files(repo, seed) == first for seed in ("2", "3", "4"))
