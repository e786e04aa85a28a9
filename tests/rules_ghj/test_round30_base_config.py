"""Round 30 (issue #9): EasyR1's launches name the config file they start from (``python3 -m verl.trainer.main
config=examples/config.yaml`` followed by Hydra-style overrides). A launch that leaves a key unset runs with that file's
value, not the dataclass default; and a warmup that one launch of twenty-one passes is not the project's schedule."""

from __future__ import annotations

from checks.engine import build_facts
from tests.rules_ghj.ghj_util import audit

_CONFIG_PY = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n@dataclass\nclass OptimConfig:\n"
    "    lr: float = 1e-6\n    lr_warmup_ratio: float = 0.0\n    lr_warmup_steps: Optional[int] = None\n"
    "    lr_scheduler_type: str = 'constant'\n\n\n@dataclass\nclass TrainerConfig:\n    total_epochs: int = 15\n"
    "    save_freq: int = -1\n    ulysses_size: int = 1\n"
)
_BASE = ("worker:\n  actor:\n    ulysses_size: 2\n    optim:\n      lr: 1.0e-6\n      lr_warmup_ratio: 0.0\n"
         "trainer:\n  total_epochs: 15\n  save_freq: 5\n")
_FSDP = (
    "from transformers import get_constant_schedule_with_warmup\n\n\nclass FSDPWorker:\n"
    "    def _build_optimizer(self, optim_config, total_steps):\n"
    "        num_warmup_steps = int(optim_config.lr_warmup_ratio * total_steps)\n"
    "        self.lr_scheduler = get_constant_schedule_with_warmup(self.optimizer, num_warmup_steps=num_warmup_steps)\n\n"
    "    def update_actor(self, batch):\n        loss = self.model(batch).loss\n        loss.backward()\n"
    "        self.optimizer.step()\n        self.lr_scheduler.step()\n"
)


def _repo(n: int, extra: dict[int, str]) -> dict[str, str]:
    files = {"verl/trainer/config.py": _CONFIG_PY, "examples/config.yaml": _BASE, "verl/workers/fsdp_workers.py": _FSDP}
    for i in range(n):
        files[f"examples/run_{i}.sh"] = (
            "set -x\n\nMODEL_PATH=Qwen/Qwen2.5-7B-Instruct\n\npython3 -m verl.trainer.main \\\n"
            "    config=examples/config.yaml \\\n    data.train_files=hiyouga/math12k@train \\\n"
            f"    worker.actor.model.model_path=${{MODEL_PATH}} \\\n{extra.get(i, '')}    trainer.experiment_name=run_{i}\n")
    return files


def test_launches_that_leave_a_key_unset_take_the_base_config_value():
    files = _repo(4, {0: "    worker.actor.ulysses_size=8 \\\n"})
    facts = build_facts((p, t.encode()) for p, t in files.items())
    facts.effective("ulysses_size")
    assert facts.distribution_defaults()["ulysses_size"] == {"2": (3, "examples/config.yaml:3")}
    assert facts.judged_value("ulysses_size") == "2"


def test_a_warmup_one_launch_of_many_passes_is_not_the_schedule():
    r, _ = audit(_repo(5, {0: "    worker.actor.optim.lr_warmup_steps=10 \\\n"}), "G1")
    assert r.status.value != "used", r.detail
    assert "warmup" not in (r.detail or "").split(";")[0].replace("without warmup", ""), r.detail


def test_control_a_warmup_most_launches_pass_is_used():
    r, _ = audit(_repo(3, {i: "    worker.actor.optim.lr_warmup_steps=10 \\\n" for i in range(3)}), "G1")
    assert "warmup" in (r.detail or ""), r.detail
