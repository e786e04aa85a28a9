"""A report does not depend on Python's string hash seed (set iteration order): the same tree, two seeds, one JSON."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SERVE = """from vllm import LLM, SamplingParams
import sglang as sgl

def rollout(prompts):
    llm = LLM(model="Qwen/Qwen2.5-7B-Instruct", enable_prefix_caching=True)
    return llm.generate(prompts, SamplingParams(max_tokens=256))

def judge(prompts):
    engine = sgl.Engine(model_path="Qwen/Qwen2.5-7B-Instruct")
    return engine.generate(prompts, {"max_new_tokens": 64})
"""
TRAIN = """import torch
from torch.utils.data import DataLoader

loader = DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)
for batch in loader:
    loss = model(batch)
    loss.backward()
    optimizer.step()
"""


#: torchtitan's shape: recipe functions of a config registry, most checkpointing every 500 steps (the vote cites them)
REGISTRY = "from torchtitan.trainer import Trainer\nfrom torchtitan.components.checkpoint import CheckpointManager\n\n" + "".join(
    f"def llama3_{name}():\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval={n}))\n\n"
    for name, n in (("8b", 500), ("70b", 500), ("405b", 500), ("1b", 500), ("3b", 500), ("13b", 10), ("30b", 10)))


def _scan(root: Path, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-m", "accel_audit", "scan", str(root), "--format", "json", "-j1"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def test_two_hash_seeds_give_one_report(tmp_path: Path) -> None:
    (tmp_path / "rollout.py").write_text(SERVE)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "torchtitan" / "models" / "llama3").mkdir(parents=True)
    (tmp_path / "torchtitan" / "models" / "llama3" / "config_registry.py").write_text(REGISTRY)
    reports = {_scan(tmp_path, seed) for seed in ("1", "2", "3", "4")}
    assert len(reports) == 1
