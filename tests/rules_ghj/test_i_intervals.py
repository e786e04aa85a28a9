"""I3-I5 (issue 9): intervals resolved as the guarding file sees them, and no "sane" claim without a site."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.project import detect_project


def _run(files: dict[str, str], *ids: str):
    all_checks()
    facts = build_facts((p, t.encode()) for p, t in files.items())
    results, _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY[i] for i in ids])
    return {r.id: r for r in results}


LITGPT = {
    "litgpt/args.py": "from dataclasses import dataclass\n@dataclass\nclass TrainArgs:\n    save_interval: int = 1000\n",
    "litgpt/pretrain.py": (
        "def fit(fabric, model, optimizer, train, state):\n"
        "    for batch in train_iterator:\n        loss = model(batch)\n        fabric.backward(loss)\n        optimizer.step()\n"
        "        if train.save_interval is not None and state['step_count'] % train.save_interval == 0:\n"
        "            save_checkpoint(fabric, state, out_dir)\n"),
    "tests/test_pretrain.py": "from litgpt.args import TrainArgs\ndef test_pretrain():\n    TrainArgs(save_interval=1)\n",
}


def test_a_tests_interval_does_not_decide_the_loop_guard():
    r = _run(LITGPT, "I3")["I3"]
    assert r.status.value == "used" and not r.findings


def test_nothing_seen_is_said_so_not_called_sane():
    r = _run({"train.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n"}, "I3", "I4", "I5")
    for cid in ("I3", "I4", "I5"):  # not judged: n/a (out of the score), never a "used" that claims a sane frequency
        assert r[cid].status.value == "n/a" and r[cid].detail.startswith("not judged"), r[cid].detail
        assert "sane" not in r[cid].detail and not r[cid].recommendation
